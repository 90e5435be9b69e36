"""Every API method once, as a request spec (`Call`): what to send and how to read the answer.

`MemoryClient` (sync) and `AsyncMemoryClient` (async) both get their methods from `Methods` through the
`endpoint` descriptor, so request building, response models and retry safety exist in one copy; the
clients only execute calls (mongomem.client._transport).

A method whose route takes a request body names its request model with `takes`: the body is the
method's arguments that are the model's fields (`_fields`), its docstring lists each parameter with the
model field's description, and tests/unit/test_api_surface.py fails while its parameters and the
model's fields differ (a field added to the API must reach the SDK).
"""

from __future__ import annotations

import functools
import inspect
import json
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Literal, ParamSpec, Protocol, TypeVar, overload
from urllib.parse import quote

from pydantic import BaseModel

from mongomem.models.imports import ImportReport, ImportRequest
from mongomem.models.memory import (
    CreateMemoryRequest,
    DeleteResult,
    DomainList,
    MemoryPage,
    MemoryWithHistory,
    WriteResult,
)
from mongomem.models.procedures import (
    DiscoverRequest,
    DiscoverResponse,
    FeedbackRequest,
    FeedbackResult,
    SkillExport,
)
from mongomem.models.recall import ContextRequest, ContextResponse, RecallRequest, RecallResponse
from mongomem.models.search import SearchRequest, SearchResponse
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
    Unchanged,
    WorkingMemoryContext,
    WorkingMemoryState,
    WorkingMemoryWrite,
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


@dataclass(frozen=True)
class Takes:
    """The API request models a method's parameters come from: their fields minus `fills` (fields the
    method sets itself, named in its docstring). Its other parameters are the route's path and query
    parameters (tests/unit/test_api_surface.py holds all of them to the OpenAPI document)."""

    models: tuple[type[BaseModel], ...]
    fills: tuple[str, ...] = ()

    def fields(self) -> dict[str, Any]:
        """Each field the method takes, with its FieldInfo (the first model naming it wins)."""
        out: dict[str, Any] = {}
        for model in self.models:
            for name, info in model.model_fields.items():
                if name not in self.fills:
                    out.setdefault(name, info)
        return out


def takes(
    *models: type[BaseModel], fills: tuple[str, ...] = ()
) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """Mark a method as taking these request models' fields; its docstring gains their descriptions."""
    spec = Takes(models, fills)

    def mark(build: Callable[P, T]) -> Callable[P, T]:
        lines = [
            f"    {name}: {info.description}" for name, info in spec.fields().items() if info.description
        ]
        doc = inspect.cleandoc(build.__doc__ or "")
        model_names = ", ".join(m.__name__ for m in models)
        build.__doc__ = f"{doc}\n\nParameters from the API's {model_names}:\n" + "\n".join(lines)
        build.takes = spec  # type: ignore[attr-defined]
        return build

    return mark


def _fields(model: type[BaseModel], values: Mapping[str, Any]) -> dict[str, Any]:
    """The request body: the given (not None) arguments that are the model's fields, as JSON values."""
    return {
        name: _json(values[name])
        for name in model.model_fields
        if name in values and values[name] is not None
    }


