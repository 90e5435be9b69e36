"""tools/house_figures.py (the before/after figures of docs/house.md) on a tree small enough to count by
hand, so the script cannot rot: modules and lines per area, an import cycle through a lazy import, the
largest file and function, the write path, the unit-test timing and the Markdown it prints."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tools.house_figures import (
    Figures,
    Function,
    measure,
    render,
    strongly_connected,
    time_command,
    unit_commands,
)

BEFORE = {
    # a module cycle through a lazy import, as the old retrieval/context.py <-> context_sources.py one
    "layers/core/mongomem/context.py": "def build():\n    from mongomem import sources\n\n    return sources\n",
    "layers/core/mongomem/sources.py": "from mongomem import context\n",
    "layers/core/mongomem/extraction/reconcile.py": "x = 1\ny = 2\n",
    "sdk/mongomem/cli.py": "import mongomem.context\n",
    "tests/test_a.py": "def test_a():\n    pass\n",
    "research/lab.py": "z = 3\n",
    "layers/core/mongomem/__pycache__/stale.py": "not counted\n",
}
AFTER = {
    "layers/core/mongomem/context.py": "def build():\n    a = 1\n    b = 2\n    return a + b\n",
    "layers/core/mongomem/longterm/write/__init__.py": "",
    "layers/core/mongomem/longterm/write/writer.py": "from mongomem import context\n",
    "sdk/mongomem/cli.py": "import mongomem.context\n",
}


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_tree_is_counted_by_area_with_its_cycles_largest_parts_and_write_path(tmp_path: Path) -> None:
    # Given an old tree with a cycle through a lazy import, and a new one without
    before = measure(tree(tmp_path / "old", BEFORE), "old")
    after = measure(tree(tmp_path / "new", AFTER), "new")

    # Then modules and lines are counted per area, caches left out
    assert (before.modules["layers"], before.lines["layers"]) == (3, 7)
    assert (before.modules["tests"], before.modules["research"], after.modules["research"]) == (1, 1, 0)
    # the cycle is found in the old tree only, and nothing outside it is drawn in
    assert before.cycles == [["mongomem.context", "mongomem.sources"]]
    assert after.cycles == []
    assert before.largest_files[0] == ("layers/core/mongomem/context.py", 4)
    assert (after.largest_functions[0].name, after.largest_functions[0].lines) == ("build", 4)
    # the write path is whichever of its known files the tree has
    assert before.write_path == [("layers/core/mongomem/extraction/reconcile.py", 2)]
    assert [p for p, _ in after.write_path] == [
        "layers/core/mongomem/longterm/write/__init__.py",
        "layers/core/mongomem/longterm/write/writer.py",
    ]

    # And the Markdown puts both side by side
    text = render(before, after)
    assert "| import cycles in layers/ + sdk/ (components > 1 module) | 1 | 0 |" in text
    assert "- old: mongomem.context <-> mongomem.sources" in text
    assert "| research/: Python modules | 1 | 0 |" in text


def test_components_are_the_strongly_connected_ones_only() -> None:
    graph = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": ["e"], "e": ["d"], "f": ["a"], "g": ["g"]}
    assert strongly_connected(graph) == [["a", "b", "c"], ["d", "e"]]


def test_unit_time_is_the_targets_own_and_a_failing_run_stops_the_figures(tmp_path: Path) -> None:
    # `make unit` counts only where the Makefile has the target; pytest tests/unit always
    assert list(unit_commands(tmp_path)) == ["pytest tests/unit"]
    (tmp_path / "Makefile").write_text("lint:\n\ttrue\nunit:\n\ttrue\n")
    assert list(unit_commands(tmp_path)) == ["make unit", "pytest tests/unit"]

    seconds, passed = time_command([sys.executable, "-c", "print('== 7 passed in 0.1s ==')"], tmp_path)
    assert passed == 7 and seconds > 0
    with pytest.raises(SystemExit, match="failed"):
        time_command([sys.executable, "-c", "raise SystemExit(1)"], tmp_path)


def test_unit_times_show_their_median_and_runs() -> None:
    def figures(label: str, seconds: dict[str, list[float]]) -> Figures:
        return Figures(label, {}, {}, [], [("a.py", 1)], [], [], seconds, {k: 5 for k in seconds})

    empty = {"layers": 0, "sdk": 0, "functions": 0, "tests": 0, "bench": 0, "tools": 0, "research": 0}
    before = figures("old", {"pytest tests/unit": [3.0, 1.0, 2.0]})
    after = figures("new", {"make unit": [4.0, 4.5, 5.0], "pytest tests/unit": [1.0, 1.5, 2.5]})
    for f in (before, after):
        f.modules.update(empty)
        f.lines.update(empty)
        f.largest_functions.append(Function("a.py", "f", 1))
    text = render(before, after)
    assert (
        "| `make unit`: wall time, median | (no such target) | 4.5 s, 5 passed (runs 4.0, 4.5, 5.0) |" in text
    )
    assert "| `pytest tests/unit`: wall time, median | 2.0 s, 5 passed (runs 3.0, 1.0, 2.0) |" in text


HEALTHY = {
    # `outer` has 4 lines of its own and a nested def of 3, which counts on its own
    "layers/core/mongomem/a.py": (
        "from typing import Any\n"
        "def outer(a, b, c, d, e, f, g, h):\n"
        "    def inner() -> Any:\n"
        "        assert a\n"
        "        return a\n"
        "    x: Any = inner()  # type: ignore[no-any-return]\n"
        "    return x\n"
    ),
    "layers/core/mongomem/config.py": (
        "class Settings:\n    db_name: str = 'm'\n    stage: str | None = None\n"
        "class EnvironmentSettings:\n    db_name: str | None = None\n    region: str | None = None\n"
    ),
    "sdk/mongomem/b.py": "class C:\n    def m(self, a, b, c, d, e, f, g):\n        return a\n",
}


def test_health_counts_own_lines_parameters_asserts_any_ignores_and_settings_declared_twice(
    tmp_path: Path,
) -> None:
    h = measure(tree(tmp_path / "t", HEALTHY), "t").health
    assert h is not None
    assert (h.largest_own.name, h.largest_own.lines) == ("outer", 3)  # 6 lines, less inner's 3
    assert h.most_positional == ("layers/core/mongomem/a.py", "outer", 8)
    assert h.over_positional_limit == 1  # C.m has 7 besides self: within the limit
    assert (h.asserts, h.any_uses, h.type_ignores) == (1, 2, 1)  # the import is no use of `Any`
    assert h.settings_declared_twice == ["db_name"]
    assert h.over_own_limit == 0
