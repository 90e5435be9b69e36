"""Retention (turn TTL after extraction, memory expiry) and erasure of a user everywhere, on real servers."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from mongomem.config import parse_project_config
from mongomem.erasure import erase_user
from mongomem.extraction.extractor import ExtractionResult, SnapshotInput
from mongomem.kindnames import BuiltinKind
from mongomem.local.queue import LocalQueue, QueuePolicy, local_queue_factory
from mongomem.local.worker import drain, drain_all
from mongomem.models.common import Scope, utcnow
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from mongomem.vectors.port import IndexDoc, SearchQuery
from tests import helpers
from tests.conftest import load_event, load_function
from tests.helpers import EXTRACT_QUEUES, report_figures

FIGURES = {"leftovers": 0, "places_checked": 0}
report_figures(
    "erasure", lambda: f"places checked {FIGURES['places_checked']}, leftovers {FIGURES['leftovers']}"
)


@pytest.fixture(params=["embedded", "opensearch"])
def svc(request: pytest.FixtureRequest, make_settings: Any, tmp_path: Path) -> Any:
    if request.param == "opensearch":
        from mongomem.vectors.opensearch import OpenSearchIndex

        node = request.getfixturevalue("opensearch_node")
        name = f"erase-{uuid.uuid4().hex[:8]}"
        index: Any = OpenSearchIndex(node.url, name, engine="lucene", shards=1, replicas=0, refresh=True)
    else:
        index = EmbeddedIndex(tmp_path / "v")
    cfg = parse_project_config({"memory": {"extraction": {"enabled": ["semantic", "episodic"]}}})
    services = Services(
        make_settings(project=cfg, enabled_extractions=["semantic", "episodic"]),
        llm=ScriptedLLM({}),
        embedder=HashingEmbedder(dim=64),
        vector_index=index,
        queue_factory=local_queue_factory,
    )
    with helpers.installed(services):
        yield services
    if request.param == "opensearch":
        index.drop()


@pytest.fixture(scope="module")
def fns() -> dict[str, Any]:
    return {name: load_function(name) for name in ("record_turns", "memory_api", "extract")}


def call(
    fns: dict[str, Any], ctx: Any, method: str, target: str, body: Any = None, tenant: str = "default"
) -> Any:
    fn = fns["record_turns"] if target.startswith("/v1/sessions") else fns["memory_api"]
    return helpers.invoke(fn, ctx, helpers.http_event(method, target, body, tenant))


def seed_user(
    fns: dict[str, Any], ctx: Any, svc: Any, user: str, marker: str, tenant: str = "default"
) -> None:
    """A user with turns in two sessions (one promoted), memory versions, working memory, index entries."""
    for session in ("s1", "s2"):
        turns = [
            {"role": "user", "content": f"{marker} I live in Porto"},
            {"role": "assistant", "content": "ok"},
        ]
        assert (
            call(
                fns, ctx, "POST", f"/v1/sessions/{session}/turns", {"user_id": user, "turns": turns}, tenant
            )[0]
            == 201
        )
    assert call(fns, ctx, "POST", f"/v1/sessions/s1/flush?user_id={user}", None, tenant)[0] == 200
    for value in ("OPO", "LIS"):  # ADD then UPDATE: two versions of one lineage
        payload = {"subject": "user", "attribute": "home airport", "value": f"{value} {marker}"}
        assert (
            call(
                fns,
                ctx,
                "POST",
                "/v1/memories",
                {"user_id": user, "type": "semantic", "payload": payload},
                tenant,
            )[0]
            == 201
        )
    assert call(fns, ctx, "PUT", f"/v1/working-memory?user_id={user}", {"content": marker}, tenant)[0] == 200
    thread = {"thread_id": "t1", "user_id": user, "metadata": {"workingMemory": marker}}
    assert call(fns, ctx, "POST", "/v1/threads", thread, tenant)[0] == 201
    # message index entries (semantic recall indexes turns with kind "turn")
    svc.vector_index.ensure(64)
    vector = svc.embedder.embed([marker], "document")[0]
    svc.vector_index.upsert(
        [
            IndexDoc(
                id=f"turn-{tenant}-{user}",
                tenant=tenant,
                user_id=user,
                kind="turn",
                text=marker,
                vector=vector,
            )
        ]
    )


def everything_of(svc: Any, tenant: str, user: str, marker: str) -> dict[str, int]:
    """Where the user's data still is: scoped documents, documents holding the marker, index entries, queue."""
    db = svc.db
    found: dict[str, int] = {}
    for name in db.list_collection_names():
        FIGURES["places_checked"] += 1
        scoped = db[name].count_documents({"tenant": tenant, "user_id": user})
        marked = sum(1 for d in db[name].find({}) if marker in json.dumps(d, default=str))
        if scoped or marked:
            found[name] = max(scoped, marked)
    snapshots = {d["_id"] for d in db["snapshots"].find({})}
    queued = [
        json.loads(b) for q in ("extract-semantic", "extract-episodic") for b in LocalQueue(db).bodies(q)
    ]
    mine = [m for m in queued if m.get("user_id") == user and m.get("tenant") == tenant]
    if mine or any(m["snapshot_id"] not in snapshots for m in queued):
        found["local_queue"] = len(mine)
    for kind in ("memory", "turn"):
        FIGURES["places_checked"] += 1
        n = svc.vector_index.count(tenant=tenant, user_id=user, kind=kind)
        if n:
            found[f"index:{kind}"] = n
    return found


