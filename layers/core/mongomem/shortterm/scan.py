"""The scheduled scan: promote due sessions while time remains, report what was done."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.metrics import MetricUnit

from mongomem.observability import emit, logger, metrics
from mongomem.shortterm.promotion import Promoter, ScanReport

if TYPE_CHECKING:
    from mongomem.retrieval.turn_indexing import TurnIndexer

# Stop taking new sessions when less than this is left of the invocation.
SAFETY_MS = 10_000


@dataclass(frozen=True)
class Follow:
    """memory.recall.embed_on_write: after its pass, the scan keeps promoting and indexing new turns
    every `poll_seconds` for `for_seconds` (docs/adr/0008-embed-on-write-memory-recall-embed-on-write.md)."""

    poll_seconds: float
    for_seconds: float


@dataclass
class ScanTotals:
    """What a scan did: its log lines and, as_json(), the scan function's answer."""

    sessions: int = 0  # sessions claimed
    snapshots: int = 0  # snapshots cut
    resent: int = 0  # snapshots whose lost fan-out was sent again
    reasons: Counter[str] = field(default_factory=Counter)  # snapshots cut, by reason
    recall: Counter[str] | None = None  # turns indexed for recall, reindexed, failed (None: no recall)
    follow_passes: int | None = None  # the passes after the first (None: not following recording)

    def __add__(self, other: ScanTotals) -> ScanTotals:
        recall = None
        if self.recall is not None or other.recall is not None:
            recall = Counter(self.recall or {})
            recall.update(other.recall or {})  # update, not +: a count of 0 is kept
        reasons = Counter(self.reasons)
        reasons.update(other.reasons)
        return ScanTotals(
            sessions=self.sessions + other.sessions,
            snapshots=self.snapshots + other.snapshots,
            resent=self.resent + other.resent,
            reasons=reasons,
            recall=recall,
            follow_passes=_plus(self.follow_passes, other.follow_passes),
        )

    @classmethod
    def of(cls, report: ScanReport) -> ScanTotals:
        return cls(report.sessions, len(report.snapshots), report.resent, Counter(report.reasons))

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sessions": self.sessions,
            "snapshots": self.snapshots,
            "resent": self.resent,
            "reasons": dict(self.reasons),
        }
        if self.recall is not None:
            out["recall"] = dict(self.recall)
        if self.follow_passes is not None:
            out["follow_passes"] = self.follow_passes
        return out


def _plus(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)


def run_scan(
    promoter: Promoter,
    turn_indexer: Callable[[], TurnIndexer] | None,
    scan_batch: int,
    deadline_ms: Callable[[], int] | None = None,
    follow: Follow | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> ScanTotals:
    """Promote due sessions in batches until none is due or the invocation is nearly out of time.

    Then, with `turn_indexer` (recall enabled), embed the recorded turns for semantic recall. It is
    built only then, inside the guard: an embedder or index that cannot be built never fails promotion.
    With `follow`, the scan then polls: new turns become recallable within seconds of being recorded.
    """
    started = time.monotonic()
    totals = _one_pass(promoter, turn_indexer, scan_batch, deadline_ms)
    if follow is not None and turn_indexer is not None:
        passes = 0
        while time.monotonic() - started + follow.poll_seconds < follow.for_seconds:
            if deadline_ms is not None and deadline_ms() < SAFETY_MS + follow.poll_seconds * 1000:
                break
            sleep(follow.poll_seconds)
            totals += _one_pass(promoter, turn_indexer, scan_batch, deadline_ms, quiet=True)
            passes += 1
        totals.follow_passes = passes
        logger.info("scan followed recording", extra=totals.as_json())
    return totals


def _one_pass(
    promoter: Promoter,
    turn_indexer: Callable[[], TurnIndexer] | None,
    scan_batch: int,
    deadline_ms: Callable[[], int] | None,
    quiet: bool = False,
) -> ScanTotals:
    totals = ScanTotals()
    while True:
        report = promoter.scan()
        totals += ScanTotals.of(report)
        if report.sessions < scan_batch:
            break
        if deadline_ms is not None and deadline_ms() < SAFETY_MS:
            logger.warning("scan stopped early: the invocation is nearly out of time")
            break
    for reason, count in totals.reasons.items():
        emit("SnapshotsPromoted", MetricUnit.Count, count, reason=reason)
    if turn_indexer is not None:
        totals.recall = _index_turns(turn_indexer, deadline_ms)
    if not quiet or totals.snapshots or (totals.recall is not None and totals.recall["turns"]):
        logger.info("scan finished", extra=totals.as_json())
    return totals


def _index_turns(indexer: Callable[[], TurnIndexer], deadline_ms: Callable[[], int] | None) -> Counter[str]:
    """Embed recorded turns for semantic recall; a failure here never fails promotion."""
    try:
        report = indexer().run(deadline_ms, SAFETY_MS)
    except Exception:
        logger.exception("recall indexing failed; the turns stay queued for the next scan")
        return Counter({"turns": 0, "reindexed": 0, "failed": 0})
    if report["turns"]:
        metrics.add_metric(name="RecallTurnsIndexed", unit=MetricUnit.Count, value=report["turns"])
    return Counter(report)
