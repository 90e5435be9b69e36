"""API Gateway (HTTP API) -> record and read short-term memory: /v1/sessions/...

No Tracer here: it would add the X-Ray SDK to the hot path's cold start (see mongomem.observability).
"""

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from mongomem.api.app import MemoryApi
from mongomem.api.sessions import fast_record
from mongomem.api.sessions import routes as sessions
from mongomem.observability import logger, metrics
from mongomem.runtime import Services, lambda_runtime

root = lambda_runtime()
api: MemoryApi[Services] = MemoryApi(sessions, fast=(fast_record,))  # recording skips the resolver


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics(capture_cold_start_metric=True)
@root.api_handler
def lambda_handler(event: dict, context: LambdaContext, svc: Services) -> dict:
    return api.handle(event, context, svc)
