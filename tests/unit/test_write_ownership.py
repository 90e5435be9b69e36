"""Who writes long-term memory: only `mongomem.longterm.write`. Extraction proposes, retrieval reads, the
API's service and imports call the writer; read from the source, so a shortcut around the writer fails
here before it reaches review."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT
from tests.source import parse_python

PACKAGE = ROOT / "layers" / "core" / "mongomem"
WRITE = "mongomem.longterm.write"
# The memory repository's reconciliation writes (longterm.ports.MemoryRepository).
WRITES = frozenset(
    {"insert", "supersede", "repair_lineage", "reinforce", "retract", "activate", "delete_lineage"}
)
# Callers of those names that are not memory writes, or are maintenance outside reconciliation.
ALLOWED = {
    "mongomem.identity.service": {"insert"},  # API keys (ApiKeyRepository.insert)
}


def modules(root: Path = PACKAGE) -> dict[str, ast.AST]:
    found: dict[str, ast.AST] = {}
    for path, tree in parse_python(sorted(root.rglob("*.py"))).items():
        parts = ["mongomem", *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = tree
    return found


def imported(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def findings(root: Path = PACKAGE) -> list[str]:
    """Every place that writes long-term memory around the writer (empty: the writer owns them)."""
    out = []
    for name, tree in modules(root).items():
        if name == WRITE or name.startswith(WRITE + ".") or name.startswith("mongomem.adapters"):
            continue
        uses = imported(tree)
        if name.startswith(("mongomem.extraction", "mongomem.retrieval", "mongomem.longterm")):
            for target in sorted(uses):
                if target.startswith(f"{WRITE}.indexing") or "retrieval.indexing" in target:
                    out.append(f"{name} writes the search index itself ({target})")
        if name.startswith("mongomem.retrieval") and any(u.startswith(WRITE) for u in uses):
            out.append(f"{name}: retrieval imports the write path")
        if name.startswith("mongomem.longterm") and any(u.startswith("mongomem.extraction") for u in uses):
            out.append(f"{name}: long-term memory imports extraction")
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in WRITES
                and node.func.attr not in ALLOWED.get(name, set())
                and isinstance(node.func.value, ast.Attribute | ast.Name)
                and "store" in ast.unparse(node.func.value)
            ):
                out.append(f"{name}:{node.lineno} calls the memory repository's {node.func.attr}")
    return out


def test_only_the_writer_writes_long_term_memory() -> None:
    assert findings() == []


def test_the_check_finds_a_write_around_the_writer(tmp_path: Path) -> None:
    # Given a package whose extraction writes a memory and indexes it itself
    (tmp_path / "extraction").mkdir()
    (tmp_path / "extraction" / "sneaky.py").write_text(
        "from mongomem.longterm.write.indexing import MemoryIndexer\n"
        "def go(store, record):\n    store.insert(record)\n"
    )
    # Then both are found
    assert findings(tmp_path) == [
        "mongomem.extraction.sneaky writes the search index itself (mongomem.longterm.write.indexing)",
        "mongomem.extraction.sneaky writes the search index itself "
        "(mongomem.longterm.write.indexing.MemoryIndexer)",
        "mongomem.extraction.sneaky:3 calls the memory repository's insert",
    ]
