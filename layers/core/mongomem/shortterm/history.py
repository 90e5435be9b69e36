"""Read short-term memory: turn pages and session state; flush a session or delete its turns on request."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mongomem.adapters.mongo import MongoStore, PromotionPolicy
from mongomem.errors import InvalidInput, NotFound
from mongomem.models.common import Scope, as_utc, utcnow
from mongomem.models.sessions import (
    DeleteTurnsResponse,
    FlushResponse,
    SessionPage,
    SessionState,
    SessionSummary,
    Snapshot,
)
from mongomem.models.turns import TurnOut, TurnPage
from mongomem.shortterm.promotion import Promoter


def _turn_out(doc: dict[str, Any]) -> TurnOut:
    return TurnOut(
        turn_id=f"{doc['session_id']}:{doc['seq']}",
        session_id=doc["session_id"],
        seq=doc["seq"],
        role=doc["role"],
        content=doc["content"],
        tool_calls=doc.get("tool_calls"),
        tool_call_id=doc.get("tool_call_id"),
        name=doc.get("name"),
        metadata=doc.get("metadata"),
        timestamp=as_utc(doc["timestamp"]),
        recorded_at=as_utc(doc["recorded_at"]),
        snapshot_id=doc.get("snapshot_id"),
    )


def snapshot_model(doc: dict[str, Any]) -> Snapshot:
    return Snapshot(snapshot_id=doc["_id"], **{k: v for k, v in doc.items() if k in Snapshot.model_fields})


def _require_session(store: MongoStore, scope: Scope, session_id: str) -> dict[str, Any]:
    doc = store.get_session(scope, session_id)
    if doc is None:
        raise NotFound(f"session {session_id!r} not found for this user", {"session_id": session_id})
    return doc


def turn_page(
    store: MongoStore, scope: Scope, session_id: str, limit: int, before_seq: int | None
) -> TurnPage:
    docs = store.list_turns(scope, session_id, limit, before_seq)
    if not docs and before_seq is None:
        _require_session(store, scope, session_id)
    first = docs[0]["seq"] if docs else None
    return TurnPage(
        session_id=session_id,
        turns=[_turn_out(d) for d in docs],
        next_before_seq=first if first is not None and first > 1 else None,
    )


def session_state(store: MongoStore, policy: PromotionPolicy, scope: Scope, session_id: str) -> SessionState:
    doc = _require_session(store, scope, session_id)
    snaps = store.session_snapshots(scope, session_id, limit=50)
    return SessionState(
        session_id=session_id,
        user_id=scope.user_id,
        agent_id=doc.get("agent_id"),
        created_at=as_utc(doc["created_at"]),
        last_turn_at=as_utc(doc["last_turn_at"]),
        turn_count=doc["last_seq"],
        unpromoted_count=doc["last_seq"] - doc["promoted_through_seq"],
        promoted_through_seq=doc["promoted_through_seq"],
        due_at=policy.due_at(doc, utcnow()),
        snapshots=[snapshot_model(s) for s in snaps],
    )


def flush(store: MongoStore, promoter: Promoter, scope: Scope, session_id: str) -> FlushResponse:
    doc = _require_session(store, scope, session_id)
    if doc["last_seq"] == doc["promoted_through_seq"]:
        return FlushResponse(session_id=session_id, snapshot=None, message="nothing to promote")
    cut = promoter.flush(scope, session_id)
    if not cut:
        return FlushResponse(
            session_id=session_id,
            snapshot=None,
            message="another promotion is in progress; try again shortly",
        )
    return FlushResponse(
        session_id=session_id,
        snapshot=snapshot_model(cut[-1]),
        message=f"promoted {sum(s['turn_count'] for s in cut)} turns into {len(cut)} snapshot(s)",
    )


def delete_turns(
    store: MongoStore, scope: Scope, session_id: str, from_seq: int | None
) -> DeleteTurnsResponse:
    """Remove turns from the session (memories already extracted from them stay: delete those explicitly).

    The recall index may keep entries for them until `mongomem reindex`; recall reads turns from
    MongoDB, so a deleted turn is never returned."""
    _require_session(store, scope, session_id)
    deleted = store.delete_turns(scope, session_id, from_seq)
    return DeleteTurnsResponse(session_id=session_id, from_seq=from_seq, deleted=deleted)


def session_page(store: MongoStore, scope: Scope, limit: int, cursor: str | None) -> SessionPage:
    """A user's sessions, most recently active first; `cursor` is the previous page's next_cursor."""
    before = _session_cursor(cursor) if cursor else None
    docs = store.user_sessions(scope, limit + 1, before)
    more, docs = len(docs) > limit, docs[:limit]
    sessions = [
        SessionSummary(
            session_id=d["session_id"],
            agent_id=d.get("agent_id"),
            created_at=as_utc(d["created_at"]),
            last_turn_at=as_utc(d.get("last_turn_at") or d["created_at"]),
            turn_count=d.get("last_seq", 0),
            unpromoted_count=d.get("last_seq", 0) - d.get("promoted_through_seq", 0),
            promoted_through_seq=d.get("promoted_through_seq", 0),
        )
        for d in docs
    ]
    last = sessions[-1] if more and sessions else None
    return SessionPage(
        user_id=scope.user_id,
        sessions=sessions,
        next_cursor=f"{last.last_turn_at.isoformat()}|{last.session_id}" if last else None,
    )


def _session_cursor(cursor: str) -> tuple[datetime, str]:
    at, sep, session_id = cursor.partition("|")
    try:
        if not sep or not session_id:
            raise ValueError(cursor)
        return as_utc(datetime.fromisoformat(at)), session_id
    except (ValueError, OverflowError) as exc:  # e.g. 0001-01-01T00:00:00+01:00 has no UTC time
        raise InvalidInput("cursor is not one this API returned", {"path": "cursor"}) from exc


def snapshot(store: MongoStore, scope: Scope, snapshot_id: str) -> Snapshot:
    """One of the user's snapshots: seq range, reason and per-kind extraction status."""
    doc = store.user_snapshot(scope, snapshot_id)
    if doc is None:
        raise NotFound(f"snapshot {snapshot_id!r} not found for this user", {"snapshot_id": snapshot_id})
    return snapshot_model(doc)
