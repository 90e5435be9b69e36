"""The API the memory console reads: users, a user's sessions, snapshots and their retry, memory activity,
pipeline health, and the console's own files, through the authorizer and functions as API Gateway chains
them. Every figure is the caller's tenant's (or, for a service account, its own user's) only."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from mongomem.api.console import CSP, STATIC
from mongomem.errors import QueueUnavailable
from mongomem.extraction.extractor import ExtractionResult, SnapshotInput
from mongomem.kindnames import BuiltinKind
from mongomem.local.http import to_event
from mongomem.local.queue import LocalQueue, QueuePolicy, local_queue_factory
from mongomem.local.stack import PUBLIC_PATHS
from mongomem.local.worker import drain
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from tests.conftest import load_function
from tests.integration.test_identity import Gateway, new_key


class SwitchableQueue:
    """The local queue, or a queue that is down (`down = True`): SQS refusing a send."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.down = False

    def send_extraction(self, kind: str, body: dict[str, Any]) -> None:
        if self.down:
            raise QueueUnavailable(f"could not send to the {kind} queue")
        self.inner.send_extraction(kind, body)


def build(
    make_settings: Any,
    tmp_path: Path,
    index: bool = True,
    extractors: Any = None,
    llm: Any = None,
    **settings: Any,
) -> Services:
    services = Services(
        make_settings(**settings),
        llm=llm or ScriptedLLM({}),
        embedder=HashingEmbedder(dim=64),
        vector_index=EmbeddedIndex(tmp_path / "v") if index else None,
        queue_factory=lambda s: SwitchableQueue(local_queue_factory(s)),
        extractors=extractors,
    )
    configure(services)
    return services


@pytest.fixture
def svc(make_settings: Any, tmp_path: Path) -> Any:
    services = build(make_settings, tmp_path)
    yield services
    configure(None)
    services.database.drop()


def call(gw: Gateway, method: str, path: str, key: str, body: Any = None, **query: Any) -> tuple[int, Any]:
    status, _, text = gw.call(method, path, key, body, **{k: str(v) for k, v in query.items()})
    return status, json.loads(text) if text else None


def record(gw: Gateway, key: str, user: str, session: str, text: str = "hello there") -> None:
    body = {"user_id": user, "turns": [{"role": "user", "content": text}]}
    assert gw.call("POST", f"/v1/sessions/{session}/turns", key, body)[0] == 201


def fact(gw: Gateway, key: str, user: str, attribute: str, value: str) -> str:
    payload = {"subject": "user", "attribute": attribute, "value": value}
    status, body = call(
        gw, "POST", "/v1/memories", key, {"user_id": user, "type": "semantic", "payload": payload}
    )
    assert status in (200, 201), body
    return str(body["decision"])


# -- users and sessions -----------------------------------------------------------------------------
def test_users_are_the_tenants_own_with_their_counts_in_pages(svc: Any) -> None:
    gw = Gateway()
    acme, globex = new_key(svc, "acme", "memory_service"), new_key(svc, "globex", "memory_service")
    # Given acme users with sessions, memories or only working memory, and a globex user with u1's name
    record(gw, acme, "u1", "s1")
    record(gw, acme, "u1", "s2")
    record(gw, acme, "u2", "s1")
    fact(gw, acme, "u3", "city", "Porto")
    assert gw.call("PUT", "/v1/working-memory", acme, {"content": "# Notes"}, user_id="u4")[0] == 200
    for session in ("g1", "g2", "g3"):
        record(gw, globex, "u1", session)
    # When acme lists its users two at a time
    status, first = call(gw, "GET", "/v1/users", acme, limit=2)
    assert status == 200 and first["tenant"] == "acme"
    assert [(u["user_id"], u["sessions"], u["memories"]) for u in first["users"]] == [
        ("u1", 2, 0),
        ("u2", 1, 0),
    ]
    status, second = call(gw, "GET", "/v1/users", acme, limit=2, cursor=first["next_cursor"])
    # Then every user appears once, with counts of acme's data only
    assert [(u["user_id"], u["sessions"], u["memories"]) for u in second["users"]] == [
        ("u3", 0, 1),
        ("u4", 0, 0),
    ]
    assert second["next_cursor"] is None and all(u["last_activity_at"] for u in second["users"])
    # and globex sees its own u1 (three sessions), nothing of acme's
    _, theirs = call(gw, "GET", "/v1/users", globex)
    assert [(u["user_id"], u["sessions"]) for u in theirs["users"]] == [("u1", 3)]
    # and a service account is one memory user: it lists itself only
    agent = new_key(svc, "acme", "service_account", "u2")
    _, own = call(gw, "GET", "/v1/users", agent)
    assert [u["user_id"] for u in own["users"]] == ["u2"] and own["next_cursor"] is None
    # and a cursor that is not a user id is refused before any query
    assert call(gw, "GET", "/v1/users", acme, cursor="{$gt: ''}")[0] == 422


