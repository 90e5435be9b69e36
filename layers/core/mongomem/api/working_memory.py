"""Working-memory routes: read, replace, merge and clear it; the agent's tool, its calls and instructions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Protocol

from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import Caller, UserQuery
from mongomem.models.common import ID_PATTERN, SafeData, Scope, Text
from mongomem.models.working_memory import (
    Delivery,
    Unchanged,
    WorkingMemoryContext,
    WorkingMemoryKey,
    WorkingMemoryScope,
    WorkingMemoryState,
    WorkingMemoryWrite,
)
from mongomem.observability import logger, metrics
from mongomem.requestlog import RecentRequestLog, forget_working_memory
from mongomem.workingmemory.service import WorkingMemoryService, resolve_key

if TYPE_CHECKING:
    from mongomem.workingmemory.config import WorkingMemoryConfig


ScopeQuery = Annotated[
    WorkingMemoryScope | None, Query(description="resource (one per user) or thread; default from config")
]


# A tool call's arguments as the model produced them: {"memory": ...}, the memory itself, or a JSON string.
ToolArguments = SafeData | Text


ThreadQuery = Annotated[str | None, Query(pattern=ID_PATTERN, description="The thread (thread scope)")]


AgentQuery = Annotated[
    str | None,
    Query(pattern=ID_PATTERN, description="resource scope: one agent's working memory of the user"),
]


ReadOnlyQuery = Annotated[bool, Query(alias="readOnly", description="Read the memory but refuse writes")]


DeliveryQuery = Annotated[
    Delivery | None, Query(description="system text or a state signal; default from config")
]


IfNoneMatch = Annotated[
    str | None, Query(max_length=128, description="The cache key the client already holds")
]


def _written(action: str, state: WorkingMemoryState) -> WorkingMemoryState:
    logger.info(
        "working memory written",
        extra={
            "action": action,
            "scope": state.scope,
            "thread_id": state.thread_id,
            "version": state.version,
        },
    )
    metrics.add_metric(name="WorkingMemoryWrites", unit=MetricUnit.Count, value=1)
    return state


class WorkingMemoryServices(Protocol):
    @property
    def working_memory(self) -> WorkingMemoryService: ...
    @property
    def working_memory_config(self) -> WorkingMemoryConfig: ...
    @property
    def recent_requests(self) -> RecentRequestLog: ...


def routes(svc: WorkingMemoryServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    def _service() -> WorkingMemoryService:
        return svc.working_memory

    def _key(
        scope: WorkingMemoryScope | None,
        user_id: str | None,
        thread_id: str | None,
        agent_id: str | None = None,
    ) -> WorkingMemoryKey:
        configured = svc.working_memory_config.scope
        return resolve_key(caller.principal(), scope or configured, user_id, thread_id, agent_id)

    @router.get("/v1/working-memory", summary="The working memory of a user (resource) or a thread")
    def get_working_memory(
        scope: ScopeQuery = None,
        user_id: UserQuery = None,
        thread_id: ThreadQuery = None,
        agent_id: AgentQuery = None,
        read_only: ReadOnlyQuery = False,
        if_none_match: IfNoneMatch = None,
    ) -> WorkingMemoryState | Unchanged:
        state = _service().get(_key(scope, user_id, thread_id, agent_id), read_only)
        if if_none_match and if_none_match == state.cache_key:
            return Unchanged(cache_key=state.cache_key)
        return state

    @router.put("/v1/working-memory", summary="Replace the working memory (template text or schema data)")
    def put_working_memory(
        request: Annotated[WorkingMemoryWrite, Body(embed=False)],
        scope: ScopeQuery = None,
        user_id: UserQuery = None,
        thread_id: ThreadQuery = None,
        agent_id: AgentQuery = None,
        read_only: ReadOnlyQuery = False,
    ) -> WorkingMemoryState:
        return _written(
            "replace", _service().replace(_key(scope, user_id, thread_id, agent_id), request, read_only)
        )

    @router.patch(
        "/v1/working-memory", summary="Merge fields into the working memory (template mode: replace)"
    )
    def patch_working_memory(
        request: Annotated[WorkingMemoryWrite, Body(embed=False)],
        scope: ScopeQuery = None,
        user_id: UserQuery = None,
        thread_id: ThreadQuery = None,
        agent_id: AgentQuery = None,
        read_only: ReadOnlyQuery = False,
    ) -> WorkingMemoryState:
        return _written(
            "merge", _service().merge(_key(scope, user_id, thread_id, agent_id), request, read_only)
        )

    @router.delete("/v1/working-memory", summary="Clear the working memory of a user or a thread")
    def delete_working_memory(
        scope: ScopeQuery = None,
        user_id: UserQuery = None,
        thread_id: ThreadQuery = None,
        agent_id: AgentQuery = None,
        read_only: ReadOnlyQuery = False,
    ) -> WorkingMemoryState:
        key = _key(scope, user_id, thread_id, agent_id)
        cleared = _service().clear(key, read_only)
        forget_working_memory(
            svc.recent_requests,
            Scope(tenant=key.tenant, user_id=key.user_id),
            key.scope,
            key.thread_id or key.user_id,
        )
        return _written("clear", cleared)

    @router.get(
        "/v1/working-memory/tool", summary="The update tool, the agent's instructions and the current memory"
    )
    def get_working_memory_tool(
        scope: ScopeQuery = None,
        user_id: UserQuery = None,
        thread_id: ThreadQuery = None,
        agent_id: AgentQuery = None,
        read_only: ReadOnlyQuery = False,
        delivery: DeliveryQuery = None,
        if_none_match: IfNoneMatch = None,
    ) -> WorkingMemoryContext | Unchanged:
        return _service().context(
            _key(scope, user_id, thread_id, agent_id), delivery, read_only, if_none_match
        )

    @router.post(
        "/v1/working-memory/tool",
        summary="Apply an update-tool call: the model's arguments, with or without the `memory` wrapper",
    )
    def post_working_memory_tool(
        arguments: Annotated[ToolArguments, Body(embed=False)],
        scope: ScopeQuery = None,
        user_id: UserQuery = None,
        thread_id: ThreadQuery = None,
        agent_id: AgentQuery = None,
        read_only: ReadOnlyQuery = False,
    ) -> WorkingMemoryState:
        # the same memory the tool's GET (and the agent's read) names: one agent's, with agent_id
        key = _key(scope, user_id, thread_id, agent_id)
        state = _service().apply_tool_call(key, arguments, read_only)
        return _written("tool", state)

    return router
