"""Issue 33 finding 10: the working-memory schema's `pattern` / `patternProperties` ran on Python's
backtracking `re`; a common email-like pattern and a 27-character value held the memory API for 8 s.

Every pattern user data meets now runs on RE2 (linear time), or the config that declares it is refused.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from mongomem.errors import ConfigError
from mongomem.local.stack import LocalStack
from mongomem.workingmemory.config import parse_working_memory_config
from tests.helpers import local_stack

# Nested quantifiers: Python's `re` tries 2^n ways to split n letters before it gives up.
CATASTROPHIC = r"^([a-zA-Z0-9_.-]+)*@example\.com$"
CONFIG = f"""
memory:
  extraction: {{enabled: []}}
  providers:
    llm: {{kind: offline}}
    embeddings: {{kind: hashing, dim: 64}}
  working_memory:
    scope: resource
    schema:
      type: object
      properties:
        email: {{type: string, pattern: '{CATASTROPHIC}'}}
        tags:
          type: object
          patternProperties:
            '^(x+x+)+y$': {{type: string}}
          additionalProperties: false
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    yield from local_stack(tmp_path_factory, "patterns", CONFIG, scan_seconds=60, poll_seconds=0.2)


def http(stack: LocalStack, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{stack.url}{path}", data=data, method=method)
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


@pytest.mark.parametrize(
    "data",
    [
        {"email": "a" * 24 + "!"},  # the value pattern
        {"tags": {"x" * 24: "v"}},  # a property name against patternProperties (and additionalProperties)
    ],
    ids=["pattern", "patternProperties"],
)
def test_a_catastrophic_pattern_answers_fast_and_holds_nothing(stack: LocalStack, data: Any) -> None:
    # Given a warm memory API (a cold start is not what is measured) and a valid write
    good = {"email": "ana.b@example.com", "tags": {"xxy": "v"}}
    assert http(stack, "PUT", "/v1/working-memory?user_id=pat", {"data": good})[0] == 200
    # and a status call made while the hostile write is validated
    waited: list[float] = []

    def status_call() -> None:
        time.sleep(0.05)
        started = time.perf_counter()
        http(stack, "GET", "/v1/status")
        waited.append(time.perf_counter() - started)

    side = threading.Thread(target=status_call)
    side.start()
    started = time.perf_counter()
    status, body = http(stack, "PUT", "/v1/working-memory?user_id=pat", {"data": data})
    took = time.perf_counter() - started
    side.join(timeout=60)
    # Then the write is refused in linear time (Python's `re` took ~3 s on 2c77ce7 and doubled per letter)
    assert status == 422 and body["error"]["code"] == "working_memory_invalid", body
    assert took < 1.0, f"validation took {took:.2f}s"
    assert waited and waited[0] < 2.0
    # and the stored working memory is still the valid one
    status, stored = http(stack, "GET", "/v1/working-memory?user_id=pat")
    assert status == 200 and stored["data"] == good


@pytest.mark.parametrize(
    ("schema", "named"),
    [
        ({"type": "object", "properties": {"a": {"type": "string", "pattern": r"(a)\1"}}}, "pattern"),
        ({"type": "object", "patternProperties": {r"^(?=x)": {}}}, "patternProperties"),
        (
            {"type": "object", "patternProperties": {"^x": {}}, "unevaluatedProperties": False},
            "unevaluatedProperties",
        ),
    ],
)
def test_a_pattern_re2_cannot_run_is_refused_at_config_load(schema: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_working_memory_config({"schema": schema})
    assert named in str(refused.value)
