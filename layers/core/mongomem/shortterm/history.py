"""Read short-term memory: turn pages and session state; flush a session or delete its turns on request."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from mongomem.errors import InvalidInput, NotFound
from mongomem.models.common import Scope, as_utc, utcnow
from mongomem.models.sessions import (
    DeleteTurnsResponse,
    FlushResponse,
    Session,
    SessionPage,
    SessionState,
    SessionSummary,
    Snapshot,
)
from mongomem.models.turns import Turn, TurnOut, TurnPage
from mongomem.shortterm.policy import PromotionPolicy
from mongomem.shortterm.ports import SessionRepository, SnapshotRepository, TurnRepository
from mongomem.shortterm.promotion import Promoter
from mongomem.wire import response_bytes


def turn_out(turn: Turn) -> TurnOut:
    return TurnOut(
        turn_id=turn.public_id,
        session_id=turn.session_id,
        seq=turn.seq,
        role=turn.role,
        content=turn.content,
        tool_calls=turn.tool_calls,  # dicts as stored, validated into ToolCall models here
        tool_call_id=turn.tool_call_id,
        name=turn.name,
        metadata=turn.metadata,
        timestamp=turn.timestamp,
        recorded_at=turn.recorded_at,
        snapshot_id=turn.snapshot_id,
    )


class History:
    """What a session holds and how far it is promoted; flush and delete on request."""

    def __init__(
        self,
        sessions: SessionRepository,
        turns: TurnRepository,
        snapshots: SnapshotRepository,
        promoter: Promoter,
        policy: PromotionPolicy,
        max_response_bytes: int | None = None,
        *,
        forget_observed: Callable[[Scope, str, int | None], int] | None = None,
    ) -> None:
        self.sessions = sessions
        # takes deleted turns' lines out of the user's observation log (None: no log kept)
        self.forget_observed = forget_observed
        self.turns = turns
        self.snapshots = snapshots
        self.promoter = promoter
        self.policy = policy
        self.max_response_bytes = max_response_bytes

    def _require_session(self, scope: Scope, session_id: str) -> Session:
        session = self.sessions.get(scope, session_id)
        if session is None:
            raise NotFound(f"session {session_id!r} not found for this user", {"session_id": session_id})
        return session

    def turn_page(self, scope: Scope, session_id: str, limit: int, before_seq: int | None) -> TurnPage:
        turns = self.turns.latest(scope, session_id, limit, before_seq)
        if not turns and before_seq is None:
            self._require_session(scope, session_id)
        turns = _newest_within(turns, self.max_response_bytes)
        first = turns[0].seq if turns else None
        return TurnPage(
            session_id=session_id,
            turns=[turn_out(t) for t in turns],
            next_before_seq=first if first is not None and first > 1 else None,
        )

    def session_state(self, scope: Scope, session_id: str) -> SessionState:
        session = self._require_session(scope, session_id)
        snaps = self.snapshots.of_session(scope, session_id, limit=50)
        return SessionState(
            session_id=session_id,
            user_id=scope.user_id,
            agent_id=session.agent_id,
            created_at=session.created_at,
            last_turn_at=session.last_turn_at or session.created_at,
            turn_count=session.last_seq,
            unpromoted_count=session.unpromoted,
            promoted_through_seq=session.promoted_through_seq,
            due_at=self.policy.due_at(session, utcnow()),
            snapshots=[s.public() for s in snaps],
        )

    def flush(self, scope: Scope, session_id: str) -> FlushResponse:
        session = self._require_session(scope, session_id)
        if session.unpromoted == 0:
            return FlushResponse(session_id=session_id, snapshot=None, message="nothing to promote")
        cut = self.promoter.flush(scope, session_id)
        if not cut:
            return FlushResponse(
                session_id=session_id,
                snapshot=None,
                message="another promotion is in progress; try again shortly",
            )
        return FlushResponse(
            session_id=session_id,
            snapshot=cut[-1].public(),
            message=f"promoted {sum(s.turn_count for s in cut)} turns into {len(cut)} snapshot(s)",
        )

    def delete_turns(self, scope: Scope, session_id: str, from_seq: int | None) -> DeleteTurnsResponse:
        """Remove turns from the session (memories already extracted from them stay: delete those explicitly).

        The seqs stay allocated: promotion steps over them as it does over abandoned seqs, without waiting
        out the hole grace period (the deleted range is remembered). The recall index may keep entries for
        them until `mongomem reindex`; recall reads turns from MongoDB, so a deleted turn is never returned.
        """
        session = self._require_session(scope, session_id)
        removed = self.turns.delete_from(scope, session_id, from_seq)
        promoted = session.promoted_through_seq
        # only the unpromoted token count shrinks, so the size trigger counts what is left
        tokens = sum(t for seq, t in removed.seqs if seq > promoted)
        start = max(from_seq or 1, promoted + 1)
        self.sessions.forget_deleted(
            scope, session_id, tokens, (start, session.last_seq) if start <= session.last_seq else None
        )
        if self.forget_observed is not None:  # the log is no copy of what the user removed
            self.forget_observed(scope, session_id, from_seq)
        return DeleteTurnsResponse(session_id=session_id, from_seq=from_seq, deleted=removed.deleted)

    def session_page(self, scope: Scope, limit: int, cursor: str | None) -> SessionPage:
        """A user's sessions, most recently active first; `cursor` is the previous page's next_cursor."""
        before = _session_cursor(cursor) if cursor else None
        found = self.sessions.user_sessions(scope, limit + 1, before)
        more, found = len(found) > limit, found[:limit]
        sessions = [
            SessionSummary(
                session_id=s.session_id,
                agent_id=s.agent_id,
                created_at=s.created_at,
                last_turn_at=s.last_turn_at or s.created_at,
                turn_count=s.last_seq,
                unpromoted_count=s.unpromoted,
                promoted_through_seq=s.promoted_through_seq,
            )
            for s in found
        ]
        last = sessions[-1] if more and sessions else None
        return SessionPage(
            user_id=scope.user_id,
            sessions=sessions,
            next_cursor=f"{last.last_turn_at.isoformat()}|{last.session_id}" if last else None,
        )

    def snapshot(self, scope: Scope, snapshot_id: str) -> Snapshot:
        """One of the user's snapshots: seq range, reason and per-kind extraction status."""
        found = self.snapshots.get_for(scope, snapshot_id)
        if found is None:
            raise NotFound(f"snapshot {snapshot_id!r} not found for this user", {"snapshot_id": snapshot_id})
        return found.public()


def _newest_within(turns: list[Turn], budget: int | None) -> list[Turn]:
    """The newest turns whose content fits the answer's budget (at least one); the page goes on from there."""
    if budget is None:
        return turns
    used, start = 0, len(turns)
    while start > 0:
        size = response_bytes(turns[start - 1].content) + 512
        if used + size > budget and start < len(turns):
            break
        used += size
        start -= 1
    return turns[start:]


def _session_cursor(cursor: str) -> tuple[datetime, str]:
    at, sep, session_id = cursor.partition("|")
    try:
        if not sep or not session_id:
            raise ValueError(cursor)
        return as_utc(datetime.fromisoformat(at)), session_id
    except (ValueError, OverflowError) as exc:  # e.g. 0001-01-01T00:00:00+01:00 has no UTC time
        raise InvalidInput("cursor is not one this API returned", {"path": "cursor"}) from exc