def test_a_users_sessions_come_newest_first_and_a_service_account_sees_only_its_own(svc: Any) -> None:
    gw = Gateway()
    acme = new_key(svc, "acme", "memory_service")
    for session in ("s-old", "s-mid", "s-new"):
        record(gw, acme, "ana", session)
        time.sleep(0.01)  # distinct last_turn_at (BSON dates keep milliseconds)
    record(gw, acme, "bo", "s-bo")
    status, page = call(gw, "GET", "/v1/users/ana/sessions", acme, limit=2)
    assert status == 200 and [s["session_id"] for s in page["sessions"]] == ["s-new", "s-mid"]
    assert page["sessions"][0]["turn_count"] == 1 and page["sessions"][0]["unpromoted_count"] == 1
    _, rest = call(gw, "GET", "/v1/users/ana/sessions", acme, limit=2, cursor=page["next_cursor"])
    assert [s["session_id"] for s in rest["sessions"]] == ["s-old"] and rest["next_cursor"] is None
    status, bad = call(gw, "GET", "/v1/users/ana/sessions", acme, cursor="yesterday")
    assert status == 400 and bad["error"]["details"]["path"] == "cursor"
    # another tenant's key finds no sessions for "ana"; a service account may not name another user
    globex = new_key(svc, "globex", "memory_service")
    assert call(gw, "GET", "/v1/users/ana/sessions", globex)[1]["sessions"] == []
    agent = new_key(svc, "acme", "service_account", "bo")
    status, refused = call(gw, "GET", "/v1/users/ana/sessions", agent)
    assert status == 403 and refused["error"]["code"] == "forbidden"
    assert [s["session_id"] for s in call(gw, "GET", "/v1/users/bo/sessions", agent)[1]["sessions"]] == [
        "s-bo"
    ]


# -- snapshots and retry ----------------------------------------------------------------------------
def flush(gw: Gateway, key: str, user: str, session: str) -> dict[str, Any]:
    status, body = call(gw, "POST", f"/v1/sessions/{session}/flush", key, user_id=user)
    assert status == 200 and body["snapshot"], body
    return dict(body["snapshot"])


def test_a_snapshot_is_read_within_its_users_scope(svc: Any) -> None:
    gw = Gateway()
    acme = new_key(svc, "acme", "memory_service")
    record(gw, acme, "ana", "s1", "I live in Lisbon")
    record(gw, acme, "ana", "s1", "and I like tea")
    snap = flush(gw, acme, "ana", "s1")
    status, got = call(gw, "GET", f"/v1/snapshots/{snap['snapshot_id']}", acme, user_id="ana")
    assert status == 200
    assert (got["session_id"], got["from_seq"], got["to_seq"], got["reason"]) == ("s1", 1, 2, "manual")
    assert set(got["extraction"]) == {t.value for t in BuiltinKind}
    assert {s["status"] for s in got["extraction"].values()} == {"queued"}
    # the same id is nobody else's: another user, another tenant, a service account of another user
    for key, user in (
        (acme, "bo"),
        (new_key(svc, "globex", "memory_service"), "ana"),
        (new_key(svc, "acme", "service_account", "bo"), "ana"),
    ):
        status, body = call(gw, "GET", f"/v1/snapshots/{snap['snapshot_id']}", key, user_id=user)
        assert status == 404 and "Lisbon" not in json.dumps(body)
    assert call(gw, "GET", "/v1/snapshots/not-a-snapshot", acme, user_id="ana")[0] == 422


