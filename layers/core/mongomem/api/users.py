"""User routes: erase a memory user everywhere (right to erasure)."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Path
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import caller, scope_for
from mongomem.erasure import ErasureResult, erase_user
from mongomem.errors import Forbidden
from mongomem.models.common import ID_PATTERN
from mongomem.observability import logger, metrics
from mongomem.runtime import services

router = APIGatewayHttpRouter()

UserId = Annotated[str, Path(pattern=ID_PATTERN, description="The memory user to erase")]


@router.delete(
    "/v1/users/<user_id>",
    summary="Erase a user: turns, sessions, snapshots, memories and versions, working memory, index entries",
)
def delete_user(user_id: UserId) -> ErasureResult:
    svc = services()
    principal = caller(router)
    if principal.fixed_user_id and principal.fixed_user_id != user_id:
        # A service account is one memory user: it may erase itself, never someone it names.
        raise Forbidden(
            "a service account may erase only its own memory user", {"user_id": principal.fixed_user_id}
        )
    result = erase_user(svc.store.db, svc.vector_index, scope_for(principal, user_id))
    logger.info("user erased", extra={"erased": result.erased})
    metrics.add_metric(name="UsersErased", unit=MetricUnit.Count, value=1)
    return result
