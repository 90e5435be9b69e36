"""Retry one kind of a snapshot's extraction: status back to queued, the message sent again."""

from __future__ import annotations

from typing import Any

from mongomem.adapters.mongo import MongoStore
from mongomem.config import MemoryType, Settings
from mongomem.errors import Conflict, NotFound
from mongomem.models.common import Scope, utcnow
from mongomem.models.sessions import RetryResult, TypeStatus
from mongomem.ports import QueuePort
from mongomem.shortterm.history import snapshot_model


class AlreadyExtracted(Conflict):
    code = "already_extracted"


class NotRetryable(Conflict):
    code = "not_retryable"


def retry_extraction(
    store: MongoStore, queue: QueuePort, settings: Settings, scope: Scope, snapshot_id: str, kind: MemoryType
) -> RetryResult:
    """Queue the kind again unless it is done; extraction is idempotent, so a duplicate message is harmless."""
    doc = store.user_snapshot(scope, snapshot_id)
    if doc is None:
        raise NotFound(f"snapshot {snapshot_id!r} not found for this user", {"snapshot_id": snapshot_id})
    status: dict[str, Any] | None = (doc.get("extraction") or {}).get(kind.value)
    details = {"snapshot_id": snapshot_id, "type": kind.value}
    if status is None:
        raise NotRetryable(
            f"snapshot {snapshot_id!r} has no {kind.value} extraction (the kind was not enabled when it was cut)",
            details,
        )
    if kind not in settings.enabled_extractions:
        raise NotRetryable(f"automatic {kind.value} extraction is disabled in this deployment", details)
    if status.get("status") == "done":
        raise AlreadyExtracted(f"the {kind.value} extraction of this snapshot is done", details)
    previous = TypeStatus.model_validate(status)
    # Status first, then the message: a fast extractor must not have its `done` overwritten by `queued`.
    updated = store.requeue_extraction(scope, snapshot_id, kind.value, utcnow())
    if updated is None:  # it finished in the meantime
        raise AlreadyExtracted(f"the {kind.value} extraction of this snapshot is done", details)
    body = {"snapshot_id": snapshot_id, "type": kind.value, "tenant": scope.tenant, "user_id": scope.user_id}
    try:
        queue.send_extraction(kind, body)
    except Exception:  # re-raised: a failed send must not leave a status that waits for nothing
        restore = {k: status.get(k) for k in ("status", "error", "updated_at")}
        store.set_extraction_status(snapshot_id, kind.value, restore)
        raise
    return RetryResult(
        snapshot=snapshot_model(updated),
        type=kind,
        previous=previous,
        message=f"{kind.value} extraction queued again (attempt {previous.attempts + 1} follows)",
    )
