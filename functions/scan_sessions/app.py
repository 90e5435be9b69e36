"""EventBridge Scheduler -> promote due sessions to snapshots and fan out extraction."""

from aws_lambda_powertools.utilities.typing import LambdaContext

from mongomem.observability import logger, metrics
from mongomem.runtime import Services, lambda_runtime
from mongomem.shortterm.scan import Follow, run_scan
from mongomem.tracing import tracer

root = lambda_runtime()


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics(capture_cold_start_metric=True)
@root.handler
def lambda_handler(event: dict, context: LambdaContext, svc: Services) -> dict:
    recall = svc.settings.memory.recall
    follow = (
        Follow(recall.embed_on_write_poll_seconds, recall.embed_on_write_seconds)
        if recall.embed_on_write
        else None
    )
    return run_scan(
        svc.promoter,
        svc.turn_indexing,
        svc.settings.scan_batch,
        deadline_ms=context.get_remaining_time_in_millis,
        follow=follow,
    ).as_json()
