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

from mongomem.extraction.extractor import ExtractionResult, Extractor, SnapshotInput
from mongomem.extraction.failures import SnapshotGone, policy_for, short_error
from mongomem.kindnames import KindName
from mongomem.models.common import Identifier, Scope, utcnow
from mongomem.models.sessions import TypeStatusUpdate
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


@dataclass(frozen=True)
class KindStatus:
    """Writes one (snapshot, kind)'s extraction status, stamped with the time of the write."""

    snapshots: SnapshotRepository
    snapshot_id: str
    kind: str

    def skipped(self, why: str) -> None:
        self._write(TypeStatusUpdate(status="skipped", error=why, updated_at=utcnow()))

    def running(self) -> None:
        self._write(TypeStatusUpdate(status="running", updated_at=utcnow()), inc_attempts=True)

    def failed(self, exc: Exception) -> None:
        """The status FAILURE_POLICY gives `exc` (`queued` for NoTimeLeft: the kind waits its turn)."""
        policy = policy_for(exc)
        if policy.status is None:
            return
        if policy.status != "failed":
            self._write(TypeStatusUpdate(status=policy.status, updated_at=utcnow()))
            return
        failed = TypeStatusUpdate(
            status="failed",
            error=short_error(exc),
            reason=policy.reason_of(exc),
            final=bool(policy.final),
            updated_at=utcnow(),
        )
        self._write(failed)

    def done(self, result: ExtractionResult) -> None:
        """The result's figures; the last failure's fields are cleared."""
        update = TypeStatusUpdate(
            status="done",
            memories=len(result.memory_ids),
            refused=dict(result.refused) or None,
            outcome=result.outcome,
            rules_found=result.rules_found,
            kept_private=dict(result.kept_private) or None,
            error=None,
            reason=None,
            final=None,
            updated_at=utcnow(),
        )
        self._write(update)

    def _write(self, update: TypeStatusUpdate, inc_attempts: bool = False) -> None:
        self.snapshots.set_extraction(self.snapshot_id, self.kind, update, inc_attempts=inc_attempts)


def run_extraction(
    snapshots: SnapshotRepository,
    turns: TurnRepository,
    extractor: Extractor | None,
    message: ExtractionMessage,
    deadline: float | None = None,
) -> ExtractionResult | None:
    """Extract one (snapshot, type). Returns None when it was already done (an SQS redelivery); raises
    SnapshotGone, and what the extractor raised once the kind's status says so (extraction.failures)."""
    snap = snapshots.get(message.snapshot_id)
    if snap is None:
        raise SnapshotGone(message.snapshot_id)
    status = snap.extraction.get(message.type)
    if status is not None and status.status == "done":
        return None
    kind = KindStatus(snapshots, snap.snapshot_id, message.type)
    if extractor is None:
        kind.skipped("no extractor registered")
        return ExtractionResult(note="no extractor registered for this type")
    kind.running()
    # The snapshot's owner scopes everything, never the message body or the LLM's answer.
    scope = Scope(tenant=snap.tenant, user_id=snap.user_id)
    stored = turns.in_range(scope, snap.session_id, snap.from_seq, snap.to_seq)
    try:
        result = extractor.extract(SnapshotInput(snapshot=snap, turns=stored, deadline=deadline))
    except Exception as exc:
        kind.failed(exc)
        raise
    kind.done(result)
    return result
