"""The SDK's methods for short-term memory: turns, sessions and threads (see mongomem.client._calls)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from mongomem.client._call import Call, _fields, _model, _plain, _seg, endpoint, takes
from mongomem.models.sessions import DeleteTurnsResponse, FlushResponse, SessionState
from mongomem.models.turns import RecordTurnsRequest, RecordTurnsResponse, TurnIn, TurnPage
from mongomem.models.working_memory import (
    Thread,
    ThreadClone,
    ThreadCloneRequest,
    ThreadCreate,
    ThreadDeleted,
    ThreadPage,
    ThreadUpdate,
)


class SessionMethods:
    """Turns and sessions, and threads."""

    # -- short-term memory: turns and sessions ------------------------------------------------------

    @endpoint
    @takes(RecordTurnsRequest, TurnIn, fills=("turns",))
    def record_turn(
        session_id: str,
        user_id: str | None,
        role: str,
        content: str,
        *,
        agent_id: str | None = None,
        client_token: str | None = None,
        tool_calls: Iterable[Mapping[str, Any]] | None = None,
        tool_call_id: str | None = None,
        name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        timestamp: datetime | str | None = None,
    ) -> Call[RecordTurnsResponse]:
        """Record one turn (`turns` is that one turn, made of the TurnIn fields)."""
        turn = _fields(TurnIn, locals())
        return _record(session_id, user_id, [turn], client_token, agent_id)

    @endpoint
    @takes(RecordTurnsRequest)
    def record_turns(
        session_id: str,
        user_id: str | None,
        turns: Iterable[Mapping[str, Any] | TurnIn],
        client_token: str | None = None,
        *,
        agent_id: str | None = None,
    ) -> Call[RecordTurnsResponse]:
        """Record a batch in order; the client token (uuid4 when not given) makes retries safe."""
        return _record(session_id, user_id, turns, client_token, agent_id)

    @endpoint
    def list_turns(
        session_id: str, user_id: str | None, limit: int = 20, before_seq: int | None = None
    ) -> Call[TurnPage]:
        """The newest `limit` turns (oldest first); pass `next_before_seq` to page further back."""
        query = {"user_id": user_id, "limit": limit, "before_seq": before_seq}
        return Call("GET", f"/v1/sessions/{_seg(session_id)}/turns", query, parse=_model(TurnPage))

    @endpoint
    def delete_turns(
        session_id: str, user_id: str | None, from_seq: int | None = None
    ) -> Call[DeleteTurnsResponse]:
        """Delete the session's turns from `from_seq` on (all of them without it); seqs are not reused."""
        query = {"user_id": user_id, "from_seq": from_seq}
        return Call(
            "DELETE", f"/v1/sessions/{_seg(session_id)}/turns", query, parse=_model(DeleteTurnsResponse)
        )

    @endpoint
    def get_session(session_id: str, user_id: str | None) -> Call[SessionState]:
        return Call(
            "GET", f"/v1/sessions/{_seg(session_id)}", {"user_id": user_id}, parse=_model(SessionState)
        )

    @endpoint
    def flush(session_id: str, user_id: str | None) -> Call[FlushResponse]:
        """Promote the session's unpromoted turns to a snapshot now (extraction follows in the background)."""
        path = f"/v1/sessions/{_seg(session_id)}/flush"
        return Call("POST", path, {"user_id": user_id}, safe=True, parse=_model(FlushResponse))

    # -- threads ---------------------------------------------------------------------------------------

    @endpoint
    @takes(ThreadCreate)
    def create_thread(
        thread_id: str,
        user_id: str | None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Call[Thread]:
        """A new thread; `metadata["workingMemory"]` seeds the configured working-memory scope."""
        return Call("POST", "/v1/threads", body=_fields(ThreadCreate, locals()), parse=_model(Thread))

    @endpoint
    def get_thread(thread_id: str, user_id: str | None) -> Call[Thread]:
        return Call("GET", f"/v1/threads/{_seg(thread_id)}", {"user_id": user_id}, parse=_model(Thread))

    @endpoint
    def list_threads(
        user_id: str | None, limit: int | None = None, cursor: str | None = None
    ) -> Call[ThreadPage]:
        """The user's threads, most recently updated first (`cursor`: the previous page's next_cursor)."""
        query = {"user_id": user_id, "limit": limit, "cursor": cursor}
        return Call("GET", "/v1/threads", query, parse=_model(ThreadPage))

    @endpoint
    @takes(ThreadUpdate)
    def update_thread(
        thread_id: str,
        user_id: str | None,
        *,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Call[Thread]:
        """New title and/or metadata (replaced whole); `metadata["workingMemory"]` replaces working memory."""
        body = _fields(ThreadUpdate, {"title": title, "metadata": metadata})
        path = f"/v1/threads/{_seg(thread_id)}"
        return Call("PATCH", path, {"user_id": user_id}, body, safe=True, parse=_model(Thread))

    @endpoint
    def delete_thread(thread_id: str, user_id: str | None) -> Call[ThreadDeleted]:
        """Delete the thread with its turns, snapshots, recall entries and thread working memory."""
        path = f"/v1/threads/{_seg(thread_id)}"
        return Call("DELETE", path, {"user_id": user_id}, parse=_model(ThreadDeleted))

    @endpoint
    @takes(ThreadCloneRequest)
    def clone_thread(
        thread_id: str,
        user_id: str | None,
        new_thread_id: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Call[ThreadClone]:
        """Copy the thread's turns and thread working memory to `new_thread_id` (generated when None)."""
        body = _fields(
            ThreadCloneRequest, {"new_thread_id": new_thread_id, "title": title, "metadata": metadata}
        )
        path = f"/v1/threads/{_seg(thread_id)}/clone"
        return Call("POST", path, {"user_id": user_id}, body, safe=False, parse=_model(ThreadClone))


def _record(
    session_id: str,
    user_id: str | None,
    turns: Iterable[Mapping[str, Any] | TurnIn],
    client_token: str | None,
    agent_id: str | None,
) -> Call[RecordTurnsResponse]:
    given = {
        "user_id": user_id,
        "agent_id": agent_id,
        "client_token": client_token or str(uuid.uuid4()),
        "turns": [_plain(t) for t in turns],
    }
    body = _fields(RecordTurnsRequest, given)
    path = f"/v1/sessions/{_seg(session_id)}/turns"
    # The client token makes a re-sent batch a replay on the server, never a second write.
    return Call("POST", path, body=body, safe=True, parse=_model(RecordTurnsResponse))
