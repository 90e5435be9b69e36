"""Import checks for the `mongomem` runtime package: no import cycle, logic never imports an adapter,
the api package never imports the runtime.

    python -m tools.importcheck cycles   [--root layers/core]
    python -m tools.importcheck layers   [--root layers/core]

Imports are read from the source (ast), at any depth: a lazy import inside a function is a dependency
too (the issue 12 circle went through lazy ones). Imports under `if TYPE_CHECKING:` are left out of
the cycle check (they never run) but count for the layering rule: logic must not even name the root.
Exit status 1 and one line per finding when a check fails.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "mongomem"

# Where adapters live (modules that may import drivers and SDKs), and what else is not "logic".
ADAPTER_PACKAGES = ("mongomem.adapters", "mongomem.providers", "mongomem.vectors")
# Ports that happen to live next to their adapters: importing them is depending on an interface.
PORT_MODULES = frozenset({"mongomem.vectors.port"})
NOT_LOGIC = (
    *ADAPTER_PACKAGES,
    "mongomem.api",
    "mongomem.runtime",
    "mongomem.config",
    "mongomem.observability",
    "mongomem.tracing",
)
FORBIDDEN_FOR_LOGIC = (*ADAPTER_PACKAGES, "mongomem.runtime")
# Packages that are not logic but still may not import another (TYPE_CHECKING imports count): the API's
# routers receive their services from the handler and never reach for the composition root.
FORBIDDEN = {"mongomem.api": ("mongomem.runtime",)}


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    type_checking: bool


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path) -> dict[str, Path]:
    """Every module of the package under `root` (a directory that holds `mongomem/`)."""
    return {module_name(root, p): p for p in sorted((root / PACKAGE).rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, guarded: bool = False) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, guarded
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), True)
            for child in node.orelse:
                yield from _imports(ast.Module(body=[child], type_ignores=[]), guarded)
        else:
            yield from _imports(node, guarded)


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module that `name` is or lies inside (an imported attribute is its module's)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def edges(known: dict[str, Path]) -> list[Edge]:
    out: list[Edge] = []
    for source, path in known.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, guarded in _imports(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = source.split(".")
                    anchor = anchor if is_package else anchor[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                # `from pkg import sub` imports the submodule when there is one
                targets = [f"{base}.{alias.name}" for alias in node.names] or [base]
            for target in targets:
                if not target.startswith(PACKAGE + "."):
                    continue
                resolved = _resolve(target, known)
                if resolved is not None and resolved != source:
                    out.append(Edge(source, resolved, node.lineno, guarded))
    return list(dict.fromkeys(out))  # `from x import a, b` is one import of x


def cycles(known: dict[str, Path], found: list[Edge]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each as a sorted list."""
    graph: dict[str, set[str]] = {name: set() for name in known}
    for edge in found:
        if not edge.type_checking:
            graph[edge.source].add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(components)


def _inside(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def is_logic(name: str) -> bool:
    return name != PACKAGE and not _inside(name, NOT_LOGIC)


def layer_violations(found: list[Edge]) -> list[Edge]:
    """Imports of an adapter (or of the composition root) by a logic module."""
    return [
        e
        for e in found
        if is_logic(e.source) and _inside(e.target, FORBIDDEN_FOR_LOGIC) and e.target not in PORT_MODULES
    ]


def forbidden_imports(found: list[Edge]) -> list[Edge]:
    """Imports the FORBIDDEN table refuses (the api package importing the runtime)."""
    return [
        e
        for e in found
        for package, targets in FORBIDDEN.items()
        if _inside(e.source, (package,)) and _inside(e.target, targets)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.importcheck", description=__doc__.splitlines()[0])
    parser.add_argument("check", choices=["cycles", "layers"])
    parser.add_argument("--root", default="layers/core", help="the directory holding mongomem/")
    parser.add_argument(
        "--allow", action="append", default=[], help="a logic module still allowed its adapter imports"
    )
    args = parser.parse_args(argv)
    known = modules(Path(args.root))
    found = edges(known)
    if args.check == "cycles":
        circles = cycles(known, found)
        for circle in circles:
            print(f"import cycle of {len(circle)} modules: {' -> '.join(circle)}")
        print(f"{len(known)} modules, {len(found)} imports, {len(circles)} cycles")
        return 1 if circles else 0
    bad = [e for e in layer_violations(found) if e.source not in args.allow]
    for e in bad:
        guard = " (under TYPE_CHECKING)" if e.type_checking else ""
        print(f"{known[e.source]}:{e.line}: logic module {e.source} imports {e.target}{guard}")
    refused = forbidden_imports(found)
    for e in refused:
        guard = " (under TYPE_CHECKING)" if e.type_checking else ""
        print(f"{known[e.source]}:{e.line}: forbidden: {e.source} imports {e.target}{guard}")
    print(f"{sum(is_logic(m) for m in known)} logic modules, {len(bad) + len(refused)} forbidden imports")
    return 1 if bad or refused else 0


if __name__ == "__main__":
    sys.exit(main())
