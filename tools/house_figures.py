"""The house in figures, before and after: modules and lines, import cycles, largest files and functions,
the lines of the long-term write path, code-health counts (functions' own lines and positional
parameters, asserts, `Any`, `type: ignore`, settings declared twice) and (with --unit-runs) the wall time
of the database-free tests.

    python tools/house_figures.py BEFORE_CHECKOUT AFTER_CHECKOUT [--unit-runs 3]

Each checkout is a source tree of this repository (a `git worktree` or an unpacked `git archive`). The
import graph is grimp's (the library import-linter runs on) over the `mongomem` namespace of that
checkout's layers/core and sdk, built in a child interpreter so the two checkouts never share a module;
a cycle is a strongly connected component of more than one module. Unit tests run with the checkout's own
.venv: `make unit` where the Makefile has it, and `pytest tests/unit` on both for a like-for-like figure.
Prints Markdown (docs/house.md holds a run).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

# the areas counted, in the order shown; research/ (lab scripts) left the product tree in issue 26
AREAS = ("layers", "sdk", "functions", "tests", "bench", "tools", "research")
PRODUCT = ("layers", "sdk")  # where cycles, largest files and functions are looked for
SKIP_DIRS = {"__pycache__", "node_modules", "build", "dist"}  # plus hidden dirs and *.egg-info
PACKAGE_ROOTS = ("layers/core", "sdk")  # the two portions of the `mongomem` namespace
# The long-term write path: before issue 26, reconciliation (decide + write + ids + the LLM prompt), the
# commit of a snapshot's memories and the vector indexing they call; after, the write package, which took
# all three (indexing.py moved unchanged), plus the reconcile prompt that moved out to the LLM judge.
WRITE_PATH = (
    "layers/core/mongomem/extraction/reconcile.py",
    "layers/core/mongomem/extraction/commit.py",
    "layers/core/mongomem/retrieval/indexing.py",
    "layers/core/mongomem/longterm/write",
    "layers/core/mongomem/extraction/judge.py",
)

_GRAPH_CHILD = """
import json, sys
from pathlib import Path
roots = sys.argv[1:]
sys.path[:] = roots + [p for p in sys.path if p and not (Path(p) / "mongomem").is_dir()]
import grimp
graph = grimp.build_graph("mongomem", cache_dir=None)
print(json.dumps({m: sorted(graph.find_modules_directly_imported_by(m)) for m in sorted(graph.modules)}))
"""


@dataclass(frozen=True)
class Function:
    path: str
    name: str
    lines: int


# Issue 36's limits: a function's own lines (nested defs counted on their own) and positional parameters
OWN_LINES_LIMIT = 60
POSITIONAL_LIMIT = 7
# where the project's settings are declared: the models of project-config.yaml and the deployment's
# settings (`Settings`), and the environment's overrides (`EnvironmentSettings`)
CONFIG_PATHS = ("layers/core/mongomem/config.py", "layers/core/mongomem/config")
ENVIRONMENT_CLASS = "EnvironmentSettings"
_TYPE_IGNORE = re.compile(r"#\s*type:\s*ignore")


@dataclass(frozen=True)
class Health:
    """Counts over layers/ and sdk/ (what issue 36 asks to bring down)."""

    largest_own: Function  # the function with the most lines of its own
    over_own_limit: int  # functions of OWN_LINES_LIMIT own lines or more
    most_positional: tuple[str, str, int]  # (path, function, positional parameters besides self/cls)
    over_positional_limit: int
    asserts: int
    any_uses: int  # the name `Any` (typing.Any) used anywhere
    type_ignores: int
    settings_declared_twice: list[str]  # fields of EnvironmentSettings another settings class declares


@dataclass(frozen=True)
class Figures:
    label: str
    modules: dict[str, int]  # area -> Python files
    lines: dict[str, int]  # area -> physical lines
    cycles: list[list[str]]  # strongly connected components of more than one module
    largest_files: list[tuple[str, int]]
    largest_functions: list[Function]
    write_path: list[tuple[str, int]]
    unit_seconds: dict[str, list[float]]  # command shown -> wall time of each run
    unit_passed: dict[str, int]
    health: Health | None = None


def python_files(root: Path, area: str) -> Iterator[Path]:
    """The .py files under root/area, without caches, virtualenvs, builds and hidden folders."""
    base = root / area
    if not base.is_dir():
        return
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(root).parts[:-1]
        if any(p in SKIP_DIRS or p.startswith(".") or p.endswith(".egg-info") for p in parts):
            continue
        yield path


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def functions_of(path: Path, rel: str) -> Iterator[Function]:
    """Every def (methods and nested ones too) with its lines, decorators left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
            yield Function(rel, node.name, node.end_lineno - node.lineno + 1)


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def own_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """def to last line, less the functions nested in it (each of those counts on its own)."""
    assert node.end_lineno is not None
    total = node.end_lineno - node.lineno + 1
    stack: list[ast.AST] = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        if isinstance(child, _DEFS) and child.end_lineno is not None:
            total -= child.end_lineno - child.lineno + 1  # its own nested defs are inside that span
        else:
            stack.extend(ast.iter_child_nodes(child))
    return total