def _json(value: Any) -> Any:
    """An argument as JSON: datetimes as ISO 8601, models as their JSON, mappings and iterables copied."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, Mapping):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, str | bytes | int | float | bool):
        return value
    if isinstance(value, Iterable):
        return [_json(v) for v in value]
    return value


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

    # -- long-term memories ---------------------------------------------------------------------------

    @endpoint
    @takes(CreateMemoryRequest)
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
        observed_at: datetime | str | None = None,
    ) -> Call[WriteResult]:
        """Write a memory; with reconcile it may UPDATE or REINFORCE an existing one instead of adding."""
        body = _fields(CreateMemoryRequest, locals())
        return Call("POST", "/v1/memories", body=body, parse=_model(WriteResult))

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
        snapshot_id: str | None = None,
    ) -> Call[MemoryPage]:
        """A page of memories (the user's and the org's), newest first; semantic facts can be filtered by
        exact subject/attribute, any memory by when it was first stated (observed_after <= observed_at <
        observed_before), by agent, visibility, tags (any of), taxonomic domain and metadata values, and
        by the snapshot whose extraction wrote or reinforced them (`snapshot_id`)."""
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
            "snapshot_id": snapshot_id,
        }
        return Call("GET", "/v1/memories", query, parse=_model(MemoryPage))

    # -- procedures as skills --------------------------------------------------------------------------

    @endpoint
    def get_skill(memory_id: str, user_id: str | None) -> Call[SkillExport]:
        """A procedural memory as an Agent Skill (its SKILL.md and folder name): GET /v1/memories/{id}/skill."""
        path = f"/v1/memories/{_seg(memory_id)}/skill"
        return Call("GET", path, {"user_id": user_id}, parse=_model(SkillExport))

    @endpoint
    @takes(FeedbackRequest)
    def procedure_feedback(
        memory_id: str,
        user_id: str | None,
        outcome: Literal["success", "failure"],
        used_at: datetime | str | None = None,
    ) -> Call[FeedbackResult]:
        """Record that using a procedure worked (or did not): POST /v1/memories/{id}/feedback."""
        body = _fields(FeedbackRequest, {"outcome": outcome, "used_at": used_at})
        path = f"/v1/memories/{_seg(memory_id)}/feedback"
        return Call("POST", path, {"user_id": user_id}, body, parse=_model(FeedbackResult))

    @endpoint
    @takes(DiscoverRequest)
    def discover_procedures(
        user_id: str | None,
        query: str,
        top_k: int = 5,
        *,
        mode: str | None = None,
        min_score: float | None = None,
        observed_after: datetime | str | None = None,
        observed_before: datetime | str | None = None,
    ) -> Call[DiscoverResponse]:
        """The procedures that fit a task, by relevance and success: POST /v1/procedures/discover."""
        body = _fields(DiscoverRequest, locals())
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
    @takes(SearchRequest)
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
        mode: str | None = None,
        min_score: float | None = None,
        include_superseded: bool | None = None,
        observed_after: datetime | str | None = None,
        observed_before: datetime | str | None = None,
    ) -> Call[SearchResponse]:
        """Hybrid (vector + keyword) search over a user's memories and the org's: POST /v1/memories/search.

        agent_id, visibility, tags, domain and metadata filter inside the index query."""
        body = _fields(SearchRequest, locals())
        return Call("POST", "/v1/memories/search", body=body, safe=True, parse=_model(SearchResponse))

    # -- recall and context ----------------------------------------------------------------------------

    @endpoint
    @takes(RecallRequest)
    def recall(
        user_id: str | None,
        query: str,
        thread: str | None = None,
        scope: str | None = None,
        top_k: int | None = None,
        *,
        message_range: int | Mapping[str, int] | None = None,
        min_score: float | None = None,
        order: str | None = None,
        exclude_recent: int | Iterable[str] | None = None,
        as_of: datetime | str | None = None,
    ) -> Call[RecallResponse]:
        """Old messages similar to `query` (semantic recall), with `message_range` turns around each.

        `order="time"` also returns them as `messages`, in time order across threads; `as_of` (the date
        the question is asked) hides the messages recorded after it."""
        body = _fields(RecallRequest, locals())
        return Call("POST", "/v1/recall", body=body, safe=True, parse=_model(RecallResponse))

    @endpoint
    @takes(ContextRequest)
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
        recent_turns: int | None = None,
        memories_top_k: int | None = None,
        recall_top_k: int | None = None,
        message_range: int | Mapping[str, int] | None = None,
        observed_after: datetime | str | None = None,
        observed_before: datetime | str | None = None,
        as_of: datetime | str | None = None,
    ) -> Call[ContextResponse]:
        """Everything an agent's next turn in `session_id` needs (working memory, memories, recent turns,
        recalled messages) within a token budget: POST /v1/context. `as_of` (the date the question is
        asked) hides what was recorded after it and dates the block relative to it."""
        body = _fields(ContextRequest, locals())
        return Call("POST", "/v1/context", body=body, safe=True, parse=_model(ContextResponse))

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
    @takes(WorkingMemoryWrite)
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
        body = _fields(WorkingMemoryWrite, locals())
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
        if_none_match: str | None = None,
    ) -> Call[WorkingMemoryContext | Unchanged]:
        """The agent's update tool, its instructions and the current working memory (Unchanged when
        `if_none_match` is still its cache key)."""
        query = {
            "user_id": user_id,
            "thread_id": thread_id,
            "scope": scope,
            "delivery": delivery,
            "agent_id": agent_id,
            "if_none_match": if_none_match,
        }
        return Call("GET", "/v1/working-memory/tool", query, parse=_working_memory_tool)

    @endpoint
    def apply_working_memory_tool(
        user_id: str | None,
        arguments: str | Mapping[str, Any],
        thread_id: str | None = None,
        scope: str | None = None,
        agent_id: str | None = None,
    ) -> Call[WorkingMemoryState]:
        """Apply an update-tool call as the model made it: `{"memory": ...}` or the memory itself;
        `agent_id`: one agent's resource-scoped working memory (the one `working_memory_tool` reads)."""
        query = {"user_id": user_id, "thread_id": thread_id, "scope": scope, "agent_id": agent_id}
        body = dict(arguments) if isinstance(arguments, Mapping) else arguments
        return Call("POST", "/v1/working-memory/tool", query, body, parse=_model(WorkingMemoryState))

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

    # -- importing history -------------------------------------------------------------------------------

    @endpoint
    @takes(ImportRequest)
    def import_history(
        user_id: str | None,
        data: str | Mapping[str, Any] | list[Any] | None = None,
        format: Literal["turns", "jsonl", "locomo"] = "jsonl",
        turns: Iterable[Mapping[str, Any]] | None = None,
    ) -> Call[ImportReport]:
        """Import past conversations with their original timestamps (re-sending it imports nothing twice)."""
        # idempotent by each turn's import key: a lost answer may be sent again
        body = _fields(ImportRequest, locals())
        return Call("POST", "/v1/import", body=body, safe=True, parse=_model(ImportReport))

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


def _drop_none(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


def json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
