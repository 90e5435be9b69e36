"""Issue 33: after an erase, the local database's table files are rebuilt when the server stops, and a
rebuild cut short loses nothing (mongomem.local.rebuild, docs/adr/0043).

A SecantusDB server on a data dir, as the local stack runs it: WiredTiger keeps a deleted document's
page in a freed block of the table file until the block is reused; the stop after an erase's checkpoint
copies every live document and index into fresh files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pymongo import MongoClient

from mongomem.local import rebuild
from mongomem.local.lock import DataDirBusy
from mongomem.local.mongod import EmbeddedMongo


def holding(root: Path, needle: str) -> list[str]:
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()
    )


def _seed(server: EmbeddedMongo, erased: str, kept: str) -> None:
    client: Any
    with MongoClient(server.uri) as client:
        turns = client["mongomem"]["turns"]
        turns.create_index([("tenant", 1), ("user_id", 1)], name="by_user")
        turns.create_index("expires_at", expireAfterSeconds=0, name="expiry")
        turns.insert_many([{"user_id": "gone", "text": f"{erased} {i}"} for i in range(500)])
        turns.insert_many([{"user_id": "kept", "text": f"{kept} {i}"} for i in range(500)])
        client["mongomem"]["memories"].insert_one({"user_id": "kept", "text": kept})
        client.admin.command("fsync")  # the pages reach the table file
        turns.delete_many({"user_id": "gone"})
        client.admin.command("fsync")  # the erase's checkpoint


def _read(server: EmbeddedMongo) -> tuple[int, int, list[str], dict[str, Any]]:
    client: Any
    with MongoClient(server.uri) as client:
        db = client["mongomem"]
        expiry = db["turns"].index_information()["expiry"]
        return (
            db["turns"].count_documents({"user_id": "kept"}),
            db["memories"].count_documents({}),
            sorted(db["turns"].index_information()),
            {"expireAfterSeconds": expiry.get("expireAfterSeconds")},
        )


def test_the_stop_after_an_erase_leaves_no_deleted_document_in_any_file(tmp_path: Path) -> None:
    data = tmp_path / "mongo"
    server = EmbeddedMongo(data).start()
    _seed(server, "ERASEDWORDS", "KEPTWORDS")
    # while the server runs, the table file keeps the deleted page (the case the rebuild is for)
    assert holding(data, "ERASEDWORDS"), "the table file no longer keeps the deleted page: no test"
    server.stop()
    assert holding(data, "ERASEDWORDS") == []
    assert not rebuild.pending(data)
    again = EmbeddedMongo(data).start()
    try:
        assert _read(again) == (500, 1, ["_id_", "by_user", "expiry"], {"expireAfterSeconds": 0})
    finally:
        again.stop()


def test_a_stop_without_an_erase_rebuilds_nothing(tmp_path: Path) -> None:
    data = tmp_path / "mongo"
    server = EmbeddedMongo(data).start()
    client: Any
    with MongoClient(server.uri) as client:
        client["mongomem"]["turns"].insert_one({"text": "hello"})
    tables = {p.name: p.stat().st_ino for p in (data / rebuild.STORAGE).glob("secantus_*.wt")}
    server.stop()
    # the same table files (a rebuild would have put new ones in their place)
    assert {p.name: p.stat().st_ino for p in (data / rebuild.STORAGE).glob("secantus_*.wt")} == tables
    assert not (data / "rebuild").exists()


@pytest.mark.parametrize("checked", [True, False])
def test_a_rebuild_cut_between_its_renames_loses_nothing(tmp_path: Path, checked: bool) -> None:
    # Given a rebuild that copied the database (checked or not) and stopped between its two renames
    data = tmp_path / "mongo"
    server = EmbeddedMongo(data, rebuild_on_stop=False).start()
    _seed(server, "ERASEDWORDS", "KEPTWORDS")
    server.stop()
    assert rebuild.pending(data)
    fresh = data / "rebuild"
    fresh.mkdir()
    copy = EmbeddedMongo(fresh, lock=False, rebuild_on_stop=False).start()
    source = EmbeddedMongo(data, lock=False, rebuild_on_stop=False).start()
    try:
        rebuild._copy(source.uri, copy.uri, lambda _: None)
    finally:
        source.stop()
        copy.stop()
    if checked:
        (fresh / "COMPLETE").write_text("checked\n")
    os.replace(data / "db", data / "db.erased")
    # When the server starts on the data dir again
    again = EmbeddedMongo(data).start()
    try:
        # Then every kept document is there: the checked copy went in, or the old files came back
        assert _read(again)[:2] == (500, 1)
        assert not (data / "db.erased").exists() and not fresh.exists()
    finally:
        again.stop()
    # and the erase is reached: by the copy, or by the rebuild the mark still asks for at this stop
    assert holding(data, "ERASEDWORDS") == []


def test_no_rebuild_runs_under_a_running_server(tmp_path: Path) -> None:
    data = tmp_path / "mongo"
    server = EmbeddedMongo(data).start()
    try:
        with pytest.raises(DataDirBusy):
            EmbeddedMongo(data).start()  # the owner's lock: a rebuild runs only in the owner's stop
    finally:
        server.stop()


def test_a_rebuild_that_fails_keeps_the_old_files_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "mongo"
    server = EmbeddedMongo(data).start()
    _seed(server, "ERASEDWORDS", "KEPTWORDS")

    def broken(*_: Any) -> int:
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(rebuild, "_copy_collection", broken)
    server.stop()  # the stop itself succeeds
    assert "WARNING: not rebuilt (the disk is full)" in capsys.readouterr().err
    assert rebuild.pending(data) and not (data / "rebuild").exists()
    monkeypatch.undo()
    again = EmbeddedMongo(data).start()
    try:
        assert _read(again)[:2] == (500, 1)
    finally:
        again.stop()  # and the next stop rebuilds
    assert not rebuild.pending(data) and holding(data, "ERASEDWORDS") == []
