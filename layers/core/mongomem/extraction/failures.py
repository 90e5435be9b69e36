"""What a failed extraction does: one table, read by the runner (the kind's status) and the handler (the rest).

Each row names an exception and what follows when extracting a (snapshot, kind) raises it: the status the
runner writes for the kind, what becomes of the queue message, whether the snapshot's next kind is sent
(a failing kind never holds up the others), the metric emitted and the line logged. The first row whose
exception matches wins, so the rows go from the most specific to `Exception`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum

from mongomem.errors import ExtractionFailed
from mongomem.extraction.extractor import NoTimeLeft
from mongomem.models.sessions import ExtractionState
from mongomem.ports import LLMConfigError, LLMError


class SnapshotGone(Exception):
    """The snapshot no longer exists (its user was erased): the message is dropped, not retried."""


class Delivery(Enum):
    """What becomes of the queue message."""

    # the delivery succeeds and the kind is over for the snapshot (the turns' retention clock may start)
    DONE = "done"
    # the delivery succeeds and nothing follows (there is nothing left to extract)
    DROP = "drop"
    # sent again, visible at once, and this delivery succeeds: a batch item failure would wait out the
    # visibility timeout and spend one of the message's receives (a failure after MAX_DEFERRALS sends)
    RESEND = "resend"
    # a batch item failure: SQS delivers it again after the visibility timeout, to the DLQ after
    # maxReceiveCount
    RETRY = "retry"


@dataclass(frozen=True)
class FailurePolicy:
    exception: type[Exception]
    status: ExtractionState | None  # the kind's status the runner writes (None: none, no snapshot)
    delivery: Delivery
    pass_on: bool  # the snapshot's next kind is sent all the same
    metric: str | None = None  # a count of 1 on the service dimension only (what an alarm watches)
    metric_by_kind: bool = False  # the metric also per memory_type and reason (the status figures)
    log: tuple[int, str] | None = None  # (level, message)
    reason: str | None = None  # the status's reason (None: ExtractionFailed's own)
    final: bool | None = None  # ExtractionFailed only: the row for exc.final == final

    def matches(self, exc: Exception) -> bool:
        if not isinstance(exc, self.exception):
            return False
        return self.final is None or getattr(exc, "final", None) is self.final

    def reason_of(self, exc: Exception) -> str | None:
        if self.reason is not None:
            return self.reason
        return exc.reason if isinstance(exc, ExtractionFailed) else None


_DONE, _DROP, _RESEND, _RETRY = Delivery.DONE, Delivery.DROP, Delivery.RESEND, Delivery.RETRY

FAILURE_POLICY: tuple[FailurePolicy, ...] = (
    FailurePolicy(
        SnapshotGone,
        None,
        _DROP,
        pass_on=False,
        log=(logging.WARNING, "snapshot no longer exists; message dropped"),
    ),
    # the invocation's time ran out before or during the model's call: the kind waits for the next one
    FailurePolicy(NoTimeLeft, "queued", _RESEND, pass_on=False),
    # asking again would fail the same way (ADR 0012): the kind stays failed (status, figures) until a
    # retry, the message is done with, and it is loud (the ExtractionFailuresAlarm)
    FailurePolicy(
        ExtractionFailed,
        "failed",
        _DONE,
        pass_on=True,
        metric="ExtractionFailures",
        metric_by_kind=True,
        log=(logging.WARNING, "extraction failed for good: the same request failed the same way twice"),
        final=True,
    ),
    FailurePolicy(ExtractionFailed, "failed", _RETRY, pass_on=True, final=False),
    # the provider refuses the deployment (no model access, bad key): no retry fixes it, so it is said at
    # once (an ERROR and the ExtractionConfigErrors alarm) while the message waits for the fix in the queue
    FailurePolicy(
        LLMConfigError,
        "failed",
        _RETRY,
        pass_on=True,
        metric="ExtractionConfigErrors",
        log=(logging.ERROR, "LLM provider refuses the deployment's requests"),
        reason="config",
    ),
    FailurePolicy(LLMError, "failed", _RETRY, pass_on=True, reason="provider"),
    FailurePolicy(Exception, "failed", _RETRY, pass_on=True, reason="error"),
)


def policy_for(exc: Exception) -> FailurePolicy:
    """The first row of FAILURE_POLICY for `exc` (the last row takes any exception)."""
    return next(row for row in FAILURE_POLICY if row.matches(exc))


def short_error(exc: Exception) -> str:
    """The exception as the kind's status and the logs keep it."""
    return f"{type(exc).__name__}: {exc}"[:500]