def positional(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    names = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
    return len([n for n in names if n not in ("self", "cls")])


def class_fields(tree: ast.AST) -> dict[str, set[str]]:
    """class name -> the names its body declares with an annotation (pydantic fields)."""
    out: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            out.setdefault(node.name, set()).update(
                s.target.id
                for s in node.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            )
    return out


def health(root: Path, files: Sequence[Path]) -> Health:
    largest: Function | None = None
    over_own = over_pos = asserts = anys = ignores = 0
    most: tuple[str, str, int] = ("", "", -1)
    classes: dict[str, set[str]] = {}
    for path in files:
        rel = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
        ignores += len(_TYPE_IGNORE.findall(text))
        if any(rel == c or rel.startswith(c + "/") for c in CONFIG_PATHS):
            for name, fields in class_fields(tree).items():
                classes.setdefault(name, set()).update(fields)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert):
                asserts += 1
            elif (
                isinstance(node, ast.Name | ast.Attribute)
                and (node.id if isinstance(node, ast.Name) else node.attr) == "Any"
            ):
                anys += 1
            elif isinstance(node, _DEFS):
                own, pos = own_lines(node), positional(node)
                if largest is None or own > largest.lines:
                    largest = Function(rel, node.name, own)
                over_own += own >= OWN_LINES_LIMIT
                over_pos += pos > POSITIONAL_LIMIT
                if pos > most[2]:
                    most = (rel, node.name, pos)
    environment = classes.pop(ENVIRONMENT_CLASS, set())
    others = set().union(*classes.values()) if classes else set()
    return Health(
        largest_own=largest or Function("", "", 0),
        over_own_limit=over_own,
        most_positional=most,
        over_positional_limit=over_pos,
        asserts=asserts,
        any_uses=anys,
        type_ignores=ignores,
        settings_declared_twice=sorted(environment & others),
    )


def import_graph(root: Path) -> dict[str, list[str]]:
    """module -> the modules of the namespace it imports (lazy and TYPE_CHECKING imports included)."""
    roots = [str(root / p) for p in PACKAGE_ROOTS if (root / p).is_dir()]
    proc = subprocess.run(
        [sys.executable, "-c", _GRAPH_CHILD, *roots], capture_output=True, text=True, check=True
    )
    graph: dict[str, list[str]] = json.loads(proc.stdout)
    return graph


def strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's components (iterative), each sorted; only those of more than one module, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, int]] = [(start, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = graph.get(node, [])
            if i < len(targets):
                work.append((node, i + 1))
                nxt = targets[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(found, key=lambda c: (-len(c), c))


def write_path(root: Path) -> list[tuple[str, int]]:
    files: list[tuple[str, int]] = []
    for rel in WRITE_PATH:
        target = root / rel
        paths = sorted(target.rglob("*.py")) if target.is_dir() else [target] if target.is_file() else []
        files += [
            (p.relative_to(root).as_posix(), line_count(p)) for p in paths if "__pycache__" not in p.parts
        ]
    return files


def unit_commands(root: Path) -> dict[str, list[str]]:
    """`make unit` where the checkout's Makefile has it, and `pytest tests/unit` (like for like)."""
    commands: dict[str, list[str]] = {}
    makefile = root / "Makefile"
    if makefile.is_file() and re.search(r"^unit:", makefile.read_text(encoding="utf-8"), re.M):
        commands["make unit"] = ["make", "--no-print-directory", "unit"]
    python = str(root / ".venv" / "bin" / "python")
    commands["pytest tests/unit"] = [python, "-m", "pytest", "tests/unit", "-q", "-p", "no:cacheprovider"]
    return commands


def time_command(command: Sequence[str], cwd: Path) -> tuple[float, int]:
    """Wall seconds of one run and the tests it reports passed; a failing run stops the figures."""
    started = time.perf_counter()
    proc = subprocess.run(list(command), cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed in {cwd}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return seconds, sum(int(n) for n in re.findall(r"(\d+) passed", proc.stdout))


def time_units(figures: Sequence[tuple[Path, Figures]], runs: int) -> None:
    """Fills in the unit-test times, the checkouts taking turns run by run (a shared machine drifts)."""
    for _ in range(runs):
        for root, f in figures:
            for shown, command in unit_commands(root).items():
                seconds, passed = time_command(command, root)
                f.unit_seconds.setdefault(shown, []).append(seconds)
                f.unit_passed[shown] = passed


def measure(root: Path, label: str, top: int = 10) -> Figures:
    modules: dict[str, int] = {}
    lines: dict[str, int] = {}
    sizes: list[tuple[str, int]] = []
    funcs: list[Function] = []
    product: list[Path] = []
    for area in AREAS:
        files = list(python_files(root, area))
        counts = [line_count(p) for p in files]
        modules[area], lines[area] = len(files), sum(counts)
        if area in PRODUCT:
            product += files
            for path, n in zip(files, counts, strict=True):
                rel = path.relative_to(root).as_posix()
                sizes.append((rel, n))
                funcs += functions_of(path, rel)
    return Figures(
        label=label,
        modules=modules,
        lines=lines,
        cycles=strongly_connected(import_graph(root)),
        largest_files=sorted(sizes, key=lambda f: (-f[1], f[0]))[:top],
        largest_functions=sorted(funcs, key=lambda f: (-f.lines, f.path, f.name))[:top],
        write_path=write_path(root),
        unit_seconds={},
        unit_passed={},
        health=health(root, product),
    )


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return out


def _pairs(a: Sequence[str], b: Sequence[str]) -> Iterator[tuple[str, str]]:
    for i in range(max(len(a), len(b))):
        yield (a[i] if i < len(a) else "", b[i] if i < len(b) else "")


def render(before: Figures, after: Figures) -> str:
    head = ["", before.label, after.label]
    rows: list[list[object]] = []
    for area in AREAS:
        if before.modules[area] or after.modules[area]:
            rows.append([f"{area}/: Python modules", before.modules[area], after.modules[area]])
            rows.append([f"{area}/: lines", before.lines[area], after.lines[area]])
    for f in (before, after):
        assert f.largest_files and f.largest_functions, f"{f.label}: no Python file in layers/ or sdk/"
    rows += [
        ["import cycles in layers/ + sdk/ (components > 1 module)", len(before.cycles), len(after.cycles)],
        ["modules inside a cycle", sum(map(len, before.cycles)), sum(map(len, after.cycles))],
        [
            "largest file (lines)",
            *(f"{f.largest_files[0][0]} ({f.largest_files[0][1]})" for f in (before, after)),
        ],
        [
            "largest function (lines)",
            *(
                f"`{f.largest_functions[0].name}` in {f.largest_functions[0].path} ({f.largest_functions[0].lines})"
                for f in (before, after)
            ),
        ],
        [
            "long-term write path: lines (files)",
            *(f"{sum(n for _, n in f.write_path)} ({len(f.write_path)})" for f in (before, after)),
        ],
    ]
    if before.health is not None and after.health is not None:
        rows += health_rows(before.health, after.health)
    for shown in dict.fromkeys([*before.unit_seconds, *after.unit_seconds]):
        cells = [
            f"{statistics.median(f.unit_seconds[shown]):.1f} s, {f.unit_passed[shown]} passed "
            f"(runs {', '.join(f'{s:.1f}' for s in f.unit_seconds[shown])})"
            if shown in f.unit_seconds
            else "(no such target)"
            for f in (before, after)
        ]
        rows.append([f"`{shown}`: wall time, median", *cells])
    out = _table(head, rows)

    out += ["", "Import cycles (each strongly connected component of more than one module):", ""]
    for f in (before, after):
        listed = "; ".join(" <-> ".join(c) for c in f.cycles) if f.cycles else "none"
        out.append(f"- {f.label}: {listed}")

    out += ["", "Largest files in layers/ and sdk/:", ""]
    ranks = [
        [str(i + 1), *pair]
        for i, pair in enumerate(
            _pairs(
                [f"{p} ({n})" for p, n in before.largest_files],
                [f"{p} ({n})" for p, n in after.largest_files],
            )
        )
    ]
    out += _table(["#", before.label, after.label], ranks)

    out += ["", "Largest functions in layers/ and sdk/ (def to last line):", ""]
    ranks = [
        [str(i + 1), *pair]
        for i, pair in enumerate(
            _pairs(
                [f"`{g.name}` {g.path} ({g.lines})" for g in before.largest_functions],
                [f"`{g.name}` {g.path} ({g.lines})" for g in after.largest_functions],
            )
        )
    ]
    out += _table(["#", before.label, after.label], ranks)

    out += ["", "Long-term write path (files counted):", ""]
    out += _table(
        [before.label, after.label],
        _pairs([f"{p} ({n})" for p, n in before.write_path], [f"{p} ({n})" for p, n in after.write_path]),
    )
    return "\n".join(out) + "\n"


def health_rows(before: Health, after: Health) -> list[list[object]]:
    pair = (before, after)
    return [
        [
            "largest function, own lines (nested defs count on their own)",
            *(f"`{h.largest_own.name}` in {h.largest_own.path} ({h.largest_own.lines})" for h in pair),
        ],
        [f"functions of {OWN_LINES_LIMIT}+ own lines", *(h.over_own_limit for h in pair)],
        [
            "most positional parameters (self/cls not counted)",
            *(f"`{h.most_positional[1]}` in {h.most_positional[0]} ({h.most_positional[2]})" for h in pair),
        ],
        [
            f"functions with more than {POSITIONAL_LIMIT} positional parameters",
            *(h.over_positional_limit for h in pair),
        ],
        ["`assert` statements", *(h.asserts for h in pair)],
        ["`Any` uses", *(h.any_uses for h in pair)],
        ["`type: ignore` comments", *(h.type_ignores for h in pair)],
        [
            f"settings declared twice (in `{ENVIRONMENT_CLASS}` and another settings model)",
            *(len(h.settings_declared_twice) for h in pair),
        ],
    ]


def _label(root: Path) -> str:
    proc = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return proc.stdout.strip() if proc.returncode == 0 else root.name


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("before", type=Path, help="checkout of the old tree")
    parser.add_argument("after", type=Path, help="checkout of the new tree")
    parser.add_argument(
        "--unit-runs", type=int, default=0, help="time the unit tests this many times (0: skip)"
    )
    parser.add_argument("--top", type=int, default=10, help="how many largest files and functions to list")
    args = parser.parse_args(argv)
    roots = (args.before, args.after)
    figures = [measure(root, _label(root), args.top) for root in roots]
    time_units(list(zip(roots, figures, strict=True)), args.unit_runs)
    sys.stdout.write(render(*figures))


if __name__ == "__main__":
    main()
