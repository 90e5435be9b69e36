"""Issue 33's twenty-third independent probe (h-probe23, on main dc28580), over HTTP on a running local stack
(tests/e2e/probe_stack.py) whose project config extracts semantic facts with the offline rules (terms and procedures
org-wide, the default) and declares the custom org type `dock_rule`. Classes: one-user powers, erasure leaving copies,
expired memories, inputs (another tester probed shared-memory name/value reading at the same time).
Payloads none of the earlier probes used (tests/e2e/test_probe_findings.py ... test_probe21_findings.py,
test_erasure_copies.py, test_mcp.py). Each finding's test fails on dc28580 for the reason given (seen with
`--runxfail`) and is marked `xfail(strict=True)` until it is fixed; the attacks that held are kept as passing
tests.

FINDINGS

1. (MED: a smaller broken doc promise; no 5xx, no exposure) A path segment that percent-decodes to an ASCII
  character no id holds and that Powertools' route pattern does not match ("#", "?", "\\", '"', "`") is
  decoded anyway, and the request answers 404 `route_not_found` "no route GET /v1/memories/#org: the routes
  are listed at /v1/docs" instead of the documented 422: the caller is told the route does not exist.
  Seen (bob's one-user key, and the tenant key): `GET /v1/memories/%23org` -> 404 route_not_found (path
  "/v1/memories/#org"); `GET /v1/memories/a%3Fb` -> 404 ("/v1/memories/a?b"); `GET /v1/memories/%5C` -> 404;
  `DELETE /v1/memories/%23org`, `GET|PATCH|DELETE /v1/threads/a%5Cb`, `GET /v1/threads/%23x`,
  `GET /v1/sessions/%3F/turns`, `POST /v1/sessions/a%23b/turns` -> 404 route_not_found; while
  `GET /v1/memories/a%2Fb`, `/v1/memories/%00`, `/v1/memories/%2e%2e`, `/v1/memories/%C0%AE%C0%AE`,
  `/v1/memories/%252e%252e`, `/v1/memories/%26`, `/v1/memories/a%20b` -> 422 as documented. The Python SDK
  does not refuse such an id before sending either: `MemoryClient.list_turns("a\\\\b", "bob")` ->
  `MemoryClientError 404 route_not_found: no route GET /v1/sessions/a\\b/turns` (not `validation_error`).
  docs/security.md "Issue 33's inputs": "a segment decoding to a "/", a control or a character no id holds
  stays as sent and is a 422". Cause: `layers/core/mongomem/api/app.py::_segment` keeps a decoded segment
  whenever it is ASCII, printable and has no "/", so "#", "?", "\\", '"' and "`" reach the resolver, whose
  `<param>` pattern (`aws_lambda_powertools ... _NAMED_GROUP_BOUNDARY_PATTERN`) refuses them: no route
  matches. Fix: decode a segment only when the result matches `ID_PATTERN`'s character class (or every
  character is an id character / a literal route word), else leave it as sent (so the route matches and the
  id pattern answers 422); have the SDKs check ids against `ID_PATTERN` before sending.

2. (MED; the hang part seen once, not reproduced) A restatement's `metadata` is merged over the memory's (issue 33's
  twentieth probe's fix) with no bound on the merged size: each restatement may bring another ~3.6 MB of new keys
  (one request stays under `limits.max_body_bytes`, 4 MiB; the metadata map has no size cap of its own:
  `SafeMapping` bounds keys, depth and each string only), and the stored metadata grows by that much per call,
  up to MongoDB's 16 MB document limit. Seen (eve's one-user key, the private fact {"subject": "eve locker",
  "attribute": "locker number", "value": "locker 4417"} written again and again, each time with `metadata` of 60
  new keys of 60,000 "x"): 201 ADD (metadata 3.6 MB), 200 REINFORCE (7.2 MB), 200 REINFORCE (10.8 MB),
  200 REINFORCE (14.4 MB), then 400 "a value cannot be stored (not representable in BSON)". On the first stack
  the 4th call never answered (client timeout 120 s) and from then on every call hung: `GET /v1/status` with
  eve's key -> no answer in 30 s (twice), the authorizer's `api_keys.find_one`, the session scanner's
  `claim_due` and the local queue all blocked on the database (gdb: the memory API thread in
  `memory_store.reinforce` -> `driver.update_and_read`; the database child's threads in WiredTiger calls), and
  SIGTERM did not stop the database child (SIGKILL did); on a fresh stack, twice, the same sequence answered
  (0.9-3.0 s a call) and the stack stayed up. While two such memories exist, eve's `GET /v1/memories?limit=5`
  takes 2.3-3.5 s (it returns ~29 MB), and on the local stack holds the memory API function (one request at a
  time) for every user meanwhile. docs/security.md's inputs promise (no crash, no hang; sizes bounded by the
  documented limits). Cause: `layers/core/mongomem/longterm/write/writer.py::_restated_fields` (`fields["metadata"]
  = {**held, **new.metadata}`) with no cap on a memory's metadata (`models/memory.py` `metadata: SafeMapping`).
  Fix: cap a memory's metadata (e.g. 64 KB serialized and a number of keys) on every write and on the merged
  result, answering 413/422 when a merge would pass it; test a merge past the cap on the running stack.

3. (MED, arguably LOW: a smaller broken doc promise; no exposure) Erasing a user drops the tenant's own metadata
  from an org memory. Since the twentieth probe's fix a tenant-wide restatement's `metadata` is merged over the
  memory's, but the merged map keeps the first giver as `metadata_by`, and erasure clears the whole map of
  every version whose `metadata_by` names the erased user. Seen: ivy's one-user key writes the new org term
  {"term": "IVT10878", "definition": "the IVT10878 shelf holds the spare drills"} with metadata {"ivynote":
  "IVYMETA10878"} -> 201 ADD; the tenant key (user_id alice) restates it with metadata {"tnote": "TEN10878"}
  -> 200 REINFORCE, metadata {"ivynote": ..., "tnote": "TEN10878"}; `DELETE /v1/users/ivy` -> 200
  (org_memories_updated 1); eve then reads the term active with metadata {} - the tenant's "tnote" is gone
  (ivy's key rightly went). docs/security.md "Erasure": "What a tenant-wide key wrote naming the user is the
  tenant's word ... it stays ... erasing a user never undoes the tenant's correction"; the metadata merge makes
  the tenant's keys part of a map erasure treats as the user's. Cause:
  `layers/core/mongomem/longterm/write/writer.py::_restated_fields` merges without recording who gave each
  key (`metadata_by` stays the first giver), and the erasure's metadata clearing (`adapters/mongo/erasure.py`,
  `metadata_by`) unsets the whole map. Fix: keep `metadata_by` per key (or clear only the keys the erased user
  gave: the tenant's restated keys become the tenant's).

HELD (tests kept below, or tried by hand on the running stack):
- one-user powers: alice's one-user key restating the tenant's org term that names alice (the memory's own
  user), with `expires_at` 3 s ahead and metadata {"src": "ALICEMETA"} -> 200 REINFORCE, the term stays in
  eve's list and context after the 3 s and its metadata stays {}; bob's own new org term restated by bob with
  `expires_at` 2 s ahead -> NOOP, still listed, and bob's `DELETE /v1/memories/{id}` of it 403; the tenant key
  with `x-mongomem-as-user: bob` on an org procedure with `allowed_tools` 403; bob's one-user key with
  "allowed-tools" / "allowedTools" (undeclared payload keys) -> stored without any grant; the tenant key with
  `x-mongomem-as-user: bob`: `GET /v1/users` lists no one else, alice's requests, sessions and erase 403,
  `/v1/admin/keys` 403, threads / working memory / snapshots / conflicts served as bob; bob's one-user key on
  alice's snapshot (get, retry), session, turns, flush, thread, clone (404), `/v1/pipeline`,
  `/v1/stats/memories`, `/v1/status`, `/v1/domains`, `/v1/memories/conflicts` with `user_id=alice` (served
  as bob), no response holding alice's words; procedure feedback with `used_at` 9999-12-31 422. (A one-user
  key may erase its own user, documented; its org memories only it stated go with it.)
- erasure: after `DELETE /v1/users/ivy` ivy's metadata key on an org term the tenant restated is gone (finding 3
  is the tenant's keys going with it); the tenant's org term restated by the tenant key naming a user "zed" with
  metadata {"tnote": ...} keeps it after `DELETE /v1/users/zed` (org_memories_updated 1, metadata kept); bob's
  self-erase (his one-user key) took his three org memories only he stated and 9 request-log calls.
- expiry: a proposal's own `expires_at` is not carried (documented: it keeps the replaced version's).
- inputs: encoded ids (double encoding `%252e%252e`, `%2e%2e`, `%2E`, overlong `%C0%AE%C0%AE`, `%00`, `%0a`,
  `%7F`, `a%2Fb`, `%E2%80%AE`, fullwidth `%ef%bc%8e`, `%26`, `a%20b`) 422; `/console/%2E%2E/v1/users/alice/requests`
  without a key (public by its raw prefix) 404 with nothing of alice's, `/console/%2E%2E` 404; bodies nested
  200,000 deep (arrays, objects, inside a payload and working memory), a 5,000-digit integer, NaN, duplicate
  keys, UTF-16, a BOM, a lone surrogate on 12 routes: 400/422, never a 5xx; 24 repeated-character values
  (spaces, "<", "</mongomem-memory", "1.", "-", "[", "&#", combining marks, zero-width spaces, backslashes,
  "12:30 pm", "a-b-") as a fact's value (1,800 characters), a context query (2,000), a turn (30,000) and a
  search query (900): every call < 0.12 s; a memory with 50,000 metadata keys (446 KB) 0.89 s, a turn's
  metadata with 200,000 keys 1.28 s (1.9 MB).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mongomem.client import MemoryClient, MemoryClientError
from tests.e2e.probe_stack import Stack, answering_stack, call, config, dock_rule, unique

USERS = ("alice", "bob", "eve", "frank")
CONFIG = config(custom_types=dock_rule("org")).replace("enabled: []", "enabled: [semantic]")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    yield from answering_stack(tmp_path_factory.mktemp("probe23-findings"), USERS, CONFIG)


# -- 1. an id decoding to "#", "?", "\\" answers 404 route_not_found, not the documented 422 (MED) -------------
_UNROUTED = [
    ("GET", "/v1/memories/%23org"),
    ("GET", "/v1/memories/a%3Fb"),
    ("GET", "/v1/memories/%5C"),
    ("DELETE", "/v1/memories/%23org"),
    ("GET", "/v1/threads/a%5Cb"),
    ("GET", "/v1/threads/a%22b"),
    ("GET", "/v1/sessions/%3F/turns"),
    ("GET", "/v1/users/a%60b/requests"),
]


@pytest.mark.parametrize(("method", "path"), _UNROUTED)
def test_an_id_no_route_reads_is_refused_as_an_id(stack: Stack, method: str, path: str) -> None:
    """MED. bob's one-user key: an id decoding to a character no id holds is a 422 validation_error (as
    `%2F`, `%00`, `%2e%2e` are), not 404 "no route ...: the routes are listed at /v1/docs"."""
    status, answer = call(stack, stack.users["bob"], method, path)
    assert (status, answer["error"]["code"]) == (422, "validation_error"), answer


def test_the_sdk_refuses_an_id_no_route_reads(stack: Stack) -> None:
    """MED. `MemoryClient.list_turns("a\\\\b", "bob")` raises `MemoryClientError` validation_error (422 or refused
    before sending), not 404 route_not_found."""
    client = MemoryClient(stack.running.url, api_key=stack.users["bob"])
    with pytest.raises(MemoryClientError) as raised:
        client.list_turns("a\\b", "bob")
    assert "validation_error" in str(raised.value), str(raised.value)


# -- held: encoded forms of refused ids stay refused (422), never another route, never a 5xx ----------------
@pytest.mark.parametrize(
    "path",
    [
        "/v1/memories/%252e%252e",
        "/v1/memories/%2e%2e",
        "/v1/memories/%C0%AE%C0%AE",
        "/v1/memories/%00",
        "/v1/memories/%0a",
        "/v1/memories/%7F",
        "/v1/memories/a%2Fb",
        "/v1/memories/%E2%80%AE",
        "/v1/memories/%ef%bc%8e",
        "/v1/memories/%2523org",
        "/v1/sessions/%2e%2e/turns",
        "/v1/users/%2e%2e/requests",
        "/v1/snapshots/%2E%2e",
    ],
)
def test_an_encoded_refused_id_is_a_422(stack: Stack, path: str) -> None:
    """Held. Double encoding, overlong UTF-8, encoded controls, slashes, fullwidth dots, mixed case: 422."""
    status, answer = call(stack, stack.users["bob"], "GET", path)
    assert status == 422, answer


def test_an_encoded_dot_segment_rides_no_public_prefix(stack: Stack) -> None:
    """Held. Without a key, `/console/%2E%2E/v1/users/alice/requests` (public by its raw prefix, decoded to
    "/console/../v1/...") reaches no API route: 404 route_not_found, nothing of alice's."""
    own = unique()
    status, _ = call(
        stack,
        stack.users["alice"],
        "POST",
        f"/v1/sessions/s-{own}/turns",
        {"turns": [{"role": "user", "content": f"my locker code is PUB{own}"}]},
    )
    assert status == 201
    status, answer = call(stack, "", "GET", "/console/%2E%2E/v1/users/alice/requests")
    assert status == 404 and f"PUB{own}" not in str(answer), answer


