"""The API surface is defined once: the SDK's methods, the MCP tools and the framework integrations'
tools take the API request models' fields (and the routes' path and query parameters), described as
the models describe them. A field added to a request model, or a query parameter added to a route,
fails here until every one of them offers it (or the exception below says why not)."""

from __future__ import annotations

import dataclasses
import inspect
import re
from functools import cache
from typing import Any

import pytest
from pydantic import Field, create_model

from mongomem import tools
from mongomem.api.docs import openapi_document
from mongomem.client._calls import Methods, Takes, endpoint
from mongomem.models.search import SearchRequest

# Route parameters an SDK method does not take, and SDK parameters that are no route parameter: why.
SDK_LEAVES_OUT = {
    ("update_working_memory", "readOnly"): "a write asked to be read-only is always refused",
    ("clear_working_memory", "readOnly"): "a write asked to be read-only is always refused",
    ("apply_working_memory_tool", "readOnly"): "a write asked to be read-only is always refused",
    ("working_memory_tool", "readOnly"): "the tool is for writing: read-only makes it useless",
}
SDK_OWN = {
    ("update_working_memory", "replace"): "PUT (replace) or PATCH (merge) of the same route",
    ("apply_working_memory_tool", "arguments"): "the body: the model's tool-call arguments as it made them",
}
# The wire name of a query parameter whose Python name differs.
WIRE = {"read_only": "readOnly"}
# Parameters a tool has that its route does not: why.
TOOL_OWN = {("update_working_memory", "replace"): "PUT (replace) instead of the update tool's merge"}
# Request-model fields a tool does not offer (mongomem.tools writes the reason beside each): a new one
# must be added here too, so leaving a field out is a decision someone reads, not an accident.
TOOL_LEAVES_OUT = {
    ("record_turn", "turns"),
    ("update_working_memory", "content"),
    ("update_working_memory", "data"),
}
# Dummy values for building a call (the route is read from it).
DUMMY = {"turns": [{"role": "user", "content": "x"}], "payload": {}, "arguments": {}, "outcome": "success"}


@cache
def paths() -> dict[str, Any]:
    paths: dict[str, Any] = openapi_document()["paths"]
    return paths


def endpoints() -> dict[str, endpoint[Any, Any]]:
    """Every SDK method that calls one route (`request` calls any)."""
    # `Methods` joins one class per API area: its endpoints are attributes, not all in its own __dict__
    found = {n: getattr(Methods, n) for n in dir(Methods)}
    return {n: e for n, e in found.items() if isinstance(e, endpoint) and n != "request"}


def route(name: str) -> tuple[str, dict[str, Any]]:
    """The OpenAPI operation the SDK method calls: (path template, operation)."""
    build = endpoints()[name].build
    required = [p for p in inspect.signature(build).parameters.values() if p.default is p.empty]
    call = build(**{p.name: DUMMY.get(p.name, "x") for p in required})
    for template, operations in paths().items():
        pattern = re.sub(r"\{[^}]+\}", "[^/]+", template)
        if re.fullmatch(pattern, call.path) and call.method.lower() in operations:
            return f"{call.method} {template}", operations[call.method.lower()]
    raise AssertionError(f"{name} calls {call.method} {call.path}, which the API does not serve")


def body_model(operation: dict[str, Any]) -> str | None:
    schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    return schema.get("$ref", "").rsplit("/", 1)[-1] or None


def route_parameters(operation: dict[str, Any]) -> dict[str, str | None]:
    """Path and query parameters: wire name -> description."""
    return {p["name"]: p.get("description") for p in operation.get("parameters", [])}


def sdk_mismatches(name: str, takes: Takes | None) -> dict[str, set[str]]:
    """How the SDK method's parameters differ from its route's fields and parameters (empty: none)."""
    _, operation = route(name)
    expected = {n for (method, n) in SDK_OWN if method == name}
    expected |= {n for n in route_parameters(operation) if (name, n) not in SDK_LEAVES_OUT}
    expected |= set(takes.fields()) if takes else set()
    have = {WIRE.get(p, p) for p in inspect.signature(endpoints()[name].build).parameters}
    model = body_model(operation)
    if model and (takes is None or model not in {m.__name__ for m in takes.models}):
        return {"body model not taken": {model}}
    return {k: v for k, v in {"missing": expected - have, "unknown": have - expected}.items() if v}


