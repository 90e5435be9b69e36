"""Search route: rank a user's long-term memories by meaning and keywords."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Protocol

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import Caller
from mongomem.longterm.service import require_kinds
from mongomem.models.search import SearchRequest, SearchResponse
from mongomem.observability import logger, metrics
from mongomem.requestlog import of_search, remember

if TYPE_CHECKING:
    from mongomem.kinds import KindRegistry
    from mongomem.requestlog import RecentRequestLog
    from mongomem.retrieval.search import MemorySearch


class SearchServices(Protocol):
    @property
    def search(self) -> MemorySearch: ...
    @property
    def recent_requests(self) -> RecentRequestLog: ...
    @property
    def kinds(self) -> KindRegistry: ...


def routes(svc: SearchServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    @router.post("/v1/memories/search", summary="Search a user's memories (hybrid k-NN + BM25 by default)")
    def search_memories(request: Annotated[SearchRequest, Body(embed=False)]) -> SearchResponse:
        scope = caller.scope(request.user_id)
        if request.types:
            require_kinds(svc.kinds, [str(t) for t in request.types], "types")
        logger.debug("memory search", extra={"mode": request.mode, "top_k": request.top_k})
        result = svc.search.search(scope, request)
        remember(svc.recent_requests, scope, of_search(request, result))
        metrics.add_metric(name="SearchResults", unit=MetricUnit.Count, value=len(result.results))
        metrics.add_metric(name="SearchLatency", unit=MetricUnit.Milliseconds, value=result.took_ms)
        return result

    return router
