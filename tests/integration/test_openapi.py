"""The OpenAPI document comes from the routes' own pydantic models and is served with Swagger UI."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import uuid
from typing import Any

from mongomem.api.app import MemoryApi
from mongomem.api.docs import enable_docs, openapi_document
from mongomem.api.sessions import routes as sessions_routes
from mongomem.api.status import routes as status_routes
from tests.conftest import load_event


def schema_of(doc: dict[str, Any], ref_holder: dict[str, Any]) -> dict[str, Any]:
    ref = ref_holder["content"]["application/json"]["schema"]["$ref"]
    return dict(doc["components"]["schemas"][ref.rsplit("/", 1)[1]])


def test_document_covers_both_functions_routes_with_request_schemas() -> None:
    doc = openapi_document()
    assert doc["openapi"].startswith("3.")
    # the record path (record_turns function) and the memories path (memory_api function) are both there
    post_turns = doc["paths"]["/v1/sessions/{session_id}/turns"]["post"]
    turns_request = schema_of(doc, post_turns["requestBody"])
    assert {"turns", "client_token", "user_id"} <= set(turns_request["properties"])
    assert any(p["name"] == "session_id" and p["in"] == "path" for p in post_turns["parameters"])
    assert "get" in doc["paths"]["/v1/sessions/{session_id}/turns"]
    create = schema_of(doc, doc["paths"]["/v1/memories"]["post"]["requestBody"])
    assert {"type", "payload", "reconcile"} <= set(create["properties"]) and "payload" in create["required"]
    listed = {p["name"] for p in doc["paths"]["/v1/memories"]["get"]["parameters"]}
    assert {"user_id", "type", "status", "limit", "cursor"} <= listed
    assert "TurnIn" in doc["components"]["schemas"] and "WorkingMemoryState" in doc["components"]["schemas"]
    # the docs routes themselves are not part of the API's contract
    assert "/v1/openapi.json" not in doc["paths"] and "/v1/docs" not in doc["paths"]


def test_building_the_document_leaves_a_serving_api_serving(services: Any, ctx: Any) -> None:
    # Given an API that served a request with its services
    api = MemoryApi[Any](sessions_routes)
    event = load_event("record_turn_single.json")
    event["rawPath"] = event["requestContext"]["http"]["path"] = (
        f"/v1/sessions/doc-{uuid.uuid4().hex[:12]}/turns"
    )
    assert api.handle(json.loads(json.dumps(event)), ctx, services)["statusCode"] == 201
    # When the whole API's document is built (every route module's routes, without services)
    openapi_document(version="test-binding")
    # Then the API still serves with its own services
    again = api.handle(json.loads(json.dumps(event)), ctx, services)
    assert again["statusCode"] == 201 and json.loads(again["body"])["turns"][0]["seq"] == 2


def get(api: MemoryApi[Any], path: str, ctx: Any, svc: Any) -> dict[str, Any]:
    event = load_event("memory_list.json")
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["routeKey"] = event["requestContext"]["routeKey"] = f"GET {path}"
    event.pop("queryStringParameters", None)
    event["rawQueryString"] = ""
    return api.handle(event, ctx, svc)


def test_enable_docs_serves_the_document_and_swagger_ui(services: Any, ctx: Any) -> None:
    api = MemoryApi[Any](status_routes)
    enable_docs(api)
    spec = get(api, "/v1/openapi.json", ctx, services)
    assert spec["statusCode"] == 200 and "json" in spec["headers"]["Content-Type"]
    assert "/v1/memories" in json.loads(spec["body"])["paths"]
    page = get(api, "/v1/docs", ctx, services)
    assert page["statusCode"] == 200 and page["headers"]["Content-Type"].startswith("text/html")
    assert "SwaggerUIBundle" in page["body"] and "/v1/sessions/{session_id}/turns" in page["body"]


def test_swagger_ui_runs_only_its_own_scripts_and_cannot_be_framed(services: Any, ctx: Any) -> None:
    # Given the docs page as API Gateway serves it
    api = MemoryApi[Any](status_routes)
    enable_docs(api)
    page = get(api, "/v1/docs", ctx, services)
    headers = {k.lower(): v for k, v in page["headers"].items()}
    # Then it may not be framed (clickjacking) and runs no script but its own inline ones, by hash
    csp = dict(part.strip().split(" ", 1) for part in headers["content-security-policy"].split(";"))
    assert csp["frame-ancestors"] == "'none'" and headers["x-frame-options"] == "DENY"
    assert csp["default-src"] == "'none'" and csp["object-src"] == "'none'" and csp["base-uri"] == "'none'"
    scripts = re.findall(r"<script>(.*?)</script>", page["body"], re.DOTALL)
    assert len(scripts) == 2
    allowed = set(csp["script-src"].split())
    assert "'unsafe-inline'" not in allowed and "'unsafe-eval'" not in allowed
    for body in scripts:
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in allowed
    assert headers["x-content-type-options"] == "nosniff"


def test_every_operation_documents_its_success_body_and_a_unique_operation_id() -> None:
    # A client generated from the document (sdk-ts) needs each route's answer type and a name for it.
    doc = openapi_document()
    seen: set[str] = set()
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            where = f"{method.upper()} {path}"
            assert operation.get("operationId") and operation["operationId"] not in seen, where
            seen.add(operation["operationId"])
            success = {code: r for code, r in operation["responses"].items() if code.startswith("2")}
            assert success, f"{where} documents no success response"
            for code, response in success.items():
                assert "schema" in response.get("content", {}).get("application/json", {}), f"{where} {code}"


def test_each_kind_publishes_its_payload_schema() -> None:
    """Issue 25: the document said `payload: object`; payload fields were documented in prose only."""
    import jsonschema

    doc = openapi_document()
    schemas = doc["components"]["schemas"]
    expected = {
        "SemanticPayload": {"subject", "attribute", "value"},
        "EpisodicPayload": {"title", "summary"},
        "ProceduralPayload": {"name", "when_to_use", "steps"},
        "TaxonomicPayload": {"term", "definition"},
        "PreferencePayload": {"category", "preference"},
    }
    for name, required in expected.items():
        assert set(schemas[name]["required"]) == required, name
        assert "evidence_seqs" not in schemas[name]["properties"]  # an extraction detail, never stored
    for holder in ("CreateMemoryRequest", "MemoryOut"):
        refs = {
            r.get("$ref", "").rsplit("/", 1)[-1] for r in schemas[holder]["properties"]["payload"]["anyOf"]
        }
        assert set(expected) <= refs, holder
    # the README's semantic fact and org term validate against their kinds' schemas; a broken one does not
    resolver = {"components": doc["components"]}

    def valid(kind: str, payload: dict[str, Any]) -> bool:
        schema = {**schemas[kind], **resolver}
        try:
            jsonschema.validate(payload, schema)
            return True
        except jsonschema.ValidationError:
            return False

    assert valid("SemanticPayload", {"subject": "user", "attribute": "home airport", "value": "LIS"})
    assert valid("TaxonomicPayload", {"term": "MTTR", "definition": "mean time to recovery", "domain": "ops"})
    assert not valid("SemanticPayload", {"subject": "user", "value": "LIS"})
    assert valid("ProceduralPayload", {"name": "p", "when_to_use": "w", "steps": [{"action": "a"}]})
