"""Promote sessions to snapshots: find due sessions, lease them, cut snapshots, fan out extraction.

Each step is idempotent, so a scanner that crashes anywhere leaves work another scanner finishes:
the snapshot id is derived from (session, from_seq), the promotion point moves by compare-and-set,
and snapshots not yet fanned out are re-sent by the outbox sweep.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from mongomem.adapters.mongo import MongoStore, PromotionPolicy, snapshot_id_for
from mongomem.config import MemoryType, Settings
from mongomem.models.common import Scope, as_utc, utcnow
from mongomem.ports import QueuePort
from mongomem.shortterm.record import policy_for


@dataclass
class ScanReport:
    sessions: int = 0
    snapshots: list[str] = field(default_factory=list)
    reasons: dict[str, int] = field(default_factory=dict)
    resent: int = 0
    skipped: int = 0


class Promoter:
    """Cuts snapshots for due sessions and sends one extraction message per enabled type."""

    def __init__(
        self, store: MongoStore, queue: QueuePort, settings: Settings, owner: str | None = None
    ) -> None:
        self.store = store
        self.queue = queue
        self.settings = settings
        self.policy: PromotionPolicy = policy_for(settings.memory)
        self.owner = owner or f"scanner-{uuid.uuid4().hex[:12]}"

    # -- entry points --------------------------------------------------------------------------
    def scan(self, now: datetime | None = None, max_sessions: int | None = None) -> ScanReport:
        """Promote every due session (up to max_sessions), then re-send unfanned snapshots."""
        report = ScanReport()
        limit = max_sessions or self.settings.scan_batch
        while report.sessions < limit:
            at = now or utcnow()
            session = self.store.claim_due(self.owner, at, self.settings.lease_seconds, self.policy)
            if session is None:
                break
            report.sessions += 1
            cut = self._promote_claimed(session, None, at)
            if not cut:
                report.skipped += 1
            for snap in cut:
                report.snapshots.append(snap["_id"])
                report.reasons[snap["reason"]] = report.reasons.get(snap["reason"], 0) + 1
        report.resent = self.resend_unfanned(now or utcnow())
        return report

    def flush(self, scope: Scope, session_id: str) -> list[dict[str, Any]]:
        """Promote a session at once (reason `manual`), whatever the due rule says."""
        now = utcnow()
        session = self.store.claim_session(scope, session_id, self.owner, now, self.settings.lease_seconds)
        if session is None:
            return []
        return self._promote_claimed(session, "manual", now)

    def resend_unfanned(self, now: datetime) -> int:
        """Outbox sweep: snapshots whose fan-out did not finish (a crash) are sent again."""
        older = now - timedelta(seconds=self.settings.lease_seconds)
        pending = self.store.unfanned_snapshots(older, self.settings.scan_batch)
        for snap in pending:
            self._fan_out(snap)
        return len(pending)

    # -- steps ---------------------------------------------------------------------------------
    def _promote_claimed(
        self, session: dict[str, Any], reason: str | None, now: datetime
    ) -> list[dict[str, Any]]:
        """Cut snapshots while the session stays due (any unpromoted turn when `reason` is manual)."""
        skey = session["_id"]
        cut: list[dict[str, Any]] = []
        try:
            current: dict[str, Any] | None = session
            while current is not None and current["last_seq"] > current["promoted_through_seq"]:
                if reason != "manual" and not self.policy.is_due(current, now):
                    break
                snap = self._cut_one(current, reason or self.policy.reason(current), now)
                if snap is None:
                    break
                self.store.tag_turns(snap)
                advanced = self.store.advance(skey, snap)
                self._fan_out(snap)
                cut.append(snap)
                current = advanced or self.store.reload_session(skey)
        finally:
            self.store.release(skey, self.owner)
        return cut

    def _cut_one(self, session: dict[str, Any], reason: str, now: datetime) -> dict[str, Any] | None:
        scope = Scope(tenant=session["tenant"], user_id=session["user_id"])
        sid = session["session_id"]
        from_seq = session["promoted_through_seq"] + 1
        existing = self.store.get_snapshot(snapshot_id_for(session["_id"], from_seq))
        if existing is not None:
            return existing  # a crashed scanner cut it; finish its work
        last = min(session["last_seq"], from_seq + self.policy.max_messages - 1)
        present = self.store.present_seqs(scope, sid, from_seq, last)
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
            quiet = now - as_utc(session["last_turn_at"]) >= timedelta(
                seconds=self.settings.hole_grace_seconds
            )
            if quiet:
                missing = [s for s in range(from_seq, last + 1) if s not in have]
                to_seq = last
        if to_seq < from_seq:
            return None
        tokens = sum(t for s, t in present if s <= to_seq)
        doc = {
            "_id": snapshot_id_for(session["_id"], from_seq),
            "tenant": session["tenant"],
            "user_id": session["user_id"],
            "session_id": sid,
            "agent_id": session.get("agent_id"),
            "from_seq": from_seq,
            "to_seq": to_seq,
            "turn_count": to_seq - from_seq + 1 - len(missing),
            "missing_seqs": missing,
            "tokens": tokens,
            "reason": reason,
            "created_at": now,
            "fanned_out": False,
            "extraction": {
                t.value: {"status": "queued", "attempts": 0} for t in self.settings.enabled_extractions
            },
        }
        return self.store.create_snapshot(doc)

    def _fan_out(self, snap: dict[str, Any]) -> None:
        for type_name in snap.get("extraction", {}):
            self.queue.send_extraction(
                MemoryType(type_name),
                {
                    "snapshot_id": snap["_id"],
                    "type": type_name,
                    "tenant": snap["tenant"],
                    "user_id": snap["user_id"],
                },
            )
        self.store.mark_fanned_out(snap["_id"])
        snap["fanned_out"] = True


def _deleted_seqs(session: dict[str, Any], from_seq: int, to_seq: int) -> set[int]:
    """The seqs in [from_seq, to_seq] whose turns were deleted on request."""
    out: set[int] = set()
    for start, end in session.get("deleted_ranges") or []:
        out.update(range(max(start, from_seq), min(end, to_seq) + 1))
    return out
