"""Every error a client sees has the shape {"error": {"code", "message", "details"}}."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from pydantic import ValidationError

from mongomem.errors import (
    Conflict,
    ExtractionFailed,
    Forbidden,
    InvalidInput,
    MongomemError,
    NotFound,
    PayloadTooLarge,
    StoreAuthFailed,
    Unauthorized,
    Unavailable,
    Unprocessable,
)
from mongomem.kindnames import KIND_NAME_PATTERN
from mongomem.models.common import ID_PATTERN, ID_RULE
from mongomem.observability import logger

# The one place a domain error becomes an HTTP status: the first class the error is an instance of
# (most specific first); any other MongomemError is a 500. Domain errors know nothing of HTTP.
HTTP_STATUS: tuple[tuple[type[MongomemError], int], ...] = (
    (Unprocessable, 422),
    (InvalidInput, 400),
    (PayloadTooLarge, 413),
    (Unauthorized, 401),
    (Forbidden, 403),
    (NotFound, 404),
    (Conflict, 409),
    (ExtractionFailed, 502),
    (Unavailable, 503),
)


def status_of(exc: MongomemError) -> int:
    return next((status for kind, status in HTTP_STATUS if isinstance(exc, kind)), 500)


def error_body(code: str, message: str, details: Any = None) -> str:
    """The body of every error a client sees: {"error": {"code", "message", "details"}}."""
    return json.dumps({"error": {"code": code, "message": message, "details": details}}, default=str)


DOCS_HINT = "/v1/docs"


def not_found_response(method: str, path: str) -> Response[Any]:
    """404 for a path no route serves, pointing at the API's documentation."""
    return error_response(
        404,
        "route_not_found",
        f"no route {method} {path}: the routes are listed at {DOCS_HINT} (Swagger UI) and /v1/openapi.json",
        {"method": method, "path": path, "docs": DOCS_HINT},
    )


def error_response(
    status: int, code: str, message: str, details: Any = None, headers: dict[str, str] | None = None
) -> Response[Any]:
    return Response(
        status_code=status,
        content_type="application/json",
        body=error_body(code, message, details),
        headers=headers or {},
    )


# Patterns a client meets in paths and ids, in words: "String should match pattern '^[A-Za-z0-9...'" says
# what the parser wanted, not what the user should send.
PATTERN_WORDS = {
    ID_PATTERN: f"an identifier: {ID_RULE}",
    r"^mem-[a-f0-9]{24}$": "a memory id: mem- and 24 hex digits, as the API returns it (e.g. from a search)",
    r"^snap-[a-f0-9]{24}$": "a snapshot id: snap- and 24 hex digits, as the API returns it",
    KIND_NAME_PATTERN: "a memory kind: lower-case letters, digits and _ (semantic, episodic, ... or a custom type)",
}


def _message(err: Any) -> str:
    message = str(err.get("msg", "invalid"))
    if err.get("type") == "string_pattern_mismatch":
        words = PATTERN_WORDS.get(str((err.get("ctx") or {}).get("pattern")))
        if words:
            given = err.get("input")
            shown = (
                f" (got {given[:40]!r}{'...' if len(given) > 40 else ''})" if isinstance(given, str) else ""
            )
            return f"must be {words}{shown}"
    return message


def _validation_details(exc: RequestValidationError) -> list[dict[str, Any]]:
    details = []
    for err in exc.errors():
        loc = [str(p) for p in err.get("loc", ())]
        if loc and loc[0] == "body":
            loc = loc[1:]
            # the body parameter's own name is noise for a client
            if loc and loc[0] == "request":
                loc = loc[1:]
        details.append({"path": ".".join(loc) or "(body)", "message": _message(err), "type": err.get("type")})
    return details


