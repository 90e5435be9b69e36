"""MongoDB stays the source of truth when OpenSearch dies mid-burst; index_sync brings the index back in step.

Runs on its own OpenSearch node (killed and restarted here), never on the session's shared one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.models.common import utcnow
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.runtime import Services, configure
from mongomem.vectors.opensearch import OpenSearchIndex
from mongomem.vectors.port import IndexDoc, IndexUnavailable, SearchQuery
from tests import helpers
from tests.conftest import load_event, load_function, start_opensearch

pytestmark = pytest.mark.opensearch

USERS = ["ana", "ben", "chloe"]
WRITES = 60
KILL_AT = 25
WORDS = (
    "amber birch cedar dune ember fjord glacier harbor iris juniper kelp lagoon meadow nectar "
    "orchid pebble quartz reef saffron tundra umber violet willow yarrow zephyr basalt coral delta"
).split()


@pytest.fixture
def node(tmp_path: Path) -> Iterator[Any]:
    node = start_opensearch(tmp_path / "opensearch")
    yield node
    node.stop()


@pytest.fixture
def svc(node: Any, make_settings: Any) -> Iterator[Services]:
    cfg = parse_project_config({"memory": {"extraction": {"enabled": ["episodic"]}}})
    index = OpenSearchIndex(node.url, "consistency", engine="lucene", refresh=True)
    services = Services(
        make_settings(project=cfg, enabled_extractions=["episodic"]),
        llm=ScriptedLLM({}),
        embedder=HashingEmbedder(dim=64),
        vector_index=index,
        queue_factory=local_queue_factory,
    )
    configure(services)
    yield services
    configure(None)
    services.database.drop()


@pytest.fixture(scope="module")
def api() -> Any:
    return load_function("memory_api")


def call(
    api: Any, ctx: Any, name: str, body: Any = None, memory_id: str | None = None, user: str | None = None
) -> tuple[int, Any]:
    if memory_id is None:
        return helpers.call(api, ctx, name, body)
    path, parameters = f"/v1/memories/{memory_id}", {"memory_id": memory_id}
    return helpers.call(
        api, ctx, name, body, path=path, path_parameters=parameters, query={"user_id": user or ""}
    )


def fact(i: int) -> dict[str, Any]:
    """The i-th write: a distinct fact, except every tenth write, which changes the fact written 5 before."""
    n = i - 5 if i % 10 == 9 else i
    attribute = f"{WORDS[n % len(WORDS)]} {WORDS[(n // len(WORDS) + 7) % len(WORDS)]} note{n}"
    value = f"{WORDS[(3 * i + 1) % len(WORDS)]} value{i}"
    return {
        "user_id": USERS[n % len(USERS)],
        "type": "semantic",
        "payload": {"subject": "user", "attribute": attribute, "value": value},
    }


def indexed(index: OpenSearchIndex, user: str) -> dict[str, str]:
    """Every document the index holds for `user`, as id -> status, read straight from OpenSearch."""
    body = {"size": 1000, "_source": ["status"], "query": {"bool": {"filter": [{"term": {"user_id": user}}]}}}
    hits = index.client.search(index=index.index_name, body=body)["hits"]["hits"]
    return {h["_id"]: h["_source"]["status"] for h in hits}


def test_writes_survive_an_index_outage_and_index_sync_restores_consistency(
    svc: Services, node: Any, api: Any, ctx: Any
) -> None:
    index = svc.vector_index
    assert isinstance(index, OpenSearchIndex)
    coll = svc.memory_store.coll
    deleted_lineages: list[str] = []
    states: Counter[tuple[bool, str]] = Counter()

    # Given a burst of writes (with updates and deletes) during which the OpenSearch node is killed
    for i in range(WRITES):
        if i == KILL_AT:
            node.kill()
        status, body = call(api, ctx, "memory_create.json", fact(i))
        assert status in (200, 201), body  # MongoDB took it: the API does not fail with the index
        memory = body["memory"]
        states[(i >= KILL_AT, memory["index_state"])] += 1
        if i % 10 == 9:
            assert body["decision"] == "UPDATE"
        if i % 12 == 11:  # delete now and then, before and during the outage
            status, gone = call(
                api, ctx, "memory_delete.json", memory_id=memory["memory_id"], user=fact(i)["user_id"]
            )
            assert status == 200, gone
            deleted_lineages.append(gone["lineage_id"])
    assert states == {(False, "indexed"): KILL_AT, (True, "pending"): WRITES - KILL_AT}

    # While the node is down, every driver error reaches callers as IndexUnavailable (503 on search)
    assert not index.ping()
    with pytest.raises(IndexUnavailable):
        index.count(user_id=USERS[0])
    with pytest.raises(IndexUnavailable):
        index.search(SearchQuery("default", USERS[0], "memory", "amber", [1.0] * 64))
    with pytest.raises(IndexUnavailable):
        index.upsert([IndexDoc("x", "default", USERS[0], "memory", "amber", [1.0] * 64)])
    status, body = call(api, ctx, "memory_search.json", {"user_id": USERS[0], "query": "amber"})
    assert status == 503 and body["error"]["code"] == "index_unavailable"
    assert coll.count_documents({"index_state": "pending"}) > 0

    # When the node is back and the index_sync schedule fires (a minute later: pending is older than 30 s)
    node.restart()
    coll.update_many({"index_state": "pending"}, {"$set": {"updated_at": utcnow() - timedelta(minutes=1)}})
    result = load_function("index_sync").lambda_handler(load_event("index_sync_schedule.json"), ctx)

    # Then nothing is pending and the index holds exactly MongoDB's non-deleted versions, with their status
    assert result["synced"] > 0
    assert coll.count_documents({"index_state": "pending"}) == 0
    deleted = list(coll.find({"status": "deleted"}, {"vector": 0}))
    assert {d["lineage_id"] for d in deleted} == set(deleted_lineages) and len(deleted_lineages) == 5
    for user in USERS:
        docs = list(coll.find({"tenant": "default", "user_id": user}, {"vector": 0}))
        expected = {d["_id"]: d["status"] for d in docs if d["status"] != "deleted"}
        assert indexed(index, user) == expected
        assert index.count(tenant="default", user_id=user) == len(expected)
        active = [d for d in docs if d["status"] == "active"]
        assert sum(s == "active" for s in expected.values()) == len(active) > 10

        # every active memory is found by its own text, exactly once, and no lineage shows twice
        for doc in active:
            status, body = call(api, ctx, "memory_search.json", {"user_id": user, "query": doc["text"]})
            assert status == 200, body
            ids = [r["memory_id"] for r in body["results"]]
            assert ids[0] == doc["_id"] and ids.count(doc["_id"]) == 1
            lineages = [r["lineage_id"] for r in body["results"]]
            assert len(lineages) == len(set(lineages))
            assert all(r["status"] == "active" for r in body["results"])

        # and no deleted memory is ever found, not even with history
        for doc in (d for d in docs if d["status"] == "deleted"):
            status, body = call(
                api,
                ctx,
                "memory_search.json",
                {"user_id": user, "query": doc["text"], "include_superseded": True},
            )
            assert status == 200 and doc["_id"] not in {r["memory_id"] for r in body["results"]}
