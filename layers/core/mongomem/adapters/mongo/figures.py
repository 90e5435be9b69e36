"""The pipeline's backlog, counted from the collections: for one tenant (or user), or for every tenant.

A tenant's figures filter on its tenant, so its console never counts another tenant's work. The snapshot
figures are grouped from the snapshots' per-kind statuses (SQS queue depths are shared by all tenants
and cannot be split by tenant).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mongomem.adapters.mongo.driver import MongoDatabase, translate_errors
from mongomem.models.stats import KindBacklog, KindHealth

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
            kind = out.setdefault(row["kind"], {"failures": 0, "done": 0, "refused": {}})
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
        return {kind: KindHealth.model_validate(figures) for kind, figures in out.items()}

    def recall_pending(self, tenant: str | None, user_id: str | None = None) -> int:
        # through the recall indexer's partial index
        with translate_errors():
            query = {**_scope(tenant, user_id), "recall_indexed": False}
            return int(self.db["turns"].count_documents(query))
