"""The memory tools an agent is given, once for every host: the MCP server (mongomem.mcp_server) and
the framework integrations (mongomem.integrations) build theirs from `TOOLS`.

A tool's parameters are the fields of the API request model its route takes (`ToolSpec.models`), with
the field's type, constraints and description, so a field added to the API reaches every tool (and
tests/unit/test_api_surface.py fails while one does not offer it). Documented exceptions:
- `user_id` is left out when the host serves one user (`mongomem mcp --user-id`, the integrations);
- `ToolSpec.leave_out` names the fields a tool does not offer, each with its reason beside it;
- routes without a request model (query parameters only: listing, reading, deleting) declare their
  parameters in `ToolSpec.own`, each the route's own query parameter (the test holds them to the
  OpenAPI document).
A parameter the caller leaves out (or sets to null, or to the API's default) is not sent: the API
applies its own default, as it does for any client.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic_core import PydanticUndefined

from mongomem.models.common import USER_HELP
from mongomem.models.memory import CreateMemoryRequest
from mongomem.models.procedures import DiscoverRequest, FeedbackRequest
from mongomem.models.recall import ContextRequest, RecallRequest
from mongomem.models.search import SearchRequest
from mongomem.models.turns import RecordTurnsRequest, TurnIn
from mongomem.models.working_memory import (
    ThreadCloneRequest,
    ThreadCreate,
    ThreadUpdate,
    WorkingMemoryWrite,
)

USER = "user_id"


@dataclass(frozen=True)
class Param:
    """One tool parameter: its type (with constraints), meaning and default (PydanticUndefined: required).

    `send`: the default is the tool's own, not the API's, so it is sent even when left as it is."""

    name: str
    annotation: Any
    description: str
    default: Any = PydanticUndefined
    send: bool = False

    @property
    def required(self) -> bool:
        return self.default is PydanticUndefined


USER_PARAM = Param(USER, str | None, USER_HELP, None)
# The ids in a route's path, which no request model holds.
MEMORY_ID = Param("memory_id", str, "the memory's id (memory_id in search and list results)")
SESSION_ID = Param("session_id", str, ContextRequest.model_fields["session_id"].description or "")
THREAD_ID = Param("thread_id", str, ThreadCreate.model_fields["thread_id"].description or "")
# Query parameters of the routes without a request model (their names are the route's, checked against
# the OpenAPI document; their descriptions are written for the agent).
WM_THREAD = Param(
    "thread_id", str | None, "a thread's own working memory (scope thread) instead of the user's", None
)
WM_AGENT = Param(
    "agent_id",
    str | None,
    "one agent's own working memory (resource scope): the one build_context with this agent_id reads",
    None,
)
WM_SCOPE = Param(
    "scope",
    Literal["resource", "thread"] | None,
    "resource: the user's notes across threads; thread: one thread's",
    None,
)


# A page of 20 (the routes' default is 50): a tool's answer goes into the model's context.
def _page_limit(what: str) -> Param:
    return Param("limit", Annotated[int, Field(ge=1, le=200)], f"{what} per page", 20, send=True)


PAGE_CURSOR = Param("cursor", str | None, "next_cursor of the previous page", None)


@dataclass(frozen=True)
class ToolSpec:
    """A memory tool: its name and text, the SDK method it calls and where its parameters come from."""

    name: str
    doc: str
    method: str  # the MemoryClient / AsyncMemoryClient method, called with the arguments as keywords
    models: tuple[type[BaseModel], ...] = ()  # the API request models its parameters are the fields of
    path: tuple[Param, ...] = ()  # the route's path ids (required, first)
    leave_out: Mapping[str, str] = field(default_factory=dict)  # field -> why the tool does not offer it
    own: tuple[Param, ...] = ()  # query parameters of a route without a request model
    required: tuple[str, ...] = ()  # optional in the model, required by the tool (what it is for)
    text: bool = False  # answers with text (the context block), not the API's JSON

    def params(self, *, fixed_user: bool = False, defaults: Mapping[str, Any] | None = None) -> list[Param]:
        """The parameters, required ones first; `defaults` replaces API defaults (then always sent)."""
        out: dict[str, Param] = {p.name: p for p in self.path}
        for model in self.models:
            for name, info in model.model_fields.items():
                if name in out or name in self.leave_out:
                    continue
                if not info.description:  # the agent reads it: a field without one is a bug in the API
                    raise TypeError(f"{model.__name__}.{name} needs a description")
                out[name] = _param(name, info)
        for own in self.own:
            out.setdefault(own.name, own)
        if fixed_user:
            out.pop(USER, None)
        for name in self.required:
            p = out[name]
            out[name] = Param(name, p.annotation, p.description)
        for name, value in (defaults or {}).items():
            p = out[name]
            out[name] = Param(name, p.annotation, p.description, value, send=True)
        return sorted(out.values(), key=lambda p: not p.required)


def arguments(given: Mapping[str, Any], params: Iterable[Param]) -> dict[str, Any]:
    """What to send: the given values as JSON, without nulls and without values equal to the API's
    default (the API applies it when nothing is sent; some fields count as given only when sent)."""
    declared = {p.name: p for p in params}
    out = {}
    for name, value in given.items():
        p = declared.get(name)
        if value is None or (p is not None and not p.send and value == p.default):
            continue
        out[name] = _json(value)
    return out


def _param(name: str, info: Any) -> Param:
    """A request model's field as a tool parameter: its type and constraints; optional ones accept null."""
    parts = (info.annotation, *info.metadata)
    annotation = Annotated[parts] if info.metadata else info.annotation  # the field's constraints kept
    if info.is_required():
        return Param(name, annotation, info.description)
    default = info.default if info.default is not PydanticUndefined else None
    if isinstance(default, BaseModel | dict | list):  # a JSON schema default must be plain JSON
        default = None
    return Param(name, annotation | None, info.description, default)


