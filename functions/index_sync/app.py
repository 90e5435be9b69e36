"""EventBridge Scheduler -> re-index memories the vector index missed (MongoDB stays the source of truth),
and sweep the index again for users erased two refresh intervals ago (a Serverless collection)."""

from aws_lambda_powertools.utilities.typing import LambdaContext

from mongomem.erasure import sweep_erased
from mongomem.observability import logger, metrics
from mongomem.retrieval.sync import run_index_sync
from mongomem.runtime import Services, lambda_runtime
from mongomem.tracing import tracer

root = lambda_runtime()


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics(capture_cold_start_metric=True)
@root.handler
def lambda_handler(event: dict, context: LambdaContext, svc: Services) -> dict:
    report = run_index_sync(svc.memory_store, svc.indexer)
    report["erased_entries_swept"] = sweep_erased(svc.erasure, svc.vector_index)
    return report
