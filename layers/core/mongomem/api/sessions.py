"""Session routes: record turns, list and delete turns, session state, flush."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit
from pydantic import ValidationError

from mongomem.api.body import parse_json
from mongomem.api.identity import Caller, UserQuery
from mongomem.models.common import ID_PATTERN
from mongomem.models.sessions import DeleteTurnsResponse, FlushResponse, SessionState
from mongomem.models.turns import RecordTurnsRequest, RecordTurnsResponse, TurnPage
from mongomem.observability import emit, logger, metrics

if TYPE_CHECKING:
    from mongomem.shortterm.history import History
    from mongomem.shortterm.record import TurnRecorder

SessionId = Annotated[str, Path(pattern=ID_PATTERN, description="The conversation's session id")]


class SessionServices(Protocol):
    @property
    def recorder(self) -> TurnRecorder: ...
    @property
    def history(self) -> History: ...


def record(
    svc: SessionServices, caller: Caller, session_id: str, request: RecordTurnsRequest, user_id: str | None
) -> tuple[RecordTurnsResponse, int]:
    """Record a turn or a batch: 201, or 200 for a retry with the same client token."""
    scope = caller.scope(request.user_id or user_id)
    result = svc.recorder.record(scope, session_id, request)
    logger.info(
        "turns recorded",
        extra={"session_id": session_id, "count": len(result.turns), "replayed": result.replayed},
    )
    if not result.replayed:
        metrics.add_metric(name="TurnsRecorded", unit=MetricUnit.Count, value=len(result.turns))
    return result, 200 if result.replayed else 201


_TURNS_PATH = re.compile(r"^/v1/sessions/([^/]+)/turns$")
_ID = re.compile(ID_PATTERN)


def fast_record(svc: SessionServices, caller: Caller) -> Callable[[dict[str, Any]], Any]:
    """The record route without Powertools' resolver (two thirds of the handler's own time): a request it
    is not sure of - another route, an invalid parameter or body - is left to the resolver (None), which
    validates it and answers as for every route; no write happens before that decision."""

    def serve(event: dict[str, Any]) -> tuple[RecordTurnsResponse, int] | None:
        http = (event.get("requestContext") or {}).get("http") or {}
        found = _TURNS_PATH.fullmatch(event.get("rawPath") or "")
        if http.get("method") != "POST" or found is None or not _ID.fullmatch(session_id := found[1]):
            return None
        query = event.get("queryStringParameters") or {}
        user_id = query.get("user_id")
        if user_id is not None and not _ID.fullmatch(user_id):
            return None
        try:
            request = RecordTurnsRequest.model_validate(parse_json(event.get("body") or "null"))
        except ValidationError:
            return None
        return record(svc, caller, session_id, request, user_id)

    return serve


def routes(svc: SessionServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    @router.post(
        "/v1/sessions/<session_id>/turns",
        summary="Record one turn or a batch",
        responses={
            201: {"description": "Recorded", "content": {"application/json": {"model": RecordTurnsResponse}}},
            200: {
                "description": "A retry with the same client_token: the original seqs",
                "content": {"application/json": {"model": RecordTurnsResponse}},
            },
        },
    )
    def post_turns(
        session_id: SessionId,
        request: Annotated[RecordTurnsRequest, Body(embed=False)],
        user_id: UserQuery = None,
    ) -> tuple[RecordTurnsResponse, int]:
        return record(svc, caller, session_id, request, user_id)

    @router.get("/v1/sessions/<session_id>/turns", summary="The newest turns, oldest first (paginated)")
    def get_turns(
        session_id: SessionId,
        user_id: UserQuery = None,
        limit: Annotated[int, Query(ge=1, le=200)] = 20,
        # bounded: MongoDB integers are 64-bit, a larger value must be a 422, not a driver error
        before_seq: Annotated[int | None, Query(ge=1, le=2**62)] = None,
    ) -> TurnPage:
        return svc.history.turn_page(caller.scope(user_id), session_id, limit, before_seq)

    @router.delete(
        "/v1/sessions/<session_id>/turns",
        summary="Delete the session's turns from a seq on (all without from_seq)",
    )
    def delete_turns(
        session_id: SessionId,
        user_id: UserQuery = None,
        from_seq: Annotated[int | None, Query(ge=1, le=2**62)] = None,
    ) -> DeleteTurnsResponse:
        result = svc.history.delete_turns(caller.scope(user_id), session_id, from_seq)
        logger.info(
            "turns deleted", extra={"session_id": session_id, "from_seq": from_seq, "count": result.deleted}
        )
        return result

    @router.get("/v1/sessions/<session_id>", summary="Session state: counts, activity, snapshots, extraction")
    def get_session(session_id: SessionId, user_id: UserQuery = None) -> SessionState:
        return svc.history.session_state(caller.scope(user_id), session_id)

    @router.post("/v1/sessions/<session_id>/flush", summary="Promote the session's unpromoted turns now")
    def flush(session_id: SessionId, user_id: UserQuery = None) -> FlushResponse:
        result = svc.history.flush(caller.scope(user_id), session_id)
        if result.snapshot:
            emit("SnapshotsPromoted", MetricUnit.Count, 1, reason="manual")
        return result

    return router
