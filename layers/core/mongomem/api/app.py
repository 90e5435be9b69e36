"""The resolver: routers, validation, error mapping and the body-size guard."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from mongomem.api.errors import install_error_handlers
from mongomem.api.identity import USER_HEADER, acting_user, begin_request, principal_from_event
from mongomem.runtime import services


class MemoryApi:
    """An APIGatewayHttpResolver with our routers; `handle` refuses oversized bodies before parsing."""

    def __init__(self, *routers: APIGatewayHttpRouter) -> None:
        self.app = APIGatewayHttpResolver(enable_validation=True)
        install_error_handlers(self.app)
        for router in routers:
            self.app.include_router(router)

    def handle(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        body = event.get("body") or ""
        limit = services().settings.memory.limits.max_body_bytes
        # base64 grows the body by 4/3; compare the decoded size without decoding
        size = (
            len(body) * 3 // 4 if event.get("isBase64Encoded") else len(body.encode("utf-8", "surrogatepass"))
        )
        if size > limit:
            error = {
                "code": "payload_too_large",
                "message": f"the request body is larger than {limit} bytes",
                "details": {"max_body_bytes": limit},
            }
            return {
                "statusCode": 413,
                "headers": {"Content-Type": "application/json"},
                "body": json.dumps({"error": error}),
                "isBase64Encoded": False,
            }
        if body:
            # The API speaks JSON only: a body sent without a JSON content type (curl -d) is read as JSON.
            headers = event.setdefault("headers", {})
            ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
            if "json" not in ctype.lower():
                for key in [k for k in headers if k.lower() == "content-type"]:
                    del headers[key]
                headers["content-type"] = "application/json"
        begin_request()
        response = self.app.resolve(event, context)
        # Tell the caller which memory identity served the request (a service account's user_id is ignored).
        user = acting_user(principal_from_event(event, services().settings.tenant_default))
        if user and isinstance(response, dict):
            response.setdefault("headers", {})[USER_HEADER] = user
        return response
