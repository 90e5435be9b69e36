"""Context route: one ready-to-use block for an agent's next turn, within a token budget."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Protocol

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import Caller
from mongomem.models.recall import ContextRequest, ContextResponse
from mongomem.observability import metrics
from mongomem.requestlog import of_context, remember

if TYPE_CHECKING:
    from mongomem.requestlog import RecentRequestLog
    from mongomem.retrieval.context import ContextBuilder


class ContextServices(Protocol):
    @property
    def context_builder(self) -> ContextBuilder: ...
    @property
    def recent_requests(self) -> RecentRequestLog: ...


def routes(svc: ContextServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    @router.post(
        "/v1/context",
        summary="Working memory, recent turns, relevant memories and recalled messages within a token budget",
    )
    def build_context(request: Annotated[ContextRequest, Body(embed=False)]) -> ContextResponse:
        principal = caller.principal()
        scope = caller.scope(request.user_id)
        result = svc.context_builder.build(principal, scope, request)
        remember(svc.recent_requests, scope, of_context(request, result))
        metrics.add_metric(name="ContextTokens", unit=MetricUnit.Count, value=result.tokens)
        return result

    return router
