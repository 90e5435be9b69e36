"""The user directory: a tenant's users, found where their data is.

There is no users collection: a user exists once something was recorded for them. Each page is one
grouped query per collection holding users (sessions, memories, working memory), merged by user_id.
Its cost grows with the tenant's documents in those collections, which suits an operator's console,
not a per-request path.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mongomem.adapters.mongo.driver import MongoDatabase, translate_errors
from mongomem.adapters.mongo.memory_store import unexpired
from mongomem.models.common import as_utc
from mongomem.models.users import UserSummary


class MongoDirectoryRepository:
    """Implements directory.DirectoryRepository."""

    def __init__(self, database: MongoDatabase) -> None:
        self.db = database.db

    def users(
        self, tenant: str, limit: int, after: str | None = None, only: str | None = None
    ) -> list[UserSummary]:
        match: dict[str, Any] = {"tenant": tenant}
        if only is not None:
            match["user_id"] = only
        elif after is not None:
            match["user_id"] = {"$gt": after}
        active = {"$cond": [{"$eq": ["$status", "active"]}, 1, 0]}
        streams = {
            "sessions": ("sessions", {"$sum": 1}, "$last_turn_at"),
            "memories": ("memories", {"$sum": active}, "$updated_at"),
            "working_memory": ("resources", {"$sum": 1}, "$updated_at"),
        }
        rows: dict[str, dict[str, Any]] = {}
        with translate_errors():
            for field, (collection, count, when) in streams.items():
                # an expired memory is gone from every read before the TTL monitor deletes it
                stage = {**match, **unexpired()} if collection == "memories" else match
                pipeline: list[dict[str, Any]] = [
                    {"$match": stage},
                    {"$group": {"_id": "$user_id", "n": count, "last": {"$max": when}}},
                    {"$sort": {"_id": 1}},
                    {"$limit": limit},
                ]
                for group in self.db[collection].aggregate(pipeline):
                    row = rows.setdefault(
                        group["_id"],
                        {"user_id": group["_id"], "sessions": 0, "memories": 0, "last_activity_at": None},
                    )
                    if field in row:
                        row[field] = int(group["n"])
                    row["last_activity_at"] = _latest(row["last_activity_at"], group.get("last"))
        return [
            UserSummary(
                user_id=row["user_id"],
                sessions=row["sessions"],
                memories=row["memories"],
                last_activity_at=as_utc(row["last_activity_at"]) if row["last_activity_at"] else None,
            )
            for row in (rows[user] for user in sorted(rows)[:limit])
        ]


def _latest(a: datetime | None, b: Any) -> datetime | None:
    if not isinstance(b, datetime):
        return a
    return b if a is None or b > a else a
