"""API keys, the Lambda authorizer and tenant/user scoping, through the same front the local stack uses.

Each request goes authorizer function -> (cached) principal -> record_turns / memory_api function, as
API Gateway chains them. The cross-tenant walk probes every route with another tenant's key (and with a
same-tenant service account) against tenant A's ids and expects 404/403 or empty answers, never A's data.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from mongomem.identity import keys
from mongomem.identity.authorizer import verify
from mongomem.identity.service import create_key, revoke_key
from mongomem.local.http import ApiFront, LocalAuthorizer, to_event
from mongomem.local.lambdas import find_functions_dir, load_handler
from mongomem.local.queue import local_queue_factory
from mongomem.local.stack import API_ROUTES
from mongomem.models.common import Scope
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from tests.conftest import load_event, load_function
from tests.helpers import report_figures

# Figures for docs/security.md, printed at the end of the module.
FIGURES = {"probes": 0, "leaks": 0}
report_figures("cross-tenant probes", lambda: f"{FIGURES['probes']}, leaks: {FIGURES['leaks']}")


@pytest.fixture
def svc(make_settings: Any, tmp_path: Path) -> Any:
    services = Services(
        make_settings(),
        llm=ScriptedLLM({}),
        embedder=HashingEmbedder(dim=64),
        vector_index=EmbeddedIndex(tmp_path / "v"),
        queue_factory=local_queue_factory,
    )
    configure(services)
    yield services
    configure(None)
    services.database.drop()


class Gateway:
    """Authorizer + functions, like API Gateway (and the local stack's HTTP front)."""

    def __init__(self, ttl: float = 300.0) -> None:
        functions = find_functions_dir(Path(__file__))
        self.authorizer = LocalAuthorizer(
            lambda: load_handler(functions, "authorizer"), keys_required=lambda: True, ttl_seconds=ttl
        )
        loaders = {name: (lambda n=name: load_handler(functions, n)) for _, name in API_ROUTES}
        self.front = ApiFront([(p, loaders[n], n) for p, n in API_ROUTES], self.authorizer)

    def call(
        self, method: str, path: str, key: str | None, body: Any = None, **query: str
    ) -> tuple[int, dict[str, str], str]:
        target = path + ("?" + urlencode(query) if query else "")
        headers = {"Content-Type": "application/json"}
        if key:
            headers["x-api-key"] = key
        raw = json.dumps(body).encode() if body is not None else b""
        result = self.front.invoke(to_event(method, target, headers, raw, "203.0.113.10"))
        return int(result["statusCode"]), dict(result.get("headers") or {}), str(result.get("body") or "")


@pytest.fixture
def gateway(svc: Any) -> Gateway:
    return Gateway()


def new_key(svc: Any, tenant: str, kind: str, user: str | None = None) -> str:
    plaintext, _ = create_key(svc.api_keys, tenant, kind, user)
    return plaintext


# -- keys ---------------------------------------------------------------------------------------
def test_keys_are_stored_hashed_and_verified_by_id_and_hash(svc: Any) -> None:
    store = svc.api_keys
    plaintext, record = create_key(store, "acme", "service_account", "agent-7")
    assert plaintext.startswith(f"mm_{record['_id']}_") and len(plaintext) > 50
    stored = svc.db["api_keys"].find_one({"_id": record["_id"]})
    # Then the secret is nowhere in the database, only its SHA-256
    assert plaintext not in json.dumps(stored, default=str) and stored["hash"] == keys.hash_key(plaintext)
    principal = verify(plaintext, store)
    assert principal is not None
    assert (principal.tenant, principal.kind, principal.fixed_user_id) == (
        "acme",
        "service_account",
        "agent-7",
    )
    # wrong secret with a real key id, malformed keys, unknown ids: all refused
    forged = plaintext[:-4] + ("AAAA" if not plaintext.endswith("AAAA") else "BBBB")
    for bad in (forged, "", "mm_", "not-a-key", "mm_0123456789abcdef_" + "A" * 43, plaintext + "x"):
        assert verify(bad, store) is None, bad
    revoke_key(store, record["_id"])
    assert verify(plaintext, store) is None


def test_service_account_without_user_gets_a_stable_identity_of_its_own(svc: Any) -> None:
    store = svc.api_keys
    _, record = create_key(store, "acme", "service_account")
    assert record["fixed_user_id"] == f"sa-{record['_id']}"
    with pytest.raises(Exception, match="service accounts only"):
        create_key(store, "acme", "memory_service", "someone")


def test_authorizer_function_answers_with_simple_responses(svc: Any, ctx: Any) -> None:
    fn = load_function("authorizer")
    key = new_key(svc, "acme", "memory_service")
    event = load_event("authorizer_request.json", identitySource=[key])
    event["headers"]["x-api-key"] = key
    answer = fn.lambda_handler(event, ctx)
    assert answer["isAuthorized"] is True
    assert answer["context"]["tenant"] == "acme" and answer["context"]["kind"] == "memory_service"
    assert all(isinstance(v, str) for v in answer["context"].values())
    # the sample's placeholder key does not exist
    assert fn.lambda_handler(load_event("authorizer_request.json"), ctx) == {
        "isAuthorized": False,
        "context": {},
    }


def test_missing_invalid_and_revoked_keys_get_401_json(svc: Any) -> None:
    gw = Gateway(ttl=0.0)  # no caching: a revocation shows at once
    key = new_key(svc, "acme", "memory_service")
    path = "/v1/memories"
    assert gw.call("GET", path, key, user_id="u1")[0] == 200
    wrong_last = "Q" if key[-1] != "Q" else "R"  # a key ending in Q would be its own "wrong" key
    for bad in (None, "mm_nope", key[:-1] + wrong_last):
        status, _, body = gw.call("GET", path, bad, user_id="u1")
        assert status == 401 and json.loads(body)["error"]["code"] == "unauthorized"
    revoke_key(svc.api_keys, keys.key_id_of(key) or "")
    assert gw.call("GET", path, key, user_id="u1")[0] == 401


def test_authorizer_results_are_cached_per_key_like_api_gateway(svc: Any, gateway: Gateway) -> None:
    key = new_key(svc, "acme", "memory_service")
    for _ in range(5):
        assert gateway.call("GET", "/v1/memories", key, user_id="u1")[0] == 200
    assert gateway.authorizer.invocations == 1
    # within the TTL a revoked key keeps working (API Gateway behaves the same; documented)
    revoke_key(svc.api_keys, keys.key_id_of(key) or "")
    assert gateway.call("GET", "/v1/memories", key, user_id="u1")[0] == 200


def test_service_account_is_its_own_memory_user_and_says_so(svc: Any, gateway: Gateway) -> None:
    key = new_key(svc, "acme", "service_account", "travel-agent")
    body = {"user_id": "someone-else", "turns": [{"role": "user", "content": "I prefer aisle seats"}]}
    status, headers, answer = gateway.call("POST", "/v1/sessions/s1/turns", key, body)
    assert status == 201 and json.loads(answer)["user_id"] == "travel-agent"
    assert headers["x-mongomem-user-id"] == "travel-agent"
    stored = svc.db["turns"].find_one({})
    assert (stored["tenant"], stored["user_id"]) == ("acme", "travel-agent")
    # every call through the account shares the one scope, whatever user_id it sends
    status, headers, page = gateway.call("GET", "/v1/sessions/s1/turns", key, user_id="another")
    assert status == 200 and len(json.loads(page)["turns"]) == 1
    assert headers["x-mongomem-user-id"] == "travel-agent"
    status, headers, _ = gateway.call("GET", "/v1/working-memory", key)
    assert status == 200 and headers["x-mongomem-user-id"] == "travel-agent"


def test_memory_service_must_name_user_and_acts_within_its_tenant(svc: Any, gateway: Gateway) -> None:
    key = new_key(svc, "acme", "memory_service")
    status, _, body = gateway.call(
        "POST", "/v1/sessions/s1/turns", key, {"turns": [{"role": "user", "content": "x"}]}
    )
    assert status == 400 and json.loads(body)["error"]["details"]["path"] == "user_id"
    status, headers, _ = gateway.call(
        "POST", "/v1/sessions/s1/turns", key, {"user_id": "bo", "turns": [{"role": "user", "content": "x"}]}
    )
    assert status == 201 and headers["x-mongomem-user-id"] == "bo"
    assert svc.db["turns"].find_one({})["tenant"] == "acme"


def test_iam_callers_resolve_to_the_default_tenant(svc: Any) -> None:
    from mongomem.api.identity import principal_from_event

    event = load_event("get_session.json")
    event["requestContext"]["authorizer"] = {
        "iam": {"userArn": "arn:aws:iam::123456789012:role/ops", "userId": "A"}
    }
    principal = principal_from_event(event, "default")
    assert (principal.tenant, principal.kind) == ("default", "memory_service")
    assert principal.key_id == "iam:arn:aws:iam::123456789012:role/ops"


# -- the cross-tenant walk ------------------------------------------------------------------------
def seed_tenant_a(svc: Any, gw: Gateway, key_a: str, user: str, marker: str) -> dict[str, str]:
    """Tenant A's user gets data everywhere, each piece carrying the marker."""
    ids = {"session": f"sess-{uuid.uuid4().hex[:8]}", "thread": f"thr-{uuid.uuid4().hex[:8]}", "user": user}
    turns = [
        {"role": "user", "content": f"my locker code is {marker}"},
        {"role": "assistant", "content": "ok"},
    ]
    status, _, _ = gw.call(
        "POST", f"/v1/sessions/{ids['session']}/turns", key_a, {"user_id": user, "turns": turns}
    )
    assert status == 201
    payload = {"subject": "user", "attribute": "locker code", "value": marker}
    status, _, body = gw.call(
        "POST", "/v1/memories", key_a, {"user_id": user, "type": "semantic", "payload": payload}
    )
    assert status == 201
    ids["memory"] = json.loads(body)["memory"]["memory_id"]
    procedure = {"name": f"Open locker {marker}", "when_to_use": "At the gym", "steps": [f"Enter {marker}"]}
    # private: the user's own (org memories reach the tenant's users by design, probed separately)
    status, _, body = gw.call(
        "POST",
        "/v1/memories",
        key_a,
        {"user_id": user, "type": "procedural", "payload": procedure, "visibility": "private"},
    )
    assert status == 201
    ids["procedure"] = json.loads(body)["memory"]["memory_id"]
    status, _, _ = gw.call(
        "PUT", "/v1/working-memory", key_a, {"content": f"# Notes\n{marker}"}, user_id=user
    )
    assert status == 200
    thread = {
        "thread_id": ids["thread"],
        "user_id": user,
        "title": marker,
        "metadata": {"workingMemory": marker},
    }
    assert gw.call("POST", "/v1/threads", key_a, thread)[0] == 201
    assert svc.turn_indexer.run()["turns"] == 2  # A's turns are in the recall index too
    status, _, body = gw.call("POST", f"/v1/sessions/{ids['session']}/flush", key_a, user_id=user)
    assert status == 200
    ids["snapshot"] = json.loads(body)["snapshot"]["snapshot_id"]
    status, _, body = gw.call(
        "PUT",
        "/v1/working-memory",
        key_a,
        {"content": f"thread {marker}"},
        scope="thread",
        user_id=user,
        thread_id=ids["thread"],
    )
    assert status == 200
    return ids


def probes(ids: dict[str, str], marker: str) -> list[tuple[str, str, Any, dict[str, str], set[int]]]:
    """(method, path, body, query, acceptable statuses) for every route, aimed at tenant A's ids."""
    u, s, m, t = ids["user"], ids["session"], ids["memory"], ids["thread"]
    q = {"user_id": u}
    turn = {"user_id": u, "turns": [{"role": "user", "content": "probe"}]}
    # same key as A's memory: a write must create the caller's own memory, never reinforce or update A's
    fact = {
        "user_id": u,
        "type": "semantic",
        "payload": {"subject": "user", "attribute": "locker code", "value": "probe-value"},
    }
    thread_q = {"user_id": u, "scope": "thread", "thread_id": t}
    own = {200, 201}
    return [
        # first: the caller's own log of calls for this user id is still empty (later probes search with
        # the marker, and the log echoes the caller's own queries back to it)
        ("GET", f"/v1/users/{u}/requests", None, {}, {200, 403}),
        ("GET", "/v1/snapshots", None, q, {200}),
        ("GET", f"/v1/sessions/{s}/turns", None, q, {404}),
        ("GET", f"/v1/sessions/{s}", None, q, {404}),
        ("POST", f"/v1/sessions/{s}/flush", None, q, {404}),
        ("DELETE", f"/v1/sessions/{s}/turns", None, {"user_id": u, "from_seq": "1"}, {404}),
        ("DELETE", f"/v1/sessions/{s}/turns", None, q, {404}),
        ("DELETE", f"/v1/threads/{s}", None, q, {404}),  # A's session, as a thread
        ("POST", f"/v1/threads/{s}/clone", {"new_thread_id": "probe-clone"}, q, {404}),
        ("POST", f"/v1/sessions/{s}/turns", turn, {}, {201}),  # lands in the caller's own scope
        # an import naming A's user and session also lands in the caller's own scope
        (
            "POST",
            "/v1/import",
            {
                "user_id": u,
                "turns": [
                    {
                        "session_id": s,
                        "role": "user",
                        "content": "imported probe",
                        # after the turns the caller's own probes recorded in that session (an import
                        # adds history after a session's turns, never before them)
                        "timestamp": "2099-05-08T10:00:00Z",
                    }
                ],
            },
            {},
            {200},
        ),
        ("GET", f"/v1/memories/{m}", None, {"user_id": u, "history": "true"}, {404}),
        ("GET", f"/v1/memories/{m}", None, q, {404}),
        ("GET", "/v1/domains", None, q, {200}),
        ("GET", "/v1/memories", None, q, {200}),
        ("GET", "/v1/memories", None, {"user_id": u, "status": "active", "type": "semantic"}, {200}),
        ("GET", "/v1/memories", None, {"user_id": u, "type": "semantic", "subject": "user"}, {200}),
        ("GET", "/v1/memories", None, {"user_id": u, "type": "semantic", "subject_prefix": "us"}, {200}),
        ("DELETE", f"/v1/memories/{m}", None, q, {404}),
        ("GET", f"/v1/memories/{ids['procedure']}/skill", None, q, {404}),
        (
            "POST",
            f"/v1/memories/{ids['procedure']}/feedback",
            {"user_id": u, "outcome": "failure"},
            {},
            {404},
        ),
        ("POST", "/v1/procedures/discover", {"user_id": u, "query": f"open locker {marker}"}, {}, {200}),
        ("POST", "/v1/memories/search", {"user_id": u, "query": marker}, {}, {200, 404}),
        ("POST", "/v1/memories/search", {"user_id": u, "query": "locker code", "mode": "bm25"}, {}, {200}),
        ("GET", "/v1/memories/conflicts", None, q, {200}),
        ("POST", "/v1/memories", fact, {}, {201}),  # the caller's own memory, never a REINFORCE of A's
        ("GET", f"/v1/threads/{t}", None, q, {404}),
        ("PATCH", f"/v1/threads/{t}", {"title": "probe", "metadata": {"workingMemory": "probe"}}, q, {404}),
        ("POST", f"/v1/threads/{t}/clone", {"new_thread_id": "probe-clone-2"}, q, {404}),
        ("DELETE", f"/v1/threads/{t}", None, q, {404}),
        ("GET", "/v1/threads", None, q, {200}),
        ("POST", "/v1/threads", {"thread_id": t, "user_id": u}, {}, {201}),  # no 409: existence is hidden
        ("GET", "/v1/working-memory", None, q, {200}),
        ("GET", "/v1/working-memory", None, thread_q, own),
        ("GET", "/v1/working-memory/tool", None, q, {200}),
        ("GET", "/v1/working-memory/tool", None, thread_q, own),
        ("PATCH", "/v1/working-memory", {"content": "probe"}, q, {200}),
        ("POST", "/v1/working-memory/tool", {"markdown": "probe"}, q, {200}),  # the caller's own memory
        ("PUT", "/v1/working-memory", {"content": "probe"}, thread_q, own),
        ("DELETE", "/v1/working-memory", None, q, {200}),
        ("POST", "/v1/recall", {"user_id": u, "query": f"locker code {marker}", "thread": s}, {}, {200}),
        # (context echoes its query, so the query must not carry the marker; "locker code" matches A's turn)
        ("POST", "/v1/context", {"user_id": u, "session_id": s, "query": "locker code"}, {}, {200}),
        ("GET", "/v1/status", None, {}, {200}),
        ("GET", "/v1/users", None, {}, {200}),
        ("GET", f"/v1/users/{u}/sessions", None, {}, {200, 403}),
        ("GET", f"/v1/snapshots/{ids['snapshot']}", None, q, {404}),
        ("POST", f"/v1/snapshots/{ids['snapshot']}/retry", {"type": "semantic"}, q, {404}),
        ("GET", "/v1/stats/memories", None, q, {200}),
        ("GET", "/v1/pipeline", None, q, {200}),
        ("DELETE", f"/v1/users/{u}", None, {}, {200, 403}),
        # operator routes act across tenants: an API key (of any tenant) is refused, whatever it asks
        ("GET", "/v1/admin/status", None, {}, {403}),
        ("GET", "/v1/admin/keys", None, {"tenant": "tenant-a"}, {403}),
        ("POST", "/v1/admin/keys", {"tenant": "tenant-a", "kind": "memory_service"}, {}, {403}),
        ("DELETE", "/v1/admin/keys/0123456789abcdef", None, {}, {403}),
    ]


def route_paths() -> set[tuple[str, str]]:
    """Every (method, path template) the two API functions serve."""
    found: set[tuple[str, str]] = set()
    for name in ("record_turns", "memory_api"):
        spec = load_function(name).api.app.get_openapi_json_schema()
        for path, ops in json.loads(spec)["paths"].items():
            found.update((method.upper(), path) for method in ops)
    return found


def covered(method: str, template: str, table: list[tuple[str, str, Any, dict[str, str], set[int]]]) -> bool:
    import re

    pattern = "^" + re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(template)) + "$"
    return any(m == method and re.match(pattern, p) for m, p, *_ in table)


