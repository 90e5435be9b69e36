"""Observational memory's logs: `observations`, one document per (tenant, user_id).

{_id: resource_key(tenant, user_id), tenant, user_id, version, writes, observations: [{at, session_id,
seq, last_seq, text, merged}], snapshots: [...], updated_at}. `writes` moves on every save, so a save is a
compare-and-set; erasure removes the document with the user (adapters/mongo/erasure.py).
"""

from __future__ import annotations

from typing import Any

from pymongo.collection import Collection
from pymongo.errors import DuplicateKeyError

from mongomem.adapters.mongo.driver import MongoDatabase, translate_errors
from mongomem.adapters.mongo.ids import resource_key
from mongomem.errors import Conflict
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
        with translate_errors():
            for _ in range(FORGET_ATTEMPTS):
                doc = self.logs.find_one(
                    {**key, "observations.session_id": session_id}, {"observations": 1, "writes": 1}
                )
                if doc is None:
                    return 0
                lines = doc.get("observations") or []
                kept = [o for o in lines if not _of_turns(o, session_id, from_seq)]
                if len(kept) == len(lines):
                    return 0
                # `writes` moves on, so a writer that read the log before this fails its compare-and-set;
                # this one is a compare-and-set too (a line merged meanwhile is read again)
                done = self.logs.update_one(
                    {**key, "writes": doc.get("writes", 0)},
                    {"$set": {"observations": kept}, "$inc": {"version": 1, "writes": 1}},
                )
                if done.matched_count == 1:
                    return len(lines) - len(kept)
        raise Conflict(
            "the observation log kept changing while its lines were forgotten: try the delete again"
        )


FORGET_ATTEMPTS = 8


def _of_turns(line: dict[str, Any], session_id: str, from_seq: int | None) -> bool:
    """Whether a stored line holds words of the session's turns from `from_seq` on: a line the reflector
    merged holds every turn up to its `last_seq` (issue 33's twenty-fourth probe: a line filed under an
    earlier turn kept a deleted turn's words)."""
    if line.get("session_id") != session_id:
        return False
    last = max(int(line.get("seq", 0)), int(line.get("last_seq") or 0))
    return from_seq is None or last >= from_seq
