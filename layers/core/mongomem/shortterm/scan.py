"""The scheduled scan: promote due sessions while time remains, report what was done."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.metrics import MetricUnit

from mongomem.observability import emit, logger, metrics
from mongomem.shortterm.promotion import Promoter

if TYPE_CHECKING:
    from mongomem.retrieval.turn_indexing import TurnIndexer

# Stop taking new sessions when less than this is left of the invocation.
SAFETY_MS = 10_000


def run_scan(
    promoter: Promoter,
    turn_indexer: Callable[[], TurnIndexer] | None,
    scan_batch: int,
    deadline_ms: Callable[[], int] | None = None,
) -> dict[str, Any]:
    """Promote due sessions in batches until none is due or the invocation is nearly out of time.

    Then, with `turn_indexer` (recall enabled), embed the recorded turns for semantic recall. It is
    built only then, inside the guard: an embedder or index that cannot be built never fails promotion.
    """
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
