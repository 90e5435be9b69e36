"""Memory scopes (private, agent, org), payload filters and erasure of org evidence, through the API
handlers on SecantusDB with the embedded index and a real OpenSearch node."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from mongomem.config import parse_project_config
from mongomem.local.queue import LocalQueue, QueuePolicy, local_queue_factory
from mongomem.local.worker import drain_all
from mongomem.models.memory import ORG_OWNER
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.offline.llm_offline import OfflineLLM
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from mongomem.vectors.opensearch import OpenSearchIndex
from tests import helpers
from tests.conftest import load_function
from tests.helpers import EXTRACT_QUEUES

KINDS = ["semantic", "taxonomic", "preference", "episodic", "procedural"]
MTTR = {"term": "MTTR", "definition": "mean time to recovery", "domain": "operations"}


def make_index(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if kind == "embedded":
        return EmbeddedIndex(tmp_path / "vectors")
    node = request.getfixturevalue("opensearch_node")
    index = OpenSearchIndex(node.url, f"t-scopes-{uuid.uuid4().hex[:10]}", engine="lucene", refresh=True)
    request.addfinalizer(index.drop)
    return index


def build(make_settings: Any, index: Any, **memory: Any) -> Services:
    cfg = parse_project_config(
        {
            "memory": {
                "extraction": {"enabled": KINDS, **memory.pop("extraction", {})},
                "metadata": {"partition_keys": ["region"]},
                "snapshot": {"max_messages": 50, "idle_seconds": 3600},
                **memory,
            }
        }
    )
    return Services(
        make_settings(project=cfg, enabled_extractions=KINDS),
        llm=OfflineLLM(),
        embedder=HashingEmbedder(dim=128),
        vector_index=index,
        queue_factory=local_queue_factory,
    )


@pytest.fixture(params=["embedded", pytest.param("opensearch", marks=pytest.mark.opensearch)])
def svc(request: pytest.FixtureRequest, make_settings: Any, tmp_path: Path) -> Iterator[Services]:
    with helpers.installed(build(make_settings, make_index(request.param, request, tmp_path))) as services:
        yield services


@pytest.fixture(scope="module")
def fns() -> dict[str, Any]:
    return {name: load_function(name) for name in ("record_turns", "memory_api", "extract")}


def call(
    fns: dict[str, Any],
    ctx: Any,
    method: str,
    path: str,
    body: Any = None,
    tenant: str = "acme",
    **query: Any,
) -> tuple[int, Any]:
    target = f"{path}?{urlencode({k: v for k, v in query.items() if v is not None})}" if query else path
    fn = fns["record_turns"] if path.startswith("/v1/sessions") and method == "POST" else fns["memory_api"]
    return helpers.invoke(fn, ctx, helpers.http_event(method, target, body, tenant))


def write(fns: dict[str, Any], ctx: Any, user: str, type_: str, payload: dict[str, Any], **extra: Any) -> Any:
    status, body = call(
        fns, ctx, "POST", "/v1/memories", {"user_id": user, "type": type_, "payload": payload, **extra}
    )
    assert status in (200, 201), body
    return body


def say(fns: dict[str, Any], ctx: Any, user: str, type_: str, payload: dict[str, Any]) -> tuple[int, Any]:
    """The user states a memory with their own one-user key (their words, not the tenant's)."""
    event = helpers.http_event(
        "POST", "/v1/memories", {"type": type_, "payload": payload}, "acme", fixed_user=user
    )
    return helpers.invoke(fns["memory_api"], ctx, event)


def search(fns: dict[str, Any], ctx: Any, user: str, query: str, tenant: str = "acme", **options: Any) -> Any:
    status, body = call(
        fns, ctx, "POST", "/v1/memories/search", {"user_id": user, "query": query, **options}, tenant
    )
    assert status == 200, body
    return body["results"]


def listed(fns: dict[str, Any], ctx: Any, user: str, **query: Any) -> list[dict[str, Any]]:
    status, body = call(fns, ctx, "GET", "/v1/memories", user_id=user, **query)
    assert status == 200, body
    return list(body["memories"])


# -- org memories ----------------------------------------------------------------------------------
def test_an_org_term_is_one_memory_two_users_reinforce_and_every_user_finds(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given ana states a term (taxonomic: org by default) and a private fact of her own
    first = write(fns, ctx, "ana", "taxonomic", MTTR)
    assert first["decision"] == "ADD" and first["memory"]["visibility"] == "org"
    write(fns, ctx, "ana", "semantic", {"subject": "user", "attribute": "on-call rota", "value": "week 12"})
    # When bob states the same term
    second = write(fns, ctx, "bob", "taxonomic", {**MTTR, "related_terms": ["MTBF"]})
    # Then it reinforces ana's memory: one memory, the evidence names both users
    assert second["decision"] == "REINFORCE"
    memory = second["memory"]
    assert memory["memory_id"] == first["memory"]["memory_id"]
    assert memory["reinforcement_count"] == 2
    # the evidence keeps both statements (MongoDB holds who said each), but bob's answer names only his
    stored = svc.db["memories"].find_one({"_id": memory["memory_id"]}) or {}
    assert [e["user_id"] for e in stored["evidence"]] == ["ana", "bob"]
    assert [e["user_id"] for e in memory["evidence"]] == [None, "bob"]
    assert memory["payload"]["related_terms"] == ["MTBF"]
    # ... and carol, who never said it, finds it in one search with her own memories, ranked together
    write(fns, ctx, "carol", "semantic", {"subject": "user", "attribute": "team", "value": "MTTR reduction"})
    results = search(fns, ctx, "carol", "MTTR")
    assert {r["visibility"] for r in results} == {"org", "private"}
    scopes = {r["memory_id"]: r["visibility"] for r in results}
    assert scopes[memory["memory_id"]] == "org"
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    # ... but never ana's private fact
    assert all("week 12" not in r["text"] for r in search(fns, ctx, "carol", "on-call rota week 12"))
    # and she can read the org memory by id and list it
    assert call(fns, ctx, "GET", f"/v1/memories/{memory['memory_id']}", user_id="carol")[0] == 200
    assert memory["memory_id"] in {m["memory_id"] for m in listed(fns, ctx, "carol", visibility="org")}
    assert all(m["visibility"] == "private" for m in listed(fns, ctx, "carol", visibility="private"))


def test_visibility_narrows_search_to_one_scope(svc: Services, fns: dict[str, Any], ctx: Any) -> None:
    org = write(fns, ctx, "ana", "taxonomic", MTTR)["memory"]["memory_id"]
    own = write(fns, ctx, "ana", "semantic", {"subject": "user", "attribute": "MTTR goal", "value": "1 hour"})
    own_id = own["memory"]["memory_id"]
    assert {r["memory_id"] for r in search(fns, ctx, "ana", "MTTR")} == {org, own_id}
    assert {r["memory_id"] for r in search(fns, ctx, "ana", "MTTR", visibility="org")} == {org}
    assert {r["memory_id"] for r in search(fns, ctx, "ana", "MTTR", visibility="private")} == {own_id}


def test_another_tenant_never_sees_org_memories(svc: Services, fns: dict[str, Any], ctx: Any) -> None:
    marker = f"ORG-{uuid.uuid4().hex[:8]}"
    write(fns, ctx, "ana", "taxonomic", {"term": marker, "definition": f"the {marker} runbook"})
    assert search(fns, ctx, "ana", marker, tenant="acme")
    for mode in ("hybrid", "bm25", "knn"):
        assert search(fns, ctx, "ana", marker, tenant="globex", mode=mode) == []
    status, body = call(fns, ctx, "GET", "/v1/memories", tenant="globex", user_id="ana")
    assert status == 200 and body["memories"] == []


def test_configured_visibility_makes_a_kind_org_wide(
    make_settings: Any, fns: dict[str, Any], ctx: Any, tmp_path: Path
) -> None:
    # Given a project that shares semantic facts across the tenant and keeps terms private
    services = build(
        make_settings,
        EmbeddedIndex(tmp_path / "v"),
        extraction={"semantic": {"visibility": "org"}, "taxonomic": {"visibility": "private"}},
    )
    with helpers.installed(services):
        fact = write(fns, ctx, "ana", "semantic", {"subject": "Acme", "attribute": "HQ", "value": "Porto"})
        term = write(fns, ctx, "ana", "taxonomic", MTTR)
        # Then the fact is org-wide and the term ana's own; a request may still choose per write
        assert fact["memory"]["visibility"] == "org" and term["memory"]["visibility"] == "private"
        assert [r["text"] for r in search(fns, ctx, "bob", "Acme HQ")] == ["Acme HQ: Porto"]
        assert search(fns, ctx, "bob", "MTTR mean time to recovery", types=["taxonomic"]) == []
        assert len(search(fns, ctx, "ana", "MTTR mean time to recovery", types=["taxonomic"])) == 1
        chosen = write(fns, ctx, "ana", "preference", {"category": "x", "preference": "y"}, visibility="org")
        assert chosen["memory"]["visibility"] == "org"


def test_memories_stored_before_scopes_read_as_private(svc: Services, fns: dict[str, Any], ctx: Any) -> None:
    # Given a memory document written by an older version (no visibility, agent_id or metadata field)
    mid = write(fns, ctx, "ana", "semantic", {"subject": "user", "attribute": "city", "value": "Porto"})
    memory_id = mid["memory"]["memory_id"]
    svc.db["memories"].update_one(
        {"_id": memory_id}, {"$unset": {"visibility": "", "agent_id": "", "metadata": ""}}
    )
    # Then it reads as the user's private memory, shared by the user's agents
    status, body = call(fns, ctx, "GET", f"/v1/memories/{memory_id}", user_id="ana")
    assert status == 200 and body["memory"]["visibility"] == "private" and body["memory"]["agent_id"] is None
    assert [r["memory_id"] for r in search(fns, ctx, "ana", "city Porto", agent_id="planner")] == [memory_id]
    assert call(fns, ctx, "GET", f"/v1/memories/{memory_id}", user_id="bob")[0] == 404


# -- agents ----------------------------------------------------------------------------------------
def test_an_agents_memories_are_its_own_and_shared_ones_reach_every_agent(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    shared = write(fns, ctx, "ana", "semantic", {"subject": "user", "attribute": "seat", "value": "aisle"})
    mine = write(
        fns,
        ctx,
        "ana",
        "semantic",
        {"subject": "user", "attribute": "seat", "value": "window"},
        agent_id="travel-bot",
    )
    # the same key in another agent's part is another memory, not an UPDATE of the shared one
    assert mine["decision"] == "ADD" and mine["memory"]["agent_id"] == "travel-bot"
    ids = {"shared": shared["memory"]["memory_id"], "travel": mine["memory"]["memory_id"]}
    as_travel = {r["memory_id"] for r in search(fns, ctx, "ana", "seat", agent_id="travel-bot")}
    as_other = {r["memory_id"] for r in search(fns, ctx, "ana", "seat", agent_id="code-bot")}
    as_user = {r["memory_id"] for r in search(fns, ctx, "ana", "seat")}
    assert as_travel == {ids["shared"], ids["travel"]}
    assert as_other == {ids["shared"]}
    assert as_user == {ids["shared"], ids["travel"]}
    assert {m["memory_id"] for m in listed(fns, ctx, "ana", agent_id="code-bot")} == {ids["shared"]}
    # the shared memory is still the active one of its own key
    assert (
        call(fns, ctx, "GET", f"/v1/memories/{ids['shared']}", user_id="ana")[1]["memory"]["status"]
        == "active"
    )


def test_working_memory_of_one_agent_is_apart_from_the_shared_one(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    assert call(fns, ctx, "PUT", "/v1/working-memory", {"content": "shared notes"}, user_id="ana")[0] == 200
    assert (
        call(fns, ctx, "PUT", "/v1/working-memory", {"content": "bot notes"}, user_id="ana", agent_id="bot")[
            0
        ]
        == 200
    )
    assert call(fns, ctx, "GET", "/v1/working-memory", user_id="ana")[1]["content"] == "shared notes"
    got = call(fns, ctx, "GET", "/v1/working-memory", user_id="ana", agent_id="bot")[1]
    assert got["content"] == "bot notes"
    assert (
        call(fns, ctx, "GET", "/v1/working-memory", user_id="ana", agent_id="other")[1]["content"]
        != "bot notes"
    )


def test_an_agents_extraction_writes_its_own_private_memories_and_shared_org_ones(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given a session of the travel agent where the user states a preference and a term
    turns = [
        {"role": "user", "content": "I prefer window seats. MTTR means mean time to recovery."},
        {"role": "assistant", "content": "Noted."},
    ]
    body = {"user_id": "ana", "agent_id": "travel-bot", "turns": turns}
    assert call(fns, ctx, "POST", "/v1/sessions/s-agent/turns", body)[0] == 201
    assert call(fns, ctx, "POST", "/v1/sessions/s-agent/flush", user_id="ana")[0] == 200
    queue, policy = LocalQueue(svc.db), QueuePolicy(visibility_timeout=0.0)
    received = drain_all(queue, EXTRACT_QUEUES, fns["extract"].lambda_handler, policy)
    assert received["extract-preference"] == 1 and received["extract-taxonomic"] == 1
    # Then the preference is the agent's own and the term the organisation's
    pref = listed(fns, ctx, "ana", type="preference")
    assert [(m["payload"]["preference"], m["agent_id"], m["visibility"]) for m in pref] == [
        ("window seats", "travel-bot", "private")
    ]
    term = listed(fns, ctx, "ana", type="taxonomic")
    assert [(m["payload"]["term"], m["agent_id"], m["visibility"]) for m in term] == [("MTTR", None, "org")]
    assert [e["user_id"] for e in term[0]["evidence"]] == ["ana"]
    assert listed(fns, ctx, "ana", type="preference", agent_id="code-bot") == []


def test_org_extraction_by_two_users_reinforces_one_memory(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    queue, policy = LocalQueue(svc.db), QueuePolicy(visibility_timeout=0.0)
    for user in ("ana", "bob"):
        turns = [{"role": "user", "content": "At Acme, MTTR means mean time to recovery."}]
        assert (
            call(fns, ctx, "POST", f"/v1/sessions/s-{user}/turns", {"user_id": user, "turns": turns})[0]
            == 201
        )
        assert call(fns, ctx, "POST", f"/v1/sessions/s-{user}/flush", user_id=user)[0] == 200
        assert (
            drain_all(queue, EXTRACT_QUEUES, fns["extract"].lambda_handler, policy)["extract-taxonomic"] == 1
        )
    docs = list(svc.db["memories"].find({"tenant": "acme", "type": "taxonomic"}))
    assert len(docs) == 1 and docs[0]["user_id"] == ORG_OWNER
    assert docs[0]["reinforcement_count"] == 2
    assert [e["user_id"] for e in docs[0]["evidence"]] == ["ana", "bob"]
    assert len({e["snapshot_id"] for e in docs[0]["evidence"]}) == 2


# -- erasure ---------------------------------------------------------------------------------------
def test_a_snapshot_id_lists_only_what_the_callers_own_snapshot_stated(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given ana's session stating a preference (private) and a term (org), extracted
    turns = [{"role": "user", "content": "I prefer aisle seats. MTTR means mean time to recovery."}]
    assert call(fns, ctx, "POST", "/v1/sessions/s-snap/turns", {"user_id": "ana", "turns": turns})[0] == 201
    status, flushed = call(fns, ctx, "POST", "/v1/sessions/s-snap/flush", user_id="ana")
    assert status == 200, flushed
    snapshot = flushed["snapshot"]["snapshot_id"]
    queue, policy = LocalQueue(svc.db), QueuePolicy(visibility_timeout=0.0)
    drain_all(queue, EXTRACT_QUEUES, fns["extract"].lambda_handler, policy)
    # When ana lists by her snapshot's id, Then both are listed
    mine = listed(fns, ctx, "ana", snapshot_id=snapshot)
    assert {"preference", "taxonomic"} <= {m["type"] for m in mine}, mine
    # When bob lists by it (the id is a hash anyone can compute), Then nothing: the org term holds ana's
    # evidence, not his, and a list must not tell him she had that session
    assert listed(fns, ctx, "bob", snapshot_id=snapshot) == []
    assert [m["payload"]["term"] for m in listed(fns, ctx, "bob", type="taxonomic")] == ["MTTR"]


def test_erasing_a_user_removes_their_evidence_and_the_org_memories_only_they_stated(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given an org term ana and bob both stated (each with their own key), one only ana stated, ana's
    # private fact, and an org term the tenant's key wrote naming ana (the tenant's word, not hers)
    status, stated = say(fns, ctx, "ana", "taxonomic", MTTR)
    assert status == 201, stated
    both = stated["memory"]["memory_id"]
    assert say(fns, ctx, "bob", "taxonomic", MTTR)[0] == 200
    status, alone = say(
        fns, ctx, "ana", "taxonomic", {"term": "RPO", "definition": "recovery point objective"}
    )
    assert status == 201, alone
    alone_id = alone["memory"]["memory_id"]
    write(fns, ctx, "ana", "semantic", {"subject": "user", "attribute": "badge", "value": "A-17"})
    tenants = write(fns, ctx, "ana", "taxonomic", {"term": "RTO", "definition": "recovery time objective"})
    tenants_id = tenants["memory"]["memory_id"]
    assert {r["memory_id"] for r in search(fns, ctx, "bob", "RPO recovery point objective")} >= {alone_id}
    # When ana is erased
    status, result = call(fns, ctx, "DELETE", "/v1/users/ana")
    assert status == 200, result
    assert result["erased"]["org_memories_deleted"] == 1 and result["erased"]["org_memories_updated"] == 2
    # Then the term only she stated is gone from MongoDB and the index
    assert svc.db["memories"].count_documents({"_id": alone_id}) == 0
    assert alone_id not in {r["memory_id"] for r in search(fns, ctx, "bob", "RPO recovery point objective")}
    assert svc.vector_index is not None
    assert svc.vector_index.count(tenant="acme", user_id=ORG_OWNER) == 2
    # ... the shared one keeps only bob's evidence and what he added to it
    kept = call(fns, ctx, "GET", f"/v1/memories/{both}", user_id="bob")[1]["memory"]
    assert [e["user_id"] for e in kept["evidence"]] == ["bob"] and kept["reinforcement_count"] == 1
    assert [r["memory_id"] for r in search(fns, ctx, "bob", "MTTR", types=["taxonomic"])][:1] == [both]
    # ... the tenant's term stays, backed by the tenant and no longer naming her (docs/adr/0073)
    theirs = call(fns, ctx, "GET", f"/v1/memories/{tenants_id}", user_id="bob")[1]["memory"]
    assert theirs["status"] == "active" and theirs["payload"]["definition"] == "recovery time objective"
    assert [(e["user_id"], e["tenant_wide"]) for e in theirs["evidence"]] == [(None, True)]
    # ... and nothing of ana remains anywhere
    assert "ana" not in json.dumps(list(svc.db["memories"].find({}, {"vector": 0})), default=str)
    assert svc.vector_index.count(tenant="acme", user_id="ana") == 0


def test_an_org_lineage_falls_back_to_the_version_another_user_stated(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given bob's term, then the new definition ana and cleo both stated (two users against one: their
    # proposal becomes the active version, superseding bob's)
    status, first = say(
        fns, ctx, "bob", "taxonomic", {"term": "SLO", "definition": "service level objective"}
    )
    assert status == 201, first
    newer = {"term": "SLO", "definition": "a target on an SLI, per month"}
    assert say(fns, ctx, "ana", "taxonomic", newer)[0] == 202
    status, update = say(fns, ctx, "cleo", "taxonomic", newer)
    assert (status, update["decision"]) == (201, "UPDATE"), update
    # When ana and cleo are erased, Then bob's version is the active one again, indexed and found
    assert call(fns, ctx, "DELETE", "/v1/users/ana")[0] == 200
    assert call(fns, ctx, "DELETE", "/v1/users/cleo")[0] == 200
    got = call(fns, ctx, "GET", f"/v1/memories/{first['memory']['memory_id']}", user_id="bob")[1]["memory"]
    assert got["status"] == "active" and got["payload"]["definition"] == "service level objective"
    hits = search(fns, ctx, "bob", "SLO service level objective", types=["taxonomic"])
    assert [h["memory_id"] for h in hits] == [first["memory"]["memory_id"]]


def test_erasing_the_user_a_tenant_correction_named_keeps_the_correction(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given bob's term and the tenant key's correction of it, written naming ana
    status, first = say(fns, ctx, "bob", "taxonomic", {"term": "SLA", "definition": "a promise to customers"})
    assert status == 201, first
    fixed = write(fns, ctx, "ana", "taxonomic", {"term": "SLA", "definition": "a contract on uptime"})
    assert fixed["decision"] == "UPDATE"
    # When ana is erased, Then every user still reads the tenant's correction, not bob's definition
    assert call(fns, ctx, "DELETE", "/v1/users/ana")[0] == 200
    got = call(fns, ctx, "GET", f"/v1/memories/{fixed['memory']['memory_id']}", user_id="bob")[1]["memory"]
    assert got["status"] == "active" and got["payload"]["definition"] == "a contract on uptime"
    old = call(fns, ctx, "GET", f"/v1/memories/{first['memory']['memory_id']}", user_id="bob")[1]["memory"]
    assert old["status"] == "superseded"


# -- enriched payloads and filters -------------------------------------------------------------------
def test_search_and_list_filter_by_tags_domain_and_metadata_inside_the_index(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    trip = {
        "title": "Trip to Porto",
        "summary": "Ana flew to Porto for the offsite",
        "tags": ["travel", "work"],
    }
    gig = {"title": "Concert in Porto", "summary": "Ana saw a concert in Porto", "tags": ["music"]}
    ids = {
        "trip": write(fns, ctx, "ana", "episodic", trip, metadata={"region": "eu"})["memory"]["memory_id"],
        "gig": write(fns, ctx, "ana", "episodic", gig, metadata={"region": "us"})["memory"]["memory_id"],
        "mttr": write(fns, ctx, "ana", "taxonomic", MTTR)["memory"]["memory_id"],
        "gate": write(
            fns,
            ctx,
            "ana",
            "taxonomic",
            {"term": "gate", "definition": "Porto airport gate", "domain": "aviation"},
        )["memory"]["memory_id"],
    }
    assert [r["memory_id"] for r in search(fns, ctx, "ana", "Porto", tags=["travel"])] == [ids["trip"]]
    assert {r["memory_id"] for r in search(fns, ctx, "ana", "Porto", tags=["music", "work"])} == {
        ids["trip"],
        ids["gig"],
    }
    assert [r["memory_id"] for r in search(fns, ctx, "ana", "Porto", metadata={"region": "us"})] == [
        ids["gig"]
    ]
    assert [r["memory_id"] for r in search(fns, ctx, "ana", "Porto", domain="aviation")] == [ids["gate"]]
    hit = search(fns, ctx, "ana", "Porto offsite", metadata={"region": "eu"})[0]
    assert hit["metadata"] == {"region": "eu"}
    # lists filter the same way (MongoDB)
    assert [m["memory_id"] for m in listed(fns, ctx, "ana", tags="music")] == [ids["gig"]]
    assert [m["memory_id"] for m in listed(fns, ctx, "ana", domain="operations")] == [ids["mttr"]]
    assert [m["memory_id"] for m in listed(fns, ctx, "ana", metadata=json.dumps({"region": "eu"}))] == [
        ids["trip"]
    ]
    # and the tenant's domains are listed
    status, body = call(fns, ctx, "GET", "/v1/domains", user_id="bob")
    assert status == 200 and body["domains"] == [
        {"domain": "aviation", "terms": 1},
        {"domain": "operations", "terms": 1},
    ]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"metadata": {"team": "x"}}, "metadata.team"),
        ({"domain": "aviation", "types": ["semantic"]}, "domain"),
        ({"tags": ["a"], "types": ["semantic", "taxonomic"]}, "tags"),
        ({"metadata": {"region": {"$ne": 1}}}, "metadata.region"),
        ({"visibility": "public"}, "visibility"),
        ({"agent_id": {"$gt": ""}}, "agent_id"),
    ],
)
def test_bad_filters_are_refused_naming_the_field(
    svc: Services, fns: dict[str, Any], ctx: Any, body: dict[str, Any], path: str
) -> None:
    before = svc.db["memories"].count_documents({})
    status, answer = call(fns, ctx, "POST", "/v1/memories/search", {"user_id": "ana", "query": "x", **body})
    assert 400 <= status < 500, answer
    assert path in json.dumps(answer["error"]), answer
    assert svc.db["memories"].count_documents({}) == before


def test_list_filters_are_checked_too(svc: Services, fns: dict[str, Any], ctx: Any) -> None:
    status, answer = call(fns, ctx, "GET", "/v1/memories", user_id="ana", type="semantic", domain="x")
    assert status == 400 and answer["error"]["details"]["path"] == "domain"
    status, answer = call(fns, ctx, "GET", "/v1/memories", user_id="ana", metadata="[1]")
    assert status == 400 and answer["error"]["details"]["path"] == "metadata"
    status, answer = call(fns, ctx, "GET", "/v1/memories", user_id="ana", metadata='{"$where": "1"}')
    assert status == 400 and answer["error"]["details"]["path"] == "metadata.$where"


def test_enriched_payloads_and_old_procedures_validate(svc: Services, fns: dict[str, Any], ctx: Any) -> None:
    procedure = {
        "name": "Restart the API",
        "when_to_use": "When the API answers 502",
        "description": "Brings the API back after a crash",
        "trigger_conditions": ["502 from the load balancer"],
        "allowed_tools": ["kubectl"],
        "tags": ["ops"],
        "steps": [
            {"action": "kubectl rollout restart deploy/api", "expected_output": "deployment restarted"},
            "Watch the error rate",
        ],
    }
    made = write(fns, ctx, "ana", "procedural", procedure)["memory"]
    assert made["payload"]["steps"][0]["expected_output"] == "deployment restarted"
    assert "(expect: deployment restarted)" in made["text"]
    old = write(
        fns,
        ctx,
        "ana",
        "procedural",
        {"name": "Deploy", "when_to_use": "Release day", "steps": ["Tag", "Push"]},
    )
    assert old["memory"]["payload"]["steps"] == ["Tag", "Push"]
    status, answer = call(
        fns,
        ctx,
        "POST",
        "/v1/memories",
        {
            "user_id": "ana",
            "type": "procedural",
            "payload": {**procedure, "steps": [{"expected_output": "x"}]},
        },
    )
    assert status == 400 and "payload.steps" in json.dumps(answer["error"]["details"])
    assert [r["memory_id"] for r in search(fns, ctx, "ana", "restart", tags=["ops"])] == [made["memory_id"]]


def test_preferences_reconcile_by_what_is_preferred(svc: Services, fns: dict[str, Any], ctx: Any) -> None:
    like = {"category": "travel", "preference": "window seats", "polarity": "positive"}
    first = write(fns, ctx, "ana", "preference", like)
    assert first["memory"]["text"] == "user prefers window seats (travel)"
    assert write(fns, ctx, "ana", "preference", like)["decision"] == "REINFORCE"
    turned = write(fns, ctx, "ana", "preference", {**like, "polarity": "negative", "strength": "strong"})
    assert turned["decision"] == "UPDATE" and turned["memory"]["text"] == "user hates window seats (travel)"


def test_context_labels_org_memories_and_reads_as_the_agent(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    write(fns, ctx, "bob", "taxonomic", MTTR)
    write(
        fns,
        ctx,
        "ana",
        "semantic",
        {"subject": "user", "attribute": "MTTR target", "value": "1h"},
        agent_id="ops-bot",
    )
    body = {"user_id": "ana", "session_id": "s-ctx", "query": "MTTR", "recall_top_k": 0}
    status, answer = call(fns, ctx, "POST", "/v1/context", {**body, "agent_id": "ops-bot"})
    assert status == 200, answer
    assert "(taxonomic, shared by the organisation) MTTR" in answer["context"]
    assert "MTTR target: 1h" in answer["context"]
    other = call(fns, ctx, "POST", "/v1/context", {**body, "agent_id": "web-bot"})[1]
    assert "MTTR target" not in other["context"] and "shared by the organisation" in other["context"]


def teardown_module() -> None:
    configure(None)


def test_extracted_memories_inherit_the_partition_keys_their_turns_agree_on(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    turns = [
        {"role": "user", "content": "I prefer aisle seats.", "metadata": {"region": "eu", "page": 1}},
        {"role": "assistant", "content": "Noted.", "metadata": {"region": "eu", "page": 2}},
    ]
    assert call(fns, ctx, "POST", "/v1/sessions/s-meta/turns", {"user_id": "ana", "turns": turns})[0] == 201
    assert call(fns, ctx, "POST", "/v1/sessions/s-meta/flush", user_id="ana")[0] == 200
    queue, policy = LocalQueue(svc.db), QueuePolicy(visibility_timeout=0.0)
    assert drain_all(queue, EXTRACT_QUEUES, fns["extract"].lambda_handler, policy)["extract-preference"] == 1
    (pref,) = listed(fns, ctx, "ana", type="preference")
    assert pref["metadata"] == {"region": "eu"}  # only partition keys are inherited (page is not one)
    # (every kind ran: the snapshot went from kind to kind; the semantic fact inherits the key too)
    found = search(fns, ctx, "ana", "aisle seats", metadata={"region": "eu"})
    assert pref["memory_id"] in [r["memory_id"] for r in found]
    assert search(fns, ctx, "ana", "aisle seats", metadata={"region": "us"}) == []


def test_erasing_the_user_a_tenant_procedure_named_keeps_its_steps(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given an org procedure the tenant's key wrote naming ana, with a tag (a label) and its steps
    procedure = {
        "name": "Rotate the dock keys",
        "when_to_use": "when a dock key is lost",
        "steps": ["open the key ledger", "rotate the key of the lost dock"],
        "tags": ["ana-private-tag"],
    }
    written = write(fns, ctx, "ana", "procedural", procedure, visibility="org")
    memory_id = written["memory"]["memory_id"]
    # When ana is erased (probe 9's HIGH finding: the steps, a list, were taken as her labels)
    assert call(fns, ctx, "DELETE", "/v1/users/ana")[0] == 200
    # Then every user still reads the tenant's steps; only the label the entry naming her gave is gone
    kept = call(fns, ctx, "GET", f"/v1/memories/{memory_id}", user_id="bob")[1]["memory"]
    assert kept["status"] == "active"
    assert [s if isinstance(s, str) else s.get("action") for s in kept["payload"]["steps"]] == procedure[
        "steps"
    ]
    assert "ana-private-tag" not in json.dumps(kept)
