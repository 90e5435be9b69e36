"""Semantic recall of old messages and the agent-context block: requests and responses."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from mongomem.models.common import USER_HELP, Identifier, UtcDateTime, ValidText
from mongomem.models.pending import PendingWork
from mongomem.models.turns import Role

MAX_QUERY_CHARS = 2000
MAX_TOP_K = 100
MAX_RANGE = 20
MAX_EXCLUDE = 1000

AS_OF_HELP = (
    "the date the question is asked: what was recorded after it is hidden, and dates are read relative "
    "to it (default: now)"
)

RecallScope = Literal["thread", "resource"]
RecallOrder = Literal["thread", "time"]
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

    query: Annotated[str, ValidText] = Field(
        min_length=1, max_length=MAX_QUERY_CHARS, description="what the earlier messages were about"
    )
    user_id: Identifier | None = Field(None, description=USER_HELP)
    thread: Identifier | None = Field(default=None, description="The session id (required for scope thread)")
    scope: RecallScope = Field(
        default="resource", description="resource: all the user's threads; thread: only `thread`"
    )
    top_k: int = Field(default=4, ge=1, le=MAX_TOP_K, description="how many matching messages")
    as_of: UtcDateTime | None = Field(None, description=AS_OF_HELP)
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
    order: RecallOrder = Field(
        default="thread",
        description="thread: `text` lists the messages grouped by thread; time: in overall time order "
        "across threads (also given as `messages`)",
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
    thread: str = Field(description="the thread (session id) the message belongs to")
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
    similarity: float | None = Field(
        default=None,
        description="cosine similarity of the query to the turn's own text, when a dense ranking found it "
        "(matches only)",
    )


class RecalledThread(BaseModel):
    thread: str
    turns: list[RecalledTurn]


class RecallResponse(BaseModel):
    threads: list[RecalledThread] = Field(description="grouped by thread, threads and turns in time order")
    messages: list[RecalledTurn] | None = Field(
        default=None, description="order time: every returned message in time order across threads"
    )
    omitted: int = Field(
        default=0,
        description="messages left out because the answer reached limits.max_response_bytes of content",
    )
    text: str = Field(
        "",
        description="the recalled messages ready for a prompt, inside mongomem's marker (extraction never "
        "learns from a turn that echoes it)",
    )
    matched: list[str] = Field(description="turn ids of the matches, best first")
    turn_ids: list[str] = Field(description="every returned turn id")
    took_ms: float


ContextFormat = Literal["text", "markdown", "openai", "anthropic"]
SourceMode = Literal["text", "semantic", "hybrid"]
MAX_SOURCES = 12
FilterValue = str | int | float | bool


class ContextSource(BaseModel):
    """One source of a context block: where items come from, how they are found, how many, which."""

    model_config = ConfigDict(extra="forbid")

    source: Annotated[
        str, StringConstraints(pattern=r"^(turns|working_memory|memories|[a-z][a-z0-9_]{1,31})$")
    ] = Field(
        description="turns, working_memory, memories (every kind, ranked together), one memory kind "
        "(semantic, episodic, procedural, taxonomic, ... or a custom type) or observations (the user's "
        "dated observation log: always first in the block, byte-identical until the log changes)"
    )
    mode: SourceMode = Field(
        "hybrid",
        description="memories: text = keywords (BM25), semantic = meaning (k-NN), hybrid = both; turns: "
        "text = the session's latest turns, semantic / hybrid = recall of older messages by meaning",
    )
    top_k: int = Field(5, ge=1, le=50)
    min_score: float | None = Field(
        None, ge=-1.0, allow_inf_nan=False, description="ranked sources: items scoring below are dropped"
    )
    filter: dict[
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.]{0,63}$")], FilterValue
    ] = Field(
        default_factory=dict,
        max_length=16,
        description="exact values of payload fields (memories; a list field matches when it holds the "
        "value) or of turn metadata (turns)",
    )
    scope: Literal["resource", "thread"] = Field(
        "resource",
        description="observations: the user's log across sessions (resource) or this session's (thread)",
    )

    @model_validator(mode="after")
    def _scope_of_observations(self) -> ContextSource:
        # "resource" is every source's default (a client that dumps its models sends it); only asking
        # another source for one session's log is an error
        if self.scope == "thread" and self.source != "observations":
            raise ValueError("scope is the observations source's (the user's log or this session's)")
        return self


class SourceReport(BaseModel):
    """What one source gave the block: how many items it found and chose, and why the others were dropped."""

    source: str
    mode: SourceMode
    top_k: int
    found: int = Field(description="items the source returned before filters and the budget")
    chosen: int
    dropped: dict[str, int] = Field(
        description="score: below min_score; filter: not matching; budget: no room"
    )
    tokens: int
    ids: list[str]
    ms: float = Field(description="how long the source took (sources run concurrently)")
    note: str | None = None
    version: int | None = Field(
        None, description="observations: the log's version (the same version: the same block)"
    )


class ContextRequest(BaseModel):
    """Assemble an agent's context for one session within a token budget."""

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier | None = Field(None, description=USER_HELP)
    session_id: Identifier = Field(description="the conversation (session / thread id) the block is for")
    agent_id: Identifier | None = Field(
        None, description="as this agent: its memories and working memory, the shared ones and the org's"
    )
    query: Annotated[str, ValidText] | None = Field(
        default=None, max_length=MAX_QUERY_CHARS, description="default: the session's latest user turn"
    )
    token_budget: int = Field(default=4000, ge=256, le=32000, description="the block's size limit in tokens")
    as_of: UtcDateTime | None = Field(None, description=AS_OF_HELP)
    recent_turns: int = Field(default=10, ge=0, le=200, description="the session's latest turns to include")
    memories_top_k: int | None = Field(
        default=None, ge=0, le=50, description="memories considered (default: as many as the budget holds)"
    )
    observed_after: UtcDateTime | None = Field(
        None, description="memories first stated at or after this time"
    )
    observed_before: UtcDateTime | None = Field(None, description="memories first stated before this time")
    recall_top_k: int | None = Field(
        default=None,
        ge=0,
        le=MAX_TOP_K,
        description="earlier messages considered (default: as many as the budget holds)",
    )
    message_range: int | MessageRange = Field(
        default=1, description="neighbours of each recalled message: n on each side, or {before, after}"
    )
    sources: list[ContextSource] | None = Field(
        None,
        min_length=1,
        max_length=MAX_SOURCES,
        description="what the block holds, in priority order (default: working memory, recent turns, "
        "memories, recalled messages); the budget drops items of the last sources first",
    )
    format: ContextFormat = Field(
        "text",
        description="text (labelled sections), markdown, openai (system `messages`) or anthropic (`system` blocks)",
    )
    max_tokens: int | None = Field(None, ge=256, le=32000, description="the token budget (= token_budget)")

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
        if self.max_tokens is not None:
            if "token_budget" in self.model_fields_set and self.token_budget != self.max_tokens:
                raise ValueError("max_tokens and token_budget are one setting: give one of them")
            self.token_budget = self.max_tokens
        return self


