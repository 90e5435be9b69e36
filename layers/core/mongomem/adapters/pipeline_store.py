"""MongoDB adapter for the pipeline's backlog as one tenant (or user) sees it.

Every query filters on the tenant, so a tenant's console never counts another tenant's work. The
snapshot figures are grouped from the snapshots' per-kind statuses (SQS queue depths are shared by
all tenants and cannot be split by tenant).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo.database import Database

from mongomem.adapters.mongo import translate_errors

WAITING = ("queued", "running", "failed")


class PipelineStore:
    def __init__(self, db: Database[dict[str, Any]]) -> None:
        self.db = db

    @staticmethod
    def _scope(tenant: str, user_id: str | None) -> dict[str, Any]:
        return {"tenant": tenant, **({"user_id": user_id} if user_id is not None else {})}

    def sessions_waiting(self, tenant: str, user_id: str | None) -> int:
        """Sessions with turns not yet promoted (through the `pending` partial index)."""
        with translate_errors():
            return int(
                self.db["sessions"].count_documents({"pending": {"$gt": 0}, **self._scope(tenant, user_id)})
            )

    def extraction_backlog(self, tenant: str, user_id: str | None) -> dict[str, dict[str, Any]]:
        """{kind: {queued, running, failed, oldest_waiting_at}} of the tenant's snapshots."""
        pipeline: list[dict[str, Any]] = [
            {"$match": self._scope(tenant, user_id)},
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
        backlog: dict[str, dict[str, Any]] = {}
        with translate_errors():
            for row in self.db["snapshots"].aggregate(pipeline):
                kind = backlog.setdefault(row["_id"]["kind"], {})
                status = row["_id"]["status"]
                kind[status] = int(row["n"])
                if status != "failed" and isinstance(row.get("oldest"), datetime):
                    seen = kind.get("oldest_waiting_at")
                    kind["oldest_waiting_at"] = min(seen, row["oldest"]) if seen else row["oldest"]
        return backlog

    def recall_pending(self, tenant: str, user_id: str | None) -> int:
        """Turns waiting to be embedded for recall (through the recall indexer's partial index)."""
        with translate_errors():
            return int(
                self.db["turns"].count_documents({"recall_indexed": False, **self._scope(tenant, user_id)})
            )