class Broken:
    """An extractor whose provider is down while `outage` holds anything."""

    def __init__(self, kind: BuiltinKind, outage: set[str]) -> None:
        self.kind = kind
        self.outage = outage

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        if self.outage:
            raise RuntimeError("the LLM provider timed out (outage)")
        return ExtractionResult(note="extracted")


@pytest.fixture
def outage() -> set[str]:
    return {"semantic"}


def broken(outage: set[str]) -> dict[BuiltinKind, Any]:
    """The extractors of a deployment whose semantic extraction provider is down during `outage`."""
    return {BuiltinKind.semantic: lambda _svc: Broken(BuiltinKind.semantic, outage)}


def test_retry_queues_a_failed_kind_again_and_refuses_what_cannot_be_retried(
    make_settings: Any, tmp_path: Path, outage: set[str]
) -> None:
    svc = build(make_settings, tmp_path, extractors=broken(outage), enabled_extractions=["semantic"])
    try:
        gw = Gateway()
        acme = new_key(svc, "acme", "memory_service")
        record(gw, acme, "ana", "s1", "I live in Lisbon")
        snap = flush(gw, acme, "ana", "s1")
        sid = snap["snapshot_id"]
        # Given the semantic extraction failed and its message went to the DLQ
        queue, policy = LocalQueue(svc.db), QueuePolicy(visibility_timeout=0.0, max_receive_count=1)
        extract = load_function("extract").lambda_handler
        drain(queue, "extract-semantic", extract, policy)
        _, failed = call(gw, "GET", f"/v1/snapshots/{sid}", acme, user_id="ana")
        assert failed["extraction"]["semantic"]["status"] == "failed"
        assert "timed out" in failed["extraction"]["semantic"]["error"]
        assert queue.depth("extract-semantic") == 0 and queue.depth("extract-semantic-dlq") == 1
        # another tenant cannot retry it (and learns nothing about it)
        globex = new_key(svc, "globex", "memory_service")
        status, _ = call(
            gw, "POST", f"/v1/snapshots/{sid}/retry", globex, {"type": "semantic"}, user_id="ana"
        )
        assert status == 404 and queue.depth("extract-semantic") == 0
        # When the provider is back and the owner retries the kind
        outage.clear()
        status, result = call(
            gw, "POST", f"/v1/snapshots/{sid}/retry", acme, {"type": "semantic"}, user_id="ana"
        )
        # Then the kind is queued again with one new message, and the previous failure is reported
        assert status == 200, result
        assert result["snapshot"]["extraction"]["semantic"]["status"] == "queued"
        assert result["previous"]["status"] == "failed" and result["previous"]["attempts"] == 1
        assert [json.loads(b)["snapshot_id"] for b in queue.bodies("extract-semantic")] == [sid]
        drain(queue, "extract-semantic", extract, policy)
        _, done = call(gw, "GET", f"/v1/snapshots/{sid}", acme, user_id="ana")
        assert done["extraction"]["semantic"]["status"] == "done"
        assert done["extraction"]["semantic"]["attempts"] == 2
        # and what cannot be retried gets a 4xx and sends nothing
        refusals = [
            ({"type": "semantic"}, 409, "already_extracted"),
            ({"type": "procedural"}, 409, "not_retryable"),  # not enabled when the snapshot was cut
            ({"type": "gossip"}, 422, "validation_error"),
            ({}, 422, "validation_error"),
            ({"type": "semantic", "force": True}, 422, "validation_error"),
        ]
        for body, expected, code in refusals:
            status, answer = call(gw, "POST", f"/v1/snapshots/{sid}/retry", acme, body, user_id="ana")
            assert (status, answer["error"]["code"]) == (expected, code), body
        assert queue.depth("extract-semantic") == 0 and queue.depth("extract-procedural") == 0
    finally:
        configure(None)
        svc.database.drop()


