"""Semantic recall of old messages and the agent-context block: requests and responses."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from mongomem.models.common import Identifier, UtcDateTime, ValidText
from mongomem.models.turns import Role

MAX_QUERY_CHARS = 2000
MAX_TOP_K = 100
MAX_RANGE = 20
MAX_EXCLUDE = 1000

RecallScope = Literal["thread", "resource"]
TurnId = Annotated[str, StringConstraints(strict=True, min_length=3, max_length=160), ValidText]


class MessageRange(BaseModel):
    """How many neighbouring turns of the same thread to return before and after each match."""

    model_config = ConfigDict(extra="forbid")

    before: int = Field(default=1, ge=0, le=MAX_RANGE)
    after: int = Field(default=1, ge=0, le=MAX_RANGE)


def _query_text(value: str) -> str:
    if not value.strip():
        raise ValueError("query must contain a non-space character")
    return value


class RecallRequest(BaseModel):
    """Find a user's earlier messages by meaning and keywords, with their neighbours."""

    model_config = ConfigDict(extra="forbid")

    query: Annotated[str, ValidText] = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    user_id: Identifier | None = None
    thread: Identifier | None = Field(default=None, description="The session id (required for scope thread)")
    scope: RecallScope = Field(default="resource", description="resource: all the user's threads")
    top_k: int = Field(default=4, ge=1, le=MAX_TOP_K)
    message_range: int | MessageRange = Field(
        default=1, description="neighbours per match: n on each side, or {before, after}"
    )
    min_score: float | None = Field(
        default=None,
        ge=-1.0,
        le=1.0,
        allow_inf_nan=False,
        description="floor on the cosine similarity of the dense rankings",
    )
    exclude_recent: int | list[TurnId] | None = Field(
        default=None,
        description="turn ids the caller already has, or a count of the newest turns of `thread`",
    )

    _check_query = field_validator("query")(_query_text)

    @field_validator("message_range")
    @classmethod
    def _range(cls, value: int | MessageRange) -> int | MessageRange:
        if isinstance(value, int) and not 0 <= value <= MAX_RANGE:
            raise ValueError(f"message_range must be between 0 and {MAX_RANGE}")
        return value

    @field_validator("exclude_recent")
    @classmethod
    def _exclude(cls, value: int | list[str] | None) -> int | list[str] | None:
        if isinstance(value, int) and not 0 <= value <= MAX_EXCLUDE:
            raise ValueError(f"exclude_recent must be between 0 and {MAX_EXCLUDE}")
        if isinstance(value, list) and len(value) > MAX_EXCLUDE:
            raise ValueError(f"exclude_recent lists at most {MAX_EXCLUDE} turn ids")
        return value

    def span(self) -> tuple[int, int]:
        return span_of(self.message_range)


def span_of(message_range: int | MessageRange) -> tuple[int, int]:
    """(before, after) of a message_range given as n or {before, after}."""
    r = message_range
    return (r, r) if isinstance(r, int) else (r.before, r.after)


class RecalledTurn(BaseModel):
    turn_id: str = Field(description="session_id:seq, as the record API returns it")
    seq: int
    role: Role
    name: str | None = None
    content: str
    timestamp: datetime
    metadata: dict[str, Any] | None = None
    matched: bool = Field(description="true: it matched the query; false: a neighbour given as context")
    rank: int | None = Field(default=None, description="1 = best match (matches only)")
    score: float | None = Field(default=None, description="fused RRF score (matches only)")
    signals: dict[str, int] | None = Field(
        default=None,
        description="the match's rank in each ranking it appeared in: bm25 and knn over the turn's own "
        "text, bm25_context and knn_context over it with its neighbours (matches only)",
    )


class RecalledThread(BaseModel):
    thread: str
    turns: list[RecalledTurn]


class RecallResponse(BaseModel):
    threads: list[RecalledThread] = Field(description="grouped by thread, threads and turns in time order")
    text: str = Field(
        "",
        description="the recalled messages ready for a prompt, inside mongomem's marker (extraction never "
        "learns from a turn that echoes it)",
    )
    matched: list[str] = Field(description="turn ids of the matches, best first")
    turn_ids: list[str] = Field(description="every returned turn id")
    took_ms: float


class ContextRequest(BaseModel):
    """Assemble an agent's context for one session within a token budget."""

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier | None = None
    session_id: Identifier
    agent_id: Identifier | None = Field(
        None, description="as this agent: its memories and working memory, the shared ones and the org's"
    )
    query: Annotated[str, ValidText] | None = Field(
        default=None, max_length=MAX_QUERY_CHARS, description="default: the session's latest user turn"
    )
    token_budget: int = Field(default=4000, ge=256, le=32000)
    recent_turns: int = Field(default=10, ge=0, le=200)
    memories_top_k: int = Field(default=5, ge=0, le=50)
    observed_after: UtcDateTime | None = Field(
        None, description="memories first stated at or after this time"
    )
    observed_before: UtcDateTime | None = Field(None, description="memories first stated before this time")
    recall_top_k: int = Field(default=4, ge=0, le=50)
    message_range: int | MessageRange = Field(default=1)

    @field_validator("message_range")
    @classmethod
    def _range(cls, value: int | MessageRange) -> int | MessageRange:
        if isinstance(value, int) and not 0 <= value <= MAX_RANGE:
            raise ValueError(f"message_range must be between 0 and {MAX_RANGE}")
        return value

    @model_validator(mode="after")
    def _observed(self) -> ContextRequest:
        if self.observed_after and self.observed_before and self.observed_after >= self.observed_before:
            raise ValueError("observed_after must be earlier than observed_before")
        return self


SectionName = Literal["working_memory", "recent_turns", "memories", "recalled"]


class ContextSection(BaseModel):
    name: SectionName
    title: str
    text: str
    tokens: int
    ids: list[str]
    dropped: int = Field(default=0, description="items left out to fit the budget")
    truncated: bool = False
    note: str | None = None


class ContextResponse(BaseModel):
    context: str = Field(description="the ready-to-use block: labelled sections in priority order")
    sections: list[ContextSection]
    ids: dict[str, list[str]]
    token_budget: int
    tokens: int
    query: str | None = None
