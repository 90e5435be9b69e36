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
from dataclasses import dataclass
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
        wanted = _Wanted.of(request)
        check_filters(self.kinds, wanted.types, wanted.filter, self.partition_keys)
        if self.index is None:
            raise IndexUnavailable(
                "no vector index is configured (set MONGOMEM_OPENSEARCH_ENDPOINT or MONGOMEM_VECTOR_INDEX_PATH)"
            )
        # the "not yet" figures are counted while the index answers
        waiting = in_background(self.pending.of, scope) if self.pending is not None and pending else None
        view = MemoryView(scope, request.agent_id, request.visibility)
        query = self._query(view, request, wanted, embedder or self.embedder)
        hits = _ask(self.index, query)
        ranked = self._hydrate(view, _by_indexed_rank(hits), request, wanted)
        # ties by meaning, then by id: a rebuilt index ranks identically
        ranked.sort(key=lambda r: (-r.score, -(r.signals.knn_score or -2.0), r.memory_id))
        return SearchResponse(
            results=ranked[: request.top_k],
            took_ms=round((time.perf_counter() - started) * 1000, 3),
            pending=waiting.result() if waiting is not None else None,
        )

    def _query(
        self, view: MemoryView, request: SearchRequest, wanted: _Wanted, embedder: EmbeddingProvider
    ) -> SearchQuery:
        """The index query: both owners of the view, the request's filters, the query's vector unless BM25."""
        vector = None if request.mode == "bm25" else embedder.embed([request.query], "query")[0]
        owners = view.owners()
        return SearchQuery(
            tenant=view.tenant,
            user_id=owners[0],
            also_user_ids=tuple(owners[1:]),
            kind="memory",
            text=request.query,
            vector=vector,
            top_k=min(request.top_k * OVERFETCH, MAX_FETCH),
            filters=wanted.index_filters(request.agent_id),
            ranges=observed_range(request.observed_after, request.observed_before),
            min_score=request.min_score,
            mode=request.mode,
        )

    def _hydrate(
        self, view: MemoryView, ordered: list[Hit], request: SearchRequest, wanted: _Wanted
    ) -> list[SearchResult]:
        """Read the hits from MongoDB in index order until the page is full, keeping those still shown.

        Hits hydration drops (an index lagging behind MongoDB) are replaced by the next ones."""
        now = utcnow()
        ranked: list[SearchResult] = []
        read = 0
        while read < len(ordered) and len(ranked) < request.top_k:
            batch = ordered[read : read + request.top_k - len(ranked)]
            read += len(batch)
            records = {r.memory_id: r for r in self.store.get_many(view, [h.id for h in batch])}
            for hit in batch:
                record = records.get(hit.id)
                if record is None or not wanted.admits(record, now):
                    continue
                ranked.append(_result(record, hit, request.mode == "hybrid"))
        if len(ranked) < read:
            # The index lags MongoDB (a write-through failed); index_sync will catch up.
            logger.info("search dropped stale index hits", extra={"stale": read - len(ranked)})
        return ranked


@dataclass(frozen=True)
class _Wanted:
    """What a memory must be to be shown: one of the statuses, one of the types (None: any), the filters."""

    statuses: list[str]
    types: list[str] | None
    filter: MemoryFilter

    @classmethod
    def of(cls, request: SearchRequest) -> _Wanted:
        return cls(
            statuses=["active", "superseded"] if request.include_superseded else ["active"],
            types=[str(t) for t in request.types] if request.types else None,
            filter=MemoryFilter(
                tags=tuple(request.tags or ()), domain=request.domain, metadata=dict(request.metadata or {})
            ),
        )

    def index_filters(self, agent_id: str | None) -> dict[str, FilterValue]:
        """The same criteria as the index's filters (MongoDB checks them again on hydration)."""
        filters: dict[str, FilterValue] = {"status": self.statuses}
        if self.types:
            filters["type"] = self.types
        if agent_id is not None:
            filters["agent_id"] = [agent_id, None]  # the agent's own and those shared by agents
        if self.filter.tags:
            filters["tags"] = list(self.filter.tags)
        if self.filter.domain is not None:
            filters["domain"] = self.filter.domain
        for key, value in self.filter.metadata.items():
            filters[f"metadata.{key}"] = term_of(value)
        return filters

    def admits(self, record: MemoryRecord, now: datetime) -> bool:
        """MongoDB's copy decides: a record the index still holds may have changed or expired since."""
        if record.status not in self.statuses or (self.types and record.type not in self.types):
            return False
        if record.expires_at is not None and record.expires_at <= now:
            return False
        return not (self.filter and not passes(record, self.filter))


def _ask(index: VectorIndex, query: SearchQuery) -> list[Hit]:
    """The index's hits, a dimension mismatch told as the fix it needs."""
    try:
        return index.search(query)
    except DimensionMismatch as exc:
        raise IndexUnavailable(
            "the search index was built with another embedding model; run `mongomem reindex --re-embed`",
            {"index_dim": exc.index_dim, "query_dim": exc.got_dim},
        ) from exc


def _by_indexed_rank(hits: list[Hit]) -> list[Hit]:
    """Hits ranked by the index's copy of each memory's reinforcement count.

    Every reinforcement re-indexes the memory, so only the page is read from MongoDB; the page is
    then ordered by MongoDB's figures. Equal fused scores (RRF ties are common) go to the closer
    meaning, then by id."""
    return sorted(
        hits,
        key=lambda h: (
            -_boosted(h.score, _indexed_count(h)),
            -float(h.signals.get("knn_score") or -2.0),
            h.id,
        ),
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
