"""Sessions and snapshots: as the API returns them, and as the short-term repositories hand them to logic."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import ConfigDict, Field

from mongomem.kindnames import KindName
from mongomem.models.base import Model

SnapshotReason = Literal["size", "idle", "manual", "topic_shift"]
ExtractionState = Literal["queued", "running", "done", "failed", "skipped"]
ExtractionOutcome = Literal["stored", "refused", "empty_answer", "nothing_found"]


class TypeStatus(Model):
    status: ExtractionState = "queued"
    attempts: int = 0
    updated_at: datetime | None = None
    error: str | None = None
    memories: int | None = None
    # proposed items the kind refused, by reason (invalid, junk, example_copy): `done` with 0 memories and
    # refusals is "every item refused", not "nothing of the kind in the snapshot"
    refused: dict[str, int] | None = None
    # why the last attempt failed, in one word (cut_off, not_json, provider, config ...)
    reason: str | None = None
    # the failure is final: the same request failed the same way twice; not retried automatically
    final: bool | None = None
    # what a `done` extraction found (docs/operations.md "An extractor that answers nothing"): stored,
    # refused (every proposed item refused), empty_answer (the model proposed nothing; the offline rules
    # found `rules_found` items in the same turns, or have no rules for the kind: None), nothing_found
    outcome: ExtractionOutcome | None = None
    rules_found: int | None = None
    # org-kind items kept in the user's private scope instead, by reason (names_user, personal)
    kept_private: dict[str, int] | None = None
    # the snapshot was passed on to the next kind (docs/adr/0011-one-snapshot-s-kinds-in-sequence.md)
    handed_off: bool | None = Field(None, exclude=True)


class TypeStatusUpdate(Model):
    """A change to one kind's extraction status: only the fields set are written."""

    status: ExtractionState | None = None
    updated_at: datetime | None = None
    error: str | None = None
    memories: int | None = None
    refused: dict[str, int] | None = None
    reason: str | None = None
    final: bool | None = None
    outcome: ExtractionOutcome | None = None
    rules_found: int | None = None
    kept_private: dict[str, int] | None = None


class Snapshot(Model):
    snapshot_id: str
    tenant: str
    user_id: str
    session_id: str
    agent_id: str | None = None
    from_seq: int
    to_seq: int
    turn_count: int
    missing_seqs: list[int] = Field(default_factory=list)
    reason: SnapshotReason
    created_at: datetime
    fanned_out: bool = False
    extraction: dict[str, TypeStatus] = Field(default_factory=dict)


class StoredSnapshot(Snapshot):
    """A snapshot as the snapshot repository returns it (the API shows the `Snapshot` part)."""

    tokens: int = 0  # estimated tokens of its turns
    turns_expire_at: datetime | None = None  # set once every kind is extracted (retention)

    def public(self) -> Snapshot:
        return Snapshot.model_validate(self.model_dump(include=set(Snapshot.model_fields)))


class NewSnapshot(Model):
    """A seq range to cut into a snapshot; the repository gives it its (deterministic) id."""

    tenant: str
    user_id: str
    session_id: str
    agent_id: str | None = None
    from_seq: int
    to_seq: int
    turn_count: int
    missing_seqs: list[int] = Field(default_factory=list)
    tokens: int = 0
    reason: SnapshotReason
    created_at: datetime
    extraction: dict[str, TypeStatus] = Field(default_factory=dict)


class Session(Model):
    """A session's counters as the session repository returns them (no client tokens, no lease)."""

    tenant: str
    user_id: str
    session_id: str
    agent_id: str | None = None
    created_at: datetime
    last_turn_at: datetime | None = None  # None only between the session's creation and its first turn
    last_seq: int = 0  # seqs allocated so far (a batch's turns get consecutive seqs)
    promoted_through_seq: int = 0
    pending: int = 0  # allocated seqs not yet promoted
    unpromoted_tokens: int = 0
    idle_due_at: datetime | None = None  # when the idle rule makes it due (None: nothing to promote)
    size_due_at: datetime | None = None  # when the record path saw it reach a size rule (None: not marked)
    deleted_ranges: list[tuple[int, int]] = Field(default_factory=list)  # unpromoted seqs deleted on request

    @property
    def unpromoted(self) -> int:
        return self.last_seq - self.promoted_through_seq


class SessionState(Model):
    session_id: str
    user_id: str
    agent_id: str | None = None
    created_at: datetime
    last_turn_at: datetime
    turn_count: int
    unpromoted_count: int
    promoted_through_seq: int
    due_at: datetime | None = None
    snapshots: list[Snapshot] = Field(default_factory=list)


class FlushResponse(Model):
    session_id: str
    snapshot: Snapshot | None
    message: str


class DeleteTurnsResponse(Model):
    session_id: str
    from_seq: int | None = None  # None: every turn of the session
    deleted: int  # turns removed (seqs are never reused; promotion steps over the gap)


class SessionSummary(Model):
    """One of a user's sessions, as the session list shows it (no turns, no snapshots)."""

    session_id: str
    agent_id: str | None = None
    created_at: datetime
    last_turn_at: datetime
    turn_count: int
    unpromoted_count: int
    promoted_through_seq: int


class SessionPage(Model):
    user_id: str
    sessions: list[SessionSummary] = Field(description="most recently active first")
    next_cursor: str | None = None


class FailedSnapshots(Model):
    """Snapshots whose extraction failed for a kind: the tenant's dead letters, each retryable."""

    tenant: str
    user_id: str | None = None
    snapshots: list[Snapshot] = Field(description="newest first")
    next_cursor: str | None = None


class RetryRequest(Model):
    """Extract one kind of a snapshot again (its last attempt failed, or its message was lost)."""

    model_config = ConfigDict(extra="forbid")

    type: KindName = Field(description="the memory kind to extract again")


class RetryResult(Model):
    snapshot: Snapshot = Field(description="the snapshot, with the kind's status back to queued")
    type: KindName
    previous: TypeStatus = Field(description="the kind's status before the retry")
    message: str
