"""The recent-requests log: one document per user holding its newest calls (requestlog.RecentRequestLog).

A call is appended with `$push` + `$slice`, so a user's document never holds more than `keep` calls, and
written unacknowledged (w=0): the call being logged does not wait for a round trip, and a lost entry
costs a diagnostic line, nothing else. The document carries tenant and user_id, so erasing a user removes
it with the rest of the user's data; a TTL index drops a user's log 30 days after their last call.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from pymongo import ASCENDING, WriteConcern

from mongomem.adapters.mongo.driver import MongoDatabase, translate_errors
from mongomem.adapters.mongo.ids import resource_key
from mongomem.models.common import Scope
from mongomem.models.requests import RecentRequest

COLLECTION = "recent_requests"
TTL_SECONDS = 30 * 86400


class MongoRecentRequestLog:
    """Implements requestlog.RecentRequestLog."""

    def __init__(self, database: MongoDatabase) -> None:
        self.database = database
        self.coll = database.db[COLLECTION]
        self._fire_and_forget = self.coll.with_options(write_concern=WriteConcern(w=0))

    def ensure_indexes(self) -> None:
        self.database.ensure_once(COLLECTION, self._create_indexes)

    def _create_indexes(self) -> None:
        with translate_errors():
            self.coll.create_index([("updated_at", ASCENDING)], expireAfterSeconds=TTL_SECONDS)

    def record(self, scope: Scope, entry: RecentRequest, keep: int) -> None:
        doc: dict[str, Any] = entry.model_dump(mode="python")
        at: datetime = entry.at
        with translate_errors():
            self._fire_and_forget.update_one(
                {"_id": resource_key(scope.tenant, scope.user_id)},
                {
                    "$set": {**scope.filter(), "updated_at": at},
                    "$push": {"calls": {"$each": [doc], "$slice": -keep}},
                },
                upsert=True,
            )

    def latest(self, scope: Scope, limit: int) -> list[RecentRequest]:
        with translate_errors():
            found = self.coll.find_one(
                {"_id": resource_key(scope.tenant, scope.user_id), **scope.filter()}, {"calls": 1}
            )
        calls = (found or {}).get("calls") or []
        return [RecentRequest.model_validate(c) for c in reversed(calls[-limit:])]

    def forget(self, scope: Scope, shown: Callable[[str], bool]) -> int:
        key = {"_id": resource_key(scope.tenant, scope.user_id), **scope.filter()}
        with translate_errors():
            found = self.coll.find_one(key, {"calls": 1})
            calls = (found or {}).get("calls") or []
            kept = [c for c in calls if not any(shown(str(i.get("id"))) for i in c.get("returned") or [])]
            if len(kept) < len(calls):
                self.coll.update_one(key, {"$set": {"calls": kept}})
        return len(calls) - len(kept)
