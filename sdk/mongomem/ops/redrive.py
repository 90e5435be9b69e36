"""Re-drive failed extractions: DLQ messages back to their queues, snapshot statuses back to queued."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mongomem.local.queue import DLQ_SUFFIX, LocalQueue
from mongomem.ops.dlq import SnapshotStatuses, SqsRedrive


@dataclass
class RedriveReport:
    kind: str
    messages: int
    snapshots_requeued: int
    task: str | None = None
    notes: list[str] = field(default_factory=list)


# ExtractionLanes=one: every kind's messages share one queue and DLQ, output as ExtractionDLQUrl.
ONE_LANE = "extraction"


def local_queue_name(kind: str) -> str:
    return f"extract-{kind}"


def retry_local(queue: LocalQueue, statuses: SnapshotStatuses, kind: str) -> RedriveReport:
    """The local stack: requeue exactly the snapshots whose messages sit in the DLQ, then move them."""
    dlq = local_queue_name(kind) + DLQ_SUFFIX
    ids = []
    for body in queue.bodies(dlq):
        try:
            snapshot_id = json.loads(body).get("snapshot_id")
        except (ValueError, AttributeError):
            continue
        if isinstance(snapshot_id, str):
            ids.append(snapshot_id)
    # statuses first: a fast poller must not have its `done` overwritten by `queued`
    requeued = statuses.requeue(kind, ids)
    moved = queue.redrive(dlq)
    return RedriveReport(kind, moved, requeued)


def retry_sqs(
    redrive: SqsRedrive, dlq_urls: dict[str, str], statuses: SnapshotStatuses | None, kind: str
) -> RedriveReport:
    """A deployed stack: requeue the type's failed snapshots, then start an SQS message move task."""
    url = dlq_urls.get(kind) or dlq_urls.get(ONE_LANE)
    if url is None:
        return RedriveReport(kind, 0, 0, notes=[f"the stack has no {kind} DLQ output"])
    requeued = statuses.requeue(kind) if statuses is not None else 0
    task, count = redrive.start_move(url)
    report = RedriveReport(kind, count, requeued, task or None)
    if statuses is None:
        report.notes.append("no MongoDB configured: statuses update when the messages are extracted")
    return report


def describe(report: RedriveReport) -> dict[str, Any]:
    return {
        "type": report.kind,
        "messages": report.messages,
        "snapshots_requeued": report.snapshots_requeued,
        **({"task": report.task} if report.task else {}),
        **({"notes": report.notes} if report.notes else {}),
    }
