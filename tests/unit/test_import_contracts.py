"""The import contracts `make lint` checks (import-linter, pyproject.toml): the `acyclic_modules` contract
of tools/import_contracts.py finds a cycle between modules of two packages that goes through a lazy
import (`make lint` checks the repository's own contracts)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

CONFIG = """
[tool.importlinter]
root_packages = ["pkgx"]
contract_types = ["acyclic_modules: tools.import_contracts.AcyclicModulesContract"]

[[tool.importlinter.contracts]]
name = "no cycles"
type = "acyclic_modules"
containers = ["pkgx"]
"""


def lint(config: Path, *paths: Path) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": ":".join(str(p) for p in (*paths, ROOT)), "PATH": str(Path(sys.executable).parent)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(config), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )


def test_a_cycle_through_a_lazy_import_between_two_packages_breaks_the_contract(tmp_path: Path) -> None:
    # Given a package whose config lazily imports a module that imports the config back
    files = {
        "pkgx/__init__.py": "",
        "pkgx/config.py": "def parse():\n    from pkgx.workingmemory.rules import check\n",
        "pkgx/workingmemory/__init__.py": "",
        "pkgx/workingmemory/rules.py": "from pkgx import config\n",
        "pkgx/models.py": "from pkgx import config\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    # When import-linter checks it
    result = lint(tmp_path / "pyproject.toml", tmp_path)
    # Then the contract is broken and names the cycle once, and only it
    assert result.returncode == 1, result.stdout + result.stderr
    out = " ".join(result.stdout.split())
    assert "1 import cycle(s)" in out
    assert "pkgx.config -> pkgx.workingmemory.rules -> pkgx.config" in out
    assert "pkgx.models ->" not in out
