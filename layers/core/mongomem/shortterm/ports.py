"""The repositories short-term memory needs: sessions, their turns, and the snapshots cut from them.

Each returns domain models (mongomem.models.sessions / turns). Ids, document shapes and index names are
the adapter's (mongomem.adapters.mongo); one contract suite (tests/contract) holds every implementation
to the behaviour described here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:  # annotations only: importing the ports costs no model
    from datetime import datetime

    from mongomem.models.common import Scope
    from mongomem.models.sessions import NewSnapshot, Session, StoredSnapshot, TypeStatusUpdate
    from mongomem.models.turns import DeletedTurns, NewTurn, RecallLane, RecallState, StoredBatch, Turn

# How many recent client tokens a session remembers: only a fast path for retries (what makes a token
# once-only is TurnRepository.insert_new's (session, token, batch_index) uniqueness).
TOKEN_WINDOW = 200
# How many deleted unpromoted seq ranges a session remembers; older ones fall back to the hole grace period.
DELETED_RANGES = 50


class Allocated(NamedTuple):
    """What one allocation left on the session: the last seq reserved and the counters after it."""

    last_seq: int
    pending: int
    unpromoted_tokens: int
    size_marked: bool  # the session is already marked due by size (`mark_size_due`)


class NewBatch:
    """A batch of turns about to be recorded in a session: what `SessionRepository.allocate` reserves.

    A plain class: a NamedTuple would add ~0.1 ms of CPU to the record path's cold start (its import)."""

    __slots__ = ("agent_id", "client_token", "idle_due_at", "size", "tokens")

    def __init__(
        self, size: int, tokens: int, agent_id: str | None, client_token: str | None, idle_due_at: datetime
    ) -> None:
        self.size = size  # the turns in the batch: as many consecutive seqs are reserved
        self.tokens = tokens  # their estimated tokens, added to the session's unpromoted_tokens
        self.agent_id = agent_id  # the agent the batch names (a session belongs to one agent)
        self.client_token = client_token  # the client's retry token, remembered among the recent ones
        self.idle_due_at = idle_due_at  # when the session becomes due by idleness if no turn follows


class TokenSeen(Exception):
    """The client token is among the session's recent tokens: the request is a retry."""


class AgentConflict(Exception):
    """The batch names another agent than the session belongs to (its first turns' agent_id, or none)."""

    def __init__(self, session_agent: str | None) -> None:
        super().__init__(session_agent)
        self.session_agent = session_agent