@pytest.mark.parametrize("name", sorted(endpoints()))
def test_each_sdk_method_takes_every_field_and_parameter_of_its_route(name: str) -> None:
    # Given the OpenAPI document of the API, When reading the method's signature,
    # Then it has every request-model field and route parameter, and nothing else
    takes = getattr(endpoints()[name].build, "takes", None)
    assert sdk_mismatches(name, takes) == {}
    # and its help text describes each model field as the model does
    for field, info in (takes.fields() if takes else {}).items():
        assert f"{field}: {info.description}" in (endpoints()[name].build.__doc__ or "")


def test_a_field_added_to_a_request_model_fails_until_the_sdk_takes_it() -> None:
    # Given SearchRequest with one more field
    wider = create_model(
        "SearchRequest", __base__=SearchRequest, new_filter=(str | None, Field(None, description="new"))
    )
    takes = endpoints()["search"].build.takes  # type: ignore[attr-defined]
    # When the search method is checked against it, Then the check names the field
    assert sdk_mismatches("search", dataclasses.replace(takes, models=(wider,))) == {
        "missing": {"new_filter"}
    }
    # and a tool over it offers the field, described as the model describes it (derived, not typed)
    spec = dataclasses.replace(tools.BY_NAME["search_memories"], models=(wider,))
    assert {p.name: p.description for p in spec.params()}["new_filter"] == "new"


def test_a_body_route_the_sdk_calls_without_its_model_fails() -> None:
    takes = endpoints()["create_memory"].build.takes  # type: ignore[attr-defined]
    assert sdk_mismatches("create_memory", dataclasses.replace(takes, models=())) == {
        "body model not taken": {"CreateMemoryRequest"}
    }


# -- the agent tools (the MCP server's and the integrations', mongomem.tools) -------------------------


def expected_tool_parameters(spec: tools.ToolSpec, fixed_user: bool) -> dict[str, str | None]:
    """name -> description the tool must have: its models' fields (as described there) but the ones it
    leaves out, its route's path parameters, its own query parameters (each one of the route's)."""
    _, operation = route(spec.method)
    route_names = set(route_parameters(operation))
    out: dict[str, str | None] = {}
    for model in spec.models:
        for name, info in model.model_fields.items():
            if name not in spec.leave_out:
                out.setdefault(name, info.description)
    for p in spec.path:
        assert p.name in route_names, f"{spec.name}.{p.name} is no path parameter of its route"
        out.setdefault(p.name, None)
    for own in spec.own:
        assert own.name in route_names or (spec.name, own.name) in TOOL_OWN, f"{spec.name}.{own.name}"
        out.setdefault(own.name, None)
    if fixed_user:
        out.pop(tools.USER, None)
    return out


@pytest.mark.parametrize("fixed_user", [False, True])
@pytest.mark.parametrize("spec", tools.TOOLS, ids=lambda s: s.name)
def test_each_tool_takes_its_request_models_fields_with_their_descriptions(
    spec: tools.ToolSpec, fixed_user: bool
) -> None:
    _, operation = route(spec.method)
    # a route with a request body: the tool's parameters come from that model
    model = body_model(operation)
    assert model is None or model in {m.__name__ for m in spec.models}
    # the path ids the route needs are all parameters of the tool
    path_ids = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
    assert path_ids <= {p.name for p in spec.path}
    expected = expected_tool_parameters(spec, fixed_user)
    params = {p.name: p for p in spec.params(fixed_user=fixed_user)}
    assert set(params) == set(expected)
    for name, description in expected.items():
        assert params[name].description, f"{spec.name}.{name} has no description"
        if description is not None:
            assert params[name].description == description, f"{spec.name}.{name}"
    # the arguments model (the input schema hosts give the model) builds, with those descriptions
    schema = tools.arguments_model(spec.name, params.values()).model_json_schema()
    assert {k: v["description"] for k, v in schema["properties"].items()} == {
        n: p.description for n, p in params.items()
    }


def test_tools_leave_out_only_the_documented_fields() -> None:
    left_out = {(spec.name, name) for spec in tools.TOOLS for name in spec.leave_out}
    assert left_out == TOOL_LEAVES_OUT
    assert all(reason for spec in tools.TOOLS for reason in spec.leave_out.values())
