"""API keys as the key repository stores them (the secret only as its SHA-256 hash)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mongomem.models.base import Model


class ApiKey(Model):
    key_id: str  # `mm_<key id>_<secret>`: the lookup part of the key
    tenant: str
    kind: str  # identity.keys.KINDS; kept as stored so that an unknown kind is refused, not unreadable
    hash: str | None = None  # None when listed (lists never carry hashes)
    name: str | None = None
    created_at: datetime
    revoked_at: datetime | None = None
    fixed_user_id: str | None = None  # a service account's memory identity

    def public(self) -> dict[str, Any]:
        """The record as the admin API and the CLI show it (`_id` is the key id; never the hash)."""
        record: dict[str, Any] = {
            "_id": self.key_id,
            "tenant": self.tenant,
            "kind": self.kind,
            "name": self.name,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }
        if self.fixed_user_id is not None:
            record["fixed_user_id"] = self.fixed_user_id
        return record
