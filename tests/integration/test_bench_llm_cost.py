"""bench/llm_cost.py at a small size: the fan-out in sequence reads Bedrock's prompt cache, at once it does not.

A two-session conversation in LoCoMo's format (made here, nothing read from outside the repository),
three kinds, Nova's cache rules and the stand-in's latency: the bench's own JSON line is asserted on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

LINES = [
    "I moved from Porto to Lisbon last spring, so my home airport is LIS now and I fly TAP when I can; "
    "I always want a window seat and I am vegetarian, please remember that for every booking you make.",
    "Noted: Lisbon, LIS as your home airport, TAP when available, window seats and vegetarian meals. "
    "I will use these for your next trips, including the conference in Berlin that you mentioned.",
]


def conversation() -> dict[str, object]:
    conv: dict[str, object] = {"speaker_a": "Ana", "speaker_b": "Assistant"}
    for n in (1, 2):
        conv[f"session_{n}_date_time"] = f"1:56 pm on {7 + n} May, 2023"
        conv[f"session_{n}"] = [
            {"speaker": ("Ana", "Assistant")[i % 2], "dia_id": f"D{n}:{i}", "text": LINES[i % 2]}
            for i in range(14)
        ]
    return {"sample_id": "small", "conversation": conv, "qa": []}


def test_the_kinds_in_sequence_read_the_cache_and_bill_less_than_at_once(tmp_path: Path) -> None:
    (tmp_path / "small.json").write_text(json.dumps(conversation()))
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "llm_cost.py"),
            str(tmp_path),
            "--rounds",
            "1",
            "--latency",
            "0.1",
            "--kinds",
            "semantic,episodic,preference",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    before, after = result["fan_out"]["at_once (before)"], result["fan_out"]["in_sequence (after)"]
    # the first kind writes the snapshot's prefix; the two after it read it (2 of 3 calls)
    assert after["extraction_calls_reading_the_cache"] >= 0.6
    # at once, the calls start before any writer completed: (almost) none reads, each pays for writing
    assert before["extraction_calls_reading_the_cache"] < 0.34
    assert after["billed_input_tokens_per_1k_turns"] < 0.85 * before["billed_input_tokens_per_1k_turns"]
    assert result["billed_input_vs_floor"] == after["billed_input_vs_floor"]
