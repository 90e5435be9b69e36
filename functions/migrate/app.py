"""CloudFormation custom resource -> create the MongoDB and search indexes when the stack is deployed.

No `root.handler` here: building the services (reading the config, MongoDB for custom types) is part of
the work the custom resource answers for, so a failure there is a FAILED answer, never a stack left
waiting (mongomem.adapters.cfn_response).
"""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from mongomem.adapters.cfn_response import custom_resource
from mongomem.migrate import migrate_deployed
from mongomem.observability import logger
from mongomem.runtime import lambda_runtime

root = lambda_runtime()


@logger.inject_lambda_context
@root.bare_handler
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    props = event.get("ResourceProperties") or {}
    return custom_resource(
        event,
        lambda deadline: migrate_deployed(
            root,
            deadline,
            progress=logger.info,
            search=props.get("Part") != "store",
            search_endpoint=props.get("SearchEndpoint") or None,
        ),
        remaining_seconds=lambda: context.get_remaining_time_in_millis() / 1000,
    )
