"""Run one extraction message {snapshot_id, type}: idempotent per (snapshot, type)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from mongomem.config import KindName
from mongomem.extraction.extractor import ExtractionResult, Extractor, SnapshotInput
from mongomem.models.common import Identifier, Scope, utcnow
from mongomem.models.sessions import TypeStatusUpdate
from mongomem.shortterm.ports import SnapshotRepository, TurnRepository


class ExtractionMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    snapshot_id: str
    type: KindName
    tenant: Identifier | None = None
    user_id: Identifier | None = None


class SnapshotGone(Exception):
    """The snapshot no longer exists (its user was erased): the message is dropped, not retried."""


def run_extraction(
    snapshots: SnapshotRepository,
    turns: TurnRepository,
    extractor: Extractor | None,
    message: ExtractionMessage,
    deadline: float | None = None,
) -> ExtractionResult | None:
    """Extract one (snapshot, type). Returns None when it was already done (an SQS redelivery)."""
    snap = snapshots.get(message.snapshot_id)
    if snap is None:
        raise SnapshotGone(message.snapshot_id)
    key = message.type
    status = snap.extraction.get(key)
    if status is not None and status.status == "done":
        return None
    if extractor is None:
        snapshots.set_extraction(
            snap.snapshot_id,
            key,
            TypeStatusUpdate(status="skipped", error="no extractor registered", updated_at=utcnow()),
        )
        return ExtractionResult(note="no extractor registered for this type")
    snapshots.set_extraction(
        snap.snapshot_id, key, TypeStatusUpdate(status="running", updated_at=utcnow()), inc_attempts=True
    )
    # The snapshot's owner scopes everything, never the message body or the LLM's answer.
    scope = Scope(tenant=snap.tenant, user_id=snap.user_id)
    stored = turns.in_range(scope, snap.session_id, snap.from_seq, snap.to_seq)
    item = SnapshotInput(snapshot=snap, turns=stored, deadline=deadline)
    try:
        result = extractor.extract(item)
    except Exception as exc:
        snapshots.set_extraction(
            snap.snapshot_id, key, TypeStatusUpdate(status="failed", error=_short(exc), updated_at=utcnow())
        )
        raise
    snapshots.set_extraction(
        snap.snapshot_id,
        key,
        TypeStatusUpdate(status="done", memories=len(result.memories), error=None, updated_at=utcnow()),
    )
    return result


def _short(exc: Exception) -> str:
    text: Any = f"{type(exc).__name__}: {exc}"
    return str(text)[:500]
