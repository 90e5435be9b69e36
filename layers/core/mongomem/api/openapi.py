"""One OpenAPI document for the whole API, merged from the functions' resolvers.

Powertools documents a 422 `HTTPValidationError` ({"detail": [...]}) for every route; our handlers answer
every error with {"error": {"code", "message", "details"}}. The merge documents that shape for every error
status the API returns, and the x-api-key header the authorizer requires.
"""

from __future__ import annotations

import copy
import json
from typing import Any

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
    "404": "No such route (the answer points at /v1/docs), or nothing with this id for this user",
    "405": "The route exists, not with this method: the Allow header lists its methods",
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
    _with_payload_schemas(schemas)
    text = json.dumps(spec["paths"])
    for unused in ("HTTPValidationError", "ValidationError", "ResponseValidationError"):
        if f"#/components/schemas/{unused}" not in text and unused in schemas:
            del schemas[unused]
    return spec


# The schemas whose `payload` is a memory kind's payload (which kind: the sibling `type`).
PAYLOAD_HOLDERS = ("CreateMemoryRequest", "MemoryOut")


def payload_schemas() -> dict[str, dict[str, Any]]:
    """`<Kind>Payload` per built-in kind: the fields a stored memory's payload holds (the extracted item
    without its evidence seqs), plus the models they refer to."""
    from mongomem.kinds.registry import builtin_registry  # lazy: 112.1 ms

    out: dict[str, dict[str, Any]] = {}
    for kind in builtin_registry():
        schema = kind.item.model_json_schema(ref_template="#/components/schemas/{model}")
        for name, sub in schema.pop("$defs", {}).items():
            out.setdefault(name, sub)
        schema.get("properties", {}).pop("evidence_seqs", None)
        schema["required"] = [r for r in schema.get("required", []) if r != "evidence_seqs"]
        schema["title"] = f"{kind.name.capitalize()}Payload"
        schema["description"] = f"The payload of a `{kind.name}` memory. " + (schema.get("description") or "")
        out[schema["title"]] = schema
    return out


def _with_payload_schemas(schemas: dict[str, Any]) -> None:
    """Publish each built-in kind's payload schema and point `payload` fields at them (a custom type's
    payload is its declared JSON Schema, so any object stays allowed)."""
    kinds = payload_schemas()
    for name, schema in kinds.items():
        schemas.setdefault(name, schema)
    refs = [{"$ref": f"#/components/schemas/{name}"} for name in kinds if name.endswith("Payload")]
    for holder in PAYLOAD_HOLDERS:
        field = schemas.get(holder, {}).get("properties", {}).get("payload")
        if field is None:
            continue
        described = field.get("description") or "the memory kind's fields"
        field.clear()
        field.update(
            {
                "description": f"{described}. The schema is the one of the kind named by `type`: a built-in "
                "kind's below, or a custom type's declared JSON Schema (memory.custom_types).",
                "anyOf": [*refs, {"type": "object", "title": "CustomTypePayload"}],
            }
        )


def _with_errors(operation: dict[str, Any]) -> dict[str, Any]:
    responses = operation.setdefault("responses", {})
    for status, description in ERROR_STATUSES.items():
        responses[status] = {
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
    return operation