def test_a_retry_the_queue_refuses_leaves_the_kind_as_it_was(svc: Any, outage: set[str]) -> None:
    svc = svc.replaced(extractors=broken(outage))
    configure(svc)
    gw = Gateway()
    acme = new_key(svc, "acme", "memory_service")
    record(gw, acme, "ana", "s1", "I live in Lisbon")
    sid = flush(gw, acme, "ana", "s1")["snapshot_id"]
    queue = LocalQueue(svc.db)
    drain(queue, "extract-semantic", load_function("extract").lambda_handler, QueuePolicy(0.0, 1))
    svc.queue.down = True
    status, body = call(gw, "POST", f"/v1/snapshots/{sid}/retry", acme, {"type": "semantic"}, user_id="ana")
    assert status == 503 and body["error"]["code"] == "queue_unavailable"
    # Then the snapshot still says failed (with its error): it does not wait for a message never sent
    state = call(gw, "GET", f"/v1/snapshots/{sid}", acme, user_id="ana")[1]["extraction"]["semantic"]
    assert state["status"] == "failed" and "timed out" in state["error"]


# -- figures ------------------------------------------------------------------------------------------
def test_memory_activity_counts_each_decision_per_day_for_the_tenant_or_one_user(svc: Any) -> None:
    gw = Gateway()
    acme, globex = new_key(svc, "acme", "memory_service"), new_key(svc, "globex", "memory_service")
    # Given acme's u1: ADD, REINFORCE (same again), UPDATE (new value, same key); u2: ADD; globex: 3 ADDs
    assert [fact(gw, acme, "u1", "city", v) for v in ("Porto", "Porto", "Braga")] == [
        "ADD",
        "REINFORCE",
        "UPDATE",
    ]
    assert fact(gw, acme, "u2", "city", "Faro") == "ADD"
    for i in range(3):
        assert fact(gw, globex, "g", f"pet {i}", "cat") == "ADD"
    status, tenant = call(gw, "GET", "/v1/stats/memories", acme, days=7)
    assert status == 200 and len(tenant["days"]) == 7 and tenant["user_id"] is None
    today = tenant["days"][-1]
    assert (today["added"], today["updated"], today["reinforced"]) == (2, 1, 1)
    assert all(d["added"] == d["updated"] == d["reinforced"] == 0 for d in tenant["days"][:-1])
    assert {k: tenant["totals"][k] for k in ("added", "updated", "reinforced")} == {
        "added": 2,
        "updated": 1,
        "reinforced": 1,
    }
    one = call(gw, "GET", "/v1/stats/memories", acme, user_id="u2", days=7)[1]["totals"]
    assert (one["added"], one["updated"], one["reinforced"]) == (1, 0, 0)
    assert call(gw, "GET", "/v1/stats/memories", globex, days=1)[1]["totals"]["added"] == 3
    # a service account's figures are its own user's, whatever user it names
    agent = new_key(svc, "acme", "service_account", "u2")
    status, headers, text = gw.call("GET", "/v1/stats/memories", agent, user_id="u1")
    assert (
        status == 200 and json.loads(text)["totals"]["added"] == 1 and headers["x-mongomem-user-id"] == "u2"
    )
    assert call(gw, "GET", "/v1/stats/memories", acme, days=0)[0] == 422


