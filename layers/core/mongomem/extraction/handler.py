"""The SQS record handler behind every extraction function."""

from __future__ import annotations

import time

from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from mongomem.erasure import expire_after_extraction
from mongomem.extraction.registry import get_extractor
from mongomem.extraction.runner import ExtractionMessage, SnapshotGone, run_extraction
from mongomem.observability import logger, metrics
from mongomem.runtime import services


def process_record(record: SQSRecord) -> None:
    """Extract one message; raising marks it failed so only it returns to the queue."""
    svc = services()
    message = ExtractionMessage.model_validate_json(record.body)
    expected = svc.settings.extraction_type
    if expected is not None and message.type != expected:
        raise ValueError(f"message for type {message.type.value!r} reached the {expected.value!r} extractor")
    logger.append_keys(snapshot_id=message.snapshot_id, memory_type=message.type.value)
    started = time.perf_counter()
    try:
        result = run_extraction(svc.store, get_extractor(message.type), message)
    except SnapshotGone:
        logger.warning("snapshot no longer exists; message dropped")
        return
    finally:
        logger.remove_keys(["snapshot_id", "memory_type"])
    # Retention: the turns' clock starts once every type of the snapshot is extracted (also on a
    # redelivery, in case the first attempt failed after extracting).
    expire_after_extraction(svc.store.db, message.snapshot_id, svc.settings.memory.snapshot.ttl_days)
    if result is None:
        logger.info("already extracted; redelivery ignored", extra={"snapshot_id": message.snapshot_id})
        return
    kind = message.type.value
    _per_type("ExtractionLatencyMs", MetricUnit.Milliseconds, (time.perf_counter() - started) * 1000, kind)
    _per_type("ExtractionInputTokens", MetricUnit.Count, result.input_tokens, kind)
    _per_type("ExtractionOutputTokens", MetricUnit.Count, result.output_tokens, kind)
    for decision, count in result.decisions.items():
        metrics.add_metric(name=f"Reconcile_{decision}", unit=MetricUnit.Count, value=count)
    logger.info("extracted", extra={"snapshot_id": message.snapshot_id, "memories": len(result.memories)})


def _per_type(name: str, unit: MetricUnit, value: float, memory_type: str) -> None:
    """A metric with a memory_type dimension (one EMF line of its own: other metrics keep theirs)."""
    try:
        with single_metric(name=name, unit=unit, value=value, namespace=metrics.namespace) as metric:
            metric.add_dimension(name="memory_type", value=memory_type)
    except Exception:  # a metric must never fail an extraction
        logger.debug("metric not emitted", extra={"metric": name})
