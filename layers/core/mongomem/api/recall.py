"""Recall route: a user's earlier messages by meaning, with their neighbours."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Protocol

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import Caller
from mongomem.models.recall import RecallRequest, RecallResponse
from mongomem.observability import logger, metrics
from mongomem.requestlog import of_recall, remember

if TYPE_CHECKING:
    from mongomem.requestlog import RecentRequestLog
    from mongomem.retrieval.recall import Recall


class RecallServices(Protocol):
    @property
    def recall(self) -> Recall: ...
    @property
    def recent_requests(self) -> RecentRequestLog: ...


def routes(svc: RecallServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    @router.post(
        "/v1/recall",
        summary="Recall earlier messages by meaning (matches with their neighbours, grouped by thread)",
        responses={
            200: {
                "description": "Recalled turns",
                "content": {"application/json": {"model": RecallResponse}},
            },
            409: {"description": "Recall is disabled (memory.recall.enabled: false)"},
        },
    )
    def recall(request: Annotated[RecallRequest, Body(embed=False)]) -> RecallResponse:
        scope = caller.scope(request.user_id)
        logger.debug("recall request", extra={"scope": request.scope, "top_k": request.top_k})
        result = svc.recall.recall(scope, request)
        remember(svc.recent_requests, scope, of_recall(request, result))
        metrics.add_metric(name="RecallMatches", unit=MetricUnit.Count, value=len(result.matched))
        metrics.add_metric(name="RecallLatency", unit=MetricUnit.Milliseconds, value=result.took_ms)
        return result

    return router
