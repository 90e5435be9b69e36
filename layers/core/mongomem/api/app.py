"""The resolver: routers, validation, error mapping and the body guard."""

from __future__ import annotations

import json
from contextvars import ContextVar
from functools import partial
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.shared.json_encoder import Encoder

from mongomem.api.body import BodyRefused, read_json
from mongomem.api.errors import error_body, install_error_handlers, status_of
from mongomem.api.identity import SERVICES, USER_HEADER, acting_user_of, begin_request
from mongomem.budget import API_BUDGET_SECONDS, request_budget
from mongomem.errors import StoreAuthFailed
from mongomem.runtime import store_auth_final

if TYPE_CHECKING:
    from mongomem.runtime import Services

_UNSET: Any = object()
# The body the guard read for the request being served; Powertools' JSON deserializer returns it.
_parsed: ContextVar[Any] = ContextVar("mongomem_parsed_body", default=_UNSET)


def _error(status: int, code: str, message: str, details: Any = None) -> dict[str, Any]:
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": error_body(code, message, details),
        "isBase64Encoded": False,
    }


# Bodies keep non-ASCII characters as they are (Powertools escapes them by default: a CJK character's
# 3 bytes become 6, then 7 in Lambda's response): mongomem.wire budgets what is really sent.
_serialize = partial(json.dumps, separators=(",", ":"), cls=Encoder, ensure_ascii=False)


def _deserialize(text: str) -> Any:
    value = _parsed.get()
    if value is _UNSET:  # not through MemoryApi.handle (never in the functions): read it the same way
        try:
            return read_json({"body": text})
        except BodyRefused as refused:  # Powertools answers this as invalid JSON (400)
            raise json.JSONDecodeError(refused.message, text, 0) from None
    return value


class MemoryApi:
    """An APIGatewayHttpResolver with our routers; `handle` refuses bad bodies before any route runs.

    The body guard (mongomem.api.body) refuses what cannot be stored faithfully (oversized, not UTF-8,
    too deeply nested, numbers outside 64-bit, NaN/Infinity, lone surrogates) and parses the rest once.
    """

    def __init__(self, *routers: APIGatewayHttpRouter) -> None:
        self.app = APIGatewayHttpResolver(
            enable_validation=True, json_body_deserializer=_deserialize, serializer=_serialize
        )
        install_error_handlers(self.app)
        self.routers = routers
        for router in routers:
            self.app.include_router(router)

    def handle(self, event: dict[str, Any], context: Any, svc: Services) -> dict[str, Any]:
        """Serve one API Gateway event with these services (routes read them: api.identity.services_of)."""
        body = event.get("body") or ""
        limit = svc.settings.memory.limits.max_body_bytes
        # base64 grows the body by 4/3; compare the decoded size without decoding
        size = (
            len(body) * 3 // 4 if event.get("isBase64Encoded") else len(body.encode("utf-8", "surrogatepass"))
        )
        if size > limit:
            return _error(
                413,
                "payload_too_large",
                f"the request body is larger than {limit} bytes",
                {"max_body_bytes": limit},
            )
        try:
            parsed = read_json(event)
        except BodyRefused as refused:
            return _error(refused.status, refused.code, refused.message, refused.details)
        if body:
            # The API speaks JSON only: a body sent without a JSON content type (curl -d) is read as JSON.
            headers = event.setdefault("headers", {})
            ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
            if "json" not in ctype.lower():
                for key in [k for k in headers if k.lower() == "content-type"]:
                    del headers[key]
                headers["content-type"] = "application/json"
        begin_request()
        # A router belongs to the resolver that included it last; more than one MemoryApi may hold the
        # same module-level routers (functions loaded twice in one process): this one serves now.
        for router in self.routers:
            router.api_resolver = self.app
        # Powertools' own request context: the routes find the services there, it is cleared after resolve.
        self.app.append_context(**{SERVICES: svc})
        token = _parsed.set(parsed)
        left = (
            context.get_remaining_time_in_millis() / 1000
            if hasattr(context, "get_remaining_time_in_millis")
            else None
        )
        budget = API_BUDGET_SECONDS if left is None else min(API_BUDGET_SECONDS, left - 2.0)
        try:
            with request_budget(budget):
                response = self.app.resolve(event, context)
        except StoreAuthFailed as exc:
            if not store_auth_final():
                raise  # the runtime refetches the MongoDB secret and runs the request again
            return _error(status_of(exc), exc.code, exc.message, exc.details)
        finally:
            _parsed.reset(token)
        # Tell the caller which memory identity served the request (a service account's user_id is ignored).
        user = acting_user_of(event, svc.settings)
        if user and isinstance(response, dict):
            response.setdefault("headers", {})[USER_HEADER] = user
        return response
