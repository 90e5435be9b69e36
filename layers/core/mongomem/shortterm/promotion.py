"""Promote sessions to snapshots: find due sessions, lease them, cut snapshots, fan out extraction.

Each step is idempotent, so a scanner that crashes anywhere leaves work another scanner finishes:
the snapshot id is derived from (session, from_seq), the promotion point moves by compare-and-set,
and snapshots not yet fanned out are re-sent by the outbox sweep.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from mongomem.config import Settings
from mongomem.models.common import Scope, as_utc, utcnow
from mongomem.models.sessions import NewSnapshot, Session, StoredSnapshot, TypeStatus
from mongomem.ports import QueuePort
from mongomem.shortterm.policy import PromotionPolicy
from mongomem.shortterm.ports import SessionRepository, SnapshotRepository, TurnRepository

if TYPE_CHECKING:
    from mongomem.shortterm.topics import TopicSegmenter


@dataclass
class ScanReport:
    sessions: int = 0
    snapshots: list[str] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)  # snapshots cut, by reason
    resent: int = 0
    skipped: int = 0


class Promoter:
    """Cuts snapshots for due sessions and sends one extraction message per enabled type."""

    def __init__(
        self,
        sessions: SessionRepository,
        turns: TurnRepository,
        snapshots: SnapshotRepository,
        queue: QueuePort,
        settings: Settings,
        owner: str | None = None,
        topics: Callable[[], TopicSegmenter] | None = None,
    ) -> None:
        self.sessions = sessions
        self.turns = turns
        self.snapshots = snapshots
        self.queue = queue
        self.settings = settings
        self.policy = PromotionPolicy.from_config(settings.memory)
        self.owner = owner or f"scanner-{uuid.uuid4().hex[:12]}"
        # memory.snapshot.topic_shift: built on the first due cut that could hold two topics (the scan's,
        # never a manual flush's), so the record function's flush route never loads an embedder
        self.topics = topics

    # -- entry points --------------------------------------------------------------------------
    def claim_due(self, now: datetime) -> Session | None:
        """Lease one due session for this owner (None when none is due and free)."""
        return self.sessions.claim_due(self.owner, now, self.settings.lease_seconds)

    def scan(self, now: datetime | None = None, max_sessions: int | None = None) -> ScanReport:
        """Promote every due session (up to max_sessions), then re-send unfanned snapshots."""
        report = ScanReport()
        limit = max_sessions or self.settings.scan_batch
        while report.sessions < limit:
            at = now or utcnow()
            session = self.claim_due(at)
            if session is None:
                break
            report.sessions += 1
            cut = self.promote_claimed(session, None, at)
            if not cut:
                report.skipped += 1
            for snap in cut:
                report.snapshots.append(snap.snapshot_id)
                report.reasons[snap.reason] += 1
        report.resent = self.resend_unfanned(now or utcnow())
        return report

    def flush(self, scope: Scope, session_id: str) -> list[StoredSnapshot]:
        """Promote a session at once (reason `manual`), whatever the due rule says."""
        now = utcnow()
        session = self.sessions.claim(scope, session_id, self.owner, now, self.settings.lease_seconds)
        if session is None:
            return []
        return self.promote_claimed(session, "manual", now)

    def flush_history(self, scope: Scope, session_id: str) -> list[StoredSnapshot]:
        """Promote an imported stretch of history now: it went idle in its own time. Cut as the scan
        would (every max_messages, reason `size`; the rest `idle`)."""
        now = utcnow()
        session = self.sessions.claim(scope, session_id, self.owner, now, self.settings.lease_seconds)
        if session is None:
            return []
        return self.promote_claimed(session, "history", now)

    def resend_unfanned(self, now: datetime) -> int:
        """Outbox sweep: snapshots whose fan-out did not finish (a crash) are sent again."""
        older = now - timedelta(seconds=self.settings.lease_seconds)
        pending = self.snapshots.unfanned(older, self.settings.scan_batch)
        for snap in pending:
            self._fan_out(snap)
        return len(pending)

    # -- steps ---------------------------------------------------------------------------------
    def promote_claimed(self, session: Session, reason: str | None, now: datetime) -> list[StoredSnapshot]:
        """Cut snapshots while the session stays due (any unpromoted turn when `reason` is manual)."""
        scope = Scope(tenant=session.tenant, user_id=session.user_id)
        sid = session.session_id
        cut: list[StoredSnapshot] = []
        waiting: Session | None = None  # the session's next seq is a hole still within its grace period
        try:
            current: Session | None = session
            while current is not None and current.last_seq > current.promoted_through_seq:
                if reason not in ("manual", "history") and not self.policy.is_due(current, now):
                    break
                why = self.policy.reason(current) if reason in (None, "history") else reason
                snap = self.cut_one(current, why, now)
                if snap is None:
                    waiting = current
                    break
                self.turns.tag_snapshot(snap)
                advanced = self.sessions.advance(scope, sid, snap)
                self._fan_out(snap)
                cut.append(snap)
                current = advanced or self.sessions.get(scope, sid)
            if current is not None and current.size_due_at is not None and not self.policy.size_due(current):
                # promoted below the size rules: off the size index (unless a record reached them again)
                self.sessions.clear_size_due(scope, sid, self.policy.max_messages, self.policy.max_tokens)
        finally:
            self.sessions.release(scope, sid, self.owner)
        if waiting is not None and reason is None:
            self._set_aside(waiting, now)
        return cut

    def _set_aside(self, session: Session, now: datetime) -> None:
        """Lease a due session that waits on a hole until the hole's grace period ends. Released, it stays
        the first due session: the scan would claim it again and again (scan_batch times a call, the scan
        job until its deadline) while the due sessions behind it wait."""
        if session.last_turn_at is None:
            return
        quiet = (now - as_utc(session.last_turn_at)).total_seconds()
        wait = math.ceil(self.settings.hole_grace_seconds - quiet)
        if wait > 0:
            scope = Scope(tenant=session.tenant, user_id=session.user_id)
            self.sessions.claim(scope, session.session_id, self.owner, now, wait)

    def cut_one(self, session: Session, reason: str, now: datetime) -> StoredSnapshot | None:
        """The snapshot of the session's next unpromoted seqs (a crashed scanner's cut, if it left one)."""
        scope = Scope(tenant=session.tenant, user_id=session.user_id)
        sid = session.session_id
        from_seq = session.promoted_through_seq + 1
        existing = self.snapshots.starting_at(scope, sid, from_seq)
        if existing is not None:
            return existing  # a crashed scanner cut it; finish its work
        last = min(session.last_seq, from_seq + self.policy.max_messages - 1)
        present = self.turns.present_seqs(scope, sid, from_seq, last)
        have = {s for s, _ in present}
        deleted = _deleted_seqs(session, from_seq, last)
        to_seq = from_seq - 1
        missing: list[int] = []
        for seq in range(from_seq, last + 1):
            if seq in have:
                to_seq = seq
            elif seq in deleted:  # deleted on request (DELETE .../turns): nothing will fill it
                missing.append(seq)
                to_seq = seq
            else:
                break
        if to_seq < last:
            # A hole: a writer allocated seqs but has not inserted them (yet). Wait for it unless it
            # has been quiet for longer than the grace period, then promote over the hole.
            grace = timedelta(seconds=self.settings.hole_grace_seconds)
            if session.last_turn_at is None or now - as_utc(session.last_turn_at) >= grace:
                missing = [s for s in range(from_seq, last + 1) if s not in have]
                to_seq = last
        if to_seq < from_seq:
            return None
        if reason != "manual":
            end = self._first_topic_end(scope, sid, from_seq, to_seq)
            if end is not None and from_seq <= end < to_seq:
                to_seq, reason = end, "topic_shift"
                missing = [s for s in missing if s <= end]
        return self.snapshots.create(
            NewSnapshot(
                tenant=session.tenant,
                user_id=session.user_id,
                session_id=sid,
                agent_id=session.agent_id,
                from_seq=from_seq,
                to_seq=to_seq,
                turn_count=to_seq - from_seq + 1 - len(missing),
                missing_seqs=missing,
                tokens=sum(t for s, t in present if s <= to_seq),
                reason=reason,  # one of SnapshotReason: policy.reason() or "manual"
                created_at=now,
                extraction={
                    str(t): TypeStatus(status="queued", attempts=0) for t in self.settings.enabled_extractions
                },
            )
        )

    def _first_topic_end(self, scope: Scope, sid: str, from_seq: int, to_seq: int) -> int | None:
        """The last seq of the first topic in [from_seq, to_seq] (None: off, one topic, or no embedder)."""
        if (
            self.topics is None
            or to_seq - from_seq + 1 < 2 * self.settings.memory.snapshot.topic_shift.window
        ):
            return None
        try:
            return self.topics().first_topic_end(self.turns.in_range(scope, sid, from_seq, to_seq))
        except Exception:  # an embedder that fails never stops promotion: the cut is the usual one
            from mongomem.observability import logger  # lazy: 18 ms

            logger.exception("topic-shift detection failed; the snapshot is cut as usual")
            return None

    def _fan_out(self, snap: StoredSnapshot) -> None:
        # The first kind only, naming the others: each kind passes the snapshot on to the next once it has
        # tried, so the kinds' LLM calls follow one another and read the first one's prompt cache
        # (mongomem.extraction.runner; docs/adr/0011-one-snapshot-s-kinds-in-sequence.md).
        kinds = list(snap.extraction)
        if kinds:
            first, *rest = kinds
            body: dict[str, Any] = {
                "snapshot_id": snap.snapshot_id,
                "type": first,
                "tenant": snap.tenant,
                "user_id": snap.user_id,
            }
            if rest:
                body["then"] = rest
            self.queue.send_extraction(first, body)
        self.snapshots.mark_fanned_out(snap.snapshot_id)
        snap.fanned_out = True


def _deleted_seqs(session: Session, from_seq: int, to_seq: int) -> set[int]:
    """The seqs in [from_seq, to_seq] whose turns were deleted on request."""
    out: set[int] = set()
    for start, end in session.deleted_ranges:
        out.update(range(max(start, from_seq), min(end, to_seq) + 1))
    return out