def test_erase_user_removes_everything_and_nothing_else(svc: Any, fns: dict[str, Any], ctx: Any) -> None:
    # Given the user, a neighbour in the same tenant and the same user id in another tenant
    marker, other = f"ERASE-{uuid.uuid4().hex}", f"KEEP-{uuid.uuid4().hex}"
    seed_user(fns, ctx, svc, "user-7", marker)
    seed_user(fns, ctx, svc, "neighbour", other)
    seed_user(fns, ctx, svc, "user-7", other, tenant="tenant-b")
    assert set(everything_of(svc, "default", "user-7", marker)) >= {
        "turns",
        "sessions",
        "snapshots",
        "memories",
        "threads",
        "resources",
        "local_queue",
        "index:memory",
        "index:turn",
    }
    kept_before = (
        everything_of(svc, "default", "neighbour", other),
        everything_of(svc, "tenant-b", "user-7", other),
    )
    indexed = svc.vector_index.count(tenant="default", user_id="user-7")
    # When the user is erased through the API
    event = load_event("erase_user.json")
    response = fns["memory_api"].lambda_handler(event, ctx)
    assert response["statusCode"] == 200, response["body"]
    result = json.loads(response["body"])
    erased = result["erased"]
    # Then the counts say what went
    assert (erased["turns"], erased["sessions"], erased["snapshots"], erased["memories"]) == (4, 2, 1, 2)
    assert (erased["threads"], erased["resources"]) == (1, 1)
    # one queued message for the promoted snapshot: its first kind's (the kinds follow one another)
    assert erased["queue_messages"] == 1 and erased["index_entries"] == indexed >= 2
    assert result["total"] == sum(erased.values())
    # and nothing is left in any collection or in the index
    leftovers = everything_of(svc, "default", "user-7", marker)
    FIGURES["leftovers"] += sum(leftovers.values())
    assert leftovers == {}
    # a search, a list, a session read and a recall-style index query return nothing
    status, found = call(
        fns, ctx, "POST", "/v1/memories/search", {"user_id": "user-7", "query": "home airport"}
    )
    assert status == 200 and found["results"] == []
    assert call(fns, ctx, "GET", "/v1/memories?user_id=user-7")[1]["memories"] == []
    assert call(fns, ctx, "GET", "/v1/sessions/s2?user_id=user-7")[0] == 404
    vector = svc.embedder.embed([marker], "query")[0]
    assert svc.vector_index.search(SearchQuery("default", "user-7", "turn", marker, vector)) == []
    # the others are untouched
    assert (
        everything_of(svc, "default", "neighbour", other),
        everything_of(svc, "tenant-b", "user-7", other),
    ) == kept_before
    # erasing again is harmless: it finds only what the reads above added, the log of the user's latest
    # search (the console's Agent calls: a search after the erasure is new data of the user)
    again = json.loads(fns["memory_api"].lambda_handler(load_event("erase_user.json"), ctx)["body"])
    assert again["total"] == again["erased"]["other"] <= 1
    assert everything_of(svc, "default", "user-7", marker) == {}


