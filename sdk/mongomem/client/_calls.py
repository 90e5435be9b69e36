"""Every API method once, as a request spec (`Call`): what to send and how to read the answer.

`MemoryClient` (sync) and `AsyncMemoryClient` (async) both get their methods from `Methods` through the
`endpoint` descriptor, so request building, response models and retry safety exist in one copy; the
clients only execute calls (mongomem.client._transport).
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Literal, ParamSpec, Protocol, TypeVar, overload
from urllib.parse import quote

from pydantic import BaseModel

from mongomem.models.imports import ImportReport
from mongomem.models.memory import DeleteResult, DomainList, MemoryPage, MemoryWithHistory, WriteResult
from mongomem.models.procedures import DiscoverResponse, FeedbackResult, SkillExport
from mongomem.models.recall import ContextResponse, RecallResponse
from mongomem.models.search import SearchResponse
from mongomem.models.sessions import DeleteTurnsResponse, FlushResponse, SessionState
from mongomem.models.turns import RecordTurnsResponse, TurnIn, TurnPage
from mongomem.models.working_memory import (
    Thread,
    ThreadClone,
    ThreadDeleted,
    ThreadPage,
    Unchanged,
    WorkingMemoryContext,
    WorkingMemoryState,
)

T = TypeVar("T")
P = ParamSpec("P")
M = TypeVar("M", bound=BaseModel)


def _as_is(data: Any) -> Any:
    return data


def _as_dict(data: Any) -> dict[str, Any]:
    return dict(data or {})


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API request and the parser of its JSON answer."""

    method: str
    path: str
    query: Mapping[str, Any] | None = None
    body: Any = None
    # May the request be sent again after a lost answer? None: by method (reads, PUT, DELETE).
    safe: bool | None = None
    parse: Callable[[Any], T] = _as_is

    @property
    def resend_safe(self) -> bool:
        return self.method in ("GET", "HEAD", "PUT", "DELETE") if self.safe is None else self.safe

    @property
    def params(self) -> dict[str, str]:
        return {k: _query_value(v) for k, v in (self.query or {}).items() if v is not None}


class _SyncRunner(Protocol):
    is_async: Literal[False]

    def _run(self, call: Call[T]) -> T: ...


class _AsyncRunner(Protocol):
    is_async: Literal[True]

    def _run(self, call: Call[T]) -> Awaitable[T]: ...


