"""The API Gateway Lambda REQUEST authorizer (HTTP API payload 2.0, simple responses).

API Gateway caches each answer by the x-api-key header for the authorizer's TTL (300 s), so the
record path itself never pays for key verification.
"""

from __future__ import annotations

from typing import Any

from mongomem.identity import keys
from mongomem.identity.ports import KeyLookup
from mongomem.identity.principals import authorizer_context, principal_for_key
from mongomem.models.common import Principal

HEADER = "x-api-key"


def presented_key(event: dict[str, Any]) -> str | None:
    """The key from the identity source (or the header itself when called without one)."""
    source = event.get("identitySource") or []
    if source and isinstance(source[0], str) and source[0]:
        return source[0]
    headers = {str(k).lower(): v for k, v in (event.get("headers") or {}).items()}
    value = headers.get(HEADER)
    return value if isinstance(value, str) and value else None


def verify(presented: str | None, lookup: KeyLookup) -> Principal | None:
    """The principal of a valid, unrevoked key; None for anything else."""
    if not presented:
        return None
    key_id = keys.key_id_of(presented)
    if key_id is None:
        return None
    record = lookup.get(key_id)
    if record is None or record.revoked_at is not None or record.kind not in keys.KINDS:
        return None
    if not keys.matches(presented, record.hash or ""):
        return None
    return principal_for_key(record)


def simple_response(principal: Principal | None) -> dict[str, Any]:
    if principal is None:
        return {"isAuthorized": False, "context": {}}
    return {"isAuthorized": True, "context": authorizer_context(principal)}


def authorize(event: dict[str, Any], lookup: KeyLookup) -> dict[str, Any]:
    """Verify the request's key. Store errors propagate: a failure must not be cached as a denial."""
    return simple_response(verify(presented_key(event), lookup))
