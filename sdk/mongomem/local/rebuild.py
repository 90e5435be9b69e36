"""Rebuild the local stack's database files after an erase: no freed block keeps an erased user.

WiredTiger does not zero the blocks it frees: a page of a table checkpointed before an erase stays in
the table's file (and in its history store) until the block is reused, and SecantusDB keeps the
documents of several collections in one table file, so no rewrite of one collection reaches it
(docs/adr/0043). What does reach it is a copy: every live document and index into fresh files, then
the old files overwritten and removed. The local stack does that when its database stops after an
erase (`secantus_child` leaves `ERASED_MARK` beside the storage when an erase's checkpoint runs): any
owner of the data dir (`mongomem dev`, a CLI command's own server) stopping cleanly.

Nothing is lost on failure: the copy is checked (every collection's count) before the swap, the swap is
two renames with a mark between them, and `recover` (run before any server starts on the folder)
finishes or undoes a swap an interrupted process left half done. The mark stays until a rebuild
completes, so a rebuild cut short runs again at the next stop.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pymongo import MongoClient

STORAGE = "db"  # the storage folder inside an EmbeddedMongo data dir
ERASED_MARK = "erased-since-rebuild"  # written beside the storage by the erase's checkpoint
_FRESH = "rebuild"  # the fresh server's data dir while the copy runs
_OLD = "db.erased"  # the old storage between the two renames of the swap
_COMPLETE = "COMPLETE"  # in the fresh data dir once its copy was checked
_SYSTEM_DBS = {"admin", "config", "local"}
_BATCH = 1000


class Server(Protocol):
    """A started database server on a data dir (`EmbeddedMongo`)."""

    @property
    def uri(self) -> str: ...

    def stop(self) -> None: ...


def pending(data_dir: Path) -> bool:
    """Whether an erase ran since the folder's files were last rebuilt."""
    return (data_dir / ERASED_MARK).exists()


def recover(data_dir: Path) -> None:
    """Finish or undo a swap an interrupted rebuild left half done (before a server starts here)."""
    storage, old, fresh = data_dir / STORAGE, data_dir / _OLD, data_dir / _FRESH
    if not storage.exists() and old.exists():
        if (fresh / _COMPLETE).exists() and (fresh / STORAGE).exists():
            os.replace(fresh / STORAGE, storage)  # the checked copy goes in
        else:
            os.replace(old, storage)  # no checked copy: the old files come back, the mark stays
    if storage.exists() and old.exists():
        _scrub(old)
    if fresh.exists():
        shutil.rmtree(fresh)


def rebuild(
    data_dir: Path, serve: Callable[[Path], Server], progress: Callable[[str], None] = lambda _: None
) -> dict[str, int]:
    """Copy the database of `data_dir` (whose lock the caller holds, its server stopped) into fresh
    files and put them in its place; the documents copied per `db.collection`. `serve(folder)` starts a
    server on a data dir without taking its lock."""
    recover(data_dir)
    fresh = data_dir / _FRESH
    fresh.mkdir()
    try:
        source = serve(data_dir)
        try:
            target = serve(fresh)
            try:
                copied = _copy(source.uri, target.uri, progress)
            finally:
                target.stop()
        finally:
            source.stop()
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)  # a partial copy: the old files are untouched
        raise
    (fresh / _COMPLETE).write_text("checked\n")
    os.replace(data_dir / STORAGE, data_dir / _OLD)
    os.replace(fresh / STORAGE, data_dir / STORAGE)
    progress("overwriting the old files")
    _scrub(data_dir / _OLD)
    shutil.rmtree(fresh)
    (data_dir / ERASED_MARK).unlink(missing_ok=True)
    return copied


def _copy(source_uri: str, target_uri: str, progress: Callable[[str], None]) -> dict[str, int]:
    copied: dict[str, int] = {}
    source: MongoClient[dict[str, Any]]
    target: MongoClient[dict[str, Any]]
    with MongoClient(source_uri) as source, MongoClient(target_uri) as target:
        for db_name in sorted(set(source.list_database_names()) - _SYSTEM_DBS):
            for spec in source[db_name].list_collections():
                if spec.get("type", "collection") != "collection":
                    continue
                name = str(spec["name"])
                copied[f"{db_name}.{name}"] = _copy_collection(
                    source[db_name][name], target[db_name], name, dict(spec.get("options") or {})
                )
                progress(f"{db_name}.{name}: {copied[f'{db_name}.{name}']} documents")
    return copied


def _copy_collection(source: Any, target_db: Any, name: str, options: dict[str, Any]) -> int:
    target = target_db.create_collection(name, **options)
    for index in source.list_indexes():
        spec = dict(index)
        if spec.get("name") == "_id_":
            continue
        keys = list(spec.pop("key").items())
        for field in ("v", "ns"):
            spec.pop(field, None)
        target.create_index(keys, **spec)
    count, batch = 0, []
    for document in source.find({}):
        batch.append(document)
        if len(batch) >= _BATCH:
            count += len(target.insert_many(batch, ordered=True).inserted_ids)
            batch = []
    if batch:
        count += len(target.insert_many(batch, ordered=True).inserted_ids)
    held = source.count_documents({})
    if target.count_documents({}) != held or count != held:
        raise RuntimeError(f"the copy of {name} holds {count} documents, not {held}: nothing was replaced")
    return count


def _scrub(folder: Path) -> None:
    """Overwrite every file of `folder` with zeros, then remove it (a file removed unwritten leaves its
    blocks to the file system; on a copy-on-write or flash-translated disk even this may not reach
    them: docs/security.md)."""
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            size = path.stat().st_size
            with path.open("r+b") as handle:
                left = size
                zeros = bytes(min(size, 1 << 20))
                while left > 0:
                    n = min(left, len(zeros))
                    handle.write(zeros[:n])
                    left -= n
                handle.flush()
                os.fsync(handle.fileno())
    shutil.rmtree(folder)
