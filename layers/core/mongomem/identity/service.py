"""Key management: create, list and revoke API keys (the `mongomem keys` commands)."""

from __future__ import annotations

import re
from typing import Any

from mongomem.errors import InvalidInput, NotFound
from mongomem.identity import keys
from mongomem.identity.ports import ApiKeyRepository
from mongomem.identity.principals import fixed_user_for
from mongomem.models.common import ID_PATTERN, utcnow
from mongomem.models.keys import ApiKey


def _check_id(name: str, value: str) -> None:
    if not re.fullmatch(ID_PATTERN, value):
        raise InvalidInput(
            f"{name} {value!r} is not a valid identifier ([A-Za-z0-9._:@-], 1-128, not . or ..)"
        )


def create_key(
    store: ApiKeyRepository, tenant: str, kind: str, user_id: str | None = None, name: str | None = None
) -> tuple[str, dict[str, Any]]:
    """Store a new key's hash; returns the plaintext (shown once) and the record as the API shows it."""
    _check_id("tenant", tenant)
    if kind not in keys.KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(keys.KINDS)}")
    if user_id is not None:
        if kind != "service_account":
            raise InvalidInput("--user applies to service accounts only (a memory service names its users)")
        _check_id("user", user_id)
    new = keys.generate()
    key = ApiKey(
        key_id=new.key_id,
        tenant=tenant,
        kind=kind,
        hash=new.hash,
        name=name,
        created_at=utcnow(),
        fixed_user_id=fixed_user_for(new.key_id, user_id) if kind == "service_account" else None,
    )
    store.insert(key)
    return new.plaintext, key.public()


def revoke_key(store: ApiKeyRepository, key_id: str) -> None:
    if store.get(key_id) is None:
        raise NotFound(f"no key {key_id!r}")
    store.revoke(key_id, utcnow())
