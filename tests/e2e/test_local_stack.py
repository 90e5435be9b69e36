"""The local stack over HTTP, as a user drives it: record, read, promote on schedule, extract, restart."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from mongomem.local.stack import LocalStack


def http(method: str, url: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def wait_for(predicate: Any, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("condition not reached in time")


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "project-config.yaml"
    path.write_text(
        "memory:\n  snapshot: {max_messages: 4, idle_seconds: 1}\n  extraction: {enabled: [semantic]}\n"
    )
    return path


def start(data_dir: Path, config_file: Path) -> LocalStack:
    return LocalStack(
        data_dir=data_dir, port=0, scan_seconds=0.3, poll_seconds=0.2, config_file=config_file
    ).start()


def test_record_promote_extract_and_survive_a_restart(tmp_path: Path, config_file: Path) -> None:
    data = tmp_path / "data"
    stack = start(data, config_file)
    try:
        base = stack.url
        turns = [
            {"role": "user", "content": "My name is Ana and I live in Porto."},
            {"role": "assistant", "content": "Nice to meet you, Ana."},
        ]
        status, body = http("POST", f"{base}/v1/sessions/chat-1/turns", {"user_id": "ana", "turns": turns})
        assert status == 201 and [t["seq"] for t in body["turns"]] == [1, 2]
        status, page = http("GET", f"{base}/v1/sessions/chat-1/turns?user_id=ana")
        assert [t["content"] for t in page["turns"]] == [t["content"] for t in turns]
        # the schedule promotes the idle session and the queue poller runs the extraction handler
        state = wait_for(
            lambda: (
                (s := http("GET", f"{base}/v1/sessions/chat-1?user_id=ana")[1])["snapshots"]
                and s["snapshots"][0]["extraction"]["semantic"]["status"] in {"done", "skipped"}
                and s
            )
        )
        assert state["unpromoted_count"] == 0 and state["snapshots"][0]["reason"] == "idle"
        # bad input over HTTP: a clear JSON error
        status, err = http("POST", f"{base}/v1/sessions/chat-1/turns", raw=b"{not json")
        assert status == 400 and err["error"]["code"] == "invalid_json"
        status, err = http("GET", f"{base}/v1/nowhere")
        assert status == 404 and err["error"]["code"] == "route_not_found"
    finally:
        stack.stop()
    # a restart on the same data folder loses nothing
    again = start(data, config_file)
    try:
        status, state = http("GET", f"{again.url}/v1/sessions/chat-1?user_id=ana")
        assert status == 200 and state["turn_count"] == 2 and len(state["snapshots"]) == 1
    finally:
        again.stop()


def test_size_based_promotion_happens_within_one_scan_tick(tmp_path: Path, config_file: Path) -> None:
    stack = start(tmp_path / "data", config_file)
    try:
        turns = [{"role": "user", "content": f"fact number {i}"} for i in range(4)]
        http("POST", f"{stack.url}/v1/sessions/long/turns", {"user_id": "bo", "turns": turns})
        started = time.monotonic()
        state = wait_for(
            lambda: (s := http("GET", f"{stack.url}/v1/sessions/long?user_id=bo")[1])["snapshots"] and s,
            timeout=5,
        )
        assert state["snapshots"][0]["reason"] == "size"
        assert time.monotonic() - started < 1.0 + stack.scan_seconds
    finally:
        stack.stop()
