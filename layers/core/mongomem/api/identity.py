"""Resolve the caller's principal and memory scope from the API Gateway event."""

from __future__ import annotations

from typing import Any

from mongomem.errors import InvalidInput
from mongomem.models.common import Principal, Scope


def principal_from_event(raw_event: dict[str, Any], default_tenant: str) -> Principal:
    """The tenant comes from the authorizer's context (Lambda or IAM authorizer), never from the body."""
    authorizer = (raw_event.get("requestContext") or {}).get("authorizer") or {}
    context = authorizer.get("lambda") or {}
    tenant = context.get("tenant") or default_tenant
    return Principal(
        tenant=str(tenant),
        kind=str(context.get("kind") or "memory_service"),
        key_id=context.get("key_id"),
        fixed_user_id=context.get("fixed_user_id"),
    )


def scope_for(principal: Principal, user_id: str | None) -> Scope:
    """A service account is its own memory identity; a memory service must name the user."""
    if principal.fixed_user_id:
        return Scope(tenant=principal.tenant, user_id=principal.fixed_user_id)
    if not user_id:
        raise InvalidInput("user_id is required", {"path": "user_id"})
    return Scope(tenant=principal.tenant, user_id=user_id)