class SessionRepository(Protocol):
    """One document per (tenant, user_id, session_id): seq allocation, counters, leases."""

    def allocate(self, scope: Scope, session_id: str, batch: NewBatch, now: datetime) -> Allocated:
        """Reserve `batch.size` consecutive seqs in one round trip; returns the last one and the counters.

        Creates the session on its first turn, bumps `pending` and `unpromoted_tokens`, sets
        `last_turn_at` and `idle_due_at`, and remembers the client token (the last TOKEN_WINDOW).
        Raises TokenSeen, allocating nothing, when the token is already remembered, and AgentConflict,
        allocating nothing, when `batch.agent_id` is given and the session belongs to another agent (or
        none).
        """
        ...

    def mark_size_due(self, scope: Scope, session_id: str, at: datetime) -> None:
        """Make the session due by size (the record path saw its counters reach a size rule): the
        scan finds it among the marked sessions only, so recording never rewrites a size index."""
        ...

    def clear_size_due(
        self, scope: Scope, session_id: str, max_messages: int, max_tokens: int | None
    ) -> None:
        """Unmark a session promoted below the size rules; a record that reached them again in
        between keeps the mark (the condition is on the counters, in one update)."""
        ...

    def token_seen_at(self, scope: Scope, session_id: str, client_token: str) -> datetime | None:
        """When the token was first used in this session (None when it is not remembered)."""
        ...

    def get(self, scope: Scope, session_id: str) -> Session | None: ...

    def user_sessions(
        self, scope: Scope, limit: int, before: tuple[datetime, str] | None = None
    ) -> list[Session]:
        """The user's sessions, most recently active first; `before` = (last_turn_at, session_id) pages."""
        ...

    def claim_due(self, owner: str, now: datetime, lease_seconds: int) -> Session | None:
        """Lease one due session nobody holds (or whose lease expired).

        Due: `idle_due_at <= now`, or marked due by size (`mark_size_due`). Its cost grows with due
        sessions, not with all sessions.
        """
        ...

    def claim(
        self, scope: Scope, session_id: str, owner: str, now: datetime, lease_seconds: int
    ) -> Session | None:
        """Lease this session unless another owner holds an unexpired lease."""
        ...

    def release(self, scope: Scope, session_id: str, owner: str) -> None:
        """Drop the lease if `owner` still holds it."""
        ...

    def advance(self, scope: Scope, session_id: str, snapshot: StoredSnapshot) -> Session | None:
        """Move promoted_through_seq over the snapshot if it still ends just before it (compare-and-set).

        Takes the snapshot's turns and tokens off the counters; a session left with nothing pending
        leaves the idle and size rules (idle_due_at and the size mark unset). None when another
        scanner advanced it first.
        """
        ...

    def forget_deleted(
        self, scope: Scope, session_id: str, tokens: int, deleted: tuple[int, int] | None
    ) -> None:
        """After turns were deleted: take their tokens off, remember the deleted unpromoted seq range."""
        ...

    def create_copy(self, scope: Scope, session_id: str, source: Session, now: datetime) -> bool:
        """Create `session_id` (a clone of `source`'s thread) with source's seqs, all promoted.

        False, creating nothing, when the session exists.
        """
        ...

    def delete(self, scope: Scope, session_id: str) -> bool:
        """Remove the session (its counters); False when it did not exist."""
        ...


class TurnRepository(Protocol):
    """One document per (tenant, user_id, session_id, seq)."""

    def insert_new(self, scope: Scope, session_id: str, turns: list[NewTurn]) -> bool:
        """Insert a batch under freshly allocated seqs, in order.

        False, inserting nothing, when its client token already holds a batch in this session (a retry
        from beyond the session's token window). Fresh seqs that already exist raise StoreUnavailable.
        """
        ...

    def insert_missing(self, scope: Scope, session_id: str, turns: list[NewTurn]) -> None:
        """Insert the turns that do not exist yet (finishing a batch a failed attempt left half-stored)."""
        ...

    def token_batch(self, scope: Scope, session_id: str, client_token: str) -> StoredBatch | None:
        """What is stored of the token's batch in this session (None: nothing)."""
        ...

    def import_keys(self, scope: Scope, session_id: str) -> set[str]:
        """The import keys of the session's imported turns (mongomem.shortterm.importing)."""
        ...

    def latest(self, scope: Scope, session_id: str, limit: int, before_seq: int | None = None) -> list[Turn]:
        """The newest `limit` turns (with seq < before_seq), oldest first."""
        ...

    def in_range(self, scope: Scope, session_id: str, from_seq: int, to_seq: int) -> list[Turn]: ...

    def present_seqs(
        self, scope: Scope, session_id: str, from_seq: int, to_seq: int
    ) -> list[tuple[int, int]]:
        """(seq, tokens) of the turns that exist in [from_seq, to_seq], in order."""
        ...

    def in_ranges(self, scope: Scope, ranges: list[tuple[str, int, int]]) -> list[Turn]:
        """The user's turns in several (session_id, from_seq, to_seq) ranges, by session then seq."""
        ...

    def by_ids(self, scope: Scope, ids: list[str]) -> list[Turn]:
        """The user's turns among these ids (any order; ids of others or of deleted turns are skipped)."""
        ...

    def delete_from(self, scope: Scope, session_id: str, from_seq: int | None) -> DeletedTurns:
        """Delete the session's turns with seq >= from_seq (all without it); how many, (seq, tokens) of each."""
        ...

    def tag_snapshot(self, snapshot: StoredSnapshot) -> None:
        """Mark the snapshot's seq range as belonging to it."""
        ...

    def delete_of_snapshot(self, snapshot: StoredSnapshot) -> list[Turn]:
        """Delete the turns tagged with this snapshot; returns them as they were (none: already gone)."""
        ...

    def recall_lanes(self, limit: int) -> list[RecallLane]:
        """The users with turns queued for the recall indexer, the one waiting longest first."""
        ...

    def unindexed(
        self, limit: int, scope: Scope | None = None, exclude: list[str] | None = None
    ) -> list[Turn]:
        """Turns queued for the recall indexer (recall_indexed False), oldest first: of `scope`, or of
        every user; never those whose id is in `exclude`."""
        ...

    def set_recall_state(
        self, ids: list[str], indexed: RecallState | None = None, ctx_next: bool | None = None
    ) -> None:
        """Set recall_indexed and/or recall_ctx_next (None leaves a field as it is)."""
        ...

    def note_recall_failure(self, ids: list[str], error: str) -> None:
        """Count a failed indexing attempt and keep its error."""
        ...

    def requeue_recall(self) -> int:
        """Queue every indexed (or parked) turn again (after the recall index was dropped); how many."""
        ...


