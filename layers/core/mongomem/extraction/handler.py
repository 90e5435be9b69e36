"""The SQS record handler behind every extraction function."""

from __future__ import annotations

import time
from typing import Any, Protocol

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from mongomem.config import Settings, queue_name
from mongomem.erasure import ErasureRepository, delete_after_extraction, expire_after_extraction
from mongomem.extraction.extractor import Extractor
from mongomem.extraction.runner import ExtractionMessage, SnapshotGone, run_extraction
from mongomem.models.turns import Turn
from mongomem.observability import emit, logger
from mongomem.shortterm.ports import SnapshotRepository, TurnRepository

# Time kept back at the end of an invocation (status writes, the batch response, metrics).
SAFETY_MS = 5_000
# A record is started only with at least this much time left; otherwise it goes back to the queue at once.
MIN_RECORD_MS = 15_000


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

    def forget_turns(self, turns: list[Turn]) -> int:
        """Remove deleted turns' recall index entries."""
        ...

    def extractor(self, kind: str) -> Extractor | None:
        """The kind's extractor (None: the kind has none; its status becomes `skipped`)."""
        ...


class NoTimeLeft(Exception):
    """Too little of the invocation is left to extract this record: it is returned as a batch item failure."""


def record_deadline(lambda_context: Any) -> float | None:
    """time.monotonic() by which this record's work (LLM retries included) must be over."""
    remaining = getattr(lambda_context, "get_remaining_time_in_millis", None)
    if remaining is None:
        return None
    left_ms = int(remaining())
    if left_ms < MIN_RECORD_MS:
        raise NoTimeLeft(f"{left_ms} ms left of the invocation; the record goes back to the queue")
    return time.monotonic() + (left_ms - SAFETY_MS) / 1000


def process_record(record: SQSRecord, lambda_context: Any = None, *, svc: ExtractionServices) -> None:
    """Extract one message; raising marks it failed so only it returns to the queue."""
    deadline = record_deadline(lambda_context)
    message = ExtractionMessage.model_validate_json(record.body)
    expected = svc.settings.extraction_type
    if expected is not None and queue_name(message.type) != expected:
        raise ValueError(f"message for type {message.type!r} reached the {expected!r} extractor")
    logger.append_keys(snapshot_id=message.snapshot_id, memory_type=message.type)
    started = time.perf_counter()
    try:
        result = run_extraction(svc.snapshots, svc.turns, svc.extractor(message.type), message, deadline)
    except SnapshotGone:
        logger.warning("snapshot no longer exists; message dropped")
        return
    finally:
        logger.remove_keys(["snapshot_id", "memory_type"])
    # Retention: the turns' clock starts (delete_promoted: they are deleted) once every type of the
    # snapshot is extracted (also on a redelivery, in case the first attempt failed after extracting).
    retention = svc.settings.memory.snapshot
    if retention.delete_promoted:
        deleted = delete_after_extraction(svc.snapshots, svc.turns, svc.forget_turns, message.snapshot_id)
        if deleted:
            logger.info(
                "extracted turns deleted", extra={"snapshot_id": message.snapshot_id, "turns": deleted}
            )
    else:
        expire_after_extraction(svc.snapshots, svc.erasure, message.snapshot_id, retention.ttl_days)
    if result is None:
        logger.info("already extracted; redelivery ignored", extra={"snapshot_id": message.snapshot_id})
        return
    kind = message.type
    elapsed = (time.perf_counter() - started) * 1000
    emit("ExtractionLatencyMs", MetricUnit.Milliseconds, elapsed, memory_type=kind)
    emit("ExtractionInputTokens", MetricUnit.Count, result.input_tokens, memory_type=kind)
    emit("ExtractionOutputTokens", MetricUnit.Count, result.output_tokens, memory_type=kind)
    for decision, count in result.decisions.items():
        emit("ReconcileDecisions", MetricUnit.Count, count, memory_type=kind, decision=decision)
    for reason, count in result.refused.items():
        # proposed items their kind refused (malformed: invalid; placeholder, greeting ...: junk): never stored
        emit("ExtractionItemsRefused", MetricUnit.Count, count, memory_type=kind, reason=reason)
    logger.info("extracted", extra={"snapshot_id": message.snapshot_id, "memories": len(result.memories)})
