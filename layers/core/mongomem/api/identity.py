"""The caller of a request: its principal, its memory scope, and the memory user it acted as."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Query

from mongomem.errors import Forbidden, InvalidInput, Unauthorized
from mongomem.identity.principals import principal_from_authorizer
from mongomem.models.common import ID_PATTERN, Principal, Scope

if TYPE_CHECKING:
    from mongomem.config import Settings

# The `user_id` query parameter every user-scoped route takes.
UserQuery = Annotated[str | None, Query(pattern=ID_PATTERN, description="The memory user")]

# The memory user a request acted as: MemoryApi.handle reports it in this response header.
USER_HEADER = "x-mongomem-user-id"


# A caller holding a tenant-wide key may ask to act as one user: the request then has that user's
# service account's power (its org writes are proposals, org deletes are refused ...). A one-user tool
# host (`mongomem mcp --user-id`) sends it on every call, whatever key it was given.
AS_USER_HEADER = "x-mongomem-as-user"


def principal_from_event(
    raw_event: dict[str, Any], default_tenant: str, allow_default: bool = True
) -> Principal:
    """The tenant comes from the authorizer's context (Lambda or IAM authorizer), never from the body;
    `x-mongomem-as-user` narrows the caller to one memory user, never widens it."""
    authorizer = (raw_event.get("requestContext") or {}).get("authorizer") or {}
    principal = principal_from_authorizer(authorizer, default_tenant, allow_default)
    headers = raw_event.get("headers") or {}
    named = [str(v) for k, v in headers.items() if str(k).lower() == AS_USER_HEADER]
    return as_one_user(principal, named[0]) if named else principal


def as_one_user(principal: Principal, user_id: str) -> Principal:
    """`principal` narrowed to `user_id` (a service account bound to it, as far as every route cares)."""
    if not re.fullmatch(ID_PATTERN, user_id):
        raise InvalidInput(
            f"{AS_USER_HEADER} must be a user id (letters, digits, ._:@-, at most 128)",
            {"path": AS_USER_HEADER},
        )
    if principal.fixed_user_id is not None:
        if principal.fixed_user_id != user_id:
            raise Forbidden(
                f"this key is bound to one memory user: {AS_USER_HEADER} may only name it",
                {"path": AS_USER_HEADER, "user_id": principal.fixed_user_id},
            )
        return principal
    return principal.model_copy(update={"fixed_user_id": user_id})


def event_principal(raw_event: dict[str, Any], settings: Settings) -> Principal:
    """The caller of an event; in Lambda one without an authorizer context is refused (401)."""
    return principal_from_event(raw_event, settings.tenant_default, allow_default=not settings.in_lambda)


def scope_for(principal: Principal, user_id: str | None) -> Scope:
    """A service account is its own memory identity; a memory service must name the user."""
    if principal.fixed_user_id:
        # any user_id in the request is ignored: every call of this account shares one memory scope
        return Scope(tenant=principal.tenant, user_id=principal.fixed_user_id)
    if not user_id:
        raise InvalidInput("user_id is required", {"path": "user_id"})
    return Scope(tenant=principal.tenant, user_id=user_id)


def path_user_scope(principal: Principal, user_id: str) -> Scope:
    """The scope of a user named in the path: a service account may name only its own memory user."""
    if principal.fixed_user_id and principal.fixed_user_id != user_id:
        raise Forbidden(
            "a service account may address only its own memory user", {"user_id": principal.fixed_user_id}
        )
    return scope_for(principal, user_id)


def listing_user(principal: Principal, user_id: str | None) -> str | None:
    """The user a tenant-wide read narrows to: a service account's own, else the one asked for (or none)."""
    return principal.fixed_user_id or user_id


class Caller:
    """The caller of the request a MemoryApi is serving (one at a time, as Powertools' current event).

    Routes ask it who calls and which memory scope they act on; each scope it hands out is the memory
    user the request acted as, which `MemoryApi.handle` reports in the `x-mongomem-user-id` header.
    """

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._event: dict[str, Any] = {}
        self._principal: Principal | None = None
        self._acted_as: str | None = None

    def begin(self, raw_event: dict[str, Any]) -> None:
        """Serve a new request: its event, nobody acted as yet."""
        self._event, self._principal, self._acted_as = raw_event, None, None

    def principal(self) -> Principal:
        """Who calls (401 without an authorizer context inside Lambda)."""
        if self._principal is None:
            self._principal = event_principal(self._event, self._settings)
        return self._principal

    def acts_as(self, user_id: str | None) -> None:
        """Record the memory user the request acts as (what the response header reports)."""
        self._acted_as = user_id

    def scope(self, user_id: str | None) -> Scope:
        """The (tenant, user) scope the request acts on."""
        scope = scope_for(self.principal(), user_id)
        self.acts_as(scope.user_id)
        return scope

    def path_scope(self, user_id: str) -> Scope:
        """The scope of a user named in the path."""
        scope = path_user_scope(self.principal(), user_id)
        self.acts_as(scope.user_id)
        return scope

    def listing_user(self, user_id: str | None) -> str | None:
        """The user a tenant-wide read narrows to (None: the whole tenant)."""
        user = listing_user(self.principal(), user_id)
        self.acts_as(user)
        return user

    def acted_as(self) -> str | None:
        """The memory user the answered request acted as (None when its caller was refused)."""
        try:
            return self.principal().fixed_user_id or self._acted_as
        except (Unauthorized, Forbidden, InvalidInput):
            return None
