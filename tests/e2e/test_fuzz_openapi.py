"""Property-based fuzzing of the whole OpenAPI document against the local stack (schemathesis).

Every operation gets generated requests (valid and invalid); no answer may be a 5xx, use a status the
spec does not list, or carry a body that does not match the documented schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.result import Ok

from mongomem.identity.service import create_key
from mongomem.local.stack import LocalStack
from tests.integration.hostile import extreme_datetimes

# Every `date-time` field of the document also gets date-times at the ends of the calendar, most of which
# leave years 1-9999 once normalised to UTC (issue 11): they must be 4xx, never a 500.
schemathesis.openapi.format(
    "date-time", st.one_of(st.datetimes().map(lambda d: d.isoformat() + "Z"), extreme_datetimes())
)

EXAMPLES_PER_OPERATION = 40
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


_SPEC: dict[str, Any] = {}


def api_spec(stack: LocalStack | None = None) -> dict[str, Any]:
    """The document the stack serves at /v1/openapi.json (public, like Swagger UI), fetched once."""
    if not _SPEC:
        import urllib.request

        assert stack is not None
        with urllib.request.urlopen(stack.url + "/v1/openapi.json", timeout=30) as resp:
            _SPEC.update(json.loads(resp.read()))
    return _SPEC


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    config = tmp_path_factory.mktemp("cfg") / "project-config.yaml"
    config.write_text(
        "memory:\n  extraction: {enabled: []}\n  providers: {embeddings: {kind: hashing, dim: 64}}\n"
    )
    stack = LocalStack(
        data_dir=tmp_path_factory.mktemp("fuzz"), port=0, scan_seconds=3600, config_file=config
    )
    stack.start()
    yield stack
    stack.stop()


def fuzz(stack: LocalStack, key: str, examples: int) -> dict[str, Any]:
    """Run every operation's strategy; return the counts and the failures (without shrinking)."""
    schema = schemathesis.openapi.from_dict(api_spec(stack))
    report: dict[str, Any] = {"examples": 0, "server_errors": 0, "failures": [], "statuses": {}}
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), result  # every operation of our own document loads
        operation = result.ok()

        @settings(
            max_examples=examples,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def run(case: Any) -> None:
            response = case.call(base_url=stack.url, headers={"x-api-key": key}, timeout=30)
            report["examples"] += 1
            report["statuses"][response.status_code] = report["statuses"].get(response.status_code, 0) + 1
            if response.status_code >= 500:
                report["server_errors"] += 1
            try:
                case.validate_response(response, checks=CHECKS)
            except Exception as exc:  # a check failed: keep it, do not let hypothesis shrink for minutes
                report["failures"].append(
                    f"{case.operation.label}: {str(exc)[:600]}\n  request: {case.as_curl_command()}"
                )

        run()
    return report


def test_no_5xx_and_no_response_outside_the_spec(stack: LocalStack, tmp_path: Path) -> None:
    keys = stack.keys
    # a service account (every request has a memory scope, so requests reach the stores) and a memory
    # service (user_id must be named: exercises the 400s)
    runs = [
        fuzz(stack, create_key(keys, "fuzz", "service_account", "fuzzer")[0], EXAMPLES_PER_OPERATION),
        fuzz(stack, create_key(keys, "fuzz", "memory_service")[0], EXAMPLES_PER_OPERATION // 2),
    ]
    examples = sum(r["examples"] for r in runs)
    server_errors = sum(r["server_errors"] for r in runs)
    failures = [f for r in runs for f in r["failures"]]
    statuses: dict[int, int] = {}
    for r in runs:
        for code, n in r["statuses"].items():
            statuses[code] = statuses.get(code, 0) + n
    print(
        f"\nfuzz: {examples} examples, {server_errors} 5xx, {len(failures)} spec violations, statuses {statuses}"
    )
    (tmp_path / "fuzz.json").write_text(json.dumps(runs, indent=1))
    assert server_errors == 0 and not failures, "\n\n".join(failures[:10])
    assert examples >= 10 * len(api_spec(stack)["paths"])


def test_oversized_bodies_are_refused_before_parsing(stack: LocalStack) -> None:
    import urllib.error
    import urllib.request

    key, _ = create_key(stack.keys, "fuzz", "memory_service")
    for size in (5 * 1024 * 1024,):  # over the function's 4 MiB limit, under API Gateway's 10 MiB
        body = b'{"user_id": "u", "query": "' + b"x" * size + b'"}'
        request = urllib.request.Request(
            stack.url + "/v1/memories/search", data=body, method="POST", headers={"x-api-key": key}
        )
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(request, timeout=30)
        assert err.value.code == 413 and json.loads(err.value.read())["error"]["code"] == "payload_too_large"


def test_without_a_key_everything_is_401_json(stack: LocalStack) -> None:
    import urllib.error
    import urllib.request

    # the document and Swagger UI are public, like the template's `Authorizer: NONE` routes
    assert urllib.request.urlopen(stack.url + "/v1/docs", timeout=30).status == 200
    for path in api_spec(stack)["paths"]:
        url = stack.url + path.replace("{", "x").replace("}", "")
        try:
            urllib.request.urlopen(urllib.request.Request(url, method="GET"), timeout=10)
            raise AssertionError(f"{path} answered without a key")
        except urllib.error.HTTPError as err:
            assert err.code in (401, 404, 405), path  # 404: no GET on that path; never data
            if err.code == 401:
                assert json.loads(err.read())["error"]["code"] == "unauthorized"


def test_success_answers_match_the_spec_too(stack: LocalStack) -> None:
    """Valid requests (which random data rarely produces) answer with documented statuses and bodies."""
    key, _ = create_key(stack.keys, "fuzz", "memory_service")
    schema = schemathesis.openapi.from_dict(api_spec(stack))
    fact = {
        "user_id": "ana",
        "type": "semantic",
        "payload": {"subject": "ana", "attribute": "city", "value": "Porto"},
    }
    turns = {"user_id": "ana", "client_token": "t-1", "turns": [{"role": "user", "content": "hi"}]}
    cases = [
        ("POST", "/v1/memories", {}, {}, fact),  # ADD: 201
        ("POST", "/v1/memories", {}, {}, fact),  # REINFORCE: 200
        ("POST", "/v1/sessions/{session_id}/turns", {"session_id": "s1"}, {}, turns),  # 201
        ("POST", "/v1/sessions/{session_id}/turns", {"session_id": "s1"}, {}, turns),  # replay: 200
        ("GET", "/v1/sessions/{session_id}", {"session_id": "s1"}, {"user_id": "ana"}, None),
        ("POST", "/v1/sessions/{session_id}/flush", {"session_id": "s1"}, {"user_id": "ana"}, None),
        ("POST", "/v1/memories/search", {}, {}, {"user_id": "ana", "query": "city"}),
        ("GET", "/v1/working-memory/tool", {}, {"user_id": "ana"}, None),
        ("DELETE", "/v1/users/{user_id}", {"user_id": "ana"}, {}, None),
    ]
    statuses = []
    for method, path, path_parameters, query, body in cases:
        operation = schema[path][method]
        kwargs: dict[str, Any] = {"path_parameters": path_parameters, "query": query}
        if body is not None:
            kwargs["body"] = body
            kwargs["media_type"] = "application/json"
        case = operation.Case(**kwargs)
        response = case.call(base_url=stack.url, headers={"x-api-key": key}, timeout=30)
        statuses.append(response.status_code)
        case.validate_response(response, checks=CHECKS)
    assert statuses[:4] == [201, 200, 201, 200]


def test_issue_22_answers_match_the_spec(stack: LocalStack) -> None:
    """The trust-boundary answers (202 proposals, 403 refusals, the refused imports and tool calls) are
    documented statuses with documented bodies, and none is a 5xx."""
    service, _ = create_key(stack.keys, "fuzz22", "memory_service")
    ana, _ = create_key(stack.keys, "fuzz22", "service_account", user_id="ana")
    mal, _ = create_key(stack.keys, "fuzz22", "service_account", user_id="mal")
    schema = schemathesis.openapi.from_dict(api_spec(stack))
    term = {"type": "taxonomic", "payload": {"term": "SLO", "definition": "service level objective"}}
    other = {"type": "taxonomic", "payload": {"term": "SLO", "definition": "a sales lead opportunity"}}
    shared = {
        "type": "semantic",
        "visibility": "org",
        "payload": {"subject": "user", "attribute": "boss", "value": "mal"},
    }
    blank = {
        "user_id": "ana",
        "turns": [{"session_id": "i1", "role": "user", "content": " ", "timestamp": "2024-01-01T00:00:00Z"}],
    }
    cases = [
        (ana, "POST", "/v1/memories", {}, term, 201),
        (mal, "POST", "/v1/memories", {}, other, 202),
        (mal, "POST", "/v1/memories", {}, shared, 403),
        (service, "POST", "/v1/import", {}, blank, 400),
        (service, "POST", "/v1/working-memory/tool", {"user_id": "ana"}, {"memory": None}, 422),
        (service, "GET", "/v1/memories", {"user_id": "ana", "metadata": '{"k": Infinity}'}, None, 400),
    ]
    for key, method, path, query, body, expected in cases:
        kwargs: dict[str, Any] = {"query": query}
        if body is not None:
            kwargs.update(body=body, media_type="application/json")
        case = schema[path][method].Case(**kwargs)
        response = case.call(base_url=stack.url, headers={"x-api-key": key}, timeout=30)
        assert response.status_code == expected, (path, response.text[:300])
        case.validate_response(response, checks=CHECKS)
