"""API Gateway Lambda REQUEST authorizer: x-api-key -> principal (tenant, kind, key id, fixed user).

HTTP API payload 2.0 with simple responses; API Gateway caches the answer per key for 300 s.
No Tracer: like the record path, this runs before every uncached request.
"""

from aws_lambda_powertools.utilities.typing import LambdaContext

from mongomem.identity.authorizer import authorize
from mongomem.observability import logger, metrics
from mongomem.runtime import Services, lambda_runtime

root = lambda_runtime()


@logger.inject_lambda_context
@metrics.log_metrics(capture_cold_start_metric=True)
@root.handler
def lambda_handler(event: dict, context: LambdaContext, svc: Services) -> dict:
    result = authorize(event, svc.api_keys)
    logger.info("authorized" if result["isAuthorized"] else "denied", extra=result["context"])
    return result
