"""Context route: one ready-to-use block for an agent's next turn, within a token budget."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import caller, scope_for, services_of
from mongomem.models.recall import ContextRequest, ContextResponse
from mongomem.observability import metrics
from mongomem.requestlog import of_context, remember

router = APIGatewayHttpRouter()


@router.post(
    "/v1/context",
    summary="Working memory, recent turns, relevant memories and recalled messages within a token budget",
)
def build_context(request: Annotated[ContextRequest, Body(embed=False)]) -> ContextResponse:
    principal = caller(router)
    scope = scope_for(principal, request.user_id)
    svc = services_of(router)
    result = svc.context_builder.build(principal, scope, request)
    remember(svc.recent_requests, scope, of_context(request, result))
    metrics.add_metric(name="ContextTokens", unit=MetricUnit.Count, value=result.tokens)
    return result
