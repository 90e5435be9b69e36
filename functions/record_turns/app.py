"""API Gateway (HTTP API) -> record and read short-term memory: /v1/sessions/..."""

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from mongomem.api.app import MemoryApi
from mongomem.api.sessions import router as sessions
from mongomem.observability import logger, metrics, tracer

api = MemoryApi(sessions)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics(capture_cold_start_metric=True)
def lambda_handler(event: dict, context: LambdaContext) -> dict:
    return api.handle(event, context)
