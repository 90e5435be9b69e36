"""The suite and the benches need nothing beside the checkout: no path climbs out of the repository.

A fresh clone has no `../shared` (this workplace's data folder) next to it; a test or bench default that
reads one fails or skips there. Data a test needs is shipped under tests/data (tests/data/locomo-mini).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# ways code has reached outside the checkout: `ROOT.parent / ...`, `parents[N].parent`, "../shared", "../x"
OUTSIDE = re.compile(r"ROOT\.parent\b|parents\[\d\]\.parent\b|\.\./shared|[\"']\.\./[A-Za-z]")


def test_no_test_or_bench_reads_outside_the_repository() -> None:
    offenders = []
    for folder in ("tests", "bench", "tools"):
        for path in (ROOT / folder).rglob("*.py"):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                # a line that only names such a path as data (a hostile input) says so: `# not read`
                if OUTSIDE.search(line) and "# not read" not in line and path.name != Path(__file__).name:
                    offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
