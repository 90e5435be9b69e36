"""The running stack the issue-33 probe tests share: a local stack over HTTP with a tenant-wide
`memory_service` key and a one-user service-account key per user, and the call they make to it."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mongomem.identity.service import create_key
from mongomem.local.stack import LocalStack

TENANT = "acme"
CONFIG = """
memory:
  snapshot: {max_messages: 50, idle_seconds: 3600}
  extraction: {enabled: []}
  providers:
    llm: {kind: offline}
    embeddings: {kind: hashing, dim: 64}
"""


@dataclass
class Stack:
    running: LocalStack
    tenant: str  # a tenant-wide memory_service key
    users: dict[str, str]  # a one-user service-account key per user


def running_stack(root: Path, users: tuple[str, ...], config: str = CONFIG) -> Generator[Stack, None, None]:
    """A started stack under `root` (project config `config`) with the keys of `users`, stopped when the
    generator is closed."""
    (root / "project-config.yaml").write_text(config)
    running = LocalStack(
        data_dir=root / "data",
        port=0,
        config_file=root / "project-config.yaml",
        scan_seconds=60,
        poll_seconds=0.2,
    ).start()
    try:
        tenant = create_key(running.keys, TENANT, "memory_service")[0]
        keys = {u: create_key(running.keys, TENANT, "service_account", u)[0] for u in users}
        yield Stack(running, tenant, keys)
    finally:
        running.stop()


def api(stack: Stack, key: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json", "x-api-key": key}
    data = json.dumps(body, ensure_ascii=False).encode() if body is not None else None
    request = urllib.request.Request(stack.running.url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def seed(stack: Stack, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """An org memory written by the tenant key as it is (no reconciliation), for alice."""
    body = {"user_id": "alice", "type": kind, "payload": payload, "reconcile": False}
    status, written = api(stack, stack.tenant, "POST", "/v1/memories", body)
    assert (status, written["memory"]["visibility"]) == (201, "org"), written
    return dict(written["memory"])


def active_payload(stack: Stack, memory: dict[str, Any]) -> dict[str, Any]:
    """The payload of the active version of `memory`'s lineage, as another user (eve) reads it."""
    status, found = api(stack, stack.users["eve"], "GET", f"/v1/memories/{memory['memory_id']}?history=true")
    assert status == 200, found
    live = [v for v in [found["memory"], *found.get("history", [])] if v["status"] == "active"]
    return dict(live[0]["payload"])


def answering_stack(root: Path, users: tuple[str, ...], config: str = CONFIG) -> Iterator[Stack]:
    """`running_stack`, once the memory API answers (a first call on a loaded machine can be slow)."""
    for running in running_stack(root, users, config):
        deadline = time.monotonic() + 120
        while not _answers(running, users[0]):
            assert time.monotonic() < deadline, "the stack never answered"
            time.sleep(1.0)
        yield running


def _answers(stack: Stack, user: str) -> bool:
    try:
        return api(stack, stack.tenant, "GET", f"/v1/memories?user_id={user}")[0] == 200
    except OSError:  # a first call slower than the client's timeout
        return False


def call(stack: Stack, key: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """`api`, again after a 503 (the store too slow to answer on a loaded machine), a few times."""
    status, answer = api(stack, key, method, path, body)
    for _ in range(4):
        if status != 503:
            break
        time.sleep(2.0)
        status, answer = api(stack, key, method, path, body)
    return status, answer


def unique() -> str:
    """Six hex letters that make a test's names its own on a stack the module's tests share."""
    return uuid.uuid4().hex[:6]


def write(stack: Stack, key: str, kind: str, payload: dict[str, Any], **more: Any) -> tuple[int, Any]:
    """POST /v1/memories with `key`: (status, answer)."""
    return call(stack, key, "POST", "/v1/memories", {"type": kind, "payload": payload, **more})
