"""Study: one prompt shape against a real model, session by session, without the stack in between.

Builds each kind's call exactly as the extractor does (mongomem.extraction.proposers.LLMProposer), sends it
to an OpenAI-compatible server (a llama-server with a small instruct model), screens the answer as the
extractor does (example copies, grounding) and prints, per session and kind, what was proposed, what was
kept and why the rest was refused, with the session's ground-truth observations beside it. The scored
figures come from bench/extraction_quality.py (through the local stack); this is the fast loop for reading
what a model does with a prompt.

    python bench/studies/extraction/replay.py DATA_DIR --base-url http://127.0.0.1:8081/v1 \
        [--conversation 26] [--sessions 1,2] [--kinds semantic,episodic] [--out answers.jsonl]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mongomem.extraction import guards
from mongomem.extraction.proposal import TurnView
from mongomem.extraction.proposers import LLMProposer, answer_items
from mongomem.kinds import builtin_registry
from mongomem.providers.llm_openai import OpenAICompatibleLLM

KINDS = ["semantic", "episodic", "preference", "taxonomic", "procedural"]


def session_turns(conv: dict[str, Any], n: int) -> list[TurnView]:
    """Session n of a LoCoMo conversation: speaker A as the user, speaker B as the assistant, each named."""
    start = datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    a = conv["speaker_a"]
    return [
        TurnView(
            i + 1,
            "user" if t["speaker"] == a else "assistant",
            t["text"] + (f" [shares a photo: {t['blip_caption']}]" if t.get("blip_caption") else ""),
            start + timedelta(seconds=30 * i),
            t["speaker"],
        )
        for i, t in enumerate(conv[f"session_{n}"])
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path)
    parser.add_argument("--base-url", default="http://127.0.0.1:8081/v1")
    parser.add_argument("--model", default="local")
    parser.add_argument("--conversation", default=None)
    parser.add_argument("--sessions", default="1")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    registry = builtin_registry()
    llm = OpenAICompatibleLLM(
        args.base_url, args.model, require_key=False, timeout=args.timeout, max_retries=0
    )
    proposer = LLMProposer(llm, registry)
    out = args.out.open("a") if args.out else None
    paths = sorted(args.data.glob("*.json"))
    if args.conversation:
        paths = [p for p in paths if p.stem == args.conversation]
    for path in paths:
        conv = json.loads(path.read_text())
        for n in (int(s) for s in args.sessions.split(",")):
            turns = session_turns(conv, n)
            user = conv["speaker_a"].lower()
            print(f"\n=== {path.stem} session {n}: {len(turns)} turns; observations:")
            for speaker, facts in conv[f"session_{n}_observation"].items():
                for fact, _ in facts:
                    print(f"  [{speaker}] {fact}")
            for name in args.kinds.split(","):
                kind = registry.get(name)
                request = proposer.request(kind, turns, siblings=args.kinds.split(","))
                started = time.monotonic()
                result = llm.complete_json(request)
                seconds = time.monotonic() - started
                try:
                    items = answer_items(name, result.text)
                except Exception as exc:  # a study prints what happened and goes on
                    print(f"-- {name}: unusable answer ({exc}): {result.text[:300]}")
                    continue
                screened = guards.screen(kind, items, turns, user, org=kind.visibility == "org")
                kept = screened.items + screened.personal
                print(
                    f"-- {name}: {len(items)} proposed, {len(kept)} kept, refused {dict(screened.refused)}"
                    f" ({seconds:.0f} s, {result.input_tokens} in / {result.output_tokens} out)"
                )
                for item in items:
                    mark = "KEEP" if any(item is k for k in kept) else "drop"
                    print(f"   {mark} {json.dumps(item, ensure_ascii=False)[:300]}")
                if out:
                    record = {"conversation": path.stem, "session": n, "kind": name, "items": items}
                    record |= {"kept": len(kept), "refused": dict(screened.refused), "seconds": seconds}
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
                    out.flush()
                sys.stdout.flush()


if __name__ == "__main__":
    main()
