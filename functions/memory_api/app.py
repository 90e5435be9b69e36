"""API Gateway (HTTP API) -> memories, search, recall, context, working memory, users, snapshots, figures,
erasure, imports (/v1/memories, ...) and the memory console (/console)."""

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from mongomem.api.admin import routes as admin
from mongomem.api.app import MemoryApi
from mongomem.api.console import enable_console
from mongomem.api.context import routes as context
from mongomem.api.docs import enable_docs
from mongomem.api.imports import routes as imports
from mongomem.api.memories import routes as memories
from mongomem.api.procedures import routes as procedures
from mongomem.api.recall import routes as recall
from mongomem.api.search import routes as search
from mongomem.api.snapshots import routes as snapshots
from mongomem.api.stats import routes as stats
from mongomem.api.status import routes as status
from mongomem.api.threads import routes as threads
from mongomem.api.users import routes as users
from mongomem.api.working_memory import routes as working_memory
from mongomem.observability import logger, metrics
from mongomem.runtime import Services, lambda_runtime
from mongomem.tracing import tracer

root = lambda_runtime()
api: MemoryApi[Services] = MemoryApi(
    search,
    procedures,
    memories,
    threads,
    recall,
    context,
    working_memory,
    status,
    users,
    snapshots,
    stats,
    admin,
    imports,
)
enable_docs(api)  # /v1/openapi.json and Swagger UI at /v1/docs, from the same models
enable_console(api)  # the memory console at /console (static files; every data call uses the API)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics(capture_cold_start_metric=True)
@root.api_handler
def lambda_handler(event: dict, context: LambdaContext, svc: Services) -> dict:
    return api.handle(event, context, svc)