def _other_methods(app: APIGatewayHttpResolver, method: str, path: str) -> list[str]:
    """The methods the function serves `path` with, when the request's method is not one of them."""
    routes = app._static_routes + app._dynamic_routes  # Powertools' route table (pinned version)
    allowed = sorted({r.method for r in routes if r.method != method and r.rule.match(path)})
    return [m for m in allowed if m != "OPTIONS"]


def install_error_handlers(app: APIGatewayHttpResolver) -> None:
    @app.exception_handler(RequestValidationError)
    def _invalid(exc: RequestValidationError) -> Response[Any]:
        details = _validation_details(exc)
        if any(d["type"] == "json_invalid" for d in details):
            return error_response(400, "invalid_json", "the request body is not valid JSON")
        return error_response(422, "validation_error", "the request does not match the schema", details)

    @app.exception_handler(ValidationError)
    def _invalid_inside(exc: ValidationError) -> Response[Any]:
        return failure_response(exc)

    @app.exception_handler(StoreAuthFailed)
    def _auth_failed(exc: StoreAuthFailed) -> Response[Any]:
        raise exc  # the runtime retries with a refetched secret, then answers 503

    # the providers' errors (mongomem.ports) load with the first request, not with the record function
    from mongomem.ports import EmbeddingError, LLMError  # lazy: 1.8 ms

    @app.exception_handler(EmbeddingError)
    @app.exception_handler(LLMError)
    @app.exception_handler(MongomemError)
    def _domain(exc: Exception) -> Response[Any]:
        return failure_response(exc)

    @app.not_found
    def _not_found(exc: NotFoundError) -> Response[Any]:
        event = app.current_event
        method, path = event.http_method.upper(), event.path
        allowed = _other_methods(app, method, path)
        if allowed:
            return error_response(
                405,
                "method_not_allowed",
                f"{method} is not allowed on {path}: use {' or '.join(allowed)}",
                {"method": method, "path": path, "allowed": allowed, "docs": DOCS_HINT},
                headers={"Allow": ", ".join(allowed)},
            )
        return not_found_response(method, path)

    @app.exception_handler(Exception)
    def _unexpected(exc: Exception) -> Response[Any]:
        return failure_response(exc)


def failure_response(exc: Exception) -> Response[Any]:
    """What a route's failure answers (the resolver's handlers and the record fast path share it); a
    MongoDB authentication failure is not one: it goes to the runtime, which retries."""
    from mongomem.ports import EmbeddingError, LLMError  # lazy: 1.8 ms

    if isinstance(exc, EmbeddingError | LLMError):
        # a model provider that failed after its retries, or did not answer within the request's budget
        logger.warning("provider unavailable", extra={"error": str(exc)[:500]})
        return error_response(
            503,
            "provider_unavailable",
            "the model provider did not answer in time; retry",
            {"retry_after_seconds": 2},
            {"Retry-After": "2"},
        )
    if isinstance(exc, ValidationError):
        return _model_refusal(exc)
    if isinstance(exc, MongomemError):
        headers = {}
        if isinstance(exc, Unavailable):
            headers["Retry-After"] = "2"
            logger.warning("dependency unavailable", extra={"error": exc.code})
        return error_response(status_of(exc), exc.code, exc.message, exc.details, headers)
    logger.exception("unhandled error")
    return error_response(500, "internal_error", "an internal error occurred; it has been logged")


def _model_refusal(exc: ValidationError) -> Response[Any]:
    # a model built inside a route (a tool call's arguments, an import's turns) refused its input:
    # the caller's mistake, answered like the resolver's own validation (never the value itself)
    details = [
        {
            "path": ".".join(str(p) for p in err.get("loc", ())) or "(body)",
            "message": err.get("msg", "invalid"),
            "type": err.get("type"),
        }
        for err in exc.errors(include_url=False, include_input=False, include_context=False)
    ]
    logger.warning("request refused by a model", extra={"model": exc.title, "errors": len(details)})
    return error_response(422, "validation_error", "the request does not match the schema", details)
