"""Memory search: embed the query, rank in the vector index, hydrate from MongoDB, boost by reinforcement.

The index only proposes ids; MongoDB (the source of truth) decides what is returned, so a hit
the index still holds for a deleted, superseded or foreign memory is dropped, never shown.
"""

from __future__ import annotations

import math
import time
from datetime import datetime

from mongomem.longterm.ports import MemoryRepository
from mongomem.models.common import Scope, utcnow
from mongomem.models.memory import MemoryRecord
from mongomem.models.search import SearchRequest, SearchResponse, SearchResult, SearchSignals
from mongomem.observability import logger
from mongomem.ports import EmbeddingProvider
from mongomem.vectors.port import DimensionMismatch, Hit, IndexUnavailable, SearchQuery, VectorIndex, time_key

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
        self, store: MemoryRepository, index: VectorIndex | None, embedder: EmbeddingProvider
    ) -> None:
        self.store = store
        self.index = index
        self.embedder = embedder

    def search(self, scope: Scope, request: SearchRequest) -> SearchResponse:
        """Ranked memories of `scope` for the request; superseded versions only when asked for."""
        started = time.perf_counter()
        if self.index is None:
            raise IndexUnavailable(
                "no vector index is configured (set MONGOMEM_OPENSEARCH_ENDPOINT or MONGOMEM_VECTOR_INDEX_PATH)"
            )
        statuses = ["active", "superseded"] if request.include_superseded else ["active"]
        types = [str(t) for t in request.types] if request.types else None
        filters: dict[str, str | list[str]] = {"status": statuses}
        if types:
            filters["type"] = types
        vector = None if request.mode == "bm25" else self.embedder.embed([request.query], "query")[0]
        query = SearchQuery(
            tenant=scope.tenant,
            user_id=scope.user_id,
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
        records = {r.memory_id: r for r in self.store.get_many(scope, [h.id for h in hits])}
        now = utcnow()
        ranked: list[tuple[float, str, SearchResult]] = []
        for hit in hits:
            record = records.get(hit.id)
            if record is None or record.status not in statuses or (types and record.type not in types):
                continue
            if record.expires_at is not None and record.expires_at <= now:
                continue
            result = _result(record, hit, request.mode == "hybrid")
            ranked.append((result.score, record.memory_id, result))
        if len(ranked) < len(hits):
            # The index lags MongoDB (a write-through failed); index_sync will catch up.
            logger.info("search dropped stale index hits", extra={"stale": len(hits) - len(ranked)})
        ranked.sort(key=lambda item: (-item[0], item[1]))  # ties by id: a rebuilt index ranks identically
        return SearchResponse(
            results=[result for _, _, result in ranked[: request.top_k]],
            took_ms=round((time.perf_counter() - started) * 1000, 3),
        )


def _result(record: MemoryRecord, hit: Hit, hybrid: bool) -> SearchResult:
    boost = reinforcement_boost(record.reinforcement_count)
    # Dividing a negative cosine keeps "more reinforced ranks higher" true below zero as well.
    score = hit.score * boost if hit.score >= 0 else hit.score / boost
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
        score=score,
        signals=SearchSignals(
            knn_rank=int(sig["knn_rank"]) if "knn_rank" in sig else None,
            knn_score=sig.get("knn_score"),
            bm25_rank=int(sig["bm25_rank"]) if "bm25_rank" in sig else None,
            bm25_score=sig.get("bm25_score"),
            rrf=hit.score if hybrid else None,
            reinforcement_boost=boost,
        ),
    )


def observed_range(
    after: datetime | None, before: datetime | None
) -> dict[str, tuple[str | None, str | None]]:
    """The index range on observed_at for an observed-time filter (none when both ends are open)."""
    if after is None and before is None:
        return {}
    return {"observed_at": (time_key(after) if after else None, time_key(before) if before else None)}
