"""The retrieval package reads as one algorithm per job: no module imports another that imports it back
(even for type hints: the two context builders once did, the second calling the first's private method),
and no module reaches into another object's private attributes."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT
from tests.source import parse_python

PACKAGE = ROOT / "layers" / "core" / "mongomem" / "retrieval"


def imports_of(path: Path, tree: ast.AST) -> set[str]:
    """The retrieval modules a module imports, at any depth and under any guard (TYPE_CHECKING too)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        out |= {n.split(".")[2] for n in names if n.startswith("mongomem.retrieval.") and n.count(".") >= 2}
    return out - {path.stem}


def test_no_retrieval_module_imports_one_that_imports_it_back() -> None:
    graph = {p.stem: imports_of(p, tree) for p, tree in parse_python(sorted(PACKAGE.glob("*.py"))).items()}
    graph = {m: {d for d in deps if d in graph} for m, deps in graph.items()}
    cycles = []

    def visit(module: str, path: list[str]) -> None:
        for dep in sorted(graph[module]):
            if dep in path:
                cycles.append([*path[path.index(dep) :], dep])
            elif len(path) < len(graph):
                visit(dep, [*path, dep])

    for module in sorted(graph):
        visit(module, [module])
    assert not cycles, f"import cycles in mongomem.retrieval: {cycles[:3]}"


def private_names(tree: ast.AST) -> set[str]:
    """The private methods and attributes a module's classes define (`def _x`, `self._x = ...`): an
    object of the module's own class may read them (`other._postings` in a merge)."""
    out = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("_")}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr.startswith("_"):
            out.add(node.attr)
    return out


def test_no_retrieval_module_calls_another_modules_private_method() -> None:
    trees = {p.name: tree for p, tree in parse_python(sorted(PACKAGE.glob("*.py"))).items()}
    owned = {name: private_names(tree) for name, tree in trees.items()}
    found = []
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                and (
                    isinstance(node.value, ast.Attribute)  # a collaborator's: self.builder._method
                    or node.attr not in owned[name]
                )
            ):
                found.append(f"{name}:{node.lineno} .{node.attr}")
    assert not found, found
