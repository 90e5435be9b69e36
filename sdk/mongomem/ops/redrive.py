"""Re-drive failed extractions: DLQ messages back to their queues, snapshot statuses back to queued."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from mongomem.local.queue import DLQ_SUFFIX, LocalQueue
from mongomem.ops.dlq import SnapshotStatuses, SqsRedrive


@dataclass
class RedriveReport:
    memory_type: str
    messages: int
    snapshots_requeued: int
    task: str | None = None
    notes: list[str] = field(default_factory=list)


def local_queue_name(memory_type: str) -> str:
    return f"extract-{memory_type}"


def retry_local(queue: LocalQueue, statuses: SnapshotStatuses, memory_type: str) -> RedriveReport:
    """The local stack: requeue exactly the snapshots whose messages sit in the DLQ, then move them."""
    dlq = local_queue_name(memory_type) + DLQ_SUFFIX
    ids = []
    for body in queue.bodies(dlq):
        try:
            snapshot_id = json.loads(body).get("snapshot_id")
        except (ValueError, AttributeError):
            continue
        if isinstance(snapshot_id, str):
            ids.append(snapshot_id)
    # statuses first: a fast poller must not have its `done` overwritten by `queued`
    requeued = statuses.requeue(memory_type, ids)
    moved = queue.redrive(dlq)
    return RedriveReport(memory_type, moved, requeued)


def retry_sqs(
    redrive: SqsRedrive, dlq_urls: dict[str, str], statuses: SnapshotStatuses | None, memory_type: str
) -> RedriveReport:
    """A deployed stack: requeue the type's failed snapshots, then start an SQS message move task."""
    url = dlq_urls.get(memory_type)
    if url is None:
        return RedriveReport(memory_type, 0, 0, notes=[f"the stack has no {memory_type} DLQ output"])
    requeued = statuses.requeue(memory_type) if statuses is not None else 0
    task, count = redrive.start_move(url)
    report = RedriveReport(memory_type, count, requeued, task or None)
    if statuses is None:
        report.notes.append("no MongoDB configured: statuses update when the messages are extracted")
    return report


def describe(report: RedriveReport) -> dict[str, Any]:
    return {
        "type": report.memory_type,
        "messages": report.messages,
        "snapshots_requeued": report.snapshots_requeued,
        **({"task": report.task} if report.task else {}),
        **({"notes": report.notes} if report.notes else {}),
    }
