"""memory.snapshot.delete_promoted: a snapshot's turns (and their recall index entries) are deleted as soon
as every enabled kind has extracted it, instead of expiring ttl_days later.

Through the record, scan, extract and memory_api handlers, with the offline extractor, on SecantusDB and
the embedded index (and the OpenSearch node).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.config import parse_project_config
from mongomem.local.queue import LocalQueue, QueuePolicy, local_queue_factory
from mongomem.local.worker import drain, drain_all
from mongomem.models.common import Scope
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.runtime import Services
from mongomem.vectors.embedded import EmbeddedIndex
from tests import helpers
from tests.conftest import load_event, load_function
from tests.helpers import EXTRACT_QUEUES

ANA = Scope(tenant="default", user_id="ana")
TURNS = [
    {"role": "user", "content": "I moved to Porto last month and I work as a nurse."},
    {"role": "assistant", "content": "Porto is lovely. How do you like the hospital?"},
    {"role": "user", "content": "I love it, and my favourite food there is francesinha."},
    {"role": "assistant", "content": "Francesinha is a Porto classic."},
]


def build(make_settings: Any, index: Any, delete_promoted: bool) -> Services:
    project = parse_project_config(
        {
            "memory": {
                "extraction": {"enabled": ["semantic", "episodic"]},
                "snapshot": {"delete_promoted": delete_promoted, "idle_seconds": 3600},
                "providers": {"llm": {"kind": "offline"}},
            }
        }
    )
    return Services(
        make_settings(project=project, enabled_extractions=["semantic", "episodic"]),
        embedder=HashingEmbedder(dim=64),
        vector_index=index,
        queue_factory=local_queue_factory,
    )


@pytest.fixture(params=["embedded", pytest.param("opensearch", marks=pytest.mark.opensearch)])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "opensearch":
        from mongomem.vectors.opensearch import OpenSearchIndex

        node = request.getfixturevalue("opensearch_node")
        made: Any = OpenSearchIndex(node.url, f"t-del-{uuid.uuid4().hex[:8]}", engine="lucene", refresh=True)
        yield made
        made.drop()
    else:
        yield EmbeddedIndex(tmp_path / "v")


@pytest.fixture(scope="module")
def fns() -> dict[str, Any]:
    return {n: load_function(n) for n in ("record_turns", "scan_sessions", "extract", "memory_api")}


def http(fns: dict[str, Any], ctx: Any, method: str, target: str, body: Any = None) -> tuple[int, Any]:
    fn = fns["record_turns"] if target.startswith("/v1/sessions") else fns["memory_api"]
    return helpers.invoke(fn, ctx, helpers.http_event(method, target, body, "default"))


def scan(fns: dict[str, Any], ctx: Any) -> dict[str, Any]:
    result: dict[str, Any] = fns["scan_sessions"].lambda_handler(load_event("scan_schedule.json"), ctx)
    return result


def promoted_and_indexed(fns: dict[str, Any], ctx: Any) -> None:
    """Ana's four turns recorded and flushed into a snapshot, one more recorded after, all indexed."""
    assert http(fns, ctx, "POST", "/v1/sessions/s1/turns", {"user_id": "ana", "turns": TURNS})[0] == 201
    assert http(fns, ctx, "POST", "/v1/sessions/s1/flush?user_id=ana")[0] == 200
    later = {"user_id": "ana", "role": "user", "content": "Francesinha again tonight, with friends."}
    assert http(fns, ctx, "POST", "/v1/sessions/s1/turns", later)[0] == 201
    assert scan(fns, ctx)["recall"]["turns"] == 5


def test_extracted_turns_and_their_recall_entries_go_once_every_kind_is_done(
    make_settings: Any, index: Any, fns: dict[str, Any], ctx: Any
) -> None:
    svc = build(make_settings, index, delete_promoted=True)
    with helpers.installed(svc):
        promoted_and_indexed(fns, ctx)
        assert index.count(kind="turn") == 10
        queue, policy = LocalQueue(svc.db), QueuePolicy(visibility_timeout=0.0)
        # When only one of the two kinds has extracted the snapshot, its turns are kept
        drain(queue, "extract-semantic", fns["extract"].lambda_handler, policy)  # the first kind only
        assert svc.db["turns"].count_documents({"session_id": "s1"}) == 5
        # When the second kind is done too
        drain_all(queue, EXTRACT_QUEUES, fns["extract"].lambda_handler, policy)  # it passed the snapshot on
        # Then the snapshot's turns are deleted at once (no expiry date), with their recall index entries
        left = list(svc.db["turns"].find({"session_id": "s1"}))
        assert [d["seq"] for d in left] == [5] and "expire_at" not in left[0]
        assert index.count(kind="turn") == 2
        status, body = http(fns, ctx, "POST", "/v1/recall", {"user_id": "ana", "query": "francesinha Porto"})
        assert status == 200 and body["turn_ids"] == ["s1:5"]
        # while what was extracted from them stays, and the session goes on
        status, memories = http(fns, ctx, "GET", "/v1/memories?user_id=ana")
        assert status == 200 and memories["memories"], "the offline extractor found nothing to keep"
        (snapshot,) = svc.snapshots.of_session(ANA, "s1")
        assert {k: v.status for k, v in snapshot.extraction.items()} == {
            "semantic": "done",
            "episodic": "done",
        }
        status, page = http(fns, ctx, "GET", "/v1/sessions/s1/turns?user_id=ana")
        assert status == 200 and [t["seq"] for t in page["turns"]] == [5]
        # A redelivered message changes nothing
        snap_id = snapshot.snapshot_id
        from mongomem.erasure import delete_after_extraction

        assert delete_after_extraction(svc.snapshots, svc.turns, svc.forget_turns, snap_id) == 0


def test_without_it_extracted_turns_only_start_their_ttl(
    make_settings: Any, tmp_path: Path, fns: dict[str, Any], ctx: Any
) -> None:
    svc = build(make_settings, EmbeddedIndex(tmp_path / "v2"), delete_promoted=False)
    with helpers.installed(svc):
        promoted_and_indexed(fns, ctx)
        queue, policy = LocalQueue(svc.db), QueuePolicy(visibility_timeout=0.0)
        drain_all(queue, EXTRACT_QUEUES, fns["extract"].lambda_handler, policy)
        assert svc.db["turns"].count_documents({"session_id": "s1"}) == 5
        assert svc.db["turns"].count_documents({"expire_at": {"$exists": True}}) == 4
