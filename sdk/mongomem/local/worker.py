"""The local stack's background work: the scan schedule and one SQS-like poller per extraction queue."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mongomem.local.lambdas import Handler, LocalContext
from mongomem.local.queue import LocalQueue, QueuePolicy
from mongomem.observability import logger


@dataclass
class PollResult:
    received: int
    failed: int


def deliver_batch(
    queue: LocalQueue, name: str, handler: Handler, policy: QueuePolicy, batch_size: int = 10
) -> PollResult:
    """Receive one batch, invoke the handler with an SQS event, delete what it did not report failed."""
    records = queue.receive(name, policy, batch_size)
    if not records:
        return PollResult(0, 0)
    failed_ids: set[str] = set()
    try:
        context = LocalContext(function_name=f"extract-{name}", timeout_seconds=policy.invocation_timeout)
        response = handler({"Records": records}, context)
        failures = (response or {}).get("batchItemFailures", []) if isinstance(response, dict) else []
        failed_ids = {f["itemIdentifier"] for f in failures}
    except Exception:
        # The whole invocation failed: Lambda returns every message to the queue.
        logger.exception("local %s invocation failed; the batch returns to the queue", name)
        failed_ids = {r["messageId"] for r in records}
    for record in records:
        if record["messageId"] not in failed_ids:
            queue.delete(record["receiptHandle"])
    return PollResult(len(records), len(failed_ids))


class Every:
    """Runs `fn` every `seconds` on a daemon thread until stopped."""

    def __init__(self, name: str, seconds: float, fn: Callable[[], Any]) -> None:
        self.seconds = seconds
        self.fn = fn
        self.stopped = threading.Event()
        self.errors = 0
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> Every:
        self.thread.start()
        return self

    def _run(self) -> None:
        while not self.stopped.wait(self.seconds):
            try:
                self.fn()
            except Exception:
                if self.stopped.is_set():
                    # stop() came while this tick ran: the stack is closing its database and queues under
                    # it, so the failure says nothing about the work (a later run's logs must not show it)
                    logger.info("local %s tick ended by stop", self.thread.name)
                    return
                # keep the schedule running, but never hide why a tick failed (make dev's console)
                self.errors += 1
                logger.exception("local %s tick failed", self.thread.name)

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=30)


def scheduled_event() -> dict[str, Any]:
    return {
        "version": "0",
        "id": "local",
        "detail-type": "Scheduled Event",
        "source": "aws.scheduler",
        "account": "000000000000",
        "region": "local",
        "resources": ["arn:aws:scheduler:local:000000000000:schedule/default/scan-sessions"],
        "detail": json.dumps({}),
    }


def drain(queue: LocalQueue, name: str, handler: Handler, policy: QueuePolicy) -> int:
    """Deliver batches until the queue has nothing visible; returns messages received."""
    total = 0
    while True:
        result = deliver_batch(queue, name, handler, policy)
        if result.received == 0:
            return total
        total += result.received


def drain_all(queue: LocalQueue, names: list[str], handler: Handler, policy: QueuePolicy) -> dict[str, int]:
    """Deliver every queue's messages until none has anything visible (a snapshot's kinds pass it on from
    queue to queue); messages received per queue."""
    total = dict.fromkeys(names, 0)
    while True:
        moved = 0
        for name in names:
            got = drain(queue, name, handler, policy)
            total[name] += got
            moved += got
        if not moved:
            return total
