"""The SQS record handler behind every extraction function."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any, Protocol

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from mongomem.budget import request_budget
from mongomem.config import Settings, queue_name
from mongomem.erasure import ErasureRepository, delete_after_extraction, expire_after_extraction
from mongomem.extraction.extractor import ExtractionResult, Extractor, NoTimeLeft
from mongomem.extraction.failures import Delivery, policy_for, short_error
from mongomem.extraction.runner import ExtractionMessage, run_extraction
from mongomem.extraction.watch import SuspectEmpty
from mongomem.models.turns import Turn
from mongomem.observability import emit, logger
from mongomem.ports import QueuePort
from mongomem.shortterm.ports import SnapshotRepository, TurnRepository

# Time kept back at the end of an invocation (status writes, the batch response, metrics).
SAFETY_MS = 5_000
# A record is started only with at least this much time left; otherwise it is sent again at once.
MIN_RECORD_MS = 30_000
# A message sent again this often for lack of time is failed instead (a function timeout too short for
# any record would otherwise pass it around for ever).
MAX_DEFERRALS = 20

__all__ = ["NoTimeLeft", "process_record", "record_deadline"]


class SnapshotObserver(Protocol):
    """Observational memory's writer (observations.service.ObservationService)."""

    def observe(self, snapshot_id: str, deadline: float | None = None) -> int | None:
        """Add the snapshot's observations to its user's log once (None: observed already)."""
        ...


class ExtractionServices(Protocol):
    """What extracting a record needs; the composition root (mongomem.runtime.Services) provides it."""

    @property
    def settings(self) -> Settings: ...
    @property
    def snapshots(self) -> SnapshotRepository: ...
    @property
    def turns(self) -> TurnRepository: ...
    @property
    def erasure(self) -> ErasureRepository: ...
    @property
    def queue(self) -> QueuePort: ...
    @property
    def suspect_empty(self) -> SuspectEmpty:
        """This process's count of empty answers the offline rules contradict."""
        ...

    @property
    def observations(self) -> SnapshotObserver | None:
        """Observational memory (None: turned off)."""
        ...

    def forget_turns(self, turns: list[Turn]) -> int:
        """Remove deleted turns' recall index entries."""
        ...

    def extractor(self, kind: str) -> Extractor | None:
        """The kind's extractor (None: the kind has none; its status becomes `skipped`)."""
        ...


def record_deadline(lambda_context: Any) -> float | None:
    """time.monotonic() by which this record's work (LLM retries included) must be over."""
    remaining = getattr(lambda_context, "get_remaining_time_in_millis", None)
    if remaining is None:
        return None
    left_ms = int(remaining())
    if left_ms < MIN_RECORD_MS:
        raise NoTimeLeft(f"{left_ms} ms left of the invocation")
    return time.monotonic() + (left_ms - SAFETY_MS) / 1000


def process_record(record: SQSRecord, lambda_context: Any = None, *, svc: ExtractionServices) -> None:
    """Extract one message; raising marks it failed so only it returns to the queue.

    What a failure does (the kind's status, the message, the next kind, the metric) is the table
    extraction.failures.FAILURE_POLICY."""
    message = _read_message(record, svc.settings.extraction_type)
    started = time.perf_counter()
    with _log_keys(message):
        try:
            result = _extract(svc, message, lambda_context)
        except Exception as exc:
            if _apply_policy(svc, message, exc) is Delivery.DONE:
                _start_retention(svc, message)
            return
        _observe(svc, message)
        _pass_on(svc, message)
    _start_retention(svc, message)
    if result is None:
        logger.info("already extracted; redelivery ignored", extra={"snapshot_id": message.snapshot_id})
        return
    _report(svc, message, result, (time.perf_counter() - started) * 1000)


def _read_message(record: SQSRecord, expected: str | None) -> ExtractionMessage:
    """The queue message, checked against the queue this function serves (`expected`; None: any)."""
    message = ExtractionMessage.model_validate_json(record.body)
    if expected is not None and queue_name(message.type) != expected:
        raise ValueError(f"message for type {message.type!r} reached the {expected!r} extractor")
    return message


@contextmanager
def _log_keys(message: ExtractionMessage) -> Iterator[None]:
    logger.append_keys(snapshot_id=message.snapshot_id, memory_type=message.type)
    try:
        yield
    finally:
        logger.remove_keys(["snapshot_id", "memory_type"])


def _extract(
    svc: ExtractionServices, message: ExtractionMessage, lambda_context: Any
) -> ExtractionResult | None:
    """Run the extraction within the record's deadline (None: it was done already)."""
    deadline = record_deadline(lambda_context)
    # The record's deadline also holds the commit's own calls (the embedder, the search index): they cut
    # their timeouts and retries to it as they do inside an API request.
    with request_budget(deadline - time.monotonic()) if deadline is not None else nullcontext():
        return run_extraction(svc.snapshots, svc.turns, svc.extractor(message.type), message, deadline)