SectionName = Literal["working_memory", "recent_turns", "memories", "recalled"]


class ContextSection(BaseModel):
    name: str = Field(description="the section (working_memory, recent_turns, memories, recalled) or source")
    title: str
    text: str
    tokens: int
    ids: list[str]
    dropped: int = Field(default=0, description="items left out to fit the budget")
    truncated: bool = False
    note: str | None = None
    version: int | None = Field(
        None, description="observations: the log's version (the same version: the same block)"
    )


class ContextItem(BaseModel):
    """One item of the block and why it is there."""

    id: str = Field(description="a turn id (session_id:seq), a memory id or the working memory's reference")
    ids: list[str]
    section: str
    reason: str = Field(description="why it was chosen: its rank in its source and what ranked it there")
    value: float = Field(
        description="its estimated worth (1 = its source's best match); the block is filled "
        "best value per token first"
    )
    tokens: int


class ContextResponse(BaseModel):
    context: str = Field(description="the ready-to-use block: labelled sections in priority order")
    sections: list[ContextSection]
    ids: dict[str, list[str]]
    items: list[ContextItem] = Field(
        default_factory=list,
        description="every item of the block, in the order it was chosen, with its reason",
    )
    left_out: dict[str, int] = Field(
        default_factory=dict,
        description="candidates left out: budget (no room), duplicate (already in the block), below_floor "
        "(not relevant enough to the query)",
    )
    pending: PendingWork | None = Field(
        None,
        description="the user's turns not yet extracted or indexed: wait, rather than conclude nothing is known",
    )
    token_budget: int
    tokens: int
    query: str | None = None
    format: ContextFormat = "text"
    messages: list[dict[str, str]] | None = Field(
        None, description="format openai: the block as a system message, ready for a chat completion"
    )
    system: list[dict[str, str]] | None = Field(
        None, description="format anthropic: one text block per section, ready for `system`"
    )
    sources: list[SourceReport] | None = Field(None, description="with `sources`: what each one gave")
    timings_ms: dict[str, float] | None = Field(
        None, description="with `sources`: fetch (all sources, concurrently), fit, render and total"
    )