def _json(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


def arguments_model(name: str, params: Iterable[Param]) -> type[BaseModel]:
    """The pydantic model of a tool's arguments (its JSON schema is the tool's input schema)."""
    fields: dict[str, Any] = {
        p.name: (p.annotation, Field(p.default, description=p.description)) for p in params
    }
    return create_model(f"{name}Arguments", __config__=ConfigDict(extra="forbid"), **fields)


def signature(params: Iterable[Param], returns: Any) -> inspect.Signature:
    """A keyword-only function signature with these parameters (hosts that read signatures: MCP)."""
    return inspect.Signature(
        [
            inspect.Parameter(
                p.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=inspect.Parameter.empty if p.required else p.default,
                annotation=Annotated[p.annotation, Field(description=p.description)],
            )
            for p in params
        ],
        return_annotation=returns,
    )


def _update_working_memory(client: Any, args: dict[str, Any]) -> Any:
    """replace: PUT the whole memory; otherwise the update-tool route (unwraps {"memory": ...})."""
    if args.pop("replace", False):
        return client.update_working_memory(replace=True, **args)
    return client.apply_working_memory_tool(args.pop(USER), args.pop("memory"), **args)


CALLS: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
    "update_working_memory": _update_working_memory,
}

_PATH_NOT_BODY = "the route's path names it"

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "record_turn",
        "Record one conversation turn in the session's short-term memory (returns its seq).",
        "record_turn",
        (RecordTurnsRequest, TurnIn),
        path=(SESSION_ID,),
        leave_out={"turns": "the tool records one turn, whose fields are its parameters"},
        required=("content",),
    ),
    ToolSpec(
        "search_memories",
        "Search the user's long-term memories (facts, episodes, procedures, terms, preferences, the "
        "project's custom types) and the organisation's shared ones by meaning and words.",
        "search",
        (SearchRequest,),
    ),
    ToolSpec(
        "recall_messages",
        "Find earlier conversation messages similar to the query, with the turns around each.",
        "recall",
        (RecallRequest,),
    ),
    ToolSpec(
        "get_working_memory",
        "Read the working memory: the notes kept about the user (or about one thread).",
        "get_working_memory",
        own=(
            USER_PARAM,
            WM_THREAD,
            WM_SCOPE,
            WM_AGENT,
        ),
    ),
    ToolSpec(
        "update_working_memory",
        "Update the working memory: text (template mode) or an object of fields (schema mode, merged).",
        "update_working_memory",
        (WorkingMemoryWrite,),
        leave_out={
            "content": "`memory` takes the text (template mode)",
            "data": "`memory` takes the object (schema mode)",
        },
        required=("memory",),
        own=(
            USER_PARAM,
            WM_THREAD,
            WM_SCOPE,
            WM_AGENT,
            Param("replace", bool, "replace the whole memory instead of merging (schema mode)", False),
        ),
    ),
    ToolSpec(
        "build_context",
        "The block to read before answering: the working memory, relevant memories, recent turns and "
        "recalled messages of the session, within a token budget (or the `sources` you name: "
        '{"source": "turns" | "working_memory" | a memory kind, "mode": "text" | "semantic" | "hybrid", '
        '"top_k", "filter"}).',
        "build_context",
        (ContextRequest,),
        text=True,
    ),
    ToolSpec(
        "create_memory",
        "Remember something now: write a long-term memory of a kind (reconciled with what is known: "
        "ADD, UPDATE as a new version, or REINFORCE when it was known already).",
        "create_memory",
        (CreateMemoryRequest,),
    ),
    ToolSpec(
        "list_memories",
        "List the user's (and the organisation's) long-term memories, newest first, a page at a time.",
        "list_memories",
        own=(
            USER_PARAM,
            Param("type", str | None, "only memories of this kind", None),
            Param(
                "status",
                Literal["active", "superseded", "deleted"] | None,
                "active: current versions only (default: current and superseded)",
                None,
            ),
            _page_limit("memories"),
            PAGE_CURSOR,
        ),
    ),
    ToolSpec(
        "delete_memory",
        "Forget a memory: delete it with all its versions (search, recall and context stop returning it).",
        "delete_memory",
        path=(MEMORY_ID,),
        own=(USER_PARAM,),
    ),
    ToolSpec(
        "discover_procedures",
        "Find procedures (how a task was done before) that fit a task, ranked by relevance and success.",
        "discover_procedures",
        (DiscoverRequest,),
    ),
    ToolSpec(
        "get_procedure_skill",
        "A procedure as an Agent Skill: its name and SKILL.md (front matter, steps, allowed tools).",
        "get_skill",
        path=(MEMORY_ID,),
        own=(USER_PARAM,),
    ),
    ToolSpec(
        "record_procedure_feedback",
        "Say whether following a procedure worked: successes rank it higher in discover_procedures.",
        "procedure_feedback",
        (FeedbackRequest,),
        path=(MEMORY_ID,),
    ),
    ToolSpec(
        "create_thread",
        "Start a conversation thread; metadata.workingMemory seeds the working memory.",
        "create_thread",
        (ThreadCreate,),
    ),
    ToolSpec(
        "list_threads",
        "The user's conversation threads (sessions), most recently updated first.",
        "list_threads",
        own=(
            USER_PARAM,
            _page_limit("threads"),
            PAGE_CURSOR,
        ),
    ),
    ToolSpec(
        "update_thread",
        "Rename a thread or replace its metadata (metadata.workingMemory replaces the working memory).",
        "update_thread",
        (ThreadUpdate,),
        path=(THREAD_ID,),
    ),
    ToolSpec(
        "delete_thread",
        "Delete a thread with its messages and thread working memory.",
        "delete_thread",
        path=(THREAD_ID,),
        own=(USER_PARAM,),
    ),
    ToolSpec(
        "clone_thread",
        "Copy a thread (its messages and thread working memory) to a new thread id.",
        "clone_thread",
        (ThreadCloneRequest,),
        path=(THREAD_ID,),
    ),
)

BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}


def call(spec: ToolSpec, client: Any, args: dict[str, Any]) -> Any:
    """Run the tool's SDK call (a coroutine on AsyncMemoryClient): the arguments as keywords."""
    custom = CALLS.get(spec.name)
    if custom is not None:
        return custom(client, dict(args))
    return getattr(client, spec.method)(**args)
