"""MongoDB adapter for long-term memories: one document per version, scoped by (tenant, user_id)."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import DuplicateKeyError

from mongomem.adapters.mongo import translate_errors
from mongomem.models.common import Scope
from mongomem.models.memory import PayloadFilter

# How many of a user's active memories of one type reconciliation compares by vector (newest first).
CANDIDATE_LIMIT = 2000


class MemoryStore:
    def __init__(self, db: Database[dict[str, Any]]) -> None:
        self.coll: Collection[dict[str, Any]] = db["memories"]

    def ensure_indexes(self) -> None:
        with translate_errors():
            self.coll.create_indexes(
                [
                    IndexModel(
                        [
                            ("tenant", ASCENDING),
                            ("user_id", ASCENDING),
                            ("type", ASCENDING),
                            ("key", ASCENDING),
                            ("status", ASCENDING),
                        ],
                        name="scope_type_key",
                    ),
                    IndexModel(
                        [
                            ("tenant", ASCENDING),
                            ("user_id", ASCENDING),
                            ("lineage_id", ASCENDING),
                            ("version", ASCENDING),
                        ],
                        name="lineage_version",
                        unique=True,
                    ),
                    IndexModel(
                        [
                            ("tenant", ASCENDING),
                            ("user_id", ASCENDING),
                            ("status", ASCENDING),
                            ("created_at", DESCENDING),
                        ],
                        name="scope_status_created",
                    ),
                    IndexModel(
                        [("index_state", ASCENDING), ("updated_at", ASCENDING)],
                        name="index_outbox",
                        partialFilterExpression={"index_state": "pending"},
                    ),
                ]
            )

    # -- writes --------------------------------------------------------------------------------
    def insert(self, doc: dict[str, Any]) -> bool:
        """Insert a version; False when that exact version exists already (a redelivery)."""
        with translate_errors():
            try:
                self.coll.insert_one(doc)
                return True
            except DuplicateKeyError:
                return False

    def supersede(self, scope: Scope, old_id: str, new_id: str, at: datetime) -> None:
        with translate_errors():
            self.coll.update_one(
                {"_id": old_id, **scope.filter(), "status": "active"},
                {
                    "$set": {
                        "status": "superseded",
                        "superseded_by": new_id,
                        "valid_to": at.isoformat(),
                        "updated_at": at,
                        "index_state": "pending",
                    }
                },
            )

    def heal_lineage(
        self, scope: Scope, lineage_id: str, newest_version: int, newest_id: str, at: datetime
    ) -> None:
        """Supersede older active versions left by a crash between insert and supersede."""
        with translate_errors():
            self.coll.update_many(
                {
                    **scope.filter(),
                    "lineage_id": lineage_id,
                    "status": "active",
                    "version": {"$lt": newest_version},
                },
                {
                    "$set": {
                        "status": "superseded",
                        "superseded_by": newest_id,
                        "updated_at": at,
                        "index_state": "pending",
                    }
                },
            )

    def reinforce(
        self,
        scope: Scope,
        memory_id: str,
        evidence: dict[str, Any],
        decision: dict[str, Any],
        at: datetime,
        merge: dict[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """Count a restatement once per snapshot: +1, evidence and decision appended, fields merged."""
        query: dict[str, Any] = {"_id": memory_id, **scope.filter(), "status": "active"}
        if evidence.get("snapshot_id"):
            query["evidence.snapshot_id"] = {"$ne": evidence["snapshot_id"]}
        update: dict[str, Any] = {
            "$inc": {"reinforcement_count": 1},
            "$set": {"last_reinforced_at": at, "updated_at": at},
            "$push": {"evidence": evidence, "decisions": decision},
        }
        if merge:
            update["$set"].update(merge)
            update["$set"]["index_state"] = "pending"
        with translate_errors():
            return self.coll.find_one_and_update(query, update, return_document=ReturnDocument.AFTER)

    def set_index_state(self, ids: list[str], state: str, at: datetime) -> None:
        if not ids:
            return
        with translate_errors():
            self.coll.update_many({"_id": {"$in": ids}}, {"$set": {"index_state": state, "indexed_at": at}})

    def delete_lineage(self, scope: Scope, lineage_id: str, at: datetime) -> int:
        with translate_errors():
            result = self.coll.update_many(
                {**scope.filter(), "lineage_id": lineage_id, "status": {"$ne": "deleted"}},
                {"$set": {"status": "deleted", "deleted_at": at, "updated_at": at, "index_state": "pending"}},
            )
        return int(result.modified_count)

    # -- reads ---------------------------------------------------------------------------------
    def get(self, scope: Scope, memory_id: str) -> dict[str, Any] | None:
        with translate_errors():
            return self.coll.find_one({"_id": memory_id, **scope.filter()})

    def get_many(self, scope: Scope, ids: list[str]) -> list[dict[str, Any]]:
        with translate_errors():
            # _id first: some servers (SecantusDB) pick the index from the first key of the filter
            return list(self.coll.find({"_id": {"$in": ids}, **scope.filter()}))

    def active_by_key(self, scope: Scope, memory_type: str, key: str) -> list[dict[str, Any]]:
        with translate_errors():
            return list(
                self.coll.find({**scope.filter(), "type": memory_type, "key": key, "status": "active"}).sort(
                    "version", DESCENDING
                )
            )

    def with_evidence(
        self, scope: Scope, memory_type: str, key: str, snapshot_id: str
    ) -> dict[str, Any] | None:
        """A version of this key that already holds this snapshot's evidence (redelivery check)."""
        with translate_errors():
            return self.coll.find_one(
                {**scope.filter(), "type": memory_type, "key": key, "evidence.snapshot_id": snapshot_id},
                sort=[("version", DESCENDING)],
            )

    def candidates(
        self, scope: Scope, memory_type: str, limit: int = CANDIDATE_LIMIT
    ) -> list[dict[str, Any]]:
        with translate_errors():
            return list(
                self.coll.find(
                    {**scope.filter(), "type": memory_type, "status": "active"},
                    {"decisions": 0, "evidence": 0},
                )
                .sort("created_at", DESCENDING)
                .limit(limit)
            )

    def lineage(self, scope: Scope, lineage_id: str) -> list[dict[str, Any]]:
        with translate_errors():
            return list(
                self.coll.find({**scope.filter(), "lineage_id": lineage_id}).sort("version", ASCENDING)
            )

    def list_page(
        self,
        scope: Scope,
        memory_type: str | None,
        status: str | None,
        limit: int,
        before: datetime | None,
        payload: PayloadFilter | None = None,
    ) -> list[dict[str, Any]]:
        query: dict[str, Any] = {**scope.filter()}
        if memory_type:
            query["type"] = memory_type
        for field, value in (payload.exact if payload else {}).items():
            query[f"payload.{field}"] = value
        for field, prefix in (payload.prefix if payload else {}).items():
            # An anchored, escaped regex: a prefix match MongoDB answers from an index on the field.
            query.setdefault(f"payload.{field}", {"$regex": "^" + re.escape(prefix)})
        query["status"] = status or {"$ne": "deleted"}
        if before is not None:
            query["created_at"] = {"$lt": before}
        with translate_errors():
            return list(self.coll.find(query, {"vector": 0}).sort("created_at", DESCENDING).limit(limit))

    def decisions_per_day(
        self, tenant: str, user_id: str | None, since: datetime
    ) -> list[tuple[str, str, int]]:
        """(UTC day "YYYY-MM-DD", decision, count) of the decisions recorded since `since`."""
        match: dict[str, Any] = {"tenant": tenant, "decisions.at": {"$gte": since}}
        if user_id is not None:
            match["user_id"] = user_id
        pipeline: list[dict[str, Any]] = [
            {"$match": match},
            {"$project": {"_id": 0, "decisions.at": 1, "decisions.decision": 1}},
            {"$unwind": "$decisions"},
            {"$match": {"decisions.at": {"$gte": since}}},
            {
                "$group": {
                    "_id": {
                        "day": {"$dateToString": {"format": "%Y-%m-%d", "date": "$decisions.at"}},
                        "decision": "$decisions.decision",
                    },
                    "n": {"$sum": 1},
                }
            },
        ]
        with translate_errors():
            rows = list(self.coll.aggregate(pipeline))
        return [(r["_id"]["day"], r["_id"]["decision"], int(r["n"])) for r in rows]

    def index_backlog(self, tenant: str, user_id: str | None) -> tuple[int, datetime | None]:
        """(versions waiting for the search index, when the oldest of them changed) of a tenant or user."""
        query: dict[str, Any] = {"index_state": "pending", "tenant": tenant}
        if user_id is not None:
            query["user_id"] = user_id
        with translate_errors():
            count = self.coll.count_documents(query)
            oldest = (
                self.coll.find_one(query, {"updated_at": 1}, sort=[("updated_at", ASCENDING)])
                if count
                else None
            )
        return count, (oldest or {}).get("updated_at")

    def pending_index(self, older_than: datetime, limit: int) -> list[dict[str, Any]]:
        with translate_errors():
            return list(
                self.coll.find({"index_state": "pending", "updated_at": {"$lte": older_than}}).limit(limit)
            )

    def all_for_reindex(self, batch: int = 500) -> Any:
        with translate_errors():
            return self.coll.find({"status": {"$ne": "deleted"}}).batch_size(batch)
