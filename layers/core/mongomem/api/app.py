"""The resolver: routers, validation, error mapping and the body-size guard."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from mongomem.api.errors import install_error_handlers
from mongomem.api.identity import USER_HEADER, acting_user, begin_request, principal_from_event
from mongomem.errors import StoreAuthFailed
from mongomem.runtime import Services, services, store_auth_final


class MemoryApi:
    """An APIGatewayHttpResolver with our routers; `handle` refuses oversized bodies before parsing."""

    def __init__(self, *routers: APIGatewayHttpRouter) -> None:
        self.app = APIGatewayHttpResolver(enable_validation=True)
        install_error_handlers(self.app)
        for router in routers:
            self.app.include_router(router)

    def handle(self, event: dict[str, Any], context: Any, svc: Services | None = None) -> dict[str, Any]:
        svc = svc or services()
        body = event.get("body") or ""
        limit = svc.settings.memory.limits.max_body_bytes
        # base64 grows the body by 4/3; compare the decoded size without decoding
        size = (
            len(body) * 3 // 4 if event.get("isBase64Encoded") else len(body.encode("utf-8", "surrogatepass"))
        )
        if size > limit:
            return _envelope(
                413,
                "payload_too_large",
                f"the request body is larger than {limit} bytes",
                {"max_body_bytes": limit},
            )
        if body:
            # The API speaks JSON only: a body sent without a JSON content type (curl -d) is read as JSON.
            headers = event.setdefault("headers", {})
            ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
            if "json" not in ctype.lower():
                for key in [k for k in headers if k.lower() == "content-type"]:
                    del headers[key]
                headers["content-type"] = "application/json"
        begin_request()
        try:
            response = self.app.resolve(event, context)
        except StoreAuthFailed as exc:
            if not store_auth_final():
                raise  # the runtime refetches the MongoDB secret and runs the request again
            return _envelope(503, exc.code, exc.message, exc.details)
        # Tell the caller which memory identity served the request (a service account's user_id is ignored).
        user = acting_user(principal_from_event(event, svc.settings.tenant_default))
        if user and isinstance(response, dict):
            response.setdefault("headers", {})[USER_HEADER] = user
        return response


def _envelope(status: int, code: str, message: str, details: Any = None) -> dict[str, Any]:
    """A Lambda proxy response carrying the API's error envelope (for errors outside the resolver)."""
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"error": {"code": code, "message": message, "details": details}}, default=str),
        "isBase64Encoded": False,
    }