# -- 2. restated metadata merges without bound: the memory grows by a request's size per call (MED) ----------
def test_restated_metadata_stays_within_a_requests_size(stack: Stack) -> None:
    """MED. A one-user key writes a private fact with 3.6 MB of metadata, then restates it twice with 3.6 MB
    of other keys each (every request under max_body_bytes, 4 MiB): a restatement is refused (413/422), or the
    memory's metadata stays within 4 MiB. On dc28580 both restatements are 200 REINFORCE and the memory holds
    10.8 MB of metadata (a 4th call hung the whole stack once, seen by hand)."""
    own = unique()
    key = stack.users["frank"]
    fact = {"subject": f"locker {own}", "attribute": "locker number", "value": "locker 4417"}
    sizes = []
    for i in range(3):
        meta = {f"k{i}_{j}": "x" * 60_000 for j in range(60)}
        status, answer = call(
            stack, key, "POST", "/v1/memories", {"type": "semantic", "payload": fact, "metadata": meta}
        )
        if status in (413, 422):
            return  # refused: the merge is bounded
        assert status in (200, 201), answer
        sizes.append(len(json.dumps(answer["memory"]["metadata"])))
        if i:  # the keys the memory held and this statement does not repeat are gone: the caller is told
            assert "its metadata is this statement's" in answer["reason"], answer["reason"]
    assert max(sizes) <= 4 * 1024 * 1024, sizes


