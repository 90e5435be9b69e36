"""Retry one kind of a snapshot's extraction: status back to queued, the message sent again."""

from __future__ import annotations

from mongomem.config import Settings
from mongomem.errors import Conflict, NotFound
from mongomem.models.common import Scope, utcnow
from mongomem.models.sessions import RetryResult, TypeStatusUpdate
from mongomem.ports import QueuePort
from mongomem.shortterm.ports import SnapshotRepository


class AlreadyExtracted(Conflict):
    code = "already_extracted"


class NotRetryable(Conflict):
    code = "not_retryable"


def retry_extraction(
    store: SnapshotRepository,
    queue: QueuePort,
    settings: Settings,
    scope: Scope,
    snapshot_id: str,
    kind: str,
) -> RetryResult:
    """Queue the kind again unless it is done; extraction is idempotent, so a duplicate message is harmless."""
    found = store.get_for(scope, snapshot_id)
    if found is None:
        raise NotFound(f"snapshot {snapshot_id!r} not found for this user", {"snapshot_id": snapshot_id})
    status = found.extraction.get(kind)
    details = {"snapshot_id": snapshot_id, "type": kind}
    if status is None:
        raise NotRetryable(
            f"snapshot {snapshot_id!r} has no {kind} extraction (the kind was not enabled when it was cut)",
            details,
        )
    if kind not in settings.enabled_extractions:
        raise NotRetryable(f"automatic {kind} extraction is disabled in this deployment", details)
    if status.status == "done":
        raise AlreadyExtracted(f"the {kind} extraction of this snapshot is done", details)
    previous = status
    # Status first, then the message: a fast extractor must not have its `done` overwritten by `queued`.
    updated = store.requeue_extraction(scope, snapshot_id, kind, utcnow())
    if updated is None:  # it finished in the meantime
        raise AlreadyExtracted(f"the {kind} extraction of this snapshot is done", details)
    body = {"snapshot_id": snapshot_id, "type": kind, "tenant": scope.tenant, "user_id": scope.user_id}
    try:
        queue.send_extraction(kind, body)
    except Exception:  # re-raised: a failed send must not leave a status that waits for nothing
        restore = TypeStatusUpdate(status=status.status, error=status.error, updated_at=status.updated_at)
        store.set_extraction(snapshot_id, kind, restore)
        raise
    return RetryResult(
        snapshot=updated.public(),
        type=kind,
        previous=previous,
        message=f"{kind} extraction queued again (attempt {previous.attempts + 1} follows)",
    )
