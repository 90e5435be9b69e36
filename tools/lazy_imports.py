"""Imports inside functions in layers/ and sdk/: where they are and what each would cost at the top.

    python tools/lazy_imports.py            # one JSON line per import: file, line, statement, ms, cold
    python tools/lazy_imports.py --list     # only where they are (no measurement)
    python tools/lazy_imports.py --runs 1 layers/core/mongomem/runtime/infra.py   # some files, one run

An import inside a function is kept there for its cost: `ms` is the CPU time the statement adds on top of
its own module, measured in a fresh interpreter (import the holding module, then time the statement; the
lowest of `--runs`). CPU time, not wall time: the figure holds on a busy machine. `cold` says whether
the holding module is loaded when a Lambda function's app.py loads (any of functions/*/app.py): an import
moved to the top of such a module would be paid on that function's cold start. The comment `# lazy: N ms` beside a kept import names this measurement
(tests/unit/test_lazy_imports.py fails for an import inside a function without one).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (ROOT / "layers" / "core", ROOT / "sdk")

_MEASURE = """
import importlib, sys, time
importlib.import_module(sys.argv[1])
start = time.process_time()
exec(sys.argv[2], {})
print((time.process_time() - start) * 1000)
"""

_LOADED = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("app", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps(sorted(sys.modules)))
"""


@dataclass(frozen=True)
class LazyImport:
    path: Path
    line: int  # the statement's first line
    end: int  # its last line
    statement: str  # as ast.unparse writes it (the product has no relative imports)

    @property
    def holder(self) -> str:
        """The dotted name of the module holding the import."""
        base = next(p for p in PACKAGES if self.path.is_relative_to(p))
        parts = list(self.path.relative_to(base).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def lazy_imports(path: Path, tree: ast.AST) -> Iterator[LazyImport]:
    """The import statements inside functions (nested ones included) of one parsed file."""

    def visit(node: ast.AST, inside: bool) -> Iterator[LazyImport]:
        for child in ast.iter_child_nodes(node):
            if inside and isinstance(child, ast.Import | ast.ImportFrom):
                yield LazyImport(path, child.lineno, child.end_lineno or child.lineno, ast.unparse(child))
            function = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            yield from visit(child, inside or function)

    yield from visit(tree, False)


def product_files() -> list[Path]:
    return sorted(p for base in PACKAGES for p in (base / "mongomem").rglob("*.py"))


def cost_ms(item: LazyImport, runs: int = 2) -> float:
    """The CPU ms the statement adds on top of its own module, in a fresh interpreter (lowest of `runs`)."""
    found = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", _MEASURE, item.holder, item.statement],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "POWERTOOLS_TRACE_DISABLED": "true"},
        )
        if done.returncode != 0:
            raise RuntimeError(f"{item.path}:{item.line}: {done.stderr.strip()[-300:]}")
        found.append(float(done.stdout.strip().splitlines()[-1]))
    return min(found)


def cold_start_modules() -> set[str]:
    """Every module loaded by importing some Lambda function's app.py."""
    loaded: set[str] = set()
    for app in sorted((ROOT / "functions").glob("*/app.py")):
        done = subprocess.run(
            [sys.executable, "-c", _LOADED, str(app)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
            env={**os.environ, "POWERTOOLS_TRACE_DISABLED": "true"},
        )
        done.check_returncode()
        loaded |= set(json.loads(done.stdout.strip().splitlines()[-1]))
    return loaded


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--list", action="store_true", help="where they are, without measuring")
    parser.add_argument("--runs", type=int, default=2, help="measurements per import (the lowest is kept)")
    parser.add_argument("files", nargs="*", type=Path, help="only these files (default: every product file)")
    args = parser.parse_args()
    files = [path.resolve() for path in args.files] or product_files()
    items = [item for path in files for item in lazy_imports(path, ast.parse(path.read_text(), str(path)))]
    cold = set() if args.list else cold_start_modules()
    for item in items:
        row: dict[str, object] = {
            "file": str(item.path.relative_to(ROOT)),
            "line": item.line,
            "statement": item.statement,
        }
        if not args.list:
            row.update(ms=round(cost_ms(item, args.runs), 2), cold=item.holder in cold)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
