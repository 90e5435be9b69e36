"""Turns (short-term memory): as the API accepts and returns them, and as the turn repository stores them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from mongomem.models.base import Model
from mongomem.models.common import USER_HELP, Identifier, SafeMapping, Text, UtcDateTime, ValidText

Role = Literal["user", "assistant", "system", "tool"]
Name = Annotated[str, StringConstraints(strict=True, min_length=1, max_length=256), ValidText]


class ToolCall(Model):
    model_config = ConfigDict(extra="forbid")

    id: Identifier
    name: Name
    arguments: SafeMapping = Field(default_factory=dict)


class TurnIn(Model):
    """One conversation turn to record."""

    model_config = ConfigDict(extra="forbid")

    role: Role = Field(description="who said it: user, assistant, system or tool")
    content: Text = Field("", description="what was said")
    tool_calls: list[ToolCall] | None = Field(
        None, max_length=64, description="assistant turns: tools called"
    )
    tool_call_id: Identifier | None = Field(None, description="tool turns: the call this answers")
    name: Annotated[str, StringConstraints(strict=True, max_length=256), ValidText] | None = Field(
        None, description="the speaker's or tool's name"
    )
    metadata: SafeMapping | None = Field(None, description="free-form, kept with the turn")
    timestamp: UtcDateTime | None = Field(None, description="when it was said (default: when recorded)")

    @model_validator(mode="after")
    def _has_content(self) -> TurnIn:
        if not self.content.strip() and not self.tool_calls:
            raise ValueError("content must not be empty (an assistant turn may carry tool_calls instead)")
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only assistant turns carry tool_calls")
        if self.tool_call_id and self.role != "tool":
            raise ValueError("only tool turns carry tool_call_id")
        return self


class RecordTurnsRequest(Model):
    """A batch `{"turns": [...]}` or a single turn `{"role", "content", ...}`; both may carry a client token."""

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier | None = Field(None, description=USER_HELP)
    agent_id: Identifier | None = Field(None, description="the agent that took part in the conversation")
    client_token: Identifier | None = Field(
        None, description="the same token on a retry records nothing twice (the batch is replayed)"
    )
    turns: list[TurnIn] = Field(min_length=1, description="the turns, in the order they were said")

    @model_validator(mode="before")
    @classmethod
    def _single_turn(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError('the body must be a JSON object: a turn, or {"turns": [...]}')
        if isinstance(data, dict) and "turns" not in data and "role" in data:
            envelope = {k: data[k] for k in ("user_id", "agent_id", "client_token") if k in data}
            turn = {k: v for k, v in data.items() if k not in envelope}
            return {**envelope, "turns": [turn]}
        return data

    def __repr__(self) -> str:
        # Powertools formats a route's arguments on every request (a debug line): the batch's size, never
        # its content (cheaper on the record path, and no conversation text in debug logs)
        return f"RecordTurnsRequest(user_id={self.user_id!r}, turns={len(self.turns)})"


class TurnOut(Model):
    turn_id: str
    session_id: str
    seq: int
    role: Role
    content: str
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    metadata: dict[str, Any] | None = None
    timestamp: datetime
    recorded_at: datetime
    snapshot_id: str | None = None


class RecordedTurn(Model):
    turn_id: str
    seq: int


class RecordTurnsResponse(Model):
    session_id: str
    user_id: str
    turns: list[RecordedTurn]
    replayed: bool = False


class TurnPage(Model):
    session_id: str
    turns: list[TurnOut]
    next_before_seq: int | None = None


RecallState = bool | Literal["failed"]


class NewTurn(Model):
    """A turn to store under its seq (the repository gives it its id)."""

    seq: int
    role: Role
    content: str
    timestamp: datetime
    recorded_at: datetime
    tokens: int
    tool_calls: list[dict[str, Any]] | None = None
    tool_call_id: str | None = None
    name: str | None = None
    metadata: dict[str, Any] | None = None
    client_token: str | None = None
    # a client token's batch: every turn knows its place, so any one of them locates the whole batch
    batch_index: int | None = None
    batch_size: int | None = None
    # False: queued for the recall indexer; None: not recallable (never queued)
    recall_indexed: RecallState | None = None
    # turns of an import: the hash that makes importing the same history twice record it once
    import_key: str | None = None


class Turn(NewTurn):
    """A stored turn. `id` is the repository's opaque key (also the recall index's reference to it)."""

    id: str
    tenant: str
    user_id: str
    session_id: str
    snapshot_id: str | None = None
    recall_ctx_next: bool | None = None  # its context text in the recall index includes the next turn
    recall_attempts: int = 0

    @property
    def public_id(self) -> str:
        """`session_id:seq`, the id the record API hands out."""
        return f"{self.session_id}:{self.seq}"


class StoredBatch(Model):
    """What is stored of one client token's batch: where it starts, its size, how many turns exist."""

    first_seq: int
    size: int | None  # None: recorded before batches carried their size
    stored: int


class RecallLane(Model):
    """One user's queue of turns waiting for the recall indexer: the indexer serves lanes in turn."""

    tenant: str
    user_id: str
    oldest: datetime  # recorded_at of the lane's oldest queued turn


class DeletedTurns(Model):
    """Turns removed from a session on request: how many, and the (seq, tokens) of each found."""

    deleted: int
    seqs: list[tuple[int, int]]