class SnapshotRepository(Protocol):
    """One document per cut seq range of a session, with each kind's extraction status."""

    def create(self, snapshot: NewSnapshot) -> StoredSnapshot:
        """Store it under an id derived from (session, from_seq); when that exists, return the stored one."""
        ...

    def get(self, snapshot_id: str) -> StoredSnapshot | None: ...

    def get_for(self, scope: Scope, snapshot_id: str) -> StoredSnapshot | None:
        """The snapshot only if it belongs to the scope."""
        ...

    def starting_at(self, scope: Scope, session_id: str, from_seq: int) -> StoredSnapshot | None:
        """The session's snapshot that starts at from_seq (a crashed scanner's cut), if any."""
        ...

    def of_session(self, scope: Scope, session_id: str, limit: int = 100) -> list[StoredSnapshot]:
        """The session's snapshots, newest (highest from_seq) first."""
        ...

    def mark_fanned_out(self, snapshot_id: str) -> None: ...

    def unfanned(self, older_than: datetime, limit: int) -> list[StoredSnapshot]:
        """Snapshots created before `older_than` whose extraction messages were not all sent."""
        ...

    def set_extraction(
        self, snapshot_id: str, kind: str, update: TypeStatusUpdate, inc_attempts: bool = False
    ) -> StoredSnapshot | None:
        """Write the fields set in `update` into the kind's status (and count an attempt)."""
        ...

    def requeue_extraction(
        self, scope: Scope, snapshot_id: str, kind: str, at: datetime
    ) -> StoredSnapshot | None:
        """Set the kind back to queued unless it is done (compare-and-set); None when it is done or absent."""
        ...

    def hand_off(self, snapshot_id: str, kind: str, done: bool = True) -> bool:
        """Mark that the kind's extraction passed the snapshot on to the next kind; True only for the one
        call that marked it (compare-and-set: a redelivered message does not pass it on twice).
        `done=False` takes the mark back (the message could not be sent)."""
        ...

    def delete_session(self, scope: Scope, session_id: str) -> int:
        """Delete every snapshot of the session; how many."""
        ...

    def failed(
        self, tenant: str, user_id: str | None, kinds: list[str], limit: int, before: datetime | None = None
    ) -> list[StoredSnapshot]:
        """The tenant's (or one user's) snapshots where one of `kinds` failed, newest first, created before
        `before` (pages). Reads the tenant's snapshots: an operator's query, not a request path's."""
        ...
