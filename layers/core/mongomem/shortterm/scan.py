"""The scheduled scan: promote due sessions while time remains, report what was done."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.metrics import MetricUnit

from mongomem.observability import emit, logger, metrics
from mongomem.shortterm.promotion import Promoter

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


def run_scan(
    promoter: Promoter,
    turn_indexer: Callable[[], TurnIndexer] | None,
    scan_batch: int,
    deadline_ms: Callable[[], int] | None = None,
    follow: Follow | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
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
            more = _one_pass(promoter, turn_indexer, scan_batch, deadline_ms, quiet=True)
            passes += 1
            for key in ("sessions", "snapshots", "resent"):
                totals[key] += more[key]
            for reason, count in more["reasons"].items():
                totals["reasons"][reason] = totals["reasons"].get(reason, 0) + count
            for key, value in more.get("recall", {}).items():
                totals["recall"][key] = totals["recall"].get(key, 0) + value
        totals["follow_passes"] = passes
        logger.info("scan followed recording", extra=totals)
    return totals


def _one_pass(
    promoter: Promoter,
    turn_indexer: Callable[[], TurnIndexer] | None,
    scan_batch: int,
    deadline_ms: Callable[[], int] | None,
    quiet: bool = False,
) -> dict[str, Any]:
    sessions = snapshots = resent = 0
    reasons: dict[str, int] = {}
    while True:
        report = promoter.scan()
        sessions += report.sessions
        snapshots += len(report.snapshots)
        resent += report.resent
        for reason, count in report.reasons.items():
            reasons[reason] = reasons.get(reason, 0) + count
        if report.sessions < scan_batch:
            break
        if deadline_ms is not None and deadline_ms() < SAFETY_MS:
            logger.warning("scan stopped early: the invocation is nearly out of time")
            break
    for reason, count in reasons.items():
        emit("SnapshotsPromoted", MetricUnit.Count, count, reason=reason)
    totals: dict[str, Any] = {
        "sessions": sessions,
        "snapshots": snapshots,
        "resent": resent,
        "reasons": reasons,
    }
    if turn_indexer is not None:
        totals["recall"] = _index_turns(turn_indexer, deadline_ms)
    if not quiet or snapshots or totals.get("recall", {}).get("turns"):
        logger.info("scan finished", extra=totals)
    return totals


def _index_turns(indexer: Callable[[], TurnIndexer], deadline_ms: Callable[[], int] | None) -> dict[str, int]:
    """Embed recorded turns for semantic recall; a failure here never fails promotion."""
    try:
        report = indexer().run(deadline_ms, SAFETY_MS)
    except Exception:
        logger.exception("recall indexing failed; the turns stay queued for the next scan")
        return {"turns": 0, "reindexed": 0, "failed": 0}
    if report["turns"]:
        metrics.add_metric(name="RecallTurnsIndexed", unit=MetricUnit.Count, value=report["turns"])
    return dict(report)
