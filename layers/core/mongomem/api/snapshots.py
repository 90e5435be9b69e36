"""Snapshot routes: one snapshot's range and per-kind extraction status; retry a kind's extraction."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body, Path
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import UserQuery, request_scope, services_of
from mongomem.extraction.retry import retry_extraction
from mongomem.longterm.service import require_kinds
from mongomem.models.sessions import RetryRequest, RetryResult, Snapshot
from mongomem.observability import logger, metrics

router = APIGatewayHttpRouter()

SnapshotId = Annotated[str, Path(pattern=r"^snap-[a-f0-9]{24}$", description="A snapshot's id")]


@router.get("/v1/snapshots/<snapshot_id>", summary="A snapshot: its session, seq range, reason, extraction")
def get_snapshot(snapshot_id: SnapshotId, user_id: UserQuery = None) -> Snapshot:
    return services_of(router).history.snapshot(request_scope(router, user_id), snapshot_id)


@router.post(
    "/v1/snapshots/<snapshot_id>/retry",
    summary="Extract one kind of a snapshot again: its status goes back to queued and its message is re-sent",
    responses={
        200: {"description": "Queued again", "content": {"application/json": {"model": RetryResult}}},
        409: {"description": "The kind is done, not part of the snapshot, or disabled"},
    },
)
def retry_snapshot(
    snapshot_id: SnapshotId, request: Annotated[RetryRequest, Body(embed=False)], user_id: UserQuery = None
) -> RetryResult:
    svc = services_of(router)
    scope = request_scope(router, user_id)
    require_kinds(svc.kinds, [request.type], "type")
    result = retry_extraction(svc.snapshots, svc.queue, svc.settings, scope, snapshot_id, request.type)
    logger.info("extraction retried", extra={"snapshot_id": snapshot_id, "memory_type": request.type})
    metrics.add_metric(name="ExtractionRetries", unit=MetricUnit.Count, value=1)
    return result
