"""Benchmark: the offline rules' throughput, all four kinds over real conversations.

Each LoCoMo session is one snapshot (speaker A as the user, the session's own dates as turn
times); every round proposes semantic, episodic, procedural and taxonomic items for every
snapshot, and, side by side, runs the floor: cleaning and splitting every turn into sentences
four times (what any rule pass has to do). Judged by turns per second of proposing (goal: in the
thousands) and its ratio to the floor. Medians over several rounds. DATA_DIR defaults to the
LoCoMo-format conversation written for the tests (tests/data/locomo-mini); a folder without LoCoMo
files makes it repeat a built-in conversation instead.

    python bench/offline_rules.py [DATA_DIR] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mongomem.extraction.proposal import TurnView
from mongomem.offline.rules import OfflineProposer
from mongomem.offline.rules.text import clean_text, split_sentences

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT / "tests" / "data" / "locomo-mini"  # the documented figures: the LoCoMo dev split
KINDS = ["semantic", "episodic", "procedural", "taxonomic"]
FALLBACK = [
    "Hi, I'm Ana. I live in Lisbon and I work at Acme Corp as a product designer.",
    "Last Saturday I went hiking in Sintra with Maria. I love hiking, cycling and chess.",
    "How do I make pancakes?\n1. Whisk the eggs\n2. Add the flour\n3. Heat the pan",
    "SLA stands for service level agreement. Remember that I have a dentist appointment on the 3rd.",
]


def snapshots(data: Path) -> list[list[TurnView]]:
    out: list[list[TurnView]] = []
    for path in sorted(data.glob("*.json")):
        conv = json.loads(path.read_text())
        n = 1
        while f"session_{n}" in conv:
            start = datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y").replace(
                tzinfo=UTC
            )
            role = {conv["speaker_a"]: "user"}
            out.append(
                [
                    TurnView(
                        i + 1,
                        role.get(t["speaker"], "assistant"),
                        t["text"],
                        start + timedelta(seconds=10 * i),
                    )
                    for i, t in enumerate(conv[f"session_{n}"])
                ]
            )
            n += 1
    if not out:
        when = datetime(2026, 11, 29, 10, tzinfo=UTC)
        out = [[TurnView(i + 1, "user", text, when) for i, text in enumerate(FALLBACK * 10)]] * 20
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", nargs="?", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    snaps = snapshots(args.data)
    turns = sum(len(s) for s in snaps)
    proposer = OfflineProposer()
    items = 0
    propose_s, floor_s = [], []
    for _ in range(args.rounds):
        started = time.perf_counter()
        for _kind in KINDS:
            for snap in snaps:
                for t in snap:
                    split_sentences(clean_text(t.content))
        floor_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        items = sum(len(proposer.propose(kind, snap, "bench")) for kind in KINDS for snap in snaps)
        propose_s.append(time.perf_counter() - started)
    propose, floor = statistics.median(propose_s), statistics.median(floor_s)
    result = {
        "bench": "offline_rules",
        "snapshots": len(snaps),
        "turns": turns,
        "items": items,
        "rounds": args.rounds,
        "propose_turns_per_s": round(turns / propose),
        "floor_turns_per_s": round(turns / floor),
        "propose_over_floor": round(propose / floor, 2),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
