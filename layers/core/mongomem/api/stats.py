"""Figures routes: memory activity per day and the pipeline's health, both for the caller's tenant only."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Protocol

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from mongomem.api.identity import Caller, UserQuery
from mongomem.longterm.stats import memory_activity
from mongomem.models.stats import MemoryActivity, PipelineHealth
from mongomem.pipeline import pipeline_health

if TYPE_CHECKING:
    from mongomem.config import Settings
    from mongomem.longterm.ports import MemoryRepository
    from mongomem.pipeline import IndexBacklog
    from mongomem.status import BacklogRepository
    from mongomem.vectors.port import VectorIndex

    class _Memories(MemoryRepository, IndexBacklog, Protocol):
        pass


class StatsServices(Protocol):
    @property
    def settings(self) -> Settings: ...
    @property
    def memory_store(self) -> _Memories: ...
    @property
    def vector_index(self) -> VectorIndex | None: ...
    @property
    def backlog(self) -> BacklogRepository: ...
    def readiness(self) -> dict[str, Any]: ...


def routes(svc: StatsServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    @router.get(
        "/v1/stats/memories",
        summary="Memories added, updated and reinforced per day, for the tenant or one user",
    )
    def get_memory_stats(
        user_id: UserQuery = None, days: Annotated[int, Query(ge=1, le=366)] = 30
    ) -> MemoryActivity:
        principal = caller.principal()
        store = svc.memory_store
        return memory_activity(store, principal.tenant, caller.listing_user(user_id), days)

    @router.get(
        "/v1/pipeline",
        summary="Readiness, the tenant's promotion and extraction backlog, index lag and the config version",
    )
    def get_pipeline(user_id: UserQuery = None) -> PipelineHealth:
        principal = caller.principal()
        return pipeline_health(
            svc.readiness(),
            svc.backlog,
            svc.memory_store,
            svc.vector_index,
            svc.settings,
            tenant=principal.tenant,
            user_id=caller.listing_user(user_id),
        )

    return router