# -- 3. erasing a user drops the tenant's merged metadata from an org memory (MED, arguably LOW) -------------
def _as_user(stack: Stack, user: str, body: dict[str, Any]) -> tuple[int, Any]:
    """POST /v1/memories with the tenant key narrowed to `user` (`x-mongomem-as-user`: a one-user host)."""
    headers = {"Content-Type": "application/json", "x-api-key": stack.tenant, "x-mongomem-as-user": user}
    request = urllib.request.Request(
        stack.running.url + "/v1/memories", data=json.dumps(body).encode(), method="POST", headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_erasing_a_user_keeps_the_tenants_metadata_on_an_org_memory(stack: Stack) -> None:
    """MED. A one-user host for "mi-<own>" writes a new org term with metadata {"usernote": ...}; the tenant
    restates it with {"tnote": "TEN<own>"} (merged); the user is erased; eve reads the term with the tenant's
    "tnote" kept (on dc28580: metadata {})."""
    own = unique()
    user = f"mi-{own}"
    term = {"term": f"MIT{own.upper()}", "definition": f"the MIT{own} shelf holds the spare drills"}
    status, written = _as_user(
        stack, user, {"type": "taxonomic", "payload": term, "metadata": {"usernote": own}}
    )
    assert (status, written["decision"], written["memory"]["visibility"]) == (201, "ADD", "org"), written
    memory = written["memory"]["memory_id"]
    body = {"user_id": "alice", "type": "taxonomic", "payload": term, "metadata": {"tnote": f"TEN{own}"}}
    status, restated = call(stack, stack.tenant, "POST", "/v1/memories", body)
    assert status == 200 and restated["memory"]["metadata"].get("tnote") == f"TEN{own}", restated
    status, erased = call(stack, stack.tenant, "DELETE", f"/v1/users/{user}")
    assert status == 200, erased
    status, found = call(stack, stack.users["eve"], "GET", f"/v1/memories/{memory}")
    assert status == 200 and found["memory"]["status"] == "active", found
    assert found["memory"]["metadata"] == {"tnote": f"TEN{own}"}, found["memory"]["metadata"]


# -- held: the memory's own user restating an org memory changes neither its expiry nor its metadata -------
def test_the_named_users_restatement_leaves_an_org_terms_expiry_and_metadata(stack: Stack) -> None:
    """Held. The tenant's org term names alice; alice's one-user key restates it with `expires_at` 2 s ahead
    and metadata: REINFORCE, and after 3 s eve still reads it active with no metadata."""
    own = unique()
    term = {"term": f"EXT{own.upper()}", "definition": f"the EXT{own} dock closes at nine in the evening"}
    body = {"user_id": "alice", "type": "taxonomic", "payload": term, "reconcile": False}
    status, written = call(stack, stack.tenant, "POST", "/v1/memories", body)
    assert status == 201, written
    memory = written["memory"]["memory_id"]
    soon = (datetime.now(UTC) + timedelta(seconds=2)).isoformat()
    restated = {"type": "taxonomic", "payload": term, "expires_at": soon, "metadata": {"src": f"AL{own}"}}
    status, answer = call(stack, stack.users["alice"], "POST", "/v1/memories", restated)
    assert status in (200, 201), answer
    time.sleep(3.0)
    status, found = call(stack, stack.users["eve"], "GET", f"/v1/memories/{memory}")
    assert status == 200 and found["memory"]["status"] == "active", found
    assert f"AL{own}" not in json.dumps(found), found
