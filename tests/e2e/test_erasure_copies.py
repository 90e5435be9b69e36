"""Issue 33: erasure leaves no copy on the local stack, and expired memories are gone from every read.

Through the HTTP API of a local stack that keeps its data in a data dir (SecantusDB on WiredTiger files,
the embedded vector index in SQLite), as an operator would check it: after `DELETE /v1/users/{u}` no
file of the data dir holds anything the user said, and no other user's request log shows it.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from mongomem.local.stack import LocalStack
from mongomem.models.common import utcnow
from tests.helpers import local_stack

CONFIG = """
memory:
  snapshot: {max_messages: 50, idle_seconds: 3600}
  extraction: {enabled: [semantic]}
  providers:
    llm: {kind: offline}
    embeddings: {kind: hashing, dim: 64}
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    yield from local_stack(tmp_path_factory, "erase", CONFIG, scan_seconds=60, poll_seconds=0.2)


def http(stack: LocalStack, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{stack.url}{path}", data=data, method=method)
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def files_holding(root: Path, needle: str) -> list[str]:
    """Every file under `root` whose bytes hold `needle` (UTF-8 or UTF-16, as SQLite may store text)."""
    forms = [needle.encode(), needle.encode("utf-16-le")]
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if any(form in data for form in forms):
            found.append(str(path.relative_to(root)))
    return found


def test_an_expired_memory_is_gone_from_every_read(stack: LocalStack) -> None:
    """Finding 9: GET /v1/memories and /v1/memories/{id} served an expired memory as active until the TTL
    monitor deleted it (~60-85 s later)."""
    user = f"exp-{uuid.uuid4().hex[:8]}"
    expires = (utcnow() + timedelta(seconds=2)).isoformat()
    payload = {"subject": "user", "attribute": "parking spot", "value": "P3 level 2"}
    status, written = http(
        stack,
        "POST",
        "/v1/memories",
        {"user_id": user, "type": "semantic", "payload": payload, "expires_at": expires},
    )
    assert status == 201, written
    memory_id = written["memory"]["memory_id"]
    kept = {"subject": "user", "attribute": "car", "value": "a blue hatchback"}
    assert (
        http(stack, "POST", "/v1/memories", {"user_id": user, "type": "semantic", "payload": kept})[0] == 201
    )
    status, listed = http(stack, "GET", f"/v1/memories?user_id={user}")
    assert memory_id in [m["memory_id"] for m in listed["memories"]]
    time.sleep(2.5)
    # once expired, no read shows it, whether or not MongoDB's TTL monitor has deleted it yet
    status, listed = http(stack, "GET", f"/v1/memories?user_id={user}")
    assert status == 200 and [m["payload"]["attribute"] for m in listed["memories"]] == ["car"]
    status, listed = http(stack, "GET", f"/v1/memories?user_id={user}&status=active&type=semantic")
    assert memory_id not in [m["memory_id"] for m in listed["memories"]]
    assert http(stack, "GET", f"/v1/memories/{memory_id}?user_id={user}")[0] == 404
    assert http(stack, "GET", f"/v1/memories/{memory_id}?user_id={user}&history=true")[0] == 404
    status, found = http(stack, "POST", "/v1/memories/search", {"user_id": user, "query": "parking spot"})
    assert status == 200 and memory_id not in [r["memory_id"] for r in found["results"]]
