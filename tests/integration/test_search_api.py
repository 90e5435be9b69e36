"""POST /v1/memories/search through the memory_api handler, on the embedded index and a real OpenSearch."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.models.common import Scope, utcnow
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from mongomem.vectors.opensearch import OpenSearchIndex
from tests import helpers
from tests.conftest import load_event, load_function

USER = "user-7"

AIRPORT = {"subject": "user", "attribute": "home airport", "value": "LIS"}
FOOD = {"subject": "user", "attribute": "favourite food", "value": "ramen noodles"}
EMPLOYER = {"subject": "user", "attribute": "employer", "value": "Acme Corp"}
TRIP = {
    "title": "Trip to Tokyo",
    "summary": "The user visited Tokyo in spring and ate ramen every day",
    "occurred_at": "2026-04-02",
}
BOOKING = {
    "name": "Book a flight",
    "when_to_use": "When the user asks to book a flight",
    "steps": ["Ask for the dates", "Search fares from the home airport", "Confirm the booking"],
}
SAUNA = {"term": "sauna", "definition": "A small room heated for hot-air bathing", "aliases": ["steam room"]}


def make_index(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if kind == "embedded":
        return EmbeddedIndex(tmp_path / "vectors")
    node = request.getfixturevalue("opensearch_node")
    index = OpenSearchIndex(node.url, f"t-search-{uuid.uuid4().hex[:10]}", engine="lucene", refresh=True)
    request.addfinalizer(index.drop)
    return index


@pytest.fixture(
    params=["embedded", pytest.param("opensearch", marks=pytest.mark.opensearch)],
)
def svc(request: pytest.FixtureRequest, make_settings: Any, tmp_path: Path) -> Iterator[Services]:
    cfg = parse_project_config({"memory": {"extraction": {"enabled": ["episodic"]}}})
    services = Services(
        make_settings(project=cfg, enabled_extractions=["episodic"]),
        llm=ScriptedLLM({}),
        embedder=HashingEmbedder(dim=256),
        vector_index=make_index(request.param, request, tmp_path),
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
    api: Any, ctx: Any, name: str, body: Any, tenant: str | None = None, fixed_user: str | None = None
) -> tuple[int, Any]:
    return helpers.call(api, ctx, name, body, tenant=tenant, fixed_user=fixed_user)


def remember(api: Any, ctx: Any, type_: str, payload: dict[str, Any], user: str = USER, **extra: Any) -> Any:
    status, body = call(
        api, ctx, "memory_create.json", {"user_id": user, "type": type_, "payload": payload, **extra}
    )
    assert status in (200, 201), body
    return body["memory"]


def search(
    api: Any, ctx: Any, query: str, user: str = USER, tenant: str | None = None, **options: Any
) -> Any:
    status, body = call(api, ctx, "memory_search.json", {"user_id": user, "query": query, **options}, tenant)
    assert status == 200, body
    return body["results"]


@pytest.fixture
def memories(svc: Services, api: Any, ctx: Any) -> dict[str, Any]:
    return {
        "airport": remember(api, ctx, "semantic", AIRPORT),
        "food": remember(api, ctx, "semantic", FOOD),
        "employer": remember(api, ctx, "semantic", EMPLOYER),
        "trip": remember(api, ctx, "episodic", TRIP),
        "booking": remember(api, ctx, "procedural", BOOKING),
        "sauna": remember(api, ctx, "taxonomic", SAUNA),
    }


def test_the_sample_event_searches(memories: dict[str, Any], api: Any, ctx: Any) -> None:
    # Given the sample event's user with a home airport fact, When it is sent unchanged
    status, body = call(api, ctx, "memory_search.json", load_event("memory_search.json")["body"])
    # Then the fact comes first, with the response shape the API documents
    assert status == 200
    assert body["results"][0]["memory_id"] == memories["airport"]["memory_id"]
    assert body["took_ms"] >= 0
    first = body["results"][0]
    assert set(first) >= {"memory_id", "lineage_id", "type", "payload", "text", "status", "version", "score"}
    assert set(first["signals"]) >= {"knn_rank", "knn_score", "bm25_rank", "bm25_score", "rrf"}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what is the user's home airport", "airport"),
        ("which food does the user like, ramen?", "food"),
        ("who is the user's employer", "employer"),
        ("the trip to Tokyo in spring", "trip"),
        ("how do I book a flight", "booking"),
        ("what does sauna mean", "sauna"),
    ],
)
@pytest.mark.parametrize("mode", ["hybrid", "knn", "bm25"])
def test_the_relevant_memory_ranks_first(
    memories: dict[str, Any], api: Any, ctx: Any, query: str, expected: str, mode: str
) -> None:
    results = search(api, ctx, query, mode=mode)
    assert results[0]["memory_id"] == memories[expected]["memory_id"], [r["text"] for r in results]
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    signals = results[0]["signals"]
    if mode == "hybrid":
        assert signals["rrf"] is not None and signals["knn_rank"] == 1 and signals["bm25_rank"] == 1
    elif mode == "knn":
        assert signals["rrf"] is None and signals["bm25_rank"] is None
        assert math.isclose(results[0]["score"], signals["knn_score"])
    else:
        assert signals["knn_rank"] is None and math.isclose(results[0]["score"], signals["bm25_score"])


def test_types_filter_returns_only_those_types(memories: dict[str, Any], api: Any, ctx: Any) -> None:
    # The query matches the airport fact best, but only procedures and episodes are asked for.
    results = search(api, ctx, "what is the user's home airport", types=["procedural", "episodic"])
    assert results and {r["type"] for r in results} <= {"procedural", "episodic"}
    assert results[0]["memory_id"] == memories["booking"]["memory_id"]


def test_top_k_limits_the_page(memories: dict[str, Any], api: Any, ctx: Any) -> None:
    assert len(search(api, ctx, "user", top_k=2)) == 2
    assert len(search(api, ctx, "user", top_k=100)) <= len(memories)


def test_superseded_versions_are_hidden_unless_asked_for(svc: Services, api: Any, ctx: Any) -> None:
    # Given a home airport that changed from LIS to OPO (UPDATE: version 2, version 1 superseded)
    old = remember(api, ctx, "semantic", AIRPORT)
    new = remember(api, ctx, "semantic", {**AIRPORT, "value": "OPO"})
    assert new["version"] == 2 and new["lineage_id"] == old["lineage_id"]
    # When searching for the old value by default, Then only the current version is found
    results = search(api, ctx, "home airport LIS")
    assert [r["memory_id"] for r in results] == [new["memory_id"]]
    # When history is asked for, Then the old version is found too, marked superseded, first for "LIS"
    results = search(api, ctx, "home airport LIS", include_superseded=True)
    assert [(r["memory_id"], r["status"], r["version"]) for r in results] == [
        (old["memory_id"], "superseded", 1),
        (new["memory_id"], "active", 2),
    ]


def test_deleted_memories_are_never_found(
    svc: Services, memories: dict[str, Any], api: Any, ctx: Any
) -> None:
    event = load_event("memory_delete.json")
    memory_id = memories["airport"]["memory_id"]
    event["rawPath"] = event["requestContext"]["http"]["path"] = f"/v1/memories/{memory_id}"
    event["pathParameters"] = {"memory_id": memory_id}
    assert api.lambda_handler(event, ctx)["statusCode"] == 200
    for include_superseded in (False, True):
        results = search(api, ctx, "user home airport: LIS", include_superseded=include_superseded)
        assert memory_id not in {r["memory_id"] for r in results}


def test_a_hit_mongodb_no_longer_holds_as_active_is_dropped(
    svc: Services, memories: dict[str, Any], api: Any, ctx: Any
) -> None:
    # Given a delete that reached MongoDB but not the index (a failed write-through, pending)
    airport = memories["airport"]
    svc.memory_store.delete_lineage(Scope(tenant="default", user_id=USER), airport["lineage_id"], utcnow())
    assert svc.vector_index is not None and svc.vector_index.count(tenant="default") == len(memories)
    # When searching for it, Then MongoDB (the source of truth) wins: the stale hit is not returned
    results = search(api, ctx, "user home airport: LIS")
    assert airport["memory_id"] not in {r["memory_id"] for r in results}
    assert len(results) == len(memories) - 1


def test_min_score_is_a_floor_on_similarity(memories: dict[str, Any], api: Any, ctx: Any) -> None:
    exact = "user home airport: LIS"
    results = search(api, ctx, exact, mode="knn", min_score=0.99)
    assert [r["memory_id"] for r in results] == [memories["airport"]["memory_id"]]
    assert results[0]["signals"]["knn_score"] == pytest.approx(1.0, abs=1e-4)
    floor = 0.2
    results = search(api, ctx, "what is the user's home airport", mode="knn", min_score=floor)
    assert results and all(r["signals"]["knn_score"] >= floor for r in results)
    assert len(results) < len(memories)
    assert search(api, ctx, "zebra quantum saxophone", mode="knn", min_score=0.9) == []


def test_reinforced_memories_get_a_logarithmic_boost(svc: Services, api: Any, ctx: Any) -> None:
    remember(api, ctx, "semantic", AIRPORT)
    again = remember(api, ctx, "semantic", AIRPORT)
    assert again["reinforcement_count"] == 2
    (result,) = search(api, ctx, "home airport", top_k=1)
    boost = 1 + 0.05 * math.log(2)
    assert result["signals"]["reinforcement_boost"] == pytest.approx(boost)
    assert result["score"] == pytest.approx(result["signals"]["rrf"] * boost)


def test_a_page_shows_the_memory_restated_most_among_close_ones(svc: Services, api: Any, ctx: Any) -> None:
    # Given the memory asked about, and a close one the user restated three more times
    asked = remember(api, ctx, "semantic", AIRPORT)
    restated = {**AIRPORT, "attribute": "work airport"}
    for _ in range(4):
        close = remember(api, ctx, "semantic", restated)
    assert close["reinforcement_count"] == 4 and close["memory_id"] != asked["memory_id"]
    # When a page of one is asked for, the reinforcement boost decides between the near-tie
    (first,) = search(api, ctx, "user home airport: LIS", top_k=1)
    (second, third) = search(api, ctx, "user home airport: LIS", top_k=2)
    # Then the page holds the memory restated most, as it ranks in the full ranking
    assert first["memory_id"] == close["memory_id"] == second["memory_id"]
    assert third["memory_id"] == asked["memory_id"]
    assert first["signals"]["rrf"] < third["signals"]["rrf"] and first["score"] > third["score"]


def test_other_users_and_tenants_memories_are_never_returned(svc: Services, api: Any, ctx: Any) -> None:
    # Given the same fact for two users of one tenant and for the same user id in another tenant
    mine = remember(api, ctx, "semantic", AIRPORT, user="alice")
    theirs = remember(api, ctx, "semantic", {**AIRPORT, "value": "JFK"}, user="bob")
    status, body = call(
        api,
        ctx,
        "memory_create.json",
        {"user_id": "alice", "type": "semantic", "payload": {**AIRPORT, "value": "SFO"}},
        tenant="other-co",
    )
    assert status == 201
    foreign = body["memory"]
    # When each searches with the other's exact text, Then each sees only their own memory
    for query in ("user home airport: JFK", "user home airport: SFO", "home airport"):
        for mode in ("hybrid", "knn", "bm25"):
            assert {r["memory_id"] for r in search(api, ctx, query, user="alice", mode=mode)} == {
                mine["memory_id"]
            }
    assert {r["memory_id"] for r in search(api, ctx, "user home airport: LIS", user="bob")} == {
        theirs["memory_id"]
    }
    other = search(api, ctx, "user home airport: LIS", user="alice", tenant="other-co")
    assert {r["memory_id"] for r in other} == {foreign["memory_id"]}
    assert search(api, ctx, "home airport", user="nobody") == []


def test_a_service_account_searches_only_its_own_memory(svc: Services, api: Any, ctx: Any) -> None:
    # Given a service account whose memory identity is "agent-1", and a user "bob" of the same tenant
    mine = remember(api, ctx, "semantic", AIRPORT, user="agent-1")
    remember(api, ctx, "semantic", {**AIRPORT, "value": "JFK"}, user="bob")
    # When it searches naming bob, Then the user_id is ignored: it sees its own memory only
    for user in ("bob", "agent-1"):
        status, body = call(
            api,
            ctx,
            "memory_search.json",
            {"user_id": user, "query": "user home airport: JFK"},
            tenant="default",
            fixed_user="agent-1",
        )
        assert status == 200 and [r["memory_id"] for r in body["results"]] == [mine["memory_id"]]


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"user_id": USER}, 422),
        ({"user_id": USER, "query": ""}, 422),
        ({"user_id": USER, "query": "   "}, 422),
        ({"user_id": USER, "query": "x" * 2001}, 422),
        ({"user_id": USER, "query": "airport", "top_k": 0}, 422),
        ({"user_id": USER, "query": "airport", "top_k": 101}, 422),
        ({"user_id": USER, "query": "airport", "types": ["gossip"]}, 422),
        ({"user_id": USER, "query": "airport", "types": []}, 422),
        ({"user_id": USER, "query": "airport", "mode": "fuzzy"}, 422),
        ({"user_id": USER, "query": "airport", "min_score": "high"}, 422),
        ({"user_id": USER, "query": "airport", "include_superseded": "maybe"}, 422),
        ({"user_id": USER, "query": "airport", "filters": {"status": "deleted"}}, 422),
        ({"user_id": {"$gt": ""}, "query": "airport"}, 422),
        ({"query": "airport"}, 400),
        ("{not json", 400),
    ],
    ids=[
        "no-query",
        "empty-query",
        "blank-query",
        "long-query",
        "top-k-0",
        "top-k-101",
        "unknown-type",
        "empty-types",
        "unknown-mode",
        "text-min-score",
        "text-bool",
        "unknown-field",
        "operator-user",
        "no-user",
        "malformed",
    ],
)
def test_bad_searches_get_a_4xx_json_error_and_write_nothing(
    svc: Services, memories: dict[str, Any], api: Any, ctx: Any, body: Any, status: int
) -> None:
    before = list(svc.memory_store.coll.find({}, {"vector": 0}).sort("_id"))
    got, answer = call(api, ctx, "memory_search.json", body)
    assert got == status, answer
    assert set(answer) == {"error"} and set(answer["error"]) == {"code", "message", "details"}
    assert list(svc.memory_store.coll.find({}, {"vector": 0}).sort("_id")) == before
    assert svc.vector_index is not None and svc.vector_index.count() == len(memories)


def test_without_a_vector_index_search_answers_503(make_settings: Any, api: Any, ctx: Any) -> None:
    services = Services(
        make_settings(),
        llm=ScriptedLLM({}),
        embedder=HashingEmbedder(dim=64),
        queue_factory=local_queue_factory,
    )
    configure(services)
    try:
        status, body = call(api, ctx, "memory_search.json", {"user_id": USER, "query": "airport"})
    finally:
        configure(None)
        services.database.drop()
    assert status == 503 and body["error"]["code"] == "index_unavailable"
