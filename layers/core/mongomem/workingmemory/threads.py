"""Threads, Mastra-style: create (seeding working memory), update, list, delete and clone.

A thread is a session of turns (thread id = session id) plus a `threads` record: title, metadata and,
in thread scope, its working memory (`metadata.workingMemory`). `workingMemory` given in a thread's
metadata always lands in the *configured* scope: the thread's own memory in thread scope, the user's
(resource) memory in resource scope, where it is not kept in the thread's metadata.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from mongomem.errors import Conflict, InvalidInput, NotFound
from mongomem.models.common import Scope, as_utc, utcnow
from mongomem.models.sessions import Session
from mongomem.models.turns import NewTurn, Turn
from mongomem.models.working_memory import (
    Thread,
    ThreadClone,
    ThreadCloneRequest,
    ThreadCreate,
    ThreadDeleted,
    ThreadPage,
    ThreadUpdate,
    WorkingMemoryKey,
    WorkingMemoryWrite,
)
from mongomem.shortterm.ports import SessionRepository, SnapshotRepository, TurnRepository
from mongomem.shortterm.record import RECALL_ROLES
from mongomem.workingmemory.service import SEED_KEY, WorkingMemoryService

# Turns copied per insert when cloning.
CLONE_BATCH = 200


class Threads:
    def __init__(
        self,
        working_memory: WorkingMemoryService,
        sessions: SessionRepository,
        turns: TurnRepository,
        snapshots: SnapshotRepository,
        forget_turns: Callable[[list[Turn]], int],
        forget_observed: Callable[[Scope, str, int | None], int] | None = None,
    ) -> None:
        self.wm = working_memory
        self.store = working_memory.store
        self.sessions = sessions
        self.turns = turns
        self.snapshots = snapshots
        self.forget_turns = forget_turns
        # takes the thread's lines out of the user's observation log (None: no log kept)
        self.forget_observed = forget_observed

    @property
    def scope_kind(self) -> str:
        return self.wm.config.scope

    def _resource(self, scope: Scope) -> WorkingMemoryKey:
        return WorkingMemoryKey(scope="resource", tenant=scope.tenant, user_id=scope.user_id)

    def _thread_key(self, scope: Scope, thread_id: str) -> WorkingMemoryKey:
        return WorkingMemoryKey(
            scope="thread", tenant=scope.tenant, user_id=scope.user_id, thread_id=thread_id
        )

    # -- create, read ----------------------------------------------------------------------------
    def create(self, scope: Scope, request: ThreadCreate) -> Thread:
        """Create a thread; `metadata.workingMemory` seeds the configured scope's working memory."""
        if self.scope_kind == "thread" or request.metadata.get(SEED_KEY) is None:
            return self.wm.create_thread(scope, request)
        self.wm.check_enabled()
        if self.store.get_thread(scope, request.thread_id) is not None:
            raise Conflict(
                f"thread {request.thread_id!r} already exists for this user", {"thread_id": request.thread_id}
            )
        metadata = dict(request.metadata)
        seed = metadata.pop(SEED_KEY)
        self.wm.replace(self._resource(scope), WorkingMemoryWrite(memory=seed))
        return self.store.create_thread(scope, request.thread_id, request.title, metadata)

    def get(self, scope: Scope, thread_id: str) -> Thread:
        """The thread's record, or, for a session recorded without one, the session as a thread."""
        thread = self.store.get_thread(scope, thread_id)
        if thread is not None:
            return thread
        session = self.sessions.get(scope, thread_id)
        if session is None:
            raise NotFound(f"thread {thread_id!r} not found for this user", {"thread_id": thread_id})
        return _session_thread(session)

    def page(self, scope: Scope, limit: int, cursor: str | None) -> ThreadPage:
        """The user's threads, most recently updated first; `cursor` is the previous page's next_cursor.

        A thread is a `threads` record (ordered by its updated_at) or a session recorded without one
        (ordered by its last turn): both streams are read in that order from the same cursor and merged,
        so every thread appears once, on one page."""
        before = _cursor(cursor) if cursor else None
        found = self.store.list_threads(scope, limit + 1, before)
        found += self._bare_sessions(scope, limit + 1, before)
        found.sort(key=lambda t: (as_utc(t.updated_at), t.thread_id), reverse=True)
        more, found = len(found) > limit, found[:limit]
        last = found[-1] if more and found else None
        return ThreadPage(
            user_id=scope.user_id,
            threads=found,
            next_cursor=f"{as_utc(last.updated_at).isoformat()}|{last.thread_id}" if last else None,
        )

    def _bare_sessions(self, scope: Scope, want: int, before: tuple[datetime, str] | None) -> list[Thread]:
        """Up to `want` sessions without a thread record, as threads, most recently active first."""
        out: list[Thread] = []
        while len(out) < want:
            page = self.sessions.user_sessions(scope, want, before)
            page = [s for s in page if s.last_turn_at is not None]
            if not page:
                return out
            recorded = self.store.thread_ids(scope, [s.session_id for s in page])
            out += [_session_thread(s) for s in page if s.session_id not in recorded]
            if len(page) < want:
                return out
            tail = page[-1]
            before = (as_utc(tail.last_turn_at), tail.session_id)  # type: ignore[arg-type]
        return out[:want]

    # -- update ----------------------------------------------------------------------------------
    def update(self, scope: Scope, thread_id: str, request: ThreadUpdate) -> Thread:
        """New title and/or metadata; `metadata.workingMemory` replaces the configured scope's memory.

        A session recorded without a thread record gets one (its turns stay where they are)."""
        if self.store.get_thread(scope, thread_id) is None:
            self.get(scope, thread_id)  # 404 before anything changes
            self.store.create_thread(scope, thread_id, None, {})
        metadata = dict(request.metadata) if request.metadata is not None else None
        if metadata is not None and SEED_KEY in metadata:
            value = metadata.pop(SEED_KEY)
            key = (
                self._resource(scope) if self.scope_kind == "resource" else self._thread_key(scope, thread_id)
            )
            if value is None:
                self.wm.clear(key)
            else:
                self.wm.replace(key, WorkingMemoryWrite(memory=value))
        found = self.store.update_thread(
            scope, thread_id, request.title, metadata, set_title="title" in request.model_fields_set
        )
        if found is None:
            raise NotFound(f"thread {thread_id!r} not found for this user", {"thread_id": thread_id})
        return found

    # -- delete ----------------------------------------------------------------------------------
    def delete(self, scope: Scope, thread_id: str) -> ThreadDeleted:
        """Remove the thread: its record and working memory, its turns, snapshots and recall entries.

        Long-term memories extracted from it stay (they are the user's, with their evidence).
        """
        session = self.sessions.get(scope, thread_id)
        thread = self.store.get_thread(scope, thread_id)
        if session is None and thread is None:
            raise NotFound(f"thread {thread_id!r} not found for this user", {"thread_id": thread_id})
        deleted = {"thread": 0, "session": 0, "turns": 0, "snapshots": 0, "index_entries": 0}
        if session is not None:
            doomed = self.turns.in_range(scope, thread_id, 1, session.last_seq) if session.last_seq else []
            # the session first, so a scanner cannot promote what is being deleted
            deleted["session"] = int(self.sessions.delete(scope, thread_id))
            deleted["turns"] = self.turns.delete_from(scope, thread_id, None).deleted
            deleted["snapshots"] = self.snapshots.delete_session(scope, thread_id)
            deleted["index_entries"] = self.forget_turns(doomed)
            if self.forget_observed is not None:  # the observation log's lines of its turns
                deleted["observations"] = self.forget_observed(scope, thread_id, None)
        deleted["thread"] = int(self.store.delete_thread(scope, thread_id))
        return ThreadDeleted(thread_id=thread_id, deleted=deleted)

    # -- clone -----------------------------------------------------------------------------------
    def clone(self, scope: Scope, thread_id: str, request: ThreadCloneRequest) -> ThreadClone:
        """A new thread with the source's turns (same seqs and timestamps) and thread working memory.

        The copied turns count as already promoted (their knowledge was extracted from the source);
        they are queued for recall, so thread-scoped recall finds them in the clone.
        """
        new_id = request.new_thread_id or f"{thread_id[:95]}-clone-{uuid.uuid4().hex[:12]}"
        if new_id == thread_id:
            raise InvalidInput("new_thread_id must differ from the source thread", {"path": "new_thread_id"})
        session = self.sessions.get(scope, thread_id)
        source = self.store.get_thread(scope, thread_id)
        if session is None and source is None:
            raise NotFound(f"thread {thread_id!r} not found for this user", {"thread_id": thread_id})
        if self.store.get_thread(scope, new_id) is not None or self.sessions.get(scope, new_id) is not None:
            raise Conflict(f"thread {new_id!r} already exists for this user", {"thread_id": new_id})
        now = utcnow()
        metadata: dict[str, Any] = dict(request.metadata) if request.metadata is not None else {}
        if request.metadata is None and source is not None:
            metadata = {k: v for k, v in source.metadata.items() if k != SEED_KEY}
        if source is not None and source.metadata.get(SEED_KEY) is not None and SEED_KEY not in metadata:
            metadata[SEED_KEY] = source.metadata[SEED_KEY]  # the thread's working memory
        metadata["clone"] = {"source_thread_id": thread_id, "cloned_at": now.isoformat()}
        title = request.title if request.title is not None else (source.title if source else None)
        copied = 0
        if session is not None and session.last_seq:
            if not self.sessions.create_copy(scope, new_id, session, now):
                raise Conflict(f"thread {new_id!r} already exists for this user", {"thread_id": new_id})
            copied = self._copy_turns(scope, thread_id, new_id, session.last_seq, now)
        clone = self.store.create_thread(scope, new_id, title, metadata)
        return ThreadClone(thread=clone, source_thread_id=thread_id, turns=copied)

    def _copy_turns(self, scope: Scope, source: str, target: str, last_seq: int, now: datetime) -> int:
        copied = 0
        for start in range(1, last_seq + 1, CLONE_BATCH):
            batch = self.turns.in_range(scope, source, start, min(last_seq, start + CLONE_BATCH - 1))
            if batch:
                self.turns.insert_missing(scope, target, [_copy(t, now) for t in batch])
                copied += len(batch)
        return copied


def _copy(turn: Turn, now: datetime) -> NewTurn:
    recallable = turn.role in RECALL_ROLES and bool(turn.content.strip())
    return NewTurn(
        seq=turn.seq,
        role=turn.role,
        content=turn.content,
        timestamp=turn.timestamp,
        recorded_at=now,
        tokens=turn.tokens,
        tool_calls=turn.tool_calls,
        tool_call_id=turn.tool_call_id,
        name=turn.name,
        metadata=turn.metadata,
        recall_indexed=False if recallable else None,
    )


def _session_thread(session: Session) -> Thread:
    """A session recorded without a thread record, as the thread it is (no title, no metadata)."""
    return Thread(
        thread_id=session.session_id,
        user_id=session.user_id,
        created_at=session.created_at,
        updated_at=session.last_turn_at or session.created_at,
    )


def _cursor(cursor: str) -> tuple[datetime, str]:
    at, sep, thread_id = cursor.partition("|")
    try:
        if not sep or not thread_id:
            raise ValueError(cursor)
        return as_utc(datetime.fromisoformat(at)), thread_id
    except (ValueError, OverflowError) as exc:
        raise InvalidInput("cursor is not one this API returned", {"path": "cursor"}) from exc
