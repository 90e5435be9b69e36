"""Figures routes: memory activity per day and the pipeline's health, both for the caller's tenant only."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from mongomem.api.identity import UserQuery, caller, listing_user, services_of
from mongomem.longterm.stats import memory_activity
from mongomem.models.stats import MemoryActivity, PipelineHealth
from mongomem.pipeline import pipeline_health

router = APIGatewayHttpRouter()


@router.get(
    "/v1/stats/memories",
    summary="Memories added, updated and reinforced per day, for the tenant or one user",
)
def get_memory_stats(
    user_id: UserQuery = None, days: Annotated[int, Query(ge=1, le=366)] = 30
) -> MemoryActivity:
    principal = caller(router)
    store = services_of(router).memory_store
    return memory_activity(store, principal.tenant, listing_user(principal, user_id), days)


@router.get(
    "/v1/pipeline",
    summary="Readiness, the tenant's promotion and extraction backlog, index lag and the config version",
)
def get_pipeline(user_id: UserQuery = None) -> PipelineHealth:
    svc = services_of(router)
    principal = caller(router)
    return pipeline_health(
        svc.readiness(),
        svc.backlog,
        svc.memory_store,
        svc.vector_index,
        svc.settings,
        principal.tenant,
        listing_user(principal, user_id),
    )
