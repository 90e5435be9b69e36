"""Memory routes: direct writes, reads with version history, lists, deletes."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import UserQuery, request_scope, services_of
from mongomem.config import KIND_NAME_PATTERN
from mongomem.errors import InvalidInput
from mongomem.models.common import Scope, parse_utc_datetime
from mongomem.models.memory import (
    CreateMemoryRequest,
    DeleteResult,
    MemoryPage,
    MemoryWithHistory,
    ObservedRange,
    PayloadFilter,
    WriteResult,
)
from mongomem.observability import emit, logger

router = APIGatewayHttpRouter()

MemoryId = Annotated[str, Path(pattern=r"^mem-[a-f0-9]{24}$", description="A memory version's id")]


def _scope(user_id: str | None) -> Scope:
    return request_scope(router, user_id)


@router.post(
    "/v1/memories",
    summary="Store a memory of any type (reconciled unless reconcile=false)",
    responses={
        201: {"description": "ADD or UPDATE", "content": {"application/json": {"model": WriteResult}}},
        200: {"description": "REINFORCE", "content": {"application/json": {"model": WriteResult}}},
    },
)
def create_memory(request: Annotated[CreateMemoryRequest, Body(embed=False)]) -> tuple[WriteResult, int]:
    result = services_of(router).memories.create(_scope(request.user_id), request)
    emit("ReconcileDecisions", MetricUnit.Count, 1, memory_type=request.type, decision=result.decision)
    logger.info("memory written", extra={"decision": result.decision, "memory_id": result.memory.memory_id})
    return result, 201 if result.decision in ("ADD", "UPDATE") else 200


@router.get("/v1/memories/<memory_id>", summary="A memory and, on request, its whole version chain")
def get_memory(
    memory_id: MemoryId, user_id: UserQuery = None, history: Annotated[bool, Query()] = False
) -> MemoryWithHistory:
    return services_of(router).memories.get(_scope(user_id), memory_id, history)


@router.get("/v1/memories", summary="List a user's memories by type and status, newest first")
def list_memories(
    user_id: UserQuery = None,
    type: Annotated[
        str | None, Query(pattern=KIND_NAME_PATTERN, description="a memory kind (built-in or custom)")
    ] = None,
    status: Annotated[Literal["active", "superseded", "deleted"] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
    subject: Annotated[
        str | None, Query(min_length=1, max_length=512, description="semantic: exact subject")
    ] = None,
    attribute: Annotated[
        str | None, Query(min_length=1, max_length=512, description="semantic: exact attribute")
    ] = None,
    subject_prefix: Annotated[
        str | None, Query(min_length=1, max_length=512, description="semantic: subjects starting with this")
    ] = None,
    observed_after: Annotated[
        str | None, Query(max_length=64, description="ISO date-time: first stated at or after it")
    ] = None,
    observed_before: Annotated[
        str | None, Query(max_length=64, description="ISO date-time: first stated before it")
    ] = None,
) -> MemoryPage:
    exact = {k: v for k, v in (("subject", subject), ("attribute", attribute)) if v is not None}
    payload = PayloadFilter(exact=exact, prefix={"subject": subject_prefix} if subject_prefix else {})
    observed = ObservedRange(
        _when("observed_after", observed_after), _when("observed_before", observed_before)
    )
    if observed.after and observed.before and observed.after >= observed.before:
        raise InvalidInput("observed_after must be earlier than observed_before", {"path": "observed_after"})
    return services_of(router).memories.list(_scope(user_id), type, status, limit, cursor, payload, observed)


def _when(name: str, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_utc_datetime(value)
    except (ValueError, OverflowError) as exc:
        raise InvalidInput(f"{name} is not an ISO 8601 date-time", {"path": name}) from exc


@router.delete("/v1/memories/<memory_id>", summary="Delete a memory's whole lineage")
def delete_memory(memory_id: MemoryId, user_id: UserQuery = None) -> DeleteResult:
    return services_of(router).memories.delete(_scope(user_id), memory_id)