def test_pipeline_health_counts_only_the_callers_tenant(make_settings: Any, tmp_path: Path) -> None:
    # No search index: written memories wait for it, so the index lag is visible
    svc = build(make_settings, tmp_path, index=False)
    try:
        gw = Gateway()
        acme, globex = new_key(svc, "acme", "memory_service"), new_key(svc, "globex", "memory_service")
        # Given acme has a session waiting for promotion, a snapshot waiting for every kind, a memory
        # waiting for the index and turns waiting for recall
        record(gw, acme, "ana", "waiting")
        record(gw, acme, "ana", "cut")
        flush(gw, acme, "ana", "cut")
        fact(gw, acme, "ana", "city", "Porto")
        status, mine = call(gw, "GET", "/v1/pipeline", acme)
        assert status == 200 and mine["tenant"] == "acme" and mine["ready"] is True
        assert mine["promotion"]["sessions_waiting"] == 1
        kinds = mine["extraction"]["kinds"]
        assert set(kinds) == {t.value for t in BuiltinKind}
        assert all((k["queued"], k["running"], k["failed"]) == (1, 0, 0) for k in kinds.values())
        assert all(k["oldest_waiting_at"] for k in kinds.values())
        assert mine["index"] == {**mine["index"], "kind": None, "reachable": False, "pending": 1}
        assert mine["index"]["lag_seconds"] >= 0 and mine["recall"]["pending_turns"] == 2
        assert mine["config"]["source"] == "defaults"
        # Then globex, and a service account of another acme user, count none of it
        for key in (globex, new_key(svc, "acme", "service_account", "bo")):
            status, theirs = call(gw, "GET", "/v1/pipeline", key)
            assert status == 200
            assert theirs["promotion"]["sessions_waiting"] == 0 and theirs["recall"]["pending_turns"] == 0
            assert theirs["index"]["pending"] == 0 and theirs["index"]["lag_seconds"] is None
            assert all(k["queued"] == k["failed"] == 0 for k in theirs["extraction"]["kinds"].values())
        # and acme can narrow to one user
        assert call(gw, "GET", "/v1/pipeline", acme, user_id="bo")[1]["promotion"]["sessions_waiting"] == 0
    finally:
        configure(None)
        svc.database.drop()


# -- the console's files ----------------------------------------------------------------------------
def test_the_console_is_served_without_a_key_with_a_strict_policy(svc: Any) -> None:
    gw = Gateway()
    gw.authorizer.public_paths = PUBLIC_PATHS  # the template's `Authorizer: NONE` routes
    new_key(svc, "acme", "memory_service")  # keys exist: every data route needs one
    status, headers, page = gw.call("GET", "/console", None)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert headers["Content-Security-Policy"] == CSP
    policy = dict(part.strip().split(" ", 1) for part in CSP.split(";"))
    assert policy["default-src"] == "'none'" and policy["frame-ancestors"] == "'none'"
    assert all(policy[d] == "'self'" for d in ("script-src", "style-src", "connect-src", "img-src"))
    assert "unsafe" not in CSP
    assert headers["X-Content-Type-Options"] == "nosniff" and headers["Referrer-Policy"] == "no-referrer"
    # the page loads only its own files, which are all served, with their types and the same policy
    assert "<script" not in page.replace('<script type="module" src="/console/app.js"></script>', "")
    assert "style=" not in page
    for src in re.findall(r'(?:src|href)="(/console/[^"]+)"', page):
        status, headers, _ = gw.call("GET", src, None)
        assert status == 200 and headers["Content-Security-Policy"] == CSP, src
    status, headers, _ = gw.call("GET", "/console/app.js", None)
    assert headers["Content-Type"].startswith("text/javascript")
    # an unchanged file is not sent again
    assert gw.call("GET", "/console/app.js", None)[1]["ETag"] == headers["ETag"]
    event_headers = {"If-None-Match": headers["ETag"]}
    cached = gw.front.invoke(to_event("GET", "/console/app.js", event_headers, b"", "203.0.113.10"))
    assert cached["statusCode"] == 304 and not cached["body"]
    # unknown files are a 404 envelope; nothing outside static/ is reachable; data still needs a key
    status, _, body = gw.call("GET", "/console/secrets.py", None)
    assert status == 404 and json.loads(body)["error"]["code"] == "not_found"
    for sneaky in ("/console/..%2f__init__.py", "/console/../v1/users", "/console/__init__.py"):
        status, _, body = gw.call("GET", sneaky, None)
        assert status in (401, 404) and "tenant" not in body, sneaky
    assert gw.call("GET", "/v1/users", None)[0] == 401


