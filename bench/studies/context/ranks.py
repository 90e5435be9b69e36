"""Where recall ranks each question's evidence turns (top 100, message range 0), on the dev split."""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import exp
from harness import cases, open_stack


def main() -> None:
    from mongomem.models.common import Scope
    from mongomem.models.recall import RecallRequest

    data, stack_dir = sys.argv[1:3]
    stack = open_stack(Path(data), Path(stack_dir))
    try:
        all_cases, maps, _ = cases(Path(data), stack)
        hist = collections.Counter()
        rows = []
        for case in all_cases:
            found = stack.services.recall.recall(
                Scope(tenant="default", user_id=case.conv),
                RecallRequest(query=case.question, top_k=100, message_range=0),
            )
            order = [maps[case.conv].get(t) for t in found.matched]
            ranks = [order.index(e) + 1 if e in order else 999 for e in case.evidence]
            rows.append({"q": case.question, "cat": case.category, "ranks": ranks})
            for r in ranks:
                hist[min(r, 999) // 10 * 10 if r < 999 else 999] += 1
        total = sum(hist.values())
        acc = 0
        for bucket in sorted(hist):
            acc += hist[bucket]
            print(
                f"rank {bucket:>3}-{bucket + 9:<3} {hist[bucket]:>4}  cumulative {acc / total:.3f}",
                file=exp.OUT,
            )
        Path("/tmp/ctxb/ranks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
