"""docs/architecture.md opens with one turn's journey, and every hop of it names a real file and function.

A hop is written "`<file>` `<function>`" (a module-level function or class, or `Class.method`); a file
renamed or a function renamed without the journey following fails here, as does a journey cut short.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.source import parse_python

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
HOP = re.compile(r"`([\w/.-]+\.py)`\s+`([A-Za-z_][\w.]*)`")
# what the journey crosses, in order: the record function, the scan, the queue, extraction, the write
STAGES = [
    "functions/record_turns/app.py",
    "layers/core/mongomem/adapters/mongo/turns.py",
    "functions/scan_sessions/app.py",
    "layers/core/mongomem/adapters/queues.py",
    "functions/extract/app.py",
    "layers/core/mongomem/longterm/write/writer.py",
    "layers/core/mongomem/adapters/mongo/memory_store.py",
    "layers/core/mongomem/longterm/write/indexing.py",
]


def journey() -> list[tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    sections = text.split("\n## ")
    assert sections[1].startswith("One turn's journey"), "architecture.md opens with one turn's journey"
    return HOP.findall(sections[1])


def defined(tree: ast.AST, name: str) -> bool:
    scope: list[ast.stmt] = list(getattr(tree, "body", []))
    for part in name.split("."):
        found = [
            node
            for node in scope
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == part
        ]
        if not found:
            return False
        scope = list(found[0].body)
    return True


def test_every_hop_names_a_file_and_a_function_that_exist() -> None:
    hops = journey()
    files = sorted({ROOT / path for path, _ in hops})
    missing_files = [str(p.relative_to(ROOT)) for p in files if not p.is_file()]
    assert not missing_files, f"the journey names files that do not exist: {missing_files}"
    trees = parse_python(files)
    missing = [f"{path} {name}" for path, name in hops if not defined(trees[ROOT / path], name)]
    assert not missing, f"the journey names functions that do not exist: {missing}"


def test_the_journey_goes_from_the_request_to_the_index_in_order() -> None:
    paths = [path for path, _ in journey()]
    at = [paths.index(stage) if stage in paths else -1 for stage in STAGES]
    assert -1 not in at, f"the journey skips {[s for s, i in zip(STAGES, at, strict=True) if i == -1]}"
    assert at == sorted(at), "the journey's stages are out of order"