def a_fingerprint(svc: Any, tenant: str, user: str) -> dict[str, Any]:
    """Everything tenant A's user has, to compare before and after the probes."""
    db = svc.db
    scope = {"tenant": tenant, "user_id": user}
    found = {
        name: sorted(json.dumps(d, default=str, sort_keys=True) for d in db[name].find(scope))
        for name in db.list_collection_names()
    }
    return {name: docs for name, docs in found.items() if docs}


def test_other_tenants_and_other_users_never_see_or_touch_tenant_a(svc: Any, gateway: Gateway) -> None:
    # Given tenant A's user with data in every collection and in the index, each piece marked
    marker = f"LOCKER-{uuid.uuid4().hex}"
    key_a = new_key(svc, "tenant-a", "memory_service")
    ids = seed_tenant_a(svc, gateway, key_a, "alice", marker)
    before = a_fingerprint(svc, "tenant-a", "alice")
    assert {"turns", "sessions", "memories", "resources", "threads"} <= set(before)
    # (a positive control: A's own key reads the marker back)
    assert marker in gateway.call("GET", f"/v1/memories/{ids['memory']}", key_a, user_id="alice")[2]
    assert marker in gateway.call("GET", f"/v1/sessions/{ids['session']}/turns", key_a, user_id="alice")[2]
    assert (
        marker in gateway.call("POST", "/v1/recall", key_a, {"user_id": "alice", "query": "locker code"})[2]
    )
    callers = {
        "tenant B memory service": new_key(svc, "tenant-b", "memory_service"),
        "tenant B service account": new_key(svc, "tenant-b", "service_account", "bob"),
        "tenant A service account": new_key(svc, "tenant-a", "service_account", "agent-1"),
    }
    table = probes(ids, marker)
    # every route the functions serve is probed (a new route must be added to the table)
    missing = [r for r in route_paths() if not covered(*r, table)]
    assert not missing, f"routes without a cross-tenant probe: {missing}"
    leaks = []
    for who, key in callers.items():
        for method, path, body, query, ok in table:
            status, _, answer = gateway.call(method, path, key, body, **query)
            FIGURES["probes"] += 1
            if marker in answer:
                leaks.append((who, method, path, "marker in body"))
            if status not in ok:
                leaks.append((who, method, path, f"status {status}: {answer[:200]}"))
            if method == "GET" and path == "/v1/memories" and status == 200:
                assert json.loads(answer)["memories"] == [], (who, path)
            if path.endswith("/search") and status == 200:
                assert json.loads(answer)["results"] == [], (who, path)
            if path == "/v1/recall" and status == 200:
                assert json.loads(answer)["turn_ids"] == [], (who, path)
    FIGURES["leaks"] = len([x for x in leaks if x[3] == "marker in body"])
    assert not leaks, leaks
    # Then tenant A's data is byte-for-byte what it was: no read leaked, no write or delete reached it
    # (A's own log of calls holds the positive control's recall, and nothing of the probes)
    after = a_fingerprint(svc, "tenant-a", "alice")
    log = after.pop("recent_requests", [])
    assert after == {k: v for k, v in before.items() if k != "recent_requests"}
    assert [c.kind for c in svc.recent_requests.latest(Scope(tenant="tenant-a", user_id="alice"), 20)] == [
        "recall"
    ] and len(log) == 1
    assert svc.vector_index.count(tenant="tenant-a", user_id="alice") >= 1