def test_every_module_the_page_imports_is_shipped() -> None:
    shipped = {p.name for p in STATIC.iterdir()}
    pending, seen = ["app.js"], set()
    while pending:
        name = pending.pop()
        seen.add(name)
        assert name in shipped, f"{name} is imported but not in {STATIC}"
        for imported in re.findall(r"from '\./([\w.-]+)'", (STATIC / name).read_text()):
            if imported not in seen:
                pending.append(imported)
    # every script file is reachable from the page (no dead file shipped in the layer)
    assert {n for n in shipped if n.endswith(".js")} == seen


def test_recall_reports_where_each_match_ranked_in_every_ranking(svc: Any) -> None:
    gw = Gateway()
    acme = new_key(svc, "acme", "memory_service")
    turns = [
        {"role": "user", "content": "We talked about the weather in Lisbon."},
        {"role": "assistant", "content": "It was sunny."},
        {"role": "user", "content": "My saxophone lesson is on Thursday."},
        {"role": "assistant", "content": "Enjoy the lesson."},
    ]
    assert gw.call("POST", "/v1/sessions/s1/turns", acme, {"user_id": "ana", "turns": turns})[0] == 201
    assert svc.turn_indexer.run()["turns"] == 4
    status, found = call(gw, "POST", "/v1/recall", acme, {"user_id": "ana", "query": "saxophone", "top_k": 2})
    assert status == 200 and found["matched"][0] == "s1:3"
    by_id = {t["turn_id"]: t for thread in found["threads"] for t in thread["turns"]}
    best = by_id["s1:3"]
    # Then the best match says it came first by keywords over its own text, and which rankings placed it
    assert best["rank"] == 1 and best["signals"]["bm25"] == 1
    assert set(best["signals"]) <= {"bm25", "bm25_context", "knn", "knn_context"}
    # and a neighbour given as context carries no ranking
    assert all(t["signals"] is None for t in by_id.values() if not t["matched"])


# -- issue 25: what an agent call received, what a snapshot produced, the dead letters -------------------
def test_the_latest_agent_calls_are_kept_with_what_they_returned_and_why(svc: Any) -> None:
    gw = Gateway()
    acme, globex = new_key(svc, "acme", "memory_service"), new_key(svc, "globex", "memory_service")
    record(gw, acme, "ana", "s1", "Book me a window seat to Lisbon")
    fact(gw, acme, "ana", "seat", "window")
    # When an agent searches, recalls and builds its context
    assert call(gw, "POST", "/v1/memories/search", acme, {"user_id": "ana", "query": "seat"})[0] == 200
    assert call(gw, "POST", "/v1/recall", acme, {"user_id": "ana", "query": "Lisbon"})[0] == 200
    body = {"user_id": "ana", "session_id": "s1", "query": "seat", "token_budget": 500}
    assert call(gw, "POST", "/v1/context", acme, body)[0] == 200
    # Then the console reads the three calls, newest first, each with what it returned and why
    status, log = call(gw, "GET", "/v1/users/ana/requests", acme)
    assert status == 200 and log["kept"] == 20
    assert [r["kind"] for r in log["requests"]] == ["context", "recall", "search"]
    context, _, search = log["requests"]
    assert search["query"] == "seat" and search["request"]["top_k"] == 10
    hit = search["returned"][0]
    assert hit["text"] == "user seat: window" and "semantic" in hit["why"] and "BM25 #1" in hit["why"]
    assert context["request"]["token_budget"] == 500 and "window" in context["block"]
    sections = {r["section"] for r in context["returned"]}
    assert {"recent_turns", "memories"} <= sections, context["returned"]
    # ... the newest 20 only
    for n in range(22):
        call(gw, "POST", "/v1/memories/search", acme, {"user_id": "ana", "query": f"q{n}"})
    _, log = call(gw, "GET", "/v1/users/ana/requests", acme, limit=20)
    assert len(log["requests"]) == 20 and log["requests"][0]["query"] == "q21"
    # ... and nobody else's: another tenant's user of the same name has none
    _, theirs = call(gw, "GET", "/v1/users/ana/requests", globex)
    assert theirs["requests"] == []


