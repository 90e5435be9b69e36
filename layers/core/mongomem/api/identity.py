"""Resolve the caller's principal and memory scope from the API Gateway event."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from mongomem.config import Settings
from mongomem.errors import Forbidden, InvalidInput, Unauthorized
from mongomem.identity.principals import principal_from_authorizer
from mongomem.models.common import ID_PATTERN, Principal, Scope

if TYPE_CHECKING:
    from mongomem.runtime import Services

# The `user_id` query parameter every user-scoped route takes.
UserQuery = Annotated[str | None, Query(pattern=ID_PATTERN, description="The memory user")]

# The memory user the current request acts as (one request at a time per thread); the MemoryApi wrapper
# reports it in the x-mongomem-user-id response header.
USER_HEADER = "x-mongomem-user-id"
_acting_user: ContextVar[str | None] = ContextVar("mongomem_acting_user", default=None)


def principal_from_event(
    raw_event: dict[str, Any], default_tenant: str, allow_default: bool = True
) -> Principal:
    """The tenant comes from the authorizer's context (Lambda or IAM authorizer), never from the body."""
    authorizer = (raw_event.get("requestContext") or {}).get("authorizer") or {}
    return principal_from_authorizer(authorizer, default_tenant, allow_default)


SERVICES = "services"


def services_of(router: APIGatewayHttpRouter) -> Services:
    """The composition root's services for the request the router is serving.

    MemoryApi.handle puts them into the resolver's context (Powertools' `append_context`), which the
    routers of that resolver share and which is cleared after every request.
    """
    svc: Services | None = router.context.get(SERVICES)
    if svc is None:
        raise RuntimeError("no services in the request context: serve requests through MemoryApi.handle")
    return svc


def event_principal(raw_event: dict[str, Any], settings: Settings) -> Principal:
    """The caller of an event; in Lambda one without an authorizer context is refused (401)."""
    return principal_from_event(raw_event, settings.tenant_default, allow_default=not settings.in_lambda)


def caller(router: APIGatewayHttpRouter) -> Principal:
    """The principal of the request the router is serving."""
    return event_principal(router.current_event.raw_event, services_of(router).settings)


def request_scope(router: APIGatewayHttpRouter, user_id: str | None) -> Scope:
    """The (tenant, user) scope of the request the router is serving."""
    return scope_for(caller(router), user_id)


def scope_for(principal: Principal, user_id: str | None) -> Scope:
    """A service account is its own memory identity; a memory service must name the user."""
    if principal.fixed_user_id:
        # any user_id in the request is ignored: every call of this account shares one memory scope
        scope = Scope(tenant=principal.tenant, user_id=principal.fixed_user_id)
    elif not user_id:
        raise InvalidInput("user_id is required", {"path": "user_id"})
    else:
        scope = Scope(tenant=principal.tenant, user_id=user_id)
    _acting_user.set(scope.user_id)
    return scope


def path_user_scope(principal: Principal, user_id: str) -> Scope:
    """The scope of a user named in the path: a service account may name only its own memory user."""
    if principal.fixed_user_id and principal.fixed_user_id != user_id:
        raise Forbidden(
            "a service account may address only its own memory user", {"user_id": principal.fixed_user_id}
        )
    return scope_for(principal, user_id)


def listing_user(principal: Principal, user_id: str | None) -> str | None:
    """The user a tenant-wide read narrows to: a service account's own, else the one asked for (or none)."""
    user = principal.fixed_user_id or user_id
    _acting_user.set(user)
    return user


def begin_request() -> None:
    _acting_user.set(None)


def acting_user(principal: Principal) -> str | None:
    """The memory user the request acted as, if it resolved one."""
    return principal.fixed_user_id or _acting_user.get()


def acting_user_of(raw_event: dict[str, Any], settings: Settings) -> str | None:
    """The memory user an answered request acted as (None when its caller was refused)."""
    try:
        return acting_user(event_principal(raw_event, settings))
    except Unauthorized:
        return None
