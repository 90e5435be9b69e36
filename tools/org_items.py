"""The org items the offline rules propose over LoCoMo-format conversations, and what the extraction
screen does with each (docs/trust.md "Org memory from extraction").

Each session is one snapshot, speaker A the user (as `POST /v1/import` reads LoCoMo: a shared photo's
caption appended to its turn). For every taxonomic and procedural item it prints the verdict of
`extraction.guards.screen` for an org kind: `org` (published to every user of the tenant), `private`
(kept with the user, and why) or `refused`; then one JSON line of counts.

    python tools/org_items.py DATA_DIR [--list]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from mongomem.extraction.guards import screen
from mongomem.extraction.proposal import TurnView
from mongomem.kinds.procedural import Procedural
from mongomem.kinds.taxonomic import Taxonomic
from mongomem.offline.rules import OfflineProposer

KINDS = (Taxonomic(), Procedural())


def sessions(path: Path) -> list[list[TurnView]]:
    conv = json.loads(path.read_text(encoding="utf-8"))
    out, n = [], 1
    while f"session_{n}" in conv:
        start = datetime.strptime(conv[f"session_{n}_date_time"], "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
        turns = []
        for i, t in enumerate(conv[f"session_{n}"]):
            text = t["text"] + (f" [shared a photo: {t['blip_caption']}]" if t.get("blip_caption") else "")
            role = "user" if t["speaker"] == conv["speaker_a"] else "assistant"
            turns.append(TurnView(i + 1, role, text, start + timedelta(seconds=10 * i), t["speaker"]))
        out.append(turns)
        n += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path)
    parser.add_argument("--list", action="store_true", help="print every item and its verdict")
    args = parser.parse_args()
    rules = OfflineProposer()
    counts: Counter[str] = Counter()
    snapshots = 0
    for path in sorted(args.data.glob("*.json")):
        for index, turns in enumerate(sessions(path), 1):
            snapshots += 1
            for kind in KINDS:
                items = rules.propose(kind.name, turns, "")
                out = screen(kind, items, turns, "user", org=True)
                verdicts = [("org", i) for i in out.items] + [("private", i) for i in out.personal]
                counts[f"{kind.name}.proposed"] += len(items)
                counts[f"{kind.name}.org"] += len(out.items)
                counts[f"{kind.name}.private"] += len(out.personal)
                for reason, n in out.refused.items():
                    counts[f"{kind.name}.refused.{reason}"] += n
                for reason, n in out.kept_private.items():
                    counts[f"{kind.name}.private.{reason}"] += n
                if args.list:
                    for verdict, item in verdicts:
                        head = item.get("term") or item.get("name")
                        body = item.get("definition") or item.get("when_to_use")
                        print(f"{path.stem} s{index} {kind.name} {verdict}: {head!r}: {str(body)[:120]!r}")
    print(json.dumps({"data": args.data.name, "snapshots": snapshots, **dict(sorted(counts.items()))}))


if __name__ == "__main__":
    main()
