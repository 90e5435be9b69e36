"""One OpenAPI document for the whole API, merged from the functions' resolvers.

Powertools documents a 422 `HTTPValidationError` ({"detail": [...]}) for every route; our handlers answer
every error with {"error": {"code", "message", "details"}}. The merge documents that shape for every error
status the API returns, and the x-api-key header the authorizer requires.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "details": {}},
        }
    },
}

ERROR_STATUSES = {
    "400": "The request is malformed (bad JSON, a missing user_id, a broken limit)",
    "401": "Missing, invalid or revoked x-api-key",
    "403": "The principal may not do this",
    "404": "No such route, or nothing with this id for this user",
    "409": "Conflict (an id already used, a retry still in progress)",
    "413": "The body or a field is too large",
    "422": "The request does not match the schema",
    "503": "A store is unavailable; retry after the Retry-After header",
}


def with_error_responses(spec: dict[str, Any]) -> dict[str, Any]:
    """The document with our error body for every error status, and the x-api-key security scheme."""
    spec = copy.deepcopy(spec)
    components = spec.setdefault("components", {})
    components.setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    components.setdefault("securitySchemes", {})["apiKey"] = {
        "type": "apiKey",
        "in": "header",
        "name": "x-api-key",
    }
    spec["security"] = [{"apiKey": []}]
    for operations in spec.get("paths", {}).values():
        for method, operation in operations.items():
            operations[method] = _with_errors(operation)
    schemas = components["schemas"]
    text = json.dumps(spec["paths"])
    for unused in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        if f"#/components/schemas/{unused}" not in text and unused in schemas:
            del schemas[unused]
    return spec


def merged_openapi(
    *apps: APIGatewayHttpResolver, title: str = "mongomem", version: str = "1"
) -> dict[str, Any]:
    """The functions' resolvers' OpenAPI documents as one, with the error responses the API really sends."""
    merged: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": title, "version": version},
        "paths": {},
        "components": {"schemas": {}},
    }
    for app in apps:
        spec = json.loads(app.get_openapi_json_schema())
        for name, schema in (spec.get("components") or {}).get("schemas", {}).items():
            merged["components"]["schemas"].setdefault(name, schema)
        for path, operations in spec.get("paths", {}).items():
            merged["paths"].setdefault(path, {}).update(operations)
    return with_error_responses(merged)


def _with_errors(operation: dict[str, Any]) -> dict[str, Any]:
    responses = operation.setdefault("responses", {})
    for status, description in ERROR_STATUSES.items():
        responses[status] = {
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
    return operation
