"""Retention and erasure: turns expire after their snapshot is extracted; a user can be erased everywhere."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel

from mongomem.adapters.erasure_store import ErasureStore
from mongomem.models.common import Scope, utcnow
from mongomem.vectors.port import VectorIndex


class ErasureResult(BaseModel):
    """What `DELETE /v1/users/{user_id}` removed, per place."""

    tenant: str
    user_id: str
    erased: dict[str, int]
    total: int


def ensure_indexes(db: Any) -> None:
    """The memory expiry TTL index (turns' TTL index lives with the turns' other indexes)."""
    ErasureStore(db).ensure_retention_indexes()


def expire_after_extraction(db: Any, snapshot_id: str, ttl_days: int, now: datetime | None = None) -> int:
    """Start the turns' retention clock once the snapshot is fully extracted; unextracted turns never expire."""
    at = (now or utcnow()) + timedelta(days=ttl_days)
    return ErasureStore(db).expire_turns_if_extracted(snapshot_id, at)


def erase_user(db: Any, index: VectorIndex | None, scope: Scope) -> ErasureResult:
    """Remove a user's turns, sessions, snapshots, memories (all versions), working memory and index entries.

    Idempotent: run it again after a failure (or concurrent activity) to finish the job.
    """
    erased = ErasureStore(db).erase(scope)
    # MongoDB first: the index is derived, and index_sync cannot resurrect what MongoDB no longer has.
    erased["index_entries"] = index.delete_user(scope.tenant, scope.user_id) if index is not None else 0
    return ErasureResult(
        tenant=scope.tenant, user_id=scope.user_id, erased=erased, total=sum(erased.values())
    )
