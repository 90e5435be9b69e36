"""An import inside a function names what it saves: `# lazy: N ms` (tools/lazy_imports.py measures it).

Imports belong at the top of a module; one inside a function is kept there only for the import time it
saves (the Lambda functions' cold starts, the CLI's start), so its comment gives the figure, on the
statement's first line or on the comment line directly above it (one comment may cover a run of
consecutive imports). `python tools/lazy_imports.py` measures them again.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from tests.source import parse_python

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from lazy_imports import lazy_imports, product_files  # noqa: E402

MEASURED = re.compile(r"#.*\b\d+(\.\d+)? ms\b")
# Files other changes of issue 36 rewrite (the lead measures and comments their imports after merging).
PENDING: tuple[str, ...] = ()


def measured(lines: list[str], line: int, import_lines: set[int]) -> bool:
    """The import starting at `line` (1-based) carries the figure, or the comment above its run does."""
    if MEASURED.search(lines[line - 1]):
        return True
    above = line - 1
    while above >= 1 and above in import_lines:
        above -= 1
    return above >= 1 and lines[above - 1].strip().startswith("#") and bool(MEASURED.search(lines[above - 1]))


def unmeasured() -> list[str]:
    files = [p for p in product_files() if not str(p.relative_to(ROOT)).startswith(PENDING)]
    missing = []
    for path, tree in parse_python(files).items():
        lines = path.read_text(encoding="utf-8").splitlines()
        found = list(lazy_imports(path, tree))
        import_lines = {n for item in found for n in range(item.line, item.end + 1)}
        missing += [
            f"{path.relative_to(ROOT)}:{item.line} {item.statement}"
            for item in found
            if not measured(lines, item.line, import_lines)
        ]
    return missing


def test_every_import_inside_a_function_names_its_measurement() -> None:
    missing = unmeasured()
    assert not missing, (
        "an import inside a function needs `# lazy: N ms` (or moves to the top):\n" + "\n".join(missing)
    )


def test_a_comment_without_a_figure_does_not_count() -> None:
    lines = ["def f():", "    # lazy: cheap enough", "    import json", "    return json"]
    assert not measured(lines, 3, {3})
    assert measured(["def f():", "    # lazy: 3.5 ms", "    import json", "    import re"], 4, {3, 4})
    assert measured(["def f():", "    import json  # lazy: 12 ms"], 2, {2})
