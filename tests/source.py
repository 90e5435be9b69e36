"""Source-reading tests parse the project's modules in a fresh interpreter.

CPython 3.11.7's AST constructor can raise "SystemError: AST constructor recursion depth mismatch" in a
process whose recursion bookkeeping earlier tests skewed (fixed in 3.11.8; a fresh thread was not enough
on CI). A child interpreter parses the files and sends the trees back pickled.
"""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys
from pathlib import Path

_PARSE = """
import ast, pickle, sys
paths = sys.argv[1:]
sys.stdout.buffer.write(pickle.dumps({p: ast.parse(open(p, encoding="utf-8").read(), p) for p in paths}))
"""


# trees already parsed in this run, by file and modification time (the source-reading tests share them)
_PARSED: dict[tuple[str, int], ast.AST] = {}


def parse_python(paths: list[Path]) -> dict[Path, ast.AST]:
    """Each file's syntax tree, parsed in a fresh interpreter (once per run while the file is unchanged)."""
    keys = {path: (str(path), path.stat().st_mtime_ns) for path in paths}
    missing = [path for path, key in keys.items() if key not in _PARSED]
    if missing:
        done = subprocess.run(
            [sys.executable, "-c", _PARSE, *map(str, missing)], capture_output=True, check=True, timeout=120
        )
        trees = pickle.loads(done.stdout)
        _PARSED.update({keys[path]: trees[str(path)] for path in missing})
    return {path: _PARSED[keys[path]] for path in paths}