def _observe(svc: ExtractionServices, message: ExtractionMessage) -> None:
    """The snapshot's observations, once per snapshot (the first of its kinds to get here writes them;
    a failure is a WARNING and the ObservationFailures metric, and the snapshot's next kind tries again)."""
    observations = svc.observations
    if observations is None:
        return
    try:
        added = observations.observe(message.snapshot_id)
    except Exception as exc:
        logger.warning(
            "the snapshot's observations were not written",
            extra={"snapshot_id": message.snapshot_id, "error": short_error(exc)},
        )
        emit("ObservationFailures", MetricUnit.Count, 1)
        return
    if added is not None:
        logger.info("observed", extra={"snapshot_id": message.snapshot_id, "observations": added})


def _apply_policy(svc: ExtractionServices, message: ExtractionMessage, exc: Exception) -> Delivery:
    """Do what FAILURE_POLICY says for `exc` (the runner wrote the kind's status); raise it again when the
    message is to be retried."""
    policy = policy_for(exc)
    reason = policy.reason_of(exc) or "error"
    if policy.log is not None:
        level, text = policy.log
        say = {logging.WARNING: logger.warning, logging.ERROR: logger.error}[level]
        extra = {"snapshot_id": message.snapshot_id, "memory_type": message.type, "reason": reason}
        say(text, extra={**extra, "error": short_error(exc)})
    if policy.metric is not None:
        if policy.metric_by_kind:
            emit(policy.metric, MetricUnit.Count, 1, memory_type=message.type, reason=reason)
        emit(policy.metric, MetricUnit.Count, 1)  # an alarm's dimensions: service only
    if policy.pass_on:
        _pass_on(svc, message)  # a failing kind does not hold up the snapshot's other kinds
    if policy.delivery is Delivery.RESEND:
        _defer(svc, message, str(exc))
    elif policy.delivery is Delivery.RETRY:
        raise exc
    return policy.delivery


def _start_retention(svc: ExtractionServices, message: ExtractionMessage) -> None:
    """The turns' clock starts (delete_promoted: they are deleted) once every type of the snapshot is
    extracted (also on a redelivery, in case the first attempt failed after extracting)."""
    retention = svc.settings.memory.snapshot
    if not retention.delete_promoted:
        expire_after_extraction(svc.snapshots, svc.erasure, message.snapshot_id, retention.ttl_days)
        return
    deleted = delete_after_extraction(svc.snapshots, svc.turns, svc.forget_turns, message.snapshot_id)
    if deleted:
        logger.info("extracted turns deleted", extra={"snapshot_id": message.snapshot_id, "turns": deleted})


def _report(
    svc: ExtractionServices, message: ExtractionMessage, result: ExtractionResult, elapsed_ms: float
) -> None:
    """The extraction's figures (latency, tokens, decisions, refusals) and its warnings."""
    kind = message.type
    emit("ExtractionLatencyMs", MetricUnit.Milliseconds, elapsed_ms, memory_type=kind)
    emit("ExtractionInputTokens", MetricUnit.Count, result.input_tokens, memory_type=kind)
    emit("ExtractionOutputTokens", MetricUnit.Count, result.output_tokens, memory_type=kind)
    for decision, count in result.decisions.items():
        emit("ReconcileDecisions", MetricUnit.Count, count, memory_type=kind, decision=decision)
    for reason, count in result.refused.items():
        # proposed items their kind refused (malformed: invalid; placeholder, greeting ...: junk): never stored
        emit("ExtractionItemsRefused", MetricUnit.Count, count, memory_type=kind, reason=reason)
    if result.refused and not result.memory_ids:
        logger.warning(
            "every item the model proposed was refused",
            extra={"snapshot_id": message.snapshot_id, "memory_type": kind, "refused": dict(result.refused)},
        )
    if result.outcome == "empty_answer" and result.rules_found:
        emit("ExtractionEmptyAnswers", MetricUnit.Count, 1, memory_type=kind)
    warning = svc.suspect_empty.note(kind, result.outcome, result.rules_found)
    if warning is not None:
        # once per kind and window: a model that never extracts looks like quiet conversations otherwise
        logger.warning(
            "the extractor answers nothing where the offline rules find facts",
            extra={"memory_type": kind, "hint": warning},
        )
    logger.info("extracted", extra={"snapshot_id": message.snapshot_id, "memories": len(result.memory_ids)})


def _defer(svc: ExtractionServices, message: ExtractionMessage, why: str) -> None:
    """Send the message again, visible at once, and let this delivery succeed: a record returned as a
    batch failure would wait out the visibility timeout (720 s) and spend one of its receives."""
    if message.deferred >= MAX_DEFERRALS:
        raise NoTimeLeft(f"{why}; sent again {message.deferred} times already")
    again = message.model_copy(update={"deferred": message.deferred + 1})
    svc.queue.send_extraction(message.type, again.body())
    logger.info("no time left in this invocation; the message was sent again", extra={"why": why})


def _pass_on(svc: ExtractionServices, message: ExtractionMessage) -> None:
    """Send the snapshot's next kind once this one has tried (only the first delivery to get here does)."""
    nxt = message.next()
    if nxt is None:
        return
    if not svc.snapshots.hand_off(message.snapshot_id, message.type):
        return
    try:
        svc.queue.send_extraction(nxt.type, nxt.body())
    except Exception:
        svc.snapshots.hand_off(message.snapshot_id, message.type, done=False)  # the next delivery tries again
        raise
