"""CloudFormation custom resource -> create the MongoDB and search indexes when the stack is deployed."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from mongomem.adapters.cfn_response import custom_resource
from mongomem.migrate import migrate
from mongomem.observability import logger
from mongomem.runtime import Services, lambda_runtime

root = lambda_runtime()


@logger.inject_lambda_context
@root.handler
def lambda_handler(event: dict[str, Any], context: LambdaContext, svc: Services) -> dict[str, Any]:
    return custom_resource(event, lambda: migrate(svc.for_migration(), progress=logger.info))
