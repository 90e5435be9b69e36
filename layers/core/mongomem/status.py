"""What the service reports about itself: readiness and why not, configuration, backlog."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from mongomem.config import Settings
from mongomem.extraction.watch import suspect_empty
from mongomem.models.common import Scope, utcnow
from mongomem.models.stats import KindBacklog, KindHealth
from mongomem.vectors.port import VectorIndex

if TYPE_CHECKING:
    from mongomem.longterm.conflicts import Found
    from mongomem.retrieval.reembed import EmbeddingDrift


@dataclass
class UserBacklog:
    """One user's waiting work as the store counts it."""

    unpromoted_turns: int = 0  # recorded, not yet in a snapshot
    extracting_snapshots: int = 0  # snapshots with a kind still queued or running
    extracting_turns: int = 0  # the turns of those snapshots
    unindexed_turns: int = 0  # not yet embedded for recall
    oldest: datetime | None = None  # when the oldest of that work was recorded (turns) or cut (snapshots)

    def note(self, when: datetime) -> None:
        self.oldest = when if self.oldest is None else min(self.oldest, when)


class BacklogRepository(Protocol):
    """Work waiting in the store, for one tenant (optionally one user) or, with tenant None, every tenant."""

    def sessions_waiting(self, tenant: str | None, user_id: str | None = None) -> int:
        """Sessions with turns not yet promoted to a snapshot."""
        ...

    def extraction_backlog(self, tenant: str | None, user_id: str | None = None) -> dict[str, KindBacklog]:
        """Per kind: snapshots queued, running and failed, and when the oldest waiting one was cut."""
        ...

    def recall_pending(self, tenant: str | None, user_id: str | None = None) -> int:
        """Turns recorded but not yet embedded for recall."""
        ...

    def user_backlog(self, scope: Scope, recall: bool) -> UserBacklog:
        """One user's waiting work (`recall`: whether turns are indexed for recall at all)."""
        ...

    def extraction_health(self, tenant: str | None, since: datetime) -> dict[str, KindHealth]:
        """Per kind, over the snapshots whose status changed since `since`: extractions done and failed,
        items refused by reason, and the latest failure."""
        ...


def backlog(store: BacklogRepository, tenant: str | None) -> dict[str, Any]:
    """Work waiting in MongoDB, for one tenant (what the API shows a caller) or all (operators' CLI)."""
    snapshots = {
        kind: {status: n for status in ("queued", "running", "failed") if (n := getattr(figures, status))}
        for kind, figures in store.extraction_backlog(tenant).items()
    }
    return {
        "snapshots_pending_extraction": {kind: counts for kind, counts in snapshots.items() if counts},
        "sessions_pending_promotion": store.sessions_waiting(tenant),
        # Turns recorded but not yet embedded for recall (the recall indexer's partial index).
        "recall_pending_turns": store.recall_pending(tenant),
    }


def service_status(
    readiness: dict[str, Any],
    settings: Settings,
    index: VectorIndex | None,
    store_up: bool,
    store: BacklogRepository,
    tenant: str | None,
    *,
    drift: Callable[[str | None], EmbeddingDrift | None] | None = None,
    conflicts: Callable[[str | None], Found] | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Ready only when both an LLM and an embedding provider are usable and the store answers; says why not.

    `readiness` is the providers' report (mongomem.runtime.Services.readiness). The backlog figures are
    the given tenant's only (None: every tenant, for operators). `drift` tells whether stored vectors
    come from another embedding model than the configured one (mongomem.retrieval.reembed.drift).
    """
    report = {**readiness, "reasons": list(readiness["reasons"])}
    if not store_up:
        report["ready"] = False
        report["reasons"].append("store: MongoDB is unreachable")
    report["vector_index"] = {
        "kind": type(index).__name__ if index is not None else None,
        "reachable": bool(index.ping()) if index is not None else False,
    }
    report["config"] = {"sha256": settings.config_sha256, "source": settings.config_source}
    report["extraction"] = {"enabled": [str(t) for t in settings.enabled_extractions]}
    report["recall"] = {"enabled": settings.memory.recall.enabled}
    if store_up:
        figures = backlog(store, tenant)
        report["snapshots_pending_extraction"] = figures["snapshots_pending_extraction"]
        report["sessions_pending_promotion"] = figures["sessions_pending_promotion"]
        report["recall"]["pending_turns"] = figures["recall_pending_turns"]
        # what failed lately, per kind: a model that answers badly shows here, not only as a backlog
        since = (now or utcnow()) - timedelta(hours=1)
        health = store.extraction_health(tenant, since)
        report["extraction"]["last_hour"] = {
            kind: figures.model_dump(mode="json", exclude_none=True)
            for kind, figures in sorted(health.items())
        }
        # an extractor that answers nothing where the offline rules find facts (never a quiet "done")
        report["extraction"]["suspect_empty"] = suspect_empty(health)
        report["backlog_scope"] = "all tenants" if tenant is None else f"tenant {tenant}"
        if conflicts is not None:
            # active facts of one key that say different things (GET /v1/memories/conflicts lists them)
            found = conflicts(tenant)
            report["conflicting_facts"] = {
                "keys": len(found.conflicts),
                "users": len({c.user_id for c in found.conflicts}),
                # false: the time to compare ran out (one user's many long facts of one key): at least these
                "complete": found.complete,
            }
        if report["embeddings"]["ready"] and drift is not None:
            off = drift(tenant)
            if off is not None:
                # writes go on (reconciled by key, index pending); search by meaning would mix models
                report["ready"] = False
                report["reasons"].append(off.reason())
                report["embeddings"]["stored"] = [{"model": m, "dim": d} for m, d in off.others]
                report["embeddings"]["versions_to_re_embed"] = off.versions
    return report
