"""The pipeline's backlog, counted from the collections: for one tenant (or user), or for every tenant.

A tenant's figures filter on its tenant, so its console never counts another tenant's work. The snapshot
figures are grouped from the snapshots' per-kind statuses (SQS queue depths are shared by all tenants
and cannot be split by tenant).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mongomem.adapters.mongo.driver import MongoDatabase, translate_errors
from mongomem.models.common import Scope, as_utc
from mongomem.models.stats import KindBacklog, KindHealth
from mongomem.status import UserBacklog

WAITING = ("queued", "running", "failed")


def _scope(tenant: str | None, user_id: str | None) -> dict[str, Any]:
    scope: dict[str, Any] = {} if tenant is None else {"tenant": tenant}
    if user_id is not None:
        scope["user_id"] = user_id
    return scope


class MongoBacklogRepository:
    """Implements status.BacklogRepository."""

    def __init__(self, database: MongoDatabase) -> None:
        self.db = database.db

    def sessions_waiting(self, tenant: str | None, user_id: str | None = None) -> int:
        # through the `pending` partial index
        with translate_errors():
            return int(
                self.db["sessions"].count_documents({**_scope(tenant, user_id), "pending": {"$gt": 0}})
            )

    def extraction_backlog(self, tenant: str | None, user_id: str | None = None) -> dict[str, KindBacklog]:
        scope = _scope(tenant, user_id)
        pipeline: list[dict[str, Any]] = [
            *([{"$match": scope}] if scope else []),
            {"$project": {"created_at": 1, "e": {"$objectToArray": {"$ifNull": ["$extraction", {}]}}}},
            {"$unwind": "$e"},
            {"$match": {"e.v.status": {"$in": list(WAITING)}}},
            {
                "$group": {
                    "_id": {"kind": "$e.k", "status": "$e.v.status"},
                    "n": {"$sum": 1},
                    "oldest": {"$min": "$created_at"},
                }
            },
        ]
        rows: dict[str, dict[str, Any]] = {}
        with translate_errors():
            for row in self.db["snapshots"].aggregate(pipeline):
                kind = rows.setdefault(row["_id"]["kind"], {})
                status = row["_id"]["status"]
                kind[status] = int(row["n"])
                if status != "failed" and isinstance(row.get("oldest"), datetime):
                    seen = kind.get("oldest_waiting_at")
                    kind["oldest_waiting_at"] = min(seen, row["oldest"]) if seen else row["oldest"]
        return {kind: KindBacklog.model_validate(figures) for kind, figures in rows.items()}

    def extraction_health(self, tenant: str | None, since: datetime) -> dict[str, KindHealth]:
        pipeline: list[dict[str, Any]] = [
            *([{"$match": _scope(tenant, None)}] if tenant is not None else []),
            {"$project": {"e": {"$objectToArray": {"$ifNull": ["$extraction", {}]}}}},
            {"$unwind": "$e"},
            {"$match": {"e.v.updated_at": {"$gte": since}}},
            {"$project": {"kind": "$e.k", "s": "$e.v", "_id": 1}},
        ]
        out: dict[str, dict[str, Any]] = {}
        with translate_errors():
            rows = list(self.db["snapshots"].aggregate(pipeline))
        for row in sorted(rows, key=lambda r: r["s"].get("updated_at") or since):
            kind = out.setdefault(
                row["kind"],
                {
                    "failures": 0,
                    "done": 0,
                    "refused": {},
                    "outcomes": {},
                    "suspect_empty": 0,
                    "kept_private": {},
                },
            )
            status = row["s"]
            if status.get("status") == "failed":
                kind["failures"] += 1
                kind["last_error"] = {
                    "at": status.get("updated_at"),
                    "snapshot_id": row["_id"],
                    "reason": status.get("reason"),
                    "final": bool(status.get("final")),
                    "error": status.get("error"),
                }
            elif status.get("status") == "done":
                kind["done"] += 1
            for reason, n in (status.get("refused") or {}).items():
                kind["refused"][reason] = kind["refused"].get(reason, 0) + int(n)
            for reason, n in (status.get("kept_private") or {}).items():
                kind["kept_private"][reason] = kind["kept_private"].get(reason, 0) + int(n)
            outcome = status.get("outcome") if status.get("status") == "done" else None
            if outcome:
                kind["outcomes"][outcome] = kind["outcomes"].get(outcome, 0) + 1
                if outcome == "empty_answer" and (status.get("rules_found") or 0) > 0:
                    kind["suspect_empty"] += 1
        return {kind: KindHealth.model_validate(figures) for kind, figures in out.items()}

    def recall_pending(self, tenant: str | None, user_id: str | None = None) -> int:
        # through the recall indexer's partial index
        with translate_errors():
            query = {**_scope(tenant, user_id), "recall_indexed": False}
            return int(self.db["turns"].count_documents(query))

    def user_backlog(self, scope: Scope, recall: bool) -> UserBacklog:
        """One user's waiting work, each figure through an index: the user's sessions with unpromoted turns
        (and the first such turn of each), the user's snapshots still extracting, and the turns the recall
        indexer's partial index still holds for the user (MongoDB picks that index: {recall_indexed: false}
        is its filter)."""
        owner = {"tenant": scope.tenant, "user_id": scope.user_id}
        out = UserBacklog()
        with translate_errors():
            self._count_unpromoted(owner, out)
            self._count_extracting(owner, out)
            if recall:
                self._count_unindexed(owner, out)
        return out

    def _count_unpromoted(self, owner: dict[str, Any], out: UserBacklog) -> None:
        """The user's sessions' turns not promoted yet, and the oldest of them."""
        for session in self.db["sessions"].find(
            {**owner, "pending": {"$gt": 0}}, {"session_id": 1, "pending": 1, "promoted_through_seq": 1}
        ):
            out.unpromoted_turns += int(session.get("pending") or 0)
            first = self.db["turns"].find_one(
                {
                    **owner,
                    "session_id": session["session_id"],
                    "seq": {"$gt": int(session.get("promoted_through_seq") or 0)},
                },
                {"recorded_at": 1, "timestamp": 1},
                sort=[("seq", 1)],
            )
            if first is not None:
                out.note(as_utc(first.get("recorded_at") or first["timestamp"]))

    def _count_extracting(self, owner: dict[str, Any], out: UserBacklog) -> None:
        """The user's snapshots some extraction kind still has queued or running, and their turns."""
        pipeline: list[dict[str, Any]] = [
            {"$match": owner},
            {
                "$project": {
                    "created_at": 1,
                    "turn_count": 1,
                    "e": {"$objectToArray": {"$ifNull": ["$extraction", {}]}},
                }
            },
            {"$match": {"e.v.status": {"$in": ["queued", "running"]}}},
            {
                "$group": {
                    "_id": None,
                    "n": {"$sum": 1},
                    "turns": {"$sum": "$turn_count"},
                    "oldest": {"$min": "$created_at"},
                }
            },
        ]
        for row in self.db["snapshots"].aggregate(pipeline):
            out.extracting_snapshots = int(row["n"])
            out.extracting_turns = int(row.get("turns") or 0)
            if isinstance(row.get("oldest"), datetime):
                out.note(as_utc(row["oldest"]))

    def _count_unindexed(self, owner: dict[str, Any], out: UserBacklog) -> None:
        """The user's turns the recall indexer has not indexed yet."""
        rows = list(
            self.db["turns"].aggregate(
                [
                    {"$match": {"recall_indexed": False, **owner}},
                    {"$group": {"_id": None, "n": {"$sum": 1}, "oldest": {"$min": "$recorded_at"}}},
                ]
            )
        )
        if rows:
            out.unindexed_turns = int(rows[0]["n"])
            if isinstance(rows[0].get("oldest"), datetime):
                out.note(as_utc(rows[0]["oldest"]))
