"""The index_sync job: push what is still pending in MongoDB to the vector index, report index lag."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from aws_lambda_powertools.metrics import MetricUnit

from mongomem.models.common import as_utc, utcnow
from mongomem.observability import logger, metrics

if TYPE_CHECKING:
    from mongomem.models.memory import MemoryRecord

# A write-through normally indexes within a second; older pending work is index_sync's.
PENDING_AFTER_SECONDS = 30.0


class PendingIndex(Protocol):
    def pending_index(self, older_than: datetime, limit: int) -> list[MemoryRecord]:
        """Memory versions waiting for the index, oldest change first."""
        ...


class PendingSync(Protocol):
    def sync_pending(self, older_than_seconds: float) -> int:
        """Index what waited longer than this; how many were written."""
        ...


def run_index_sync(
    memories: PendingIndex, indexer: PendingSync, older_than_seconds: float = PENDING_AFTER_SECONDS
) -> dict[str, Any]:
    oldest = memories.pending_index(utcnow(), 1)
    lag = (utcnow() - as_utc(oldest[0].updated_at or oldest[0].created_at)).total_seconds() if oldest else 0.0
    synced = indexer.sync_pending(older_than_seconds)
    metrics.add_metric(name="IndexLagSeconds", unit=MetricUnit.Seconds, value=lag)
    metrics.add_metric(name="IndexSynced", unit=MetricUnit.Count, value=synced)
    logger.info("index sync finished", extra={"synced": synced, "lag_seconds": lag})
    return {"synced": synced, "lag_seconds": round(lag, 3)}
