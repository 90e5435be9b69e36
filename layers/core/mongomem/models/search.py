"""Memory search: the request a caller sends and the ranked, MongoDB-hydrated results it gets back."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mongomem.kindnames import MAX_CUSTOM_TYPES, BuiltinKind, KindName
from mongomem.models.common import USER_HELP, Identifier, UtcDateTime, ValidText
from mongomem.models.memory import Status, Visibility
from mongomem.models.pending import PendingWork

SearchMode = Literal["hybrid", "knn", "bm25"]

MAX_QUERY_CHARS = 2000
MAX_TOP_K = 100


class SearchRequest(BaseModel):
    """Search one user's long-term memories by meaning and keywords."""

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier | None = Field(None, description=USER_HELP)
    query: Annotated[str, ValidText] = Field(
        min_length=1, max_length=MAX_QUERY_CHARS, description="what to find, in plain words"
    )
    types: list[KindName] | None = Field(
        default=None,
        min_length=1,
        max_length=len(BuiltinKind) + MAX_CUSTOM_TYPES,
        description="only these memory kinds (semantic, episodic, procedural, taxonomic, preference or a "
        "custom type; default: every kind)",
    )
    top_k: int = Field(default=10, ge=1, le=MAX_TOP_K, description="how many memories to return")
    # knn / hybrid: floor on cosine similarity of the vector match; bm25: floor on the BM25 score.
    min_score: float | None = Field(
        default=None, ge=-1.0, allow_inf_nan=False, description="results scoring below are left out"
    )
    include_superseded: bool = Field(False, description="also return versions a newer one replaced")
    mode: SearchMode = Field(
        "hybrid", description="hybrid: meaning (k-NN) and keywords (BM25) fused; knn or bm25 alone"
    )
    observed_after: UtcDateTime | None = Field(
        None, description="only memories first stated at or after this time (their evidence's turn time)"
    )
    observed_before: UtcDateTime | None = Field(
        None, description="only memories first stated before this time"
    )
    agent_id: Identifier | None = Field(
        None, description="as this agent: its own private memories, the user's shared ones and the org's"
    )
    visibility: Visibility | None = Field(
        None,
        description="private: only the user's memories; org: only the tenant's shared ones (default both)",
    )
    tags: list[Annotated[str, ValidText, Field(min_length=1, max_length=300)]] | None = Field(
        None,
        min_length=1,
        max_length=20,
        description="memories with any of these tags (episodic, procedural)",
    )
    domain: Annotated[str, ValidText] | None = Field(
        None, min_length=1, max_length=300, description="taxonomic terms of this domain"
    )
    metadata: dict[str, str | int | float | bool] | None = Field(
        None, description="exact values of memory metadata keys named in memory.metadata.partition_keys"
    )

    @model_validator(mode="after")
    def _range(self) -> SearchRequest:
        if self.observed_after and self.observed_before and self.observed_after >= self.observed_before:
            raise ValueError("observed_after must be earlier than observed_before")
        return self

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must contain a non-space character")
        return value


class SearchSignals(BaseModel):
    """Why a result ranks where it does: per-retriever ranks and scores, fusion and boost."""

    knn_rank: int | None = None
    knn_score: float | None = None
    bm25_rank: int | None = None
    bm25_score: float | None = None
    rrf: float | None = None
    reinforcement_boost: float = 1.0


class SearchResult(BaseModel):
    memory_id: str
    lineage_id: str
    type: KindName
    payload: dict[str, Any]
    text: str
    status: Status
    version: int
    reinforcement_count: int
    created_at: datetime
    observed_at: datetime | None = Field(None, description="when the memory was first stated")
    valid_from: str | None = Field(None, description="the date from which the fact holds, when known")
    score: float
    signals: SearchSignals
    visibility: Visibility = Field("private", description="private: the user's own; org: the tenant's")
    agent_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class SearchResponse(BaseModel):
    results: list[SearchResult]
    took_ms: float
    pending: PendingWork | None = Field(
        None,
        description="the user's turns not yet extracted or indexed: wait, rather than conclude nothing is known",
    )
