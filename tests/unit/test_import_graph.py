"""The runtime package's import graph: no cycle, and logic never imports an adapter or the composition root.

Both checks run `python -m tools.importcheck` (imports read from the source, lazy ones included); they
also run on a small package made here, so a check that can no longer find what it looks for fails too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

# Logic modules allowed to read an adapter's class directly (none: long-term memory reads the
# MemoryRepository Protocol of longterm.ports); an entry that no longer imports an adapter fails this test.
NOT_YET_ON_PORTS: set[str] = set()


def check(*args: str, root: Path = ROOT / "layers" / "core") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tools.importcheck", *args, "--root", str(root)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def test_the_runtime_package_has_no_import_cycle() -> None:
    result = check("cycles")
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 cycles" in result.stdout


def test_no_logic_module_imports_an_adapter_or_the_composition_root() -> None:
    allowed = [arg for module in sorted(NOT_YET_ON_PORTS) for arg in ("--allow", module)]
    result = check("layers", *allowed)
    assert result.returncode == 0, result.stdout + result.stderr
    # every allowance is still needed (remove it once its module depends on a port)
    everything = check("layers")
    offenders = {
        line.split(" logic module ")[1].split(" ")[0]
        for line in everything.stdout.splitlines()
        if " logic module " in line
    }
    assert offenders == NOT_YET_ON_PORTS


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "mongomem" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_checker_finds_a_cycle_through_a_lazy_import(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "config.py": "def parse():\n    from mongomem.workingmemory.config import check\n",
            "workingmemory/__init__.py": "",
            "workingmemory/config.py": "from mongomem import runtime\n",
            "runtime.py": "from mongomem.config import parse\n",
            "models.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mongomem.runtime import x\n",
        },
    )
    result = check("cycles", root=root)
    assert result.returncode == 1
    assert "mongomem.config -> mongomem.runtime -> mongomem.workingmemory.config" in result.stdout
    assert "mongomem.models" not in result.stdout  # a TYPE_CHECKING import never runs


def test_the_checker_names_logic_that_imports_an_adapter_or_the_root(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "adapters/__init__.py": "",
            "adapters/mongo.py": "import pymongo\n",
            "vectors/__init__.py": "",
            "vectors/port.py": "",
            "shortterm/__init__.py": "",
            "shortterm/record.py": "from mongomem.vectors.port import x\nfrom mongomem.adapters.mongo import y\n",
            "status.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mongomem.runtime import S\n",
            "runtime.py": "from mongomem.adapters import mongo\n",
            "api/__init__.py": "",
            "api/routes.py": "from mongomem.runtime import S\n",
        },
    )
    result = check("layers", root=root)
    assert result.returncode == 1
    found = {line.split(": ", 1)[1] for line in result.stdout.splitlines() if " logic module " in line}
    assert found == {
        "logic module mongomem.shortterm.record imports mongomem.adapters.mongo",
        "logic module mongomem.status imports mongomem.runtime (under TYPE_CHECKING)",
    }


def test_the_checker_refuses_an_api_module_naming_the_runtime(tmp_path: Path) -> None:
    # the api's routers receive their services from the handler: not even a type may come from the root
    root = _package(
        tmp_path,
        {
            "runtime.py": "",
            "api/__init__.py": "",
            "api/routes.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mongomem.runtime import S\n",
            "api/app.py": "from mongomem.api import routes\n",
        },
    )
    result = check("layers", root=root)
    assert result.returncode == 1
    assert "forbidden: mongomem.api.routes imports mongomem.runtime (under TYPE_CHECKING)" in result.stdout
    assert "mongomem.api.app" not in result.stdout
