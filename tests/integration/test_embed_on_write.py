"""memory.recall.embed_on_write: turns become recallable within seconds of being recorded.

The record call itself never embeds (a turn recorded while no scan runs stays queued); the scan
invocation follows recording, indexing new turns every poll (docs/adr/0008-embed-on-write-memory-recall-embed-on-write.md).
Through the record, scan and memory_api handlers on SecantusDB and the embedded index, and through the
SDK against the local stack (`make dev`).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.client import MemoryClient
from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.local.stack import LocalStack
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.runtime import Services
from mongomem.vectors.embedded import EmbeddedIndex
from tests import helpers
from tests.conftest import load_event, load_function

RECALL = {"embed_on_write": True, "embed_on_write_poll_seconds": 0.3, "embed_on_write_seconds": 10}


@pytest.fixture
def svc(make_settings: Any, tmp_path: Path) -> Iterator[Services]:
    project = parse_project_config({"memory": {"extraction": {"enabled": []}, "recall": RECALL}})
    services = Services(
        make_settings(project=project, enabled_extractions=[]),
        embedder=HashingEmbedder(dim=64),
        vector_index=EmbeddedIndex(tmp_path / "v"),
        queue_factory=local_queue_factory,
    )
    with helpers.installed(services):
        yield services


@pytest.fixture(scope="module")
def fns() -> dict[str, Any]:
    return {n: load_function(n) for n in ("record_turns", "scan_sessions", "memory_api")}


def http(fns: dict[str, Any], ctx: Any, method: str, target: str, body: Any = None) -> tuple[int, Any]:
    fn = fns["record_turns"] if target.startswith("/v1/sessions") else fns["memory_api"]
    return helpers.invoke(fn, ctx, helpers.http_event(method, target, body, "default"))


def recalled(fns: dict[str, Any], ctx: Any, query: str) -> list[str]:
    status, body = http(
        fns, ctx, "POST", "/v1/recall", {"user_id": "ana", "query": query, "message_range": 0}
    )
    assert status == 200, body
    return list(body["matched"])


def test_recording_alone_embeds_nothing(svc: Services, fns: dict[str, Any], ctx: Any) -> None:
    turn = {"user_id": "ana", "role": "user", "content": "My cello lesson moved to Thursday."}
    assert http(fns, ctx, "POST", "/v1/sessions/s1/turns", turn)[0] == 201
    # the record call returned: the turn is only queued for the indexer, nothing is in the index
    assert svc.db["turns"].find_one({"session_id": "s1"})["recall_indexed"] is False
    assert svc.vector_index is not None and svc.vector_index.count(kind="turn") == 0
    assert recalled(fns, ctx, "cello lesson Thursday") == []


def test_a_turn_is_recallable_within_seconds_while_the_scan_follows(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given the scheduled scan invocation running (it follows recording for embed_on_write_seconds)
    report: dict[str, Any] = {}
    scan = threading.Thread(
        target=lambda: report.update(
            fns["scan_sessions"].lambda_handler(load_event("scan_schedule.json"), ctx)
        )
    )
    scan.start()
    try:
        time.sleep(1.0)  # its first pass is over: what follows was recorded after it
        # When a turn is recorded
        turn = {"user_id": "ana", "role": "user", "content": "The plumber comes on Friday at noon."}
        assert http(fns, ctx, "POST", "/v1/sessions/s1/turns", turn)[0] == 201
        recorded = time.monotonic()
        # Then recall finds it within seconds, long before the next scheduled scan
        while not recalled(fns, ctx, "plumber Friday noon"):
            assert time.monotonic() - recorded < 5, "not recallable within 5 s"
            time.sleep(0.1)
        took = time.monotonic() - recorded
    finally:
        scan.join(timeout=30)
    assert took < 3
    # and the invocation ended within its window, having polled
    assert not scan.is_alive() and report["follow_passes"] >= 3 and report["recall"]["turns"] == 1
    print(f"\nembed on write: recallable {took:.2f} s after recording (poll 0.3 s)")


def test_make_dev_makes_turns_recallable_within_seconds(mongo_server: Any, tmp_path: Path) -> None:
    config = tmp_path / "project-config.yaml"
    config.write_text(
        "memory:\n"
        "  extraction: {enabled: []}\n"
        "  providers: {llm: {kind: offline}, embeddings: {kind: hashing, dim: 64}}\n"
        "  recall: {embed_on_write: true, embed_on_write_poll_seconds: 0.5}\n"
    )
    stack = LocalStack(
        data_dir=tmp_path / "data",
        port=0,
        scan_seconds=5,
        mongodb_uri=mongo_server.uri,
        config_file=config,
        environ={"MONGOMEM_DB_NAME": f"eow_{uuid.uuid4().hex[:8]}"},
    )
    (tmp_path / "data").mkdir()
    stack.start()
    try:
        client = MemoryClient(stack.url, timeout=10)
        client.record_turn("s1", "ana", "user", "Our anniversary dinner is booked at Casa Lisboa.")
        recorded = time.monotonic()
        while not client.recall("ana", "anniversary dinner Casa Lisboa", message_range=0).matched:
            assert time.monotonic() - recorded < 8, "not recallable within 8 s"
            time.sleep(0.2)
        print(f"\nmake dev, embed on write: recallable {time.monotonic() - recorded:.2f} s after recording")
    finally:
        db = stack.services.db if stack.services else None
        started = time.monotonic()
        stack.stop()
        assert time.monotonic() - started < 15  # the following scan ends within one interval
        if db is not None:
            db.client.drop_database(db.name)