class endpoint(Generic[P, T]):
    """A method defined once as a Call builder: `client.method(...)` builds the call and runs it."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self.build = build
        functools.update_wrapper(self, build)  # type: ignore[arg-type]

    @overload
    def __get__(self, obj: None, owner: type) -> endpoint[P, T]: ...
    @overload
    def __get__(self, obj: _SyncRunner, owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, obj: _AsyncRunner, owner: type) -> Callable[P, Awaitable[T]]: ...
    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        build = self.build

        @functools.wraps(build)
        def bound(*args: P.args, **kwargs: P.kwargs) -> Any:
            return obj._run(build(*args, **kwargs))

        return bound


def _model(model: type[M]) -> Callable[[Any], M]:
    return model.model_validate


def _working_memory(data: Any) -> WorkingMemoryState | Unchanged:
    if isinstance(data, dict) and data.get("unchanged"):
        return Unchanged.model_validate(data)
    return WorkingMemoryState.model_validate(data)


def _working_memory_tool(data: Any) -> WorkingMemoryContext | Unchanged:
    if isinstance(data, dict) and data.get("unchanged"):
        return Unchanged.model_validate(data)
    return WorkingMemoryContext.model_validate(data)


class Methods:
    """The memory API's methods; each returns the API's pydantic model (dicts where none exists)."""

    # -- short-term memory: turns and sessions ------------------------------------------------------

    @endpoint
    def record_turn(
        session_id: str,
        user_id: str | None,
        role: str,
        content: str,
        *,
        agent_id: str | None = None,
        client_token: str | None = None,
        **turn: Any,
    ) -> Call[RecordTurnsResponse]:
        """Record one turn; extra keywords (tool_calls, tool_call_id, name, metadata, timestamp) go in it."""
        return _record(
            session_id, user_id, [{"role": role, "content": content, **turn}], client_token, agent_id
        )

    @endpoint
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

    # -- long-term memories ---------------------------------------------------------------------------

    @endpoint
    def create_memory(
        user_id: str | None,
        type: str,
        payload: Mapping[str, Any],
        reconcile: bool = True,
        *,
        expires_at: datetime | str | None = None,
        visibility: str | None = None,
        agent_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Call[WriteResult]:
        """Write a memory; with reconcile it may UPDATE or REINFORCE an existing one instead of adding.

        `visibility` private|org (default: the kind's), `agent_id` makes a private memory one agent's,
        `metadata` is free-form (its partition keys are search filters)."""
        body = {
            "user_id": user_id,
            "type": type,
            "payload": dict(payload),
            "reconcile": reconcile,
            "expires_at": expires_at.isoformat() if isinstance(expires_at, datetime) else expires_at,
            "visibility": visibility,
            "agent_id": agent_id,
            "metadata": dict(metadata) if metadata is not None else None,
        }
        return Call("POST", "/v1/memories", body=_drop_none(body), parse=_model(WriteResult))

    @endpoint
    def get_memory(memory_id: str, user_id: str | None, history: bool = False) -> Call[MemoryWithHistory]:
        query = {"user_id": user_id, "history": "true" if history else None}
        return Call("GET", f"/v1/memories/{_seg(memory_id)}", query, parse=_model(MemoryWithHistory))

    @endpoint
    def list_memories(
        user_id: str | None,
        type: str | None = None,
        status: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        *,
        subject: str | None = None,
        attribute: str | None = None,
        subject_prefix: str | None = None,
        observed_after: str | datetime | None = None,
        observed_before: str | datetime | None = None,
        agent_id: str | None = None,
        visibility: str | None = None,
        tags: Iterable[str] | None = None,
        domain: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Call[MemoryPage]:
        """A page of memories (the user's and the org's), newest first; semantic facts can be filtered by
        exact subject/attribute, any memory by when it was first stated (observed_after <= observed_at <
        observed_before), by agent, visibility, tags (any of), taxonomic domain and metadata values."""
        query = {
            "agent_id": agent_id,
            "visibility": visibility,
            "tags": ",".join(tags) if tags is not None else None,
            "domain": domain,
            "metadata": json.dumps(dict(metadata)) if metadata is not None else None,
            "observed_after": observed_after.isoformat()
            if isinstance(observed_after, datetime)
            else observed_after,
            "observed_before": (
                observed_before.isoformat() if isinstance(observed_before, datetime) else observed_before
            ),
            "user_id": user_id,
            "type": type,
            "status": status,
            "limit": limit,
            "cursor": cursor,
            "subject": subject,
            "attribute": attribute,
            "subject_prefix": subject_prefix,
        }
        return Call("GET", "/v1/memories", query, parse=_model(MemoryPage))

    # -- procedures as skills --------------------------------------------------------------------------

    @endpoint
    def get_skill(memory_id: str, user_id: str | None) -> Call[SkillExport]:
        """A procedural memory as an Agent Skill (its SKILL.md and folder name): GET /v1/memories/{id}/skill."""
        path = f"/v1/memories/{_seg(memory_id)}/skill"
        return Call("GET", path, {"user_id": user_id}, parse=_model(SkillExport))

    @endpoint
    def procedure_feedback(
        memory_id: str,
        user_id: str | None,
        outcome: Literal["success", "failure"],
        used_at: datetime | str | None = None,
    ) -> Call[FeedbackResult]:
        """Record that using a procedure worked (or did not): POST /v1/memories/{id}/feedback."""
        when = used_at.isoformat() if isinstance(used_at, datetime) else used_at
        body = _drop_none({"outcome": outcome, "used_at": when})
        path = f"/v1/memories/{_seg(memory_id)}/feedback"
        return Call("POST", path, {"user_id": user_id}, body, parse=_model(FeedbackResult))

    @endpoint
    def discover_procedures(
        user_id: str | None, query: str, top_k: int = 5, **options: Any
    ) -> Call[DiscoverResponse]:
        """The procedures that fit a task, by relevance and success: POST /v1/procedures/discover."""
        body = _drop_none({"user_id": user_id, "query": query, "top_k": top_k, **options})
        return Call("POST", "/v1/procedures/discover", body=body, safe=True, parse=_model(DiscoverResponse))

    @endpoint
    def list_domains(user_id: str | None) -> Call[DomainList]:
        """The domains of the taxonomic terms the user sees (theirs and the org's): GET /v1/domains."""
        return Call("GET", "/v1/domains", {"user_id": user_id}, parse=_model(DomainList))

    @endpoint
    def delete_memory(memory_id: str, user_id: str | None) -> Call[DeleteResult]:
        path = f"/v1/memories/{_seg(memory_id)}"
        return Call("DELETE", path, {"user_id": user_id}, parse=_model(DeleteResult))

    @endpoint
    def search(
        user_id: str | None,
        query: str,
        types: Iterable[str] | None = None,
        top_k: int = 10,
        *,
        agent_id: str | None = None,
        visibility: str | None = None,
        tags: Iterable[str] | None = None,
        domain: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> Call[SearchResponse]:
        """Hybrid (vector + keyword) search over a user's memories and the org's: POST /v1/memories/search.

        Filters (inside the index query): agent_id, visibility (private|org), tags (any of), domain,
        metadata (partition keys). `options` are the request's other fields (mode, min_score,
        include_superseded, observed_after, observed_before).
        """
        body = {
            "user_id": user_id,
            "query": query,
            "types": list(types) if types is not None else None,
            "top_k": top_k,
            "agent_id": agent_id,
            "visibility": visibility,
            "tags": list(tags) if tags is not None else None,
            "domain": domain,
            "metadata": dict(metadata) if metadata is not None else None,
            **options,
        }
        return Call(
            "POST", "/v1/memories/search", body=_drop_none(body), safe=True, parse=_model(SearchResponse)
        )

    # -- recall and context ----------------------------------------------------------------------------

    @endpoint
    def recall(
        user_id: str | None,
        query: str,
        thread: str | None = None,
        scope: str | None = None,
        top_k: int | None = None,
        message_range: int | Mapping[str, int] | None = None,
        min_score: float | None = None,
        order: str | None = None,
        **options: Any,
    ) -> Call[RecallResponse]:
        """Old messages similar to `query` (semantic recall), with `message_range` turns around each.

        `order="time"` also returns them as `messages`, in time order across threads; `options` are the
        request's other fields (RecallRequest: exclude_recent).
        """
        body = {
            "user_id": user_id,
            "query": query,
            "thread": thread,
            "scope": scope,
            "top_k": top_k,
            "message_range": dict(message_range) if isinstance(message_range, Mapping) else message_range,
            "min_score": min_score,
            "order": order,
            **options,
        }
        return Call("POST", "/v1/recall", body=_drop_none(body), safe=True, parse=_model(RecallResponse))

    @endpoint
    def build_context(
        user_id: str | None,
        session_id: str,
        query: str | None = None,
        token_budget: int | None = None,
        *,
        agent_id: str | None = None,
        sources: Iterable[Mapping[str, Any]] | None = None,
        format: str | None = None,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Call[ContextResponse]:
        """Everything an agent's next turn in `session_id` needs (working memory, memories, recent turns,
        recalled messages) within a token budget: POST /v1/context.

        `sources` names what the block holds, in priority order; `format` is text, markdown, openai or
        anthropic. `options` are the request's other fields (ContextRequest: recent_turns,
        memories_top_k, recall_top_k, message_range, observed_after, observed_before).
        """
        body = {
            "user_id": user_id,
            "session_id": session_id,
            "query": query,
            "token_budget": token_budget,
            "agent_id": agent_id,
            "sources": [dict(x) for x in sources] if sources is not None else None,
            "format": format,
            "max_tokens": max_tokens,
            **options,
        }
        return Call("POST", "/v1/context", body=_plain_values(body), safe=True, parse=_model(ContextResponse))

    # -- working memory --------------------------------------------------------------------------------

    @endpoint
    def get_working_memory(
        user_id: str | None,
        thread_id: str | None = None,
        scope: str | None = None,
        read_only: bool = False,
        if_none_match: str | None = None,
        agent_id: str | None = None,
    ) -> Call[WorkingMemoryState | Unchanged]:
        """The working memory (Unchanged when `if_none_match` is still its cache key); `agent_id`: one
        agent's resource-scoped working memory of the user."""
        query = {
            "agent_id": agent_id,
            "user_id": user_id,
            "thread_id": thread_id,
            "scope": scope,
            "readOnly": "true" if read_only else None,
            "if_none_match": if_none_match,
        }
        return Call("GET", "/v1/working-memory", query, parse=_working_memory)

    @endpoint
    def update_working_memory(
        user_id: str | None,
        *,
        content: str | None = None,
        data: Mapping[str, Any] | None = None,
        memory: str | Mapping[str, Any] | None = None,
        thread_id: str | None = None,
        scope: str | None = None,
        replace: bool = False,
        agent_id: str | None = None,
    ) -> Call[WorkingMemoryState]:
        """Merge into the working memory (PATCH), or replace it whole with replace=True (PUT).

        Give exactly one of `content` (template mode), `data` (schema mode) or `memory` (the update
        tool's argument, forwarded as the agent produced it).
        """
        body = _drop_none(
            {
                "content": content,
                "data": dict(data) if data is not None else None,
                "memory": dict(memory) if isinstance(memory, Mapping) else memory,
            }
        )
        query = {"user_id": user_id, "thread_id": thread_id, "scope": scope, "agent_id": agent_id}
        method = "PUT" if replace else "PATCH"
        return Call(method, "/v1/working-memory", query, body, safe=replace, parse=_model(WorkingMemoryState))

    @endpoint
    def clear_working_memory(
        user_id: str | None,
        thread_id: str | None = None,
        scope: str | None = None,
        agent_id: str | None = None,
    ) -> Call[WorkingMemoryState]:
        query = {"user_id": user_id, "thread_id": thread_id, "scope": scope, "agent_id": agent_id}
        return Call("DELETE", "/v1/working-memory", query, parse=_model(WorkingMemoryState))

    @endpoint
    def working_memory_tool(
        user_id: str | None,
        thread_id: str | None = None,
        scope: str | None = None,
        delivery: str | None = None,
        agent_id: str | None = None,
    ) -> Call[WorkingMemoryContext | Unchanged]:
        """The agent's update tool, its instructions and the current working memory."""
        query = {
            "user_id": user_id,
            "thread_id": thread_id,
            "scope": scope,
            "delivery": delivery,
            "agent_id": agent_id,
        }
        return Call("GET", "/v1/working-memory/tool", query, parse=_working_memory_tool)

    @endpoint
    def apply_working_memory_tool(
        user_id: str | None,
        arguments: str | Mapping[str, Any],
        thread_id: str | None = None,
        scope: str | None = None,
    ) -> Call[WorkingMemoryState]:
        """Apply an update-tool call as the model made it: `{"memory": ...}` or the memory itself."""
        query = {"user_id": user_id, "thread_id": thread_id, "scope": scope}
        body = dict(arguments) if isinstance(arguments, Mapping) else arguments
        return Call("POST", "/v1/working-memory/tool", query, body, parse=_model(WorkingMemoryState))

    # -- threads ---------------------------------------------------------------------------------------

    @endpoint
    def create_thread(
        thread_id: str,
        user_id: str | None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Call[Thread]:
        """A new thread; `metadata["workingMemory"]` seeds the configured working-memory scope."""
        body = _drop_none(
            {"thread_id": thread_id, "user_id": user_id, "title": title, "metadata": dict(metadata or {})}
        )
        return Call("POST", "/v1/threads", body=body, parse=_model(Thread))

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
    def update_thread(
        thread_id: str,
        user_id: str | None,
        *,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Call[Thread]:
        """New title and/or metadata (replaced whole); `metadata["workingMemory"]` replaces working memory."""
        body = _drop_none({"title": title, "metadata": dict(metadata) if metadata is not None else None})
        path = f"/v1/threads/{_seg(thread_id)}"
        return Call("PATCH", path, {"user_id": user_id}, body, safe=True, parse=_model(Thread))

    @endpoint
    def delete_thread(thread_id: str, user_id: str | None) -> Call[ThreadDeleted]:
        """Delete the thread with its turns, snapshots, recall entries and thread working memory."""
        path = f"/v1/threads/{_seg(thread_id)}"
        return Call("DELETE", path, {"user_id": user_id}, parse=_model(ThreadDeleted))

    @endpoint
    def clone_thread(
        thread_id: str,
        user_id: str | None,
        new_thread_id: str | None = None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Call[ThreadClone]:
        """Copy the thread's turns and thread working memory to `new_thread_id` (generated when None)."""
        body = _drop_none(
            {
                "new_thread_id": new_thread_id,
                "title": title,
                "metadata": dict(metadata) if metadata is not None else None,
            }
        )
        path = f"/v1/threads/{_seg(thread_id)}/clone"
        return Call("POST", path, {"user_id": user_id}, body, safe=False, parse=_model(ThreadClone))

    # -- importing history -------------------------------------------------------------------------------

    @endpoint
    def import_history(
        user_id: str | None,
        data: str | Mapping[str, Any] | list[Any] | None = None,
        format: Literal["turns", "jsonl", "locomo"] = "jsonl",
        turns: Iterable[Mapping[str, Any]] | None = None,
    ) -> Call[ImportReport]:
        """Import past conversations with their original timestamps (re-sending it imports nothing twice)."""
        body = _drop_none(
            {
                "user_id": user_id,
                "format": format,
                "data": data if isinstance(data, str | list) or data is None else dict(data),
                "turns": [dict(t) for t in turns] if turns is not None else None,
            }
        )
        # idempotent by each turn's import key: a lost answer may be sent again
        return Call("POST", "/v1/import", body=_plain(body), safe=True, parse=_model(ImportReport))

    # -- the service -----------------------------------------------------------------------------------

    @endpoint
    def status() -> Call[dict[str, Any]]:
        """Readiness (LLM and embedding providers, with reasons), configuration and backlog.

        A dict on purpose: the operator's status document grows with the service (docs/sdk.md)."""
        return Call("GET", "/v1/status", parse=_as_dict)

    @endpoint
    def request(
        method: str,
        path: str,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        *,
        safe: bool | None = None,
    ) -> Call[Any]:
        """Call any route; returns the decoded JSON body. `safe` marks a request that may be re-sent."""
        return Call(method.upper(), path, query, body, safe=safe)


def _record(
    session_id: str,
    user_id: str | None,
    turns: Iterable[Mapping[str, Any] | TurnIn],
    client_token: str | None,
    agent_id: str | None,
) -> Call[RecordTurnsResponse]:
    body: dict[str, Any] = {
        "user_id": user_id,
        "agent_id": agent_id,
        "client_token": client_token or str(uuid.uuid4()),
        "turns": [_plain(t) for t in turns],
    }
    path = f"/v1/sessions/{_seg(session_id)}/turns"
    # The client token makes a re-sent batch a replay on the server, never a second write.
    return Call("POST", path, body=_drop_none(body), safe=True, parse=_model(RecordTurnsResponse))


def next_memories_page(first: Call[MemoryPage], page: MemoryPage) -> Call[MemoryPage] | None:
    """The call for the page after `page` (same filters), or None at the end."""
    if not page.next_cursor:
        return None
    return Call(
        first.method, first.path, {**(first.query or {}), "cursor": page.next_cursor}, parse=first.parse
    )


def _seg(value: str) -> str:
    return quote(str(value), safe="")


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return _drop_none(dict(value))


def _plain_values(body: dict[str, Any]) -> dict[str, Any]:
    """The body without None values, datetimes as ISO 8601 (options may carry observed_after ...)."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in body.items() if v is not None}


def _drop_none(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


def json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
