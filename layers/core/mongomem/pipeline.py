"""Pipeline health as one tenant sees it: readiness, the tenant's own backlog, index lag, config version.

GET /v1/status reports the service; this reports the caller's share of the work. Every count filters
on the caller's tenant (and user, for a service account), so no figure reveals another tenant's activity.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from mongomem.config import Settings
from mongomem.models.common import as_utc, utcnow
from mongomem.models.stats import (
    ConfigVersion,
    ExtractionBacklog,
    IndexHealth,
    KindBacklog,
    PipelineHealth,
    PromotionBacklog,
    ProviderHealth,
    RecallBacklog,
)
from mongomem.status import BacklogRepository
from mongomem.vectors.port import VectorIndex


class IndexBacklog(Protocol):
    """Memory versions still waiting to be written to the vector index (the memory repository's)."""

    def index_backlog(self, tenant: str, user_id: str | None) -> tuple[int, datetime | None]:
        """(how many, when the oldest was last written)."""
        ...


def pipeline_health(
    readiness: dict[str, Any],
    pipeline: BacklogRepository,
    memories: IndexBacklog,
    index: VectorIndex | None,
    settings: Settings,
    *,
    tenant: str,
    user_id: str | None,
    now: datetime | None = None,
) -> PipelineHealth:
    """`readiness` is the providers' report (mongomem.runtime.Services.readiness)."""
    now = now or utcnow()
    report = readiness
    reachable = bool(index.ping()) if index is not None else False
    reasons = list(report["reasons"])
    if index is not None and not reachable:
        reasons.append("index: the vector index does not answer (search and recall fail, writes wait)")
    pending, oldest = memories.index_backlog(tenant, user_id)
    enabled = [str(t) for t in settings.enabled_extractions]
    backlog = pipeline.extraction_backlog(tenant, user_id)
    kinds = {kind: backlog.get(kind) or KindBacklog() for kind in sorted({*enabled, *backlog})}
    llm_state, emb_state = report["llm"], report["embeddings"]
    return PipelineHealth(
        tenant=tenant,
        user_id=user_id,
        ready=bool(report["ready"]),
        reasons=reasons,
        llm=ProviderHealth(
            name=llm_state["name"],
            ready=llm_state["ready"],
            reason=llm_state["reason"] or None,
            offline=llm_state["offline"],
        ),
        embeddings=ProviderHealth(
            name=f"{emb_state['model']} ({emb_state['dim']} dim)",
            ready=emb_state["ready"],
            reason=emb_state["reason"] or None,
        ),
        index=IndexHealth(
            kind=type(index).__name__ if index is not None else None,
            reachable=reachable,
            pending=pending,
            lag_seconds=max(0.0, round((now - as_utc(oldest)).total_seconds(), 3)) if oldest else None,
        ),
        config=ConfigVersion(sha256=settings.config_sha256, source=settings.config_source),
        promotion=PromotionBacklog(sessions_waiting=pipeline.sessions_waiting(tenant, user_id)),
        extraction=ExtractionBacklog(enabled=enabled, kinds=kinds),
        recall=RecallBacklog(
            enabled=settings.memory.recall.enabled, pending_turns=pipeline.recall_pending(tenant, user_id)
        ),
    )
