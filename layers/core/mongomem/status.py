"""What the service reports about itself: readiness and why not, configuration, backlog."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mongomem.runtime import Services

if TYPE_CHECKING:
    from mongomem.adapters.mongo import MongoStore


def backlog(store: MongoStore, tenant: str | None) -> dict[str, Any]:
    """Work waiting in MongoDB, for one tenant (what the API shows a caller) or all (operators' CLI)."""
    scope: dict[str, Any] = {} if tenant is None else {"tenant": tenant}
    pending = store.snapshots.aggregate(
        [
            *([{"$match": scope}] if scope else []),
            {"$project": {"e": {"$objectToArray": {"$ifNull": ["$extraction", {}]}}}},
            {"$unwind": "$e"},
            {"$match": {"e.v.status": {"$in": ["queued", "running", "failed"]}}},
            {"$group": {"_id": {"type": "$e.k", "status": "$e.v.status"}, "n": {"$sum": 1}}},
        ]
    )
    snapshots: dict[str, dict[str, int]] = {}
    for row in pending:
        snapshots.setdefault(row["_id"]["type"], {})[row["_id"]["status"]] = row["n"]
    return {
        "snapshots_pending_extraction": snapshots,
        "sessions_pending_promotion": store.sessions.count_documents({**scope, "pending": {"$gt": 0}}),
        # Turns recorded but not yet embedded for recall (the recall indexer's partial index).
        "recall_pending_turns": store.turns.count_documents({**scope, "recall_indexed": False}),
    }


def service_status(svc: Services, tenant: str | None) -> dict[str, Any]:
    """Ready only when both an LLM and an embedding provider are usable; says which and why not.

    The backlog figures are the given tenant's only (None: every tenant, for operators).
    """
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
    report["config"] = {"sha256": settings.config_sha256, "source": settings.config_source}
    report["extraction"] = {"enabled": [t.value for t in settings.enabled_extractions]}
    report["recall"] = {"enabled": settings.memory.recall.enabled}
    if store_ok:
        figures = backlog(svc.store, tenant)
        report["snapshots_pending_extraction"] = figures["snapshots_pending_extraction"]
        report["sessions_pending_promotion"] = figures["sessions_pending_promotion"]
        report["recall"]["pending_turns"] = figures["recall_pending_turns"]
        report["backlog_scope"] = "all tenants" if tenant is None else f"tenant {tenant}"
        if report["embeddings"]["ready"]:
            from mongomem.retrieval.reembed import drift

            off = drift(svc.memory_store, svc.embedder, tenant)
            if off is not None:
                # writes go on (reconciled by key, index pending); search by meaning would mix models
                report["ready"] = False
                report["reasons"].append(off.reason())
                report["embeddings"]["stored"] = [{"model": m, "dim": d} for m, d in off.others]
                report["embeddings"]["versions_to_re_embed"] = off.versions
    return report
