"""Memory search: embed the query, rank in the vector index, hydrate from MongoDB, boost by reinforcement.

The index only proposes ids; MongoDB (the source of truth) decides what is returned, so a hit
the index still holds for a deleted, superseded or foreign memory is dropped, never shown.

One query reads the user's private memories and the tenant's org memories (the index scope names both
owners, filters sit inside it), so the two are ranked together; each result says its visibility.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from mongomem.kinds import KindRegistry, builtin_registry
from mongomem.longterm.filters import check_filters, passes
from mongomem.longterm.ports import MemoryRepository
from mongomem.models.common import Scope, utcnow
from mongomem.models.memory import MemoryFilter, MemoryRecord, MemoryView
from mongomem.models.search import SearchRequest, SearchResponse, SearchResult, SearchSignals
from mongomem.observability import logger
from mongomem.ports import EmbeddingProvider
from mongomem.retrieval.background import in_background
from mongomem.vectors.port import (
    DimensionMismatch,
    FilterValue,
    Hit,
    IndexUnavailable,
    SearchQuery,
    VectorIndex,
    term_of,
    time_key,
)

if TYPE_CHECKING:
    from mongomem.retrieval.pending import Pending

__all__ = ["REINFORCEMENT_WEIGHT", "MemorySearch", "reinforcement_boost"]

# A memory restated 10 times ranks ~12 % higher than one said once: enough to order near-ties,
# too little to lift an unrelated memory over a relevant one (log damps heavy repetition).
REINFORCEMENT_WEIGHT = 0.05
# The index is asked for more than top_k so that the boost can reorder across the cut and so
# that hits dropped by hydration (stale index entries) do not leave the page short.
OVERFETCH = 2
MAX_FETCH = 200


def reinforcement_boost(count: int) -> float:
    """1 + 0.05 * ln(reinforcement_count): 1.0 for a memory stated once."""
    return 1.0 + REINFORCEMENT_WEIGHT * math.log(max(count, 1))


class MemorySearch:
    """Hybrid (k-NN + BM25), k-NN or BM25 search over one user's long-term memories."""

    def __init__(
        self,
        store: MemoryRepository,
        index: VectorIndex | None,
        embedder: EmbeddingProvider,
        kinds: KindRegistry | None = None,
        partition_keys: Sequence[str] = (),
        pending: Pending | None = None,
    ) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder
        self.kinds = kinds or builtin_registry()
        self.partition_keys = tuple(partition_keys)
        self.pending = pending

    def search(
        self,
        scope: Scope,
        request: SearchRequest,
        embedder: EmbeddingProvider | None = None,
        *,
        pending: bool = True,
    ) -> SearchResponse:
        """Ranked memories the user sees (theirs and the org's) for the request; superseded versions only
        when asked for. `embedder` embeds the query instead of the service's own (one shared by the
        searches of one request embeds it once); `pending=False` leaves out the "not yet" figures (a
        context block counts them once for the whole block)."""
        started = time.perf_counter()
        statuses = ["active", "superseded"] if request.include_superseded else ["active"]
        types = [str(t) for t in request.types] if request.types else None
        wanted = MemoryFilter(
            tags=tuple(request.tags or ()), domain=request.domain, metadata=dict(request.metadata or {})
        )
        check_filters(self.kinds, types, wanted, self.partition_keys)
        if self.index is None:
            raise IndexUnavailable(
                "no vector index is configured (set MONGOMEM_OPENSEARCH_ENDPOINT or MONGOMEM_VECTOR_INDEX_PATH)"
            )
        # the "not yet" figures are counted while the index answers
        waiting = in_background(self.pending.of, scope) if self.pending is not None and pending else None
        view = MemoryView(scope, request.agent_id, request.visibility)
        filters: dict[str, FilterValue] = {"status": statuses}
        if types:
            filters["type"] = types
        if request.agent_id is not None:
            filters["agent_id"] = [request.agent_id, None]  # the agent's own and those shared by agents
        if wanted.tags:
            filters["tags"] = list(wanted.tags)
        if wanted.domain is not None:
            filters["domain"] = wanted.domain
        for key, value in wanted.metadata.items():
            filters[f"metadata.{key}"] = term_of(value)
        vector = (
            None if request.mode == "bm25" else (embedder or self.embedder).embed([request.query], "query")[0]
        )
        owners = view.owners()
        query = SearchQuery(
            tenant=scope.tenant,
            user_id=owners[0],
            also_user_ids=tuple(owners[1:]),
            kind="memory",
            text=request.query,
            vector=vector,
            top_k=min(request.top_k * OVERFETCH, MAX_FETCH),
            filters=filters,
            ranges=observed_range(request.observed_after, request.observed_before),
            min_score=request.min_score,
            mode=request.mode,
        )
        try:
            hits = self.index.search(query)
        except DimensionMismatch as exc:
            raise IndexUnavailable(
                "the search index was built with another embedding model; run `mongomem reindex --re-embed`",
                {"index_dim": exc.index_dim, "query_dim": exc.got_dim},
            ) from exc
        # Ranked by the index's copy of each memory's reinforcement count (every reinforcement re-indexes
        # the memory), so only the page is read from MongoDB; hits hydration drops (an index lagging
        # behind MongoDB) are replaced by the next ones. The page is then ordered by MongoDB's figures.
        # equal fused scores (RRF ties are common) go to the closer meaning, then by id
        ordered = sorted(
            hits,
            key=lambda h: (
                -_boosted(h.score, _indexed_count(h)),
                -float(h.signals.get("knn_score") or -2.0),
                h.id,
            ),
        )
        now = utcnow()
        ranked: list[tuple[float, str, SearchResult]] = []
        read = 0
        while read < len(ordered) and len(ranked) < request.top_k:
            batch = ordered[read : read + request.top_k - len(ranked)]
            read += len(batch)
            records = {r.memory_id: r for r in self.store.get_many(view, [h.id for h in batch])}
            for hit in batch:
                record = records.get(hit.id)
                if record is None or record.status not in statuses or (types and record.type not in types):
                    continue
                if record.expires_at is not None and record.expires_at <= now:
                    continue
                if wanted and not passes(record, wanted):
                    continue
                result = _result(record, hit, request.mode == "hybrid")
                ranked.append((result.score, record.memory_id, result))
        if len(ranked) < read:
            # The index lags MongoDB (a write-through failed); index_sync will catch up.
            logger.info("search dropped stale index hits", extra={"stale": read - len(ranked)})
        # ties by meaning, then by id: a rebuilt index ranks identically
        ranked.sort(key=lambda item: (-item[0], -(item[2].signals.knn_score or -2.0), item[1]))
        return SearchResponse(
            results=[result for _, _, result in ranked[: request.top_k]],
            took_ms=round((time.perf_counter() - started) * 1000, 3),
            pending=waiting.result() if waiting is not None else None,
        )


