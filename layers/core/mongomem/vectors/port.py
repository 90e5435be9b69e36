"""The vector index port: one index for long-term memories and recalled message turns.

MongoDB is the source of truth; an index is derived and can be dropped and rebuilt.
Both adapters (OpenSearch, embedded) share the value types, errors and fusion below so
that they rank the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, Protocol, runtime_checkable

from mongomem.errors import Unavailable
from mongomem.retrieval.lexical import rrf_fuse

__all__ = [
    "RESERVED_FIELDS",
    "RRF_K",
    "DimensionMismatch",
    "FieldValue",
    "FilterValue",
    "Hit",
    "IndexDoc",
    "IndexUnavailable",
    "Kind",
    "Mode",
    "SearchQuery",
    "VectorIndex",
    "candidate_window",
    "fuse",
    "normalize",
    "term_of",
    "time_key",
]

Kind = Literal["memory", "turn"]
Mode = Literal["hybrid", "knn", "bm25"]
FieldValue = str | int | float | bool | None | list[str]
# A list means any of; None in a list matches a document without the field (written before it existed).
FilterValue = str | list[str] | list[str | None]

# Reciprocal rank fusion constant (Cormack et al. 2009): 60 damps the head of each list so
# that a document ranked well by both retrievers beats one ranked first by only one of them.
RRF_K = 60

# Top-level document keys owned by the index; `fields` may not shadow them.
RESERVED_FIELDS = frozenset({"id", "tenant", "user_id", "kind", "text", "vector"})


class IndexUnavailable(Unavailable):
    """The vector index could not be reached or refused the request; retry later (index_sync)."""

    code = "index_unavailable"


class DimensionMismatch(ValueError):
    """A vector's dimension differs from the index's (a new embedding model needs a reindex)."""

    def __init__(self, index_dim: int, got_dim: int, index_name: str = "vector index") -> None:
        super().__init__(
            f"{index_name} has dimension {index_dim}, got vectors of dimension {got_dim}; "
            "drop the index and reindex from MongoDB to change the embedding model"
        )
        self.index_dim = index_dim
        self.got_dim = got_dim


@dataclass(slots=True)
class IndexDoc:
    """One searchable item: a memory version or a message turn, with its filterable fields."""

    id: str
    tenant: str
    user_id: str
    kind: Kind
    text: str
    vector: list[float]
    fields: dict[str, FieldValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        clash = RESERVED_FIELDS.intersection(self.fields)
        if clash:
            raise ValueError(f"IndexDoc.fields may not use reserved names: {sorted(clash)}")


@dataclass(slots=True)
class SearchQuery:
    """A scoped search; `filters` are exact matches (a list means any of, None in it: the field is absent),
    ANDed together; `ranges` bound string fields as (from, to): from <= value < to, either end open (None).
    ISO-8601 UTC timestamps in one format compare in time order. `also_user_ids` widens the scope to the
    documents of those owners too (the tenant's org memories), searched and ranked with the user's in one
    query."""

    tenant: str
    user_id: str
    kind: Kind
    text: str
    vector: list[float] | None
    top_k: int = 10
    filters: dict[str, FilterValue] = field(default_factory=dict)
    ranges: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    # knn/hybrid: minimum cosine similarity of a vector match; bm25: minimum BM25 score.
    min_score: float | None = None
    mode: Mode = "hybrid"
    also_user_ids: tuple[str, ...] = ()

    @property
    def user_ids(self) -> list[str]:
        return list(dict.fromkeys((self.user_id, *self.also_user_ids)))

    def __post_init__(self) -> None:
        if self.top_k < 1:
            raise ValueError("top_k must be at least 1")
        if self.mode == "knn" and self.vector is None:
            raise ValueError("mode 'knn' needs a query vector")
        clash = RESERVED_FIELDS.intersection({*self.filters, *self.ranges})
        if clash:
            raise ValueError(f"filters may not use reserved names (scope is implicit): {sorted(clash)}")


@dataclass(slots=True)
class Hit:
    """A search result; `signals` holds per-retriever ranks/scores (knn_rank, knn_score, bm25_*)."""

    id: str
    score: float
    signals: dict[str, float] = field(default_factory=dict)
    fields: dict[str, FieldValue] = field(default_factory=dict)


@runtime_checkable
class VectorIndex(Protocol):
    """k-NN + BM25 index scoped by (tenant, user_id, kind)."""

    def ensure(self, dim: int) -> None:
        """Create the index for `dim`-sized vectors if missing; raise DimensionMismatch if it differs."""
        ...

    def upsert(self, docs: list[IndexDoc]) -> None:
        """Insert or replace documents by id."""
        ...

    def delete(self, ids: list[str]) -> None:
        """Remove documents by id; unknown ids are ignored."""
        ...

    def delete_user(self, tenant: str, user_id: str, written_before: datetime | None = None) -> int:
        """Remove every document of one user (with `written_before`: those written before then only);
        return how many were removed."""
        ...

    def sweep_again_after(self) -> float:
        """Seconds after an erase when it must sweep again: a write this index has not yet made
        searchable escapes a sweep (a Serverless collection refreshes on its own); 0: a sweep sees all."""
        ...

    def search(self, q: SearchQuery) -> list[Hit]:
        """Best `q.top_k` hits within the query's scope, kind and filters."""
        ...

    def count(self, tenant: str | None = None, user_id: str | None = None, kind: str | None = None) -> int:
        """Number of documents matching the given scope (all when no argument is given)."""
        ...

    def drop(self) -> None:
        """Delete the whole index (before a rebuild from MongoDB)."""
        ...

    def ping(self) -> bool:
        """True when the index answers."""
        ...


def search_all(index: VectorIndex, queries: list[SearchQuery]) -> list[list[Hit]]:
    """Every query's hits: in one round trip where the index can (`search_many`), else one by one."""
    many = getattr(index, "search_many", None)
    if callable(many):
        return list(many(queries))
    return [index.search(q) for q in queries]


def time_key(value: datetime) -> str:
    """A timestamp as index fields hold it: UTC, microseconds always written, so that strings compare in
    time order (SearchQuery.ranges)."""
    utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def normalize(vector: Sequence[float]) -> list[float]:
    """Unit-length copy of `vector` (zero vectors stay zero), so inner product equals cosine."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    if norm == 0.0:
        return [0.0] * len(vector)
    return [x / norm for x in vector]


def term_of(value: object) -> str:
    """The keyword form of a field value, as OpenSearch compares it in a `term` filter."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def candidate_window(q: SearchQuery) -> int:
    """How many candidates each retriever contributes before fusion (hybrid) or the cut (knn, bm25)."""
    # A wider window lets a document ranked moderately by both retrievers reach the top_k.
    return max(2 * q.top_k, 20) if q.mode == "hybrid" else q.top_k


def fuse(
    q: SearchQuery,
    knn: list[tuple[str, float]] | None,
    bm25: list[tuple[str, float]] | None,
    fields: dict[str, dict[str, FieldValue]],
) -> list[Hit]:
    """Apply min_score and the query mode to ranked (id, score) lists; both adapters end here.

    knn scores are cosine similarities, bm25 scores raw BM25; hybrid scores are RRF sums.
    """
    # Sorting by (-score, id) makes ties deterministic, so a rebuilt index ranks identically.
    knn = None if knn is None else sorted(knn, key=lambda item: (-item[1], item[0]))
    bm25 = None if bm25 is None else sorted(bm25, key=lambda item: (-item[1], item[0]))
    if knn is not None and q.min_score is not None and q.mode != "bm25":
        knn = [(i, s) for i, s in knn if s >= q.min_score]
    if bm25 is not None and q.min_score is not None and q.mode == "bm25":
        bm25 = [(i, s) for i, s in bm25 if s >= q.min_score]
    signals: dict[str, dict[str, float]] = {}
    for name, ranking in (("knn", knn), ("bm25", bm25)):
        for rank, (doc_id, score) in enumerate(ranking or (), start=1):
            sig = signals.setdefault(doc_id, {})
            sig[f"{name}_rank"] = float(rank)
            sig[f"{name}_score"] = score
    if q.mode == "knn":
        scored = [(doc_id, score) for doc_id, score in knn or ()]
    elif q.mode == "bm25":
        scored = [(doc_id, score) for doc_id, score in bm25 or ()]
    else:
        rankings = [[doc_id for doc_id, _ in r] for r in (knn, bm25) if r]
        scored = rrf_fuse(rankings, k=RRF_K)
    return [
        Hit(id=doc_id, score=score, signals=signals[doc_id], fields=dict(fields.get(doc_id, {})))
        for doc_id, score in scored[: q.top_k]
    ]