def test_queued_extraction_of_an_erased_user_is_dropped(svc: Any, fns: dict[str, Any], ctx: Any) -> None:
    # Given a snapshot whose extraction message is still on a (deployed, not erasable) queue
    seed_user(fns, ctx, svc, "user-7", "M")
    body = LocalQueue(svc.db).bodies("extract-semantic")[0]
    erase_user(svc.erasure, svc.vector_index, Scope(tenant="default", user_id="user-7"))
    record = dict(load_event("extract_sqs.json")["Records"][0], messageId="m-1", body=body)
    # When the message is delivered anyway
    assert fns["extract"].lambda_handler({"Records": [record]}, ctx) == {"batchItemFailures": []}
    # Then nothing of the user comes back
    assert svc.db["memories"].count_documents({"user_id": "user-7"}) == 0


def test_service_account_may_erase_only_itself(svc: Any, fns: dict[str, Any], ctx: Any) -> None:
    event = load_event("erase_user.json")
    event["requestContext"]["authorizer"]["lambda"] = {
        "tenant": "default",
        "kind": "service_account",
        "key_id": "k",
        "fixed_user_id": "agent-1",
    }
    response = fns["memory_api"].lambda_handler(event, ctx)
    assert response["statusCode"] == 403 and response["headers"]["x-mongomem-user-id"] == "agent-1"


class Quick:
    def __init__(self, memory_type: BuiltinKind) -> None:
        self.memory_type = memory_type

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        return ExtractionResult()


@pytest.mark.parametrize("svc", ["embedded"], indirect=True)
def test_turns_expire_only_after_every_type_is_extracted(svc: Any, fns: dict[str, Any], ctx: Any) -> None:
    # Given TTL indexes on turns.expire_at and memories.expires_at
    assert svc.turns is not None  # builds the turn repository and its indexes
    turn_ttl = {i["name"]: i for i in svc.db["turns"].list_indexes()}["turn_expiry"]
    assert dict(turn_ttl["key"]) == {"expire_at": 1} and turn_ttl["expireAfterSeconds"] == 0
    assert svc.memory_store is not None  # builds the memory store and its retention index
    mem_ttl = {i["name"]: i for i in svc.db["memories"].list_indexes()}["memory_expiry"]
    assert mem_ttl["expireAfterSeconds"] == 0
    quick = svc.replaced(
        extractors={t: lambda _svc, t=t: Quick(t) for t in (BuiltinKind.semantic, BuiltinKind.episodic)}
    )
    configure(quick)
    try:
        seed_user(fns, ctx, svc, "user-7", "M")  # s1 promoted (2 turns), s2 not
        queue, policy = LocalQueue(svc.db), QueuePolicy(visibility_timeout=0.0)
        # When only one of the two types is extracted, no turn has an expiry
        drain(queue, "extract-semantic", fns["extract"].lambda_handler, policy)  # the first kind only
        assert svc.db["turns"].count_documents({"expire_at": {"$exists": True}}) == 0
        # When the second type is done too, the snapshot's turns expire after ttl_days
        drain_all(queue, EXTRACT_QUEUES, fns["extract"].lambda_handler, policy)  # it passed the snapshot on
    finally:
        configure(svc)
    expiring = list(svc.db["turns"].find({"expire_at": {"$exists": True}}))
    assert {(d["session_id"], d["seq"]) for d in expiring} == {("s1", 1), ("s1", 2)}
    ttl = timedelta(days=svc.settings.memory.snapshot.ttl_days)
    assert all(abs(d["expire_at"] - (utcnow() + ttl)) < timedelta(minutes=1) for d in expiring)
    # unpromoted turns never expire
    assert svc.db["turns"].count_documents({"session_id": "s2", "expire_at": {"$exists": True}}) == 0