def test_a_snapshot_lists_the_memories_it_produced(make_settings: Any, tmp_path: Path) -> None:
    from mongomem.offline.llm_offline import OfflineLLM

    svc = build(make_settings, tmp_path, llm=OfflineLLM())
    gw = Gateway()
    acme = new_key(svc, "acme", "memory_service")
    record(gw, acme, "bo", "s1", "I live in Porto and my favourite colour is green.")
    snap = flush(gw, acme, "bo", "s1")
    queue, policy = LocalQueue(svc.db), QueuePolicy(visibility_timeout=0.0)
    extract = load_function("extract").lambda_handler
    for kind in svc.settings.queue_kinds:
        drain(queue, f"extract-{kind}", extract, policy)
    record(gw, acme, "bo", "s2", "My dog is called Rex.")
    other = flush(gw, acme, "bo", "s2")
    for kind in svc.settings.queue_kinds:
        drain(queue, f"extract-{kind}", extract, policy)
    fact(gw, acme, "bo", "seat", "aisle")  # written through the API: no snapshot
    status, page = call(gw, "GET", "/v1/memories", acme, user_id="bo", snapshot_id=snap["snapshot_id"])
    assert status == 200 and page["memories"]
    assert all(any(e["snapshot_id"] == snap["snapshot_id"] for e in m["evidence"]) for m in page["memories"])
    texts = " ".join(m["text"] for m in page["memories"])
    assert "Porto" in texts and "Rex" not in texts and "aisle" not in texts
    _, theirs = call(gw, "GET", "/v1/memories", acme, user_id="bo", snapshot_id=other["snapshot_id"])
    assert "Rex" in " ".join(m["text"] for m in theirs["memories"])
    assert call(gw, "GET", "/v1/memories", acme, user_id="bo", snapshot_id="s1")[0] == 422
    configure(None)
    svc.database.drop()


def test_failed_extractions_are_listed_for_the_tenant_and_leave_once_retried(
    make_settings: Any, tmp_path: Path, outage: set[str]
) -> None:
    svc = build(make_settings, tmp_path, extractors=broken(outage), enabled_extractions=["semantic"])
    try:
        gw = Gateway()
        acme, globex = new_key(svc, "acme", "memory_service"), new_key(svc, "globex", "memory_service")
        queue, policy = LocalQueue(svc.db), QueuePolicy(visibility_timeout=0.0, max_receive_count=1)
        extract = load_function("extract").lambda_handler
        sids = []
        for user in ("ana", "bo"):
            record(gw, acme, user, "s1", "I live in Lisbon")
            sids.append(flush(gw, acme, user, "s1")["snapshot_id"])
        drain(queue, "extract-semantic", extract, policy)
        # Then both dead letters are listed, newest first, with their error; a user narrows it
        status, dead = call(gw, "GET", "/v1/snapshots", acme, status="failed")
        assert status == 200 and [s["snapshot_id"] for s in dead["snapshots"]] == sids[::-1]
        assert "timed out" in dead["snapshots"][0]["extraction"]["semantic"]["error"]
        _, page = call(gw, "GET", "/v1/snapshots", acme, limit=1)
        _, rest = call(gw, "GET", "/v1/snapshots", acme, limit=1, cursor=page["next_cursor"])
        assert [s["snapshot_id"] for s in page["snapshots"] + rest["snapshots"]] == sids[::-1]
        _, anas = call(gw, "GET", "/v1/snapshots", acme, user_id="ana")
        assert [s["snapshot_id"] for s in anas["snapshots"]] == [sids[0]]
        assert call(gw, "GET", "/v1/snapshots", globex)[1]["snapshots"] == []
        # When one is retried with the provider back, it leaves the list
        outage.clear()
        call(gw, "POST", f"/v1/snapshots/{sids[0]}/retry", acme, {"type": "semantic"}, user_id="ana")
        drain(queue, "extract-semantic", extract, policy)
        _, left = call(gw, "GET", "/v1/snapshots", acme)
        assert [s["snapshot_id"] for s in left["snapshots"]] == [sids[1]]
    finally:
        configure(None)
        svc.database.drop()
