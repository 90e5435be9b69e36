"""The ApiKeyRepository contract (identity.ports): keys by id, hashes never listed, revoked once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from mongomem.errors import Conflict
from mongomem.models.common import utcnow
from mongomem.models.keys import ApiKey


def key(key_id: str, tenant: str = "acme", **kw: Any) -> ApiKey:
    return ApiKey(
        key_id=key_id,
        tenant=tenant,
        kind=kw.pop("kind", "memory_service"),
        hash=kw.pop("hash", "h-" + key_id),
        created_at=kw.pop("created_at", utcnow().replace(microsecond=0)),
        **kw,
    )


def test_a_stored_key_reads_back_by_its_id_with_its_hash(api_keys: Any) -> None:
    assert api_keys.any() is False
    stored = key("0123456789abcdef", kind="service_account", name="agent", fixed_user_id="sa-1")
    api_keys.insert(stored)
    assert api_keys.get("0123456789abcdef") == stored
    assert api_keys.get("ffffffffffffffff") is None
    assert api_keys.any() is True
    with pytest.raises(Conflict):
        api_keys.insert(key("0123456789abcdef", tenant="globex"))
    assert api_keys.get("0123456789abcdef").tenant == "acme"


def test_lists_never_carry_hashes_and_come_by_tenant_then_age(api_keys: Any) -> None:
    now = utcnow().replace(microsecond=0)
    api_keys.insert(key("k3", tenant="globex", created_at=now))
    api_keys.insert(key("k2", created_at=now))
    api_keys.insert(key("k1", created_at=now - timedelta(days=1)))
    assert [(k.tenant, k.key_id) for k in api_keys.list()] == [
        ("acme", "k1"),
        ("acme", "k2"),
        ("globex", "k3"),
    ]
    assert [k.key_id for k in api_keys.list("globex")] == ["k3"]
    assert all(k.hash is None for k in api_keys.list())
    assert api_keys.list("nobody") == []
    public = api_keys.list("globex")[0].public()
    assert public["_id"] == "k3" and "hash" not in public and "fixed_user_id" not in public


def test_a_key_is_revoked_once(api_keys: Any) -> None:
    api_keys.insert(key("k1"))
    at = utcnow().replace(microsecond=0)
    assert api_keys.revoke("k1", at) is True
    assert api_keys.revoke("k1", at + timedelta(hours=1)) is False
    assert api_keys.get("k1").revoked_at == at
    assert api_keys.revoke("missing", at) is False