def test_org_memories_reach_every_user_of_their_tenant_and_no_other_tenant(
    svc: Any, gateway: Gateway
) -> None:
    # Given alice's private fact (marked PRIVATE) and an org term she stated (marked ORG), one of them
    # scoped to one of her agents
    private, org = f"PRIVATE-{uuid.uuid4().hex}", f"ORG-{uuid.uuid4().hex}"
    key_a = new_key(svc, "tenant-a", "memory_service")
    fact = {"subject": "user", "attribute": "locker code", "value": private}
    term = {"term": "locker", "definition": f"a numbered cupboard ({org})", "domain": f"facilities-{org}"}
    ids = {}
    for name, type_, payload, extra in (
        ("fact", "semantic", fact, {}),
        ("agent", "semantic", {**fact, "attribute": "agent locker code"}, {"agent_id": "concierge"}),
        ("term", "taxonomic", term, {}),
    ):
        status, _, body = gateway.call(
            "POST", "/v1/memories", key_a, {"user_id": "alice", "type": type_, "payload": payload, **extra}
        )
        assert status == 201, body
        ids[name] = json.loads(body)["memory"]["memory_id"]
    callers = {
        "tenant B memory service": (new_key(svc, "tenant-b", "memory_service"), False),
        "tenant B service account": (new_key(svc, "tenant-b", "service_account", "bob"), False),
        "tenant A service account": (new_key(svc, "tenant-a", "service_account", "agent-1"), True),
        "tenant A memory service as carol": (key_a, True),
    }
    org_docs = sorted(json.dumps(d, default=str) for d in svc.db["memories"].find({"user_id": "#org"}))
    leaks = []
    for who, (key, same_tenant) in callers.items():
        reads = [
            ("POST", "/v1/memories/search", {"user_id": "carol", "query": "locker"}, {}),
            ("POST", "/v1/memories/search", {"user_id": "carol", "query": "locker", "mode": "bm25"}, {}),
            (
                "POST",
                "/v1/memories/search",
                {"user_id": "carol", "query": "locker", "agent_id": "concierge"},
                {},
            ),
            ("POST", "/v1/memories/search", {"user_id": "carol", "query": "locker", "visibility": "org"}, {}),
            ("GET", "/v1/memories", None, {"user_id": "carol"}),
            ("GET", "/v1/memories", None, {"user_id": "carol", "agent_id": "concierge"}),
            ("GET", "/v1/domains", None, {"user_id": "carol"}),
            ("GET", f"/v1/memories/{ids['term']}", None, {"user_id": "carol"}),
            ("GET", f"/v1/memories/{ids['fact']}", None, {"user_id": "carol"}),
            ("GET", f"/v1/memories/{ids['agent']}", None, {"user_id": "carol"}),
            ("POST", "/v1/context", {"user_id": "carol", "session_id": "s-x", "query": "locker"}, {}),
        ]
        for method, path, request_body, query in reads:
            status, _, answer = gateway.call(method, path, key, request_body, **query)
            FIGURES["probes"] += 1
            if private in answer:
                leaks.append((who, method, path, "private marker"))
            if org in answer and not same_tenant:
                leaks.append((who, method, path, "org marker in another tenant"))
            if status not in (200, 404):
                leaks.append((who, method, path, f"status {status}"))
        # the org term reaches the tenant's other users (a positive control), never another tenant's
        status, _, answer = gateway.call("GET", f"/v1/memories/{ids['term']}", key, user_id="carol")
        assert (status, org in answer) == ((200, True) if same_tenant else (404, False)), who
        # and nobody but a tenant-wide key of the tenant may delete it
        if who != "tenant A memory service as carol":
            status, _, _ = gateway.call("DELETE", f"/v1/memories/{ids['term']}", key, user_id="carol")
            assert status == (403 if same_tenant else 404), who
    assert not leaks, leaks
    # Then no probe changed the org memory; the tenant's own key may delete it
    assert (
        sorted(json.dumps(d, default=str) for d in svc.db["memories"].find({"user_id": "#org"})) == org_docs
    )
    assert gateway.call("DELETE", f"/v1/memories/{ids['term']}", key_a, user_id="carol")[0] == 200


