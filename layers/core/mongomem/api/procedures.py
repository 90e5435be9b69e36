"""Procedures as skills: export one as an Agent Skill, feedback on using it, discover the ones that fit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Protocol

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import Caller, UserQuery
from mongomem.api.memories import MemoryId
from mongomem.errors import InvalidInput
from mongomem.models.procedures import (
    DiscoverRequest,
    DiscoverResponse,
    FeedbackRequest,
    FeedbackResult,
    SkillExport,
)
from mongomem.observability import emit, logger

if TYPE_CHECKING:
    from mongomem.longterm.procedures import ProcedureService


class ProcedureServices(Protocol):
    @property
    def procedures(self) -> ProcedureService: ...


def routes(svc: ProcedureServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    @router.get("/v1/memories/<memory_id>/skill", summary="A procedural memory as an Agent Skill (SKILL.md)")
    def get_skill(memory_id: MemoryId, user_id: UserQuery = None) -> SkillExport:
        return svc.procedures.skill(caller.scope(user_id), memory_id)

    @router.post(
        "/v1/memories/<memory_id>/feedback",
        summary="Record whether using a procedure worked (it ranks `discover procedures`)",
    )
    def post_feedback(
        memory_id: MemoryId, request: Annotated[FeedbackRequest, Body(embed=False)], user_id: UserQuery = None
    ) -> FeedbackResult:
        # user_id in the query, as every other route of one memory takes it (or in the body, as it used to)
        if user_id is not None and request.user_id is not None and user_id != request.user_id:
            raise InvalidInput(
                "user_id is given twice with two values (query and body): give it once", {"path": "user_id"}
            )
        result = svc.procedures.feedback(caller.scope(user_id or request.user_id), memory_id, request)
        emit("ProcedureFeedback", MetricUnit.Count, 1, outcome=request.outcome)
        logger.info("procedure feedback", extra={"memory_id": memory_id, "outcome": request.outcome})
        return result

    @router.post(
        "/v1/procedures/discover",
        summary="Find the procedures that fit a task, ranked by relevance and by success",
    )
    def discover_procedures(request: Annotated[DiscoverRequest, Body(embed=False)]) -> DiscoverResponse:
        return svc.procedures.discover(caller.scope(request.user_id), request)

    return router
