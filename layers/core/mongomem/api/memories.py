"""Memory routes: direct writes, reads with version history, lists, deletes."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol

from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import Caller, UserQuery
from mongomem.errors import InvalidInput
from mongomem.kindnames import KIND_NAME_PATTERN
from mongomem.longterm.conflicts import conflicts
from mongomem.models.common import ID_PATTERN, parse_utc_datetime
from mongomem.models.memory import (
    ConflictList,
    CreateMemoryRequest,
    DeleteResult,
    Domain,
    DomainList,
    MemoryFilter,
    MemoryPage,
    MemoryWithHistory,
    ObservedRange,
    PayloadFilter,
    WriteResult,
)
from mongomem.observability import emit, logger

if TYPE_CHECKING:
    from mongomem.kinds import KindRegistry
    from mongomem.longterm.ports import MemoryRepository
    from mongomem.longterm.service import MemoryService


MemoryId = Annotated[str, Path(pattern=r"^mem-[a-f0-9]{24}$", description="A memory version's id")]
# the list's query parameters
KindQuery = Annotated[
    str | None, Query(pattern=KIND_NAME_PATTERN, description="a memory kind (built-in or custom)")
]
StatusQuery = Annotated[
    Literal["active", "superseded", "deleted", "proposed"] | None,
    Query(description="only this status (default: active and superseded; proposals only when asked)"),
]
SubjectQuery = Annotated[
    str | None, Query(min_length=1, max_length=512, description="semantic: exact subject")
]
AttributeQuery = Annotated[
    str | None, Query(min_length=1, max_length=512, description="semantic: exact attribute")
]
SubjectPrefixQuery = Annotated[
    str | None,
    Query(min_length=1, max_length=512, description="semantic: subjects starting with this"),
]
ObservedAfterQuery = Annotated[
    str | None, Query(max_length=64, description="ISO date-time: first stated at or after it")
]
ObservedBeforeQuery = Annotated[
    str | None, Query(max_length=64, description="ISO date-time: first stated before it")
]
AgentQuery = Annotated[
    str | None,
    Query(pattern=ID_PATTERN, description="as this agent: its memories, the shared ones and the org's"),
]
VisibilityQuery = Annotated[
    Literal["private", "org"] | None, Query(description="only the user's, or only the org's")
]
TagsQuery = Annotated[
    str | None, Query(min_length=1, max_length=2000, description="comma-separated: any of these tags")
]
DomainQuery = Annotated[str | None, Query(min_length=1, max_length=300, description="taxonomic domain")]
MetadataQuery = Annotated[
    str | None,
    Query(min_length=2, max_length=2000, description='JSON object of exact values: {"k": "v"}'),
]
SnapshotQuery = Annotated[
    str | None,
    Query(
        pattern=r"^snap-[a-f0-9]{24}$",
        description="memories with evidence from this snapshot: what its extraction wrote or reinforced",
    ),
]


def _metadata(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise InvalidInput("metadata is not a JSON object", {"path": "metadata"}) from exc
    if not isinstance(value, dict):
        raise InvalidInput('metadata must be a JSON object such as {"region": "eu"}', {"path": "metadata"})
    return value


def _when(name: str, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_utc_datetime(value)
    except (ValueError, OverflowError) as exc:
        raise InvalidInput(f"{name} is not an ISO 8601 date-time", {"path": name}) from exc


def _payload_filter(subject: str | None, attribute: str | None, subject_prefix: str | None) -> PayloadFilter:
    """The semantic payload filter: an exact subject and attribute, a subject prefix."""
    exact = {k: v for k, v in (("subject", subject), ("attribute", attribute)) if v is not None}
    return PayloadFilter(exact=exact, prefix={"subject": subject_prefix} if subject_prefix else {})


def _observed(after: str | None, before: str | None) -> ObservedRange:
    """The observed-time range, its ends parsed; a range that ends before it starts is refused."""
    observed = ObservedRange(_when("observed_after", after), _when("observed_before", before))
    if observed.after and observed.before and observed.after >= observed.before:
        raise InvalidInput("observed_after must be earlier than observed_before", {"path": "observed_after"})
    return observed


class MemoryServices(Protocol):
    @property
    def memories(self) -> MemoryService: ...
    @property
    def memory_store(self) -> MemoryRepository: ...
    @property
    def kinds(self) -> KindRegistry: ...


def routes(svc: MemoryServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    @router.post(
        "/v1/memories",
        summary="Store a memory of any type (reconciled unless reconcile=false)",
        responses={
            201: {"description": "ADD or UPDATE", "content": {"application/json": {"model": WriteResult}}},
            200: {"description": "REINFORCE", "content": {"application/json": {"model": WriteResult}}},
            202: {
                "description": "PROPOSE: a user's other value for an org memory, kept as a proposal",
                "content": {"application/json": {"model": WriteResult}},
            },
        },
    )
    def create_memory(request: Annotated[CreateMemoryRequest, Body(embed=False)]) -> tuple[WriteResult, int]:
        # a tenant-wide key speaks for the tenant; a service account (one user) only proposes org changes
        tenant_wide = caller.principal().fixed_user_id is None
        result = svc.memories.create(caller.scope(request.user_id), request, tenant_wide)
        emit("ReconcileDecisions", MetricUnit.Count, 1, memory_type=request.type, decision=result.decision)
        logger.info(
            "memory written", extra={"decision": result.decision, "memory_id": result.memory.memory_id}
        )
        return result, {"ADD": 201, "UPDATE": 201, "PROPOSE": 202}.get(result.decision, 200)

    @router.get(
        "/v1/memories/conflicts",
        summary="A user's conflicting facts: active memories of one key that say different things",
    )
    def list_conflicts(user_id: UserQuery = None) -> ConflictList:
        scope = caller.scope(user_id)
        found = conflicts(svc.memory_store, svc.kinds, scope.tenant, scope.user_id)
        return ConflictList(conflicts=found.conflicts, complete=found.complete)

    @router.get("/v1/memories/<memory_id>", summary="A memory and, on request, its whole version chain")
    def get_memory(
        memory_id: MemoryId, user_id: UserQuery = None, history: Annotated[bool, Query()] = False
    ) -> MemoryWithHistory:
        return svc.memories.get(caller.scope(user_id), memory_id, history)

    @router.get("/v1/memories", summary="List a user's memories by type and status, newest first")
    def list_memories(
        user_id: UserQuery = None,
        type: KindQuery = None,
        status: StatusQuery = None,
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
        cursor: Annotated[str | None, Query(max_length=64)] = None,
        subject: SubjectQuery = None,
        attribute: AttributeQuery = None,
        subject_prefix: SubjectPrefixQuery = None,
        observed_after: ObservedAfterQuery = None,
        observed_before: ObservedBeforeQuery = None,
        agent_id: AgentQuery = None,
        visibility: VisibilityQuery = None,
        tags: TagsQuery = None,
        domain: DomainQuery = None,
        metadata: MetadataQuery = None,
        snapshot_id: SnapshotQuery = None,
    ) -> MemoryPage:
        payload = _payload_filter(subject, attribute, subject_prefix)
        observed = _observed(observed_after, observed_before)
        filters = MemoryFilter(
            tags=tuple(t.strip() for t in (tags or "").split(",") if t.strip()),
            domain=domain,
            metadata=_metadata(metadata),
            snapshot_id=snapshot_id,
        )
        return svc.memories.list(
            caller.scope(user_id),
            type,
            status,
            limit,
            cursor,
            payload=payload,
            observed=observed,
            filters=filters,
            agent_id=agent_id,
            visibility=visibility,
        )

    @router.get(
        "/v1/domains", summary="The domains of the taxonomic terms a user sees (theirs and the org's)"
    )
    def list_domains(user_id: UserQuery = None) -> DomainList:
        found = svc.memories.domains(caller.scope(user_id))
        return DomainList(domains=[Domain(domain=d, terms=n) for d, n in found])

    @router.delete("/v1/memories/<memory_id>", summary="Delete a memory's whole lineage")
    def delete_memory(memory_id: MemoryId, user_id: UserQuery = None) -> DeleteResult:
        # an org memory is the tenant's: a tenant-wide key may delete it, a service account (one user) not
        tenant_wide = caller.principal().fixed_user_id is None
        return svc.memories.delete(caller.scope(user_id), memory_id, may_delete_org=tenant_wide)

    return router