def _boosted(score: float, count: int) -> float:
    boost = reinforcement_boost(count)
    # Dividing a negative cosine keeps "more reinforced ranks higher" true below zero as well.
    return score * boost if score >= 0 else score / boost


def _indexed_count(hit: Hit) -> int:
    value = hit.fields.get("reinforcement_count")
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 1


def _result(record: MemoryRecord, hit: Hit, hybrid: bool) -> SearchResult:
    boost = reinforcement_boost(record.reinforcement_count)
    score = _boosted(hit.score, record.reinforcement_count)
    sig = hit.signals
    return SearchResult(
        memory_id=record.memory_id,
        lineage_id=record.lineage_id,
        type=record.type,
        payload=record.payload,
        text=record.text,
        status=record.status,
        version=record.version,
        reinforcement_count=record.reinforcement_count,
        created_at=record.created_at,
        observed_at=record.observed_at,
        valid_from=record.valid_from,
        score=score,
        signals=SearchSignals(
            knn_rank=int(sig["knn_rank"]) if "knn_rank" in sig else None,
            knn_score=sig.get("knn_score"),
            bm25_rank=int(sig["bm25_rank"]) if "bm25_rank" in sig else None,
            bm25_score=sig.get("bm25_score"),
            rrf=hit.score if hybrid else None,
            reinforcement_boost=boost,
        ),
        visibility=record.visibility,
        agent_id=record.agent_id,
        metadata=record.metadata,
    )


def observed_range(
    after: datetime | None, before: datetime | None
) -> dict[str, tuple[str | None, str | None]]:
    """The index range on observed_at for an observed-time filter (none when both ends are open)."""
    if after is None and before is None:
        return {}
    return {"observed_at": (time_key(after) if after else None, time_key(before) if before else None)}
