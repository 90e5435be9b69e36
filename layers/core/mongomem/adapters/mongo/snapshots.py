"""Snapshots (`snapshots`): `_id` = "snap-" + a hash of (session, from_seq), so racing cuts collide.

{_id, tenant, user_id, session_id, agent_id, from_seq, to_seq, turn_count, missing_seqs, tokens, reason,
 created_at, fanned_out, extraction: {<kind>: {status, attempts, updated_at, error, memories}},
 turns_expire_at}
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.collection import Collection
from pymongo.errors import DuplicateKeyError

from mongomem.adapters.mongo.driver import MongoDatabase, translate_errors, update_and_read
from mongomem.adapters.mongo.ids import snapshot_id
from mongomem.models.common import Scope
from mongomem.models.sessions import NewSnapshot, StoredSnapshot, TypeStatusUpdate

COLLECTION = "snapshots"


def _snapshot(doc: dict[str, Any]) -> StoredSnapshot:
    return StoredSnapshot.model_validate({**doc, "snapshot_id": doc["_id"]})


class MongoSnapshotRepository:
    """Implements shortterm.ports.SnapshotRepository."""

    def __init__(self, database: MongoDatabase) -> None:
        self.database = database
        self.coll: Collection[dict[str, Any]] = database.db[COLLECTION]

    def ensure_indexes(self) -> None:
        self.database.ensure_once(COLLECTION, self._create_indexes)

    def _create_indexes(self) -> None:
        with translate_errors():
            self.coll.create_indexes(
                [
                    IndexModel(
                        [
                            ("tenant", ASCENDING),
                            ("user_id", ASCENDING),
                            ("session_id", ASCENDING),
                            ("from_seq", ASCENDING),
                        ],
                        name="session_range",
                    ),
                    IndexModel(
                        [("fanned_out", ASCENDING), ("created_at", ASCENDING)],
                        name="fanout_outbox",
                        partialFilterExpression={"fanned_out": False},
                    ),
                ]
            )

    def create(self, snapshot: NewSnapshot) -> StoredSnapshot:
        scope = Scope(tenant=snapshot.tenant, user_id=snapshot.user_id)
        doc = {
            "_id": snapshot_id(scope, snapshot.session_id, snapshot.from_seq),
            **snapshot.model_dump(exclude={"extraction"}),
            "fanned_out": False,
            "extraction": {k: v.model_dump(exclude_none=True) for k, v in snapshot.extraction.items()},
        }
        with translate_errors():
            try:
                self.coll.insert_one(doc)
                return _snapshot(doc)
            except DuplicateKeyError:
                existing = self.coll.find_one({"_id": doc["_id"]})
                assert existing is not None
                return _snapshot(existing)

    def get(self, snapshot_id: str) -> StoredSnapshot | None:
        with translate_errors():
            doc = self.coll.find_one({"_id": snapshot_id})
        return _snapshot(doc) if doc else None

    def get_for(self, scope: Scope, snapshot_id: str) -> StoredSnapshot | None:
        # ids are global, so the scope is checked here
        with translate_errors():
            doc = self.coll.find_one({"_id": snapshot_id, **scope.filter()})
        return _snapshot(doc) if doc else None

    def starting_at(self, scope: Scope, session_id: str, from_seq: int) -> StoredSnapshot | None:
        return self.get(snapshot_id(scope, session_id, from_seq))

    def of_session(self, scope: Scope, session_id: str, limit: int = 100) -> list[StoredSnapshot]:
        with translate_errors():
            cursor = (
                self.coll.find({**scope.filter(), "session_id": session_id})
                .sort("from_seq", DESCENDING)
                .limit(limit)
            )
            return [_snapshot(d) for d in cursor]

    def failed(
        self, tenant: str, user_id: str | None, kinds: list[str], limit: int, before: datetime | None = None
    ) -> list[StoredSnapshot]:
        if not kinds:
            return []
        query: dict[str, Any] = {
            "tenant": tenant,
            "$or": [{f"extraction.{k}.status": "failed"} for k in kinds],
        }
        if user_id is not None:
            query["user_id"] = user_id
        if before is not None:
            query["created_at"] = {"$lt": before}
        with translate_errors():
            cursor = self.coll.find(query).sort("created_at", DESCENDING).limit(limit)
            return [_snapshot(d) for d in cursor]

    def mark_fanned_out(self, snapshot_id: str) -> None:
        with translate_errors():
            self.coll.update_one({"_id": snapshot_id}, {"$set": {"fanned_out": True}})

    def unfanned(self, older_than: datetime, limit: int) -> list[StoredSnapshot]:
        with translate_errors():
            cursor = self.coll.find({"fanned_out": False, "created_at": {"$lte": older_than}}).limit(limit)
            return [_snapshot(d) for d in cursor]

    def set_extraction(
        self, snapshot_id: str, kind: str, update: TypeStatusUpdate, inc_attempts: bool = False
    ) -> StoredSnapshot | None:
        fields = update.model_dump(exclude_unset=True)
        change: dict[str, Any] = {}
        if fields:
            change["$set"] = {f"extraction.{kind}.{k}": v for k, v in fields.items()}
        if inc_attempts:
            change["$inc"] = {f"extraction.{kind}.attempts": 1}
        if not change:
            return self.get(snapshot_id)
        with translate_errors():
            doc = update_and_read(self.coll, {"_id": snapshot_id}, change)
        return _snapshot(doc) if doc else None

    def requeue_extraction(
        self, scope: Scope, snapshot_id: str, kind: str, at: datetime
    ) -> StoredSnapshot | None:
        path = f"extraction.{kind}"
        query = {"_id": snapshot_id, **scope.filter(), f"{path}.status": {"$exists": True, "$ne": "done"}}
        update = {"$set": {f"{path}.status": "queued", f"{path}.error": None, f"{path}.updated_at": at}}
        with translate_errors():
            doc = update_and_read(self.coll, query, update)
        return _snapshot(doc) if doc else None

    def hand_off(self, snapshot_id: str, kind: str, done: bool = True) -> bool:
        path = f"extraction.{kind}.handed_off"
        query = {"_id": snapshot_id, path: {"$ne": True} if done else True}
        with translate_errors():
            result = self.coll.update_one(query, {"$set": {path: done}})
        return bool(result.modified_count)

    def delete_session(self, scope: Scope, session_id: str) -> int:
        with translate_errors():
            result = self.coll.delete_many({**scope.filter(), "session_id": session_id})
        return int(result.deleted_count)
