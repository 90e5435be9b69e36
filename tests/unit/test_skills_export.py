"""`mongomem memories export --format skills DIR` writes only inside DIR, whatever names the server returns."""

from __future__ import annotations

import io
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mongomem.cli.memories import export_skills

HOSTILE_NAMES = [
    "../escaped",  # not read: a hostile skill name
    "../../etc/cron.d/evil",
    "/tmp/absolute-evil",
    "a/../../b",
    "..",
    ".",
    "",
    "C:\\Windows\\evil",
    "ok/../../../x",
    "\x00nul",
]


class Server:
    """A memory API that answers with whatever skill names it likes."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    def list_memories(self, user_id: Any, **_: Any) -> Any:
        memories = [
            SimpleNamespace(memory_id=f"mem-{i:024x}", lineage_id=f"lin-{i:024x}")
            for i in range(len(self.names))
        ]
        return SimpleNamespace(memories=memories, next_cursor=None)

    def get_skill(self, memory_id: str, user_id: Any) -> Any:
        name = self.names[int(memory_id[4:], 16)]
        return SimpleNamespace(name=name, content=f"---\nname: {name}\n---\nsteps\n")


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def test_every_skill_lands_inside_the_directory(tmp_path: Path) -> None:
    target = tmp_path / "skills"
    # an absolute name this test owns (a shared path like /tmp/x may be made by anything else on the machine)
    outside = tmp_path / "outside" / "absolute-evil"
    names = [*HOSTILE_NAMES, str(outside)]
    written = export_skills(Server(names), "ana", target, io.StringIO())
    assert len(written) == len(names)
    root = target.resolve()
    for path in written:
        assert path.resolve().is_relative_to(root) and path.parent.parent == root and path.name == "SKILL.md"
    # one folder per skill, each a plain name; nothing appeared beside the directory
    assert len({p.parent.name for p in written}) == len(names)
    assert all(p.parent.name.replace("-", "").isalnum() for p in written)
    assert files_under(tmp_path) == files_under(target)
    assert not outside.parent.exists() and not (tmp_path.parent / "escaped").exists()


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="the platform has no symbolic links")
def test_a_folder_that_is_a_link_is_not_written_through(tmp_path: Path) -> None:
    target, elsewhere = tmp_path / "skills", tmp_path / "elsewhere"
    target.mkdir()
    elsewhere.mkdir()
    (target / "deploy").symlink_to(elsewhere, target_is_directory=True)
    written = export_skills(Server(["deploy", "build"]), "ana", target, io.StringIO())
    assert [p.parent.name for p in written] == ["build"] and not any(elsewhere.iterdir())
