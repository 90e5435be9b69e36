"""Run one extraction message {snapshot_id, type}: idempotent per (snapshot, type).

A message may carry `then`, the kinds to extract after this one: the scan sends the first kind of a
snapshot only, and each kind's extraction passes the snapshot on to the next once it has tried, so the
kinds of one snapshot call the LLM one after another and every call after the first reads the shared
prefix from the provider's prompt cache (docs/adr/0011-one-snapshot-s-kinds-in-sequence.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mongomem.errors import ExtractionFailed
from mongomem.extraction.extractor import ExtractionResult, Extractor, NoTimeLeft, SnapshotInput
from mongomem.kindnames import KindName
from mongomem.models.common import Identifier, Scope, utcnow
from mongomem.models.sessions import TypeStatusUpdate
from mongomem.ports import LLMConfigError, LLMError
from mongomem.shortterm.ports import SnapshotRepository, TurnRepository


class ExtractionMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    snapshot_id: str
    type: KindName
    tenant: Identifier | None = None
    user_id: Identifier | None = None
    # the kinds of the snapshot still to extract after this one, in order (the scan's fan-out)
    then: list[KindName] = Field(default_factory=list, max_length=64)
    # how often this message was sent again because the invocation had no time left for it
    deferred: int = Field(0, ge=0)

    def body(self) -> dict[str, Any]:
        return self.model_dump(exclude_defaults=True)

    def next(self) -> ExtractionMessage | None:
        """The message for the next kind of the snapshot (None: this kind is the last)."""
        if not self.then:
            return None
        first, *rest = self.then
        return ExtractionMessage(
            snapshot_id=self.snapshot_id, type=first, tenant=self.tenant, user_id=self.user_id, then=rest
        )


class SnapshotGone(Exception):
    """The snapshot no longer exists (its user was erased): the message is dropped, not retried."""


@dataclass
class FinalFailure:
    """A kind's extraction failed for good (the same request failed the same way twice)."""

    reason: str
    error: str


def run_extraction(
    snapshots: SnapshotRepository,
    turns: TurnRepository,
    extractor: Extractor | None,
    message: ExtractionMessage,
    deadline: float | None = None,
) -> ExtractionResult | FinalFailure | None:
    """Extract one (snapshot, type). Returns None when it was already done (an SQS redelivery), a
    FinalFailure when asking again would fail the same way; raises what is worth retrying (NoTimeLeft:
    not started, the kind is queued again)."""
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
    except NoTimeLeft:
        snapshots.set_extraction(
            snap.snapshot_id, key, TypeStatusUpdate(status="queued", updated_at=utcnow())
        )
        raise
    except ExtractionFailed as exc:
        failed = TypeStatusUpdate(
            status="failed", error=_short(exc), reason=exc.reason, final=exc.final, updated_at=utcnow()
        )
        snapshots.set_extraction(snap.snapshot_id, key, failed)
        if exc.final:
            return FinalFailure(exc.reason, _short(exc))
        raise
    except Exception as exc:
        reason = (
            "config"
            if isinstance(exc, LLMConfigError)
            else "provider"
            if isinstance(exc, LLMError)
            else "error"
        )
        snapshots.set_extraction(
            snap.snapshot_id,
            key,
            TypeStatusUpdate(
                status="failed", error=_short(exc), reason=reason, final=False, updated_at=utcnow()
            ),
        )
        raise
    snapshots.set_extraction(
        snap.snapshot_id,
        key,
        TypeStatusUpdate(
            status="done",
            memories=len(result.memories),
            refused=dict(result.refused) or None,
            outcome=result.outcome,
            rules_found=result.rules_found,
            kept_private=dict(result.kept_private) or None,
            error=None,
            reason=None,
            final=None,
            updated_at=utcnow(),
        ),
    )
    return result


def _short(exc: Exception) -> str:
    text: Any = f"{type(exc).__name__}: {exc}"
    return str(text)[:500]
