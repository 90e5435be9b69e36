"""Observational memory's logs: `observations`, one document per (tenant, user_id).

{_id: resource_key(tenant, user_id), tenant, user_id, version, writes, observations: [{at, session_id,
seq, text, merged}], snapshots: [...], updated_at}. `writes` moves on every save, so a save is a
compare-and-set; erasure removes the document with the user (adapters/mongo/erasure.py).
"""

from __future__ import annotations

from typing import Any

from pymongo.collection import Collection
from pymongo.errors import DuplicateKeyError

from mongomem.adapters.mongo.driver import MongoDatabase, translate_errors
from mongomem.adapters.mongo.ids import resource_key
from mongomem.models.common import Scope
from mongomem.models.observations import ObservationLog

COLLECTION = "observations"


class MongoObservationRepository:
    """Implements observations.ports.ObservationRepository."""

    def __init__(self, database: MongoDatabase) -> None:
        self.logs: Collection[dict[str, Any]] = database.db[COLLECTION]

    def ensure_indexes(self) -> None:
        """Nothing beyond `_id`: every read and write names one (tenant, user_id)."""

    def get(self, scope: Scope) -> ObservationLog | None:
        with translate_errors():
            doc = self.logs.find_one({"_id": resource_key(scope.tenant, scope.user_id), **scope.filter()})
        if doc is None:
            return None
        return ObservationLog.model_validate(
            {k: v for k, v in doc.items() if k in ObservationLog.model_fields}
        )

    def save(self, scope: Scope, log: ObservationLog, expected: int) -> bool:
        key = resource_key(scope.tenant, scope.user_id)
        body = {**log.model_dump(), **scope.filter()}
        with translate_errors():
            if expected == 0:
                try:
                    self.logs.insert_one({"_id": key, **body})
                except DuplicateKeyError:
                    return False
                return True
            done = self.logs.replace_one({"_id": key, **scope.filter(), "writes": expected}, body)
        return done.matched_count == 1

    def forget(self, scope: Scope, session_id: str, from_seq: int | None) -> int:
        key = {"_id": resource_key(scope.tenant, scope.user_id), **scope.filter()}
        line: dict[str, Any] = {"session_id": session_id}
        if from_seq is not None:
            line["seq"] = {"$gte": from_seq}
        with translate_errors():
            doc = self.logs.find_one(
                {**key, "observations": {"$elemMatch": line}}, {"observations": 1, "writes": 1}
            )
            if doc is None:
                return 0
            gone = sum(
                1
                for o in doc.get("observations") or []
                if o.get("session_id") == session_id
                and (from_seq is None or int(o.get("seq", 0)) >= from_seq)
            )
            # `writes` moves on, so a writer that read the log before this fails its compare-and-set
            self.logs.update_one(key, {"$pull": {"observations": line}, "$inc": {"version": 1, "writes": 1}})
        return gone
