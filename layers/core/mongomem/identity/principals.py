"""Principals: who a request acts as, built from a key record or an IAM caller, and back again."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mongomem.errors import Unauthorized
from mongomem.models.common import Principal

if TYPE_CHECKING:  # the record path resolves principals but never reads keys
    from mongomem.models.keys import ApiKey

IAM_KIND = "iam"


def fixed_user_for(key_id: str, user_id: str | None) -> str:
    """A service account's memory identity: the named user, else one derived from its key id."""
    return user_id or f"sa-{key_id}"


def principal_for_key(key: ApiKey) -> Principal:
    """The principal of a stored (verified, unrevoked) key."""
    fixed = key.fixed_user_id if key.kind == "service_account" else None
    return Principal(tenant=key.tenant, kind=key.kind, key_id=key.key_id, fixed_user_id=fixed)


def authorizer_context(principal: Principal) -> dict[str, str]:
    """The authorizer's context map (API Gateway passes strings through to requestContext.authorizer.lambda)."""
    context = {"tenant": principal.tenant, "kind": principal.kind, "key_id": principal.key_id or ""}
    if principal.fixed_user_id:
        context["fixed_user_id"] = principal.fixed_user_id
    return context


def principal_from_authorizer(
    authorizer: dict[str, Any], default_tenant: str, allow_default: bool = True
) -> Principal:
    """A Lambda-authorizer context, an IAM caller, or (local open mode only) the default tenant.

    `allow_default=False` (inside Lambda): a request without either is refused, never given a tenant.
    API Gateway always runs the authorizer first, so this is defence in depth against a route deployed
    without one or a function invoked directly.
    """
    context = authorizer.get("lambda")
    if isinstance(context, dict) and context.get("tenant"):
        return Principal(
            tenant=str(context["tenant"]),
            kind=str(context.get("kind") or "memory_service"),
            key_id=str(context.get("key_id") or "") or None,
            fixed_user_id=str(context.get("fixed_user_id") or "") or None,
        )
    iam = authorizer.get("iam")
    if isinstance(iam, dict) and (iam.get("userArn") or iam.get("userId")):
        # An IAM-signed caller is an operator or backend of the deploying account: a memory service of
        # the deployment's default tenant that names its users explicitly.
        return Principal(
            tenant=default_tenant,
            kind="memory_service",
            key_id=f"{IAM_KIND}:{iam.get('userArn') or iam.get('userId')}",
        )
    if not allow_default:
        raise Unauthorized("the request carries no verified caller (no authorizer context)")
    return Principal(tenant=default_tenant, kind="memory_service")


def is_operator(principal: Principal, settings: Any) -> bool:
    """An IAM-signed caller, or anyone on the open local stack (no authorizer, not in Lambda); never
    one acting as a single user (`x-mongomem-as-user`)."""
    if principal.fixed_user_id is not None:
        return False
    if (principal.key_id or "").startswith(f"{IAM_KIND}:"):
        return True
    return not settings.in_lambda and principal.key_id is None
