"""What the service reports about itself: readiness and why not, configuration, backlog."""

from __future__ import annotations

from typing import Any

from mongomem.runtime import Services


def service_status(svc: Services) -> dict[str, Any]:
    """Ready only when both an LLM and an embedding provider are usable; says which and why not."""
    from mongomem.providers.factory import readiness

    settings = svc.settings
    report = readiness(svc.llm, svc.embedder)
    store_ok = svc.store.ping()
    if not store_ok:
        report["ready"] = False
        report["reasons"].append("store: MongoDB is unreachable")
    index = svc.vector_index
    report["vector_index"] = {
        "kind": type(index).__name__ if index is not None else None,
        "reachable": bool(index.ping()) if index is not None else False,
    }
    report["extraction"] = {"enabled": [t.value for t in settings.enabled_extractions]}
    report["recall"] = {"enabled": settings.memory.recall.enabled}
    if store_ok:
        pending = svc.store.snapshots.aggregate(
            [
                {"$project": {"e": {"$objectToArray": {"$ifNull": ["$extraction", {}]}}}},
                {"$unwind": "$e"},
                {"$match": {"e.v.status": {"$in": ["queued", "running", "failed"]}}},
                {"$group": {"_id": {"type": "$e.k", "status": "$e.v.status"}, "n": {"$sum": 1}}},
            ]
        )
        backlog: dict[str, dict[str, int]] = {}
        for row in pending:
            backlog.setdefault(row["_id"]["type"], {})[row["_id"]["status"]] = row["n"]
        report["snapshots_pending_extraction"] = backlog
        report["sessions_pending_promotion"] = svc.store.sessions.count_documents({"pending": {"$gt": 0}})
        # Turns recorded but not yet embedded for recall (through the recall indexer's partial index).
        report["recall"]["pending_turns"] = svc.store.turns.count_documents({"recall_indexed": False})
    return report
