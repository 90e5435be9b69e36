"""Snapshot routes: one snapshot's range and per-kind extraction status; retry a kind's extraction."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Literal, Protocol

from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import Caller, UserQuery
from mongomem.errors import InvalidInput
from mongomem.extraction.retry import retry_extraction
from mongomem.longterm.service import require_kinds
from mongomem.models.common import parse_utc_datetime
from mongomem.models.sessions import FailedSnapshots, RetryRequest, RetryResult, Snapshot
from mongomem.observability import logger, metrics

if TYPE_CHECKING:
    from mongomem.config import Settings
    from mongomem.kinds import KindRegistry
    from mongomem.ports import QueuePort
    from mongomem.shortterm.history import History
    from mongomem.shortterm.ports import SnapshotRepository


SnapshotId = Annotated[str, Path(pattern=r"^snap-[a-f0-9]{24}$", description="A snapshot's id")]


def _cursor(cursor: str) -> datetime:
    try:
        return parse_utc_datetime(cursor)
    except (ValueError, OverflowError) as exc:
        raise InvalidInput("cursor is not one this API returned", {"path": "cursor"}) from exc


class SnapshotServices(Protocol):
    @property
    def settings(self) -> Settings: ...
    @property
    def snapshots(self) -> SnapshotRepository: ...
    @property
    def kinds(self) -> KindRegistry: ...
    @property
    def history(self) -> History: ...
    @property
    def queue(self) -> QueuePort: ...


def routes(svc: SnapshotServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    @router.get(
        "/v1/snapshots",
        summary="Snapshots whose extraction failed (the dead letters of the caller's tenant), newest first",
    )
    def list_failed_snapshots(
        status: Annotated[
            Literal["failed"], Query(description="failed: a kind's last attempt failed")
        ] = "failed",
        user_id: UserQuery = None,
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
        cursor: Annotated[
            str | None, Query(max_length=64, description="next_cursor of the last page")
        ] = None,
    ) -> FailedSnapshots:
        principal = caller.principal()
        user = caller.listing_user(user_id)
        before = _cursor(cursor) if cursor else None
        found = svc.snapshots.failed(principal.tenant, user, svc.kinds.names(), limit + 1, before)
        more, found = len(found) > limit, found[:limit]
        return FailedSnapshots(
            tenant=principal.tenant,
            user_id=user,
            snapshots=[s.public() for s in found],
            next_cursor=found[-1].created_at.isoformat() if more and found else None,
        )

    @router.get(
        "/v1/snapshots/<snapshot_id>", summary="A snapshot: its session, seq range, reason, extraction"
    )
    def get_snapshot(snapshot_id: SnapshotId, user_id: UserQuery = None) -> Snapshot:
        return svc.history.snapshot(caller.scope(user_id), snapshot_id)

    @router.post(
        "/v1/snapshots/<snapshot_id>/retry",
        summary="Extract one kind of a snapshot again: its status goes back to queued and its message is re-sent",
        responses={
            200: {"description": "Queued again", "content": {"application/json": {"model": RetryResult}}},
            409: {"description": "The kind is done, not part of the snapshot, or disabled"},
        },
    )
    def retry_snapshot(
        snapshot_id: SnapshotId,
        request: Annotated[RetryRequest, Body(embed=False)],
        user_id: UserQuery = None,
    ) -> RetryResult:
        scope = caller.scope(user_id)
        require_kinds(svc.kinds, [request.type], "type")
        result = retry_extraction(svc.snapshots, svc.queue, svc.settings, scope, snapshot_id, request.type)
        logger.info("extraction retried", extra={"snapshot_id": snapshot_id, "memory_type": request.type})
        metrics.add_metric(name="ExtractionRetries", unit=MetricUnit.Count, value=1)
        return result

    return router
