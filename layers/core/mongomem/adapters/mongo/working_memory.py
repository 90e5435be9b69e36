"""Working memory: `resources` (resource scope) and `threads` (thread scope).

resources: {_id, tenant, user_id, workingMemory, updated_at, version}
threads:   {_id, tenant, user_id, thread_id, title, metadata: {workingMemory, ...}, created_at, updated_at,
            version}
`version` moves on every working-memory write, so a save is a compare-and-set.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from bson.errors import InvalidDocument
from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument
from pymongo.collection import Collection
from pymongo.errors import DuplicateKeyError

from mongomem.adapters.mongo.driver import MongoDatabase, translate_errors
from mongomem.adapters.mongo.ids import resource_key, thread_key
from mongomem.errors import Conflict, InvalidInput
from mongomem.models.common import Scope, as_utc, utcnow
from mongomem.models.working_memory import Thread, WorkingMemoryKey
from mongomem.workingmemory.ports import Stored

FIELD = "workingMemory"


def _now() -> datetime:
    # BSON dates keep milliseconds; truncating here makes a write's answer equal to a later read.
    now = utcnow()
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


@contextmanager
def _storable() -> Iterator[None]:
    try:
        yield
    except (OverflowError, InvalidDocument) as exc:
        raise InvalidInput(
            "working memory holds a value the store cannot keep (e.g. an integer beyond 64 bits)",
            {"path": "data"},
        ) from exc


def _thread(doc: dict[str, Any]) -> Thread:
    return Thread(
        thread_id=doc["thread_id"],
        user_id=doc["user_id"],
        title=doc.get("title"),
        metadata=doc.get("metadata") or {},
        created_at=as_utc(doc["created_at"]),
        updated_at=as_utc(doc["updated_at"]),
    )


class MongoWorkingMemoryRepository:
    """Implements workingmemory.ports.WorkingMemoryPort on two collections of the memory database."""

    def __init__(self, database: MongoDatabase) -> None:
        self.database = database
        self.resources: Collection[dict[str, Any]] = database.db["resources"]
        self.threads: Collection[dict[str, Any]] = database.db["threads"]

    def ensure_indexes(self) -> None:
        self.database.ensure_once("threads", self._create_indexes)

    def _create_indexes(self) -> None:
        with translate_errors():
            self.threads.create_indexes(
                [
                    IndexModel(
                        [
                            ("tenant", ASCENDING),
                            ("user_id", ASCENDING),
                            ("updated_at", DESCENDING),
                            ("thread_id", DESCENDING),
                        ],
                        name="user_threads",
                    )
                ]
            )

    def _target(self, key: WorkingMemoryKey) -> tuple[Collection[dict[str, Any]], dict[str, Any], str]:
        """Collection, filter (always tenant + user_id) and the field path of the key's memory."""
        scope = {"tenant": key.tenant, "user_id": key.user_id}
        if key.scope == "thread":
            assert key.thread_id is not None
            query = {
                "_id": thread_key(key.tenant, key.user_id, key.thread_id),
                **scope,
                "thread_id": key.thread_id,
            }
            return self.threads, query, f"metadata.{FIELD}"
        return self.resources, {"_id": resource_key(key.tenant, key.user_id, key.agent_id), **scope}, FIELD

    def load(self, key: WorkingMemoryKey) -> Stored | None:
        collection, query, path = self._target(key)
        with translate_errors():
            doc = collection.find_one(query, {path: 1, "version": 1, "updated_at": 1})
        if doc is None:
            return None
        value = (doc.get("metadata") or {}).get(FIELD) if key.scope == "thread" else doc.get(FIELD)
        return Stored(value=value, version=int(doc.get("version", 0)), updated_at=doc.get("updated_at"))

    def save(self, key: WorkingMemoryKey, value: Any, expected_version: int) -> Stored | None:
        collection, query, path = self._target(key)
        now = _now()
        if expected_version == 0:
            doc: dict[str, Any] = {**query, "updated_at": now, "version": 1}
            if key.scope == "thread":
                doc.update(title=None, metadata={FIELD: value} if value is not None else {}, created_at=now)
            elif value is not None:
                doc[FIELD] = value
            try:
                with translate_errors(), _storable():
                    collection.insert_one(doc)
            except DuplicateKeyError:
                return None  # created concurrently: the caller reloads and retries
            return Stored(value=value, version=1, updated_at=now)
        update: dict[str, Any] = {"$set": {"updated_at": now}, "$inc": {"version": 1}}
        if value is None:
            update["$unset"] = {path: ""}
        else:
            update["$set"][path] = value
        with translate_errors(), _storable():
            after = collection.find_one_and_update(
                {**query, "version": expected_version},
                update,
                projection={"version": 1, "updated_at": 1},
                return_document=ReturnDocument.AFTER,
            )
        if after is None:
            return None
        return Stored(value=value, version=int(after["version"]), updated_at=after.get("updated_at"))

    def create_thread(
        self, scope: Scope, thread_id: str, title: str | None, metadata: dict[str, Any]
    ) -> Thread:
        now = _now()
        doc = {
            "_id": thread_key(scope.tenant, scope.user_id, thread_id),
            **scope.filter(),
            "thread_id": thread_id,
            "title": title,
            "metadata": metadata,
            "created_at": now,
            "updated_at": now,
            "version": 1,
        }
        try:
            with translate_errors(), _storable():
                self.threads.insert_one(doc)
        except DuplicateKeyError as exc:
            raise Conflict(
                f"thread {thread_id!r} already exists for this user", {"thread_id": thread_id}
            ) from exc
        return _thread(doc)

    def get_thread(self, scope: Scope, thread_id: str) -> Thread | None:
        query = {
            "_id": thread_key(scope.tenant, scope.user_id, thread_id),
            **scope.filter(),
            "thread_id": thread_id,
        }
        with translate_errors():
            doc = self.threads.find_one(query)
        return _thread(doc) if doc else None

    def _thread_query(self, scope: Scope, thread_id: str) -> dict[str, Any]:
        return {
            "_id": thread_key(scope.tenant, scope.user_id, thread_id),
            **scope.filter(),
            "thread_id": thread_id,
        }

    def list_threads(
        self, scope: Scope, limit: int, before: tuple[datetime, str] | None = None
    ) -> list[Thread]:
        query: dict[str, Any] = {**scope.filter()}
        if before is not None:
            at, thread_id = before
            query["$or"] = [{"updated_at": {"$lt": at}}, {"updated_at": at, "thread_id": {"$lt": thread_id}}]
        with translate_errors():
            docs = list(
                self.threads.find(query)
                .sort([("updated_at", DESCENDING), ("thread_id", DESCENDING)])
                .limit(limit)
            )
        return [_thread(d) for d in docs]

    def thread_ids(self, scope: Scope, thread_ids: list[str]) -> set[str]:
        if not thread_ids:
            return set()
        keys = [thread_key(scope.tenant, scope.user_id, t) for t in thread_ids]
        with translate_errors():
            docs = self.threads.find({"_id": {"$in": keys}, **scope.filter()}, {"thread_id": 1})
            return {d["thread_id"] for d in docs}

    def update_thread(
        self,
        scope: Scope,
        thread_id: str,
        title: str | None,
        metadata: dict[str, Any] | None,
        set_title: bool,
    ) -> Thread | None:
        query = self._thread_query(scope, thread_id)
        update: dict[str, Any] = {"$set": {"updated_at": _now()}}
        if set_title:
            update["$set"]["title"] = title
        with translate_errors():
            if metadata is not None:
                # Key by key, never the working memory inside it: only `save` writes that (compare-and-set).
                current = self.threads.find_one(query, {"metadata": 1})
                if current is None:
                    return None
                new = {k: v for k, v in metadata.items() if k != FIELD}
                gone = [k for k in (current.get("metadata") or {}) if k != FIELD and k not in new]
                update["$set"].update({f"metadata.{k}": v for k, v in new.items()})
                if gone:
                    update["$unset"] = {f"metadata.{k}": "" for k in gone}
            with _storable():
                doc = self.threads.find_one_and_update(query, update, return_document=ReturnDocument.AFTER)
        return _thread(doc) if doc else None

    def delete_thread(self, scope: Scope, thread_id: str) -> bool:
        with translate_errors():
            result = self.threads.delete_one(self._thread_query(scope, thread_id))
        return bool(result.deleted_count)