# -- the local stack: open until the first key, then keys required; the keys CLI --------------------
def http(method: str, url: str, key: str | None = None, body: Any = None) -> tuple[int, dict[str, str], Any]:
    import urllib.error
    import urllib.request

    headers = {"Content-Type": "application/json", **({"x-api-key": key} if key else {})}
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, dict(resp.headers), json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), json.loads(err.read() or b"null")


def test_local_stack_runs_open_until_a_key_exists_then_requires_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mongomem.cli import main as cli_main
    from mongomem.local.stack import LocalStack

    data = tmp_path / "data"
    stack = LocalStack(data_dir=data, port=0, scan_seconds=3600).start()
    try:
        turn = {"user_id": "ana", "turns": [{"role": "user", "content": "hello"}]}
        # Given no key at all: `make dev` works without one, as the default tenant
        assert stack.keys_required is False
        assert http("POST", f"{stack.url}/v1/sessions/s1/turns", None, turn)[0] == 201
        assert svc_turn_tenant(stack) == "default"
        # When the operator creates a key with the CLI (it finds the running stack's database)
        assert (
            cli_main(
                ["keys", "create", "--tenant", "acme", "--kind", "memory_service", "--data-dir", str(data)]
            )
            == 0
        )
        key = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("mm_"))
        # Then keys are required, and the key acts in its tenant
        assert stack.keys_required is True
        status, _, body = http("GET", f"{stack.url}/v1/sessions/s1/turns?user_id=ana")
        assert status == 401 and body["error"]["code"] == "unauthorized"
        status, headers, _ = http("POST", f"{stack.url}/v1/sessions/s2/turns", key, turn)
        assert status == 201 and headers["x-mongomem-user-id"] == "ana"
        assert (
            http("GET", f"{stack.url}/v1/sessions/s1?user_id=ana", key)[0] == 404
        )  # default tenant's session
        # list shows the key without its secret; revoke takes it out (after the authorizer cache's TTL)
        assert cli_main(["keys", "list", "--data-dir", str(data)]) == 0
        listing = capsys.readouterr().out
        assert keys.key_id_of(key) in listing and key not in listing and "active" in listing
        # (the stack's last active key: --force, knowing that the stack then refuses every request)
        assert (
            cli_main(["keys", "revoke", keys.key_id_of(key) or "", "--force", "--data-dir", str(data)]) == 0
        )
        stack.authorizer._cache.clear()  # as if the 300 s TTL had passed
        assert http("GET", f"{stack.url}/v1/sessions/s2?user_id=ana", key)[0] == 401
    finally:
        stack.stop()


def svc_turn_tenant(stack: Any) -> str:
    return str(stack.services.db["turns"].find_one({})["tenant"])
