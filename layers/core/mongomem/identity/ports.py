"""The repository identity needs: API keys by key id, hashed at rest."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from mongomem.models.keys import ApiKey


class KeyLookup(Protocol):
    """What the authorizer needs: one key by its id (with its hash)."""

    def get(self, key_id: str) -> ApiKey | None: ...


class ApiKeyRepository(KeyLookup, Protocol):
    def insert(self, key: ApiKey) -> None:
        """Store a new key; raises Conflict when the key id exists."""
        ...

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        """Every key (of the tenant), by tenant then creation time, without hashes."""
        ...

    def revoke(self, key_id: str, at: datetime) -> bool:
        """Mark an unrevoked key revoked; False when it was already revoked or does not exist."""
        ...

    def any(self) -> bool:
        """True once any key was ever created (the local stack then requires keys)."""
        ...
