"""Issue 33's twenty-first independent probe (h-probe21, on main 76c6c45), over HTTP on a running local stack
(tests/e2e/probe_stack.py) whose project config extracts semantic facts with the offline rules (terms and procedures
org-wide, the default) and declares the custom org type `dock_rule`. Classes: one-user powers, erasure leaving copies,
expired memories, inputs (another tester probed shared-memory name/value reading at the same time).
Payloads none of the earlier probes used (tests/e2e/test_probe_findings.py ... test_probe19_findings.py,
test_erasure_copies.py, test_mcp.py). Each finding's test fails on 76c6c45 for the reason given (seen with
`--runxfail`) and was marked `xfail(strict=True)` until it was fixed (all five since, markers removed:
the API percent-decodes each path segment once, `api.app._decode_path`; the MCP working-memory tools take
`agent_id`, `tools.WM_AGENT`; a thread or turns delete takes their lines out of the observation log,
`forget_observed` (`ObservationRepository.forget`); erasure recomputes a procedure's last use from the remaining reports,
`erasure._last_use_again`; `GET /v1/users` counts unexpired memories only). The attacks that held are
kept as passing tests.

FINDINGS

1. (MED) An id the API accepts and documents as valid (`ID_PATTERN`: letters, digits and . _ : @ -) is
  unaddressable by the project's own clients when it holds ":" or "@": the Python SDK (`_call._seg`:
  `quote(value, safe="")`), the TypeScript SDK and the console (`encodeURIComponent`) percent-encode
  them ("chat:42" -> "chat%3A42", "ana@x.com" -> "ana%40x.com"), and the API matches the path
  parameter undecoded against the pattern: 422 "must be an identifier ... (got 'chat%3A42')". Seen:
  `POST /v1/sessions/chat:42/turns` (raw HTTP) -> 201, then `MemoryClient.record_turn("chat:42", ...)`
  -> MemoryClientError 422; likewise `get_thread("th:1@a")`, `delete_thread`, `list_turns`, `flush`
  of a session "s-em:1", and `GET /v1/users/ana%40x.com/sessions` (the console's path for a user
  "ana@x.com", whose erase is `DELETE /v1/users/ana%40x.com`) -> 422 while `/v1/users/ana@x.com/sessions`
  is 200; the TypeScript SDK (sdk-ts built with tsc, run by node 20): `recordTurns("chat:ts1", ...)` ->
  MongomemError 422 while `recordTurns("chat-ts1", ...)` -> 201. An agent whose session ids are
  "chat:<n>" cannot record a turn through either SDK or MCP;
  a thread made through the SDK cannot be read or deleted through it. docs/security.md "Issue 33's
  inputs" promises every accepted id stays addressable. Cause: the memory API's routes
  (`mongomem.api` resolvers) read path parameters without percent-decoding them (API Gateway's
  `rawPath` and the local front's are encoded). Fix: percent-decode each path parameter once after
  routing (refusing a decoded "/" or NUL), or have both SDKs and the console keep RFC 3986 pchars
  (":", "@") unencoded (`quote(value, safe=":@")`), and test an id of every allowed character
  through both SDKs.

2. (MED) The MCP server's working-memory tools (`get_working_memory`, `update_working_memory`, from the
  table `mongomem.tools.TOOLS`; the Python framework integrations share it but read their context
  without an agent, so only MCP splits; the TypeScript AI SDK tools pass `agentId`) have no `agent_id`, while `build_context`, `record_turn` and `search_memories`
  take one and the API's `POST /v1/working-memory/tool?agent_id=` honours it: an agent that reads its
  context as agent "planner" reads the planner's (empty) working memory, and its `update_working_memory`
  writes the user's shared one, overwriting what every other agent of the user shares. An `agent_id`
  argument given anyway is dropped without a word. Seen: `mongomem mcp --transport http --user-id bob`
  (tenant key in --api-key-file): `update_working_memory {"memory": "# MCPWMNOTE the user prefers metric
  units"}` -> the user's shared note; `update_working_memory {"memory": "# x", "agent_id": "planner"}` ->
  not an error, the shared note is now "# x" (version 2); `build_context {"agent_id": "planner", ...}` ->
  "(nothing to add: no memory matches yet)". Issue 33's "What must be true": "The working-memory tool
  honours `agent_id` like the read does" (its finding 5, fixed for the API route, not for the tools).
  Cause: `sdk/mongomem/tools.py::TOOLS` ("get_working_memory", "update_working_memory": `own` lacks an
  agent_id Param) and `mcp_server.tool_function` / `tools.arguments` dropping unknown arguments. Fix: give
  both tools `agent_id` (passed to `get_working_memory` / `apply_working_memory_tool`), and refuse an
  argument no parameter takes (a tool error the model can read).

3. (LOW) Erasing a user takes their procedure feedback out of an org procedure's counts
  (`erasure._forget_feedback` decrements `usage.successes` / `usage.failures`) but leaves
  `usage.last_used_at` (the caller's own `used_at`) and `usage.last_outcome` they set: every user still
  reads when the erased user used the procedure and how it went. Seen: the tenant's org procedure
  "deploy gate", ivy's `POST /v1/memories/{id}/feedback {"outcome": "failure"}` (via
  `x-mongomem-as-user: ivy`) -> usage {failures: 1, last_outcome: "failure"}; `DELETE /v1/users/ivy` ->
  200 (procedure_feedback 1); eve then reads usage {"successes": 0, "failures": 0, "last_used_at":
  <ivy's time>, "last_outcome": "failure"}: a use no remaining report stands for. docs/security.md
  "erasing the user takes their reports out of the counts and deletes them"; "Erasure leaves no copy we
  control". Fix: in `_forget_feedback`, recompute `last_used_at` / `last_outcome` from the remaining
  reports (or unset them when none is left).

4. (LOW) `GET /v1/users` (the console's Users view) counts an expired memory as one of the user's
  memories until MongoDB's TTL monitor deletes it (up to ~60-85 s): `MongoDirectory.users` counts
  `status == "active"` without the `expires_at` filter every other read has (`unexpired`). Seen: user
  gus with one live fact and two that expired 1 s before -> `{"user_id": "gus", "memories": 3}`, while
  the list, the conflicts view and /v1/domains already leave them out. docs/security.md "Retention":
  "Expired means gone from every read the moment expires_at passes". Fix: add the `unexpired` condition to
  the memories stream of `adapters/mongo/directory.py::MongoDirectory.users`.

5. (MED) Deleting a thread (`DELETE /v1/threads/{id}`) or a session's turns (`DELETE
  /v1/sessions/{id}/turns`) leaves the turns' words in the user's observation log, and every context that
  names the `observations` source keeps serving them verbatim. Seen (a stack extracting semantic facts):
  alice's thread "th-obs" with the turn "I keep my spare key OBSMARK under the blue flowerpot." and a
  session "s-obs2" with "My bank PIN is OBSPIN 4321, I told my sister.", both flushed; `POST /v1/context
  {"sources": [{"source": "observations"}], ...}` -> "## Observations ... - User: I keep my spare key
  OBSMARK ... - User: My bank PIN is OBSPIN 4321 ..."; `DELETE /v1/threads/th-obs` -> 200 {"turns": 2,
  "snapshots": 1, "index_entries": 4, ...} and `DELETE /v1/sessions/s-obs2/turns` -> 200 {"deleted": 2};
  the same context call still serves both lines (ids: the deleted turns), while the request log
  (`requestlog.without_gone`) already hides the calls whose block held them (its stored document,
  `recent_requests`, still holds both lines until 20 newer calls push them out). docs/working-memory.md
  (the thread delete "deletes ... its turns, session, snapshots and recall index entries (memories
  extracted from it stay)": an observation is "never a memory", docs/architecture.md);
  docs/integrations.md ("recall ... never returns a deleted one"); docs/security.md "Retention" (a turn
  deleted since leaves the request log). The Mastra adapter's `deleteThread` / `deleteMessages` go the
  same way. Cause: `ThreadService` delete and `DELETE /v1/sessions/{id}/turns` never touch the
  `observations` log (`adapters/mongo/observations.py`); only the user erase does. Fix: drop the log's
  lines whose turn ids were deleted (the thread's session, or seqs from `from_seq` on) in the same call,
  and say so in the delete's counts.

HELD (tests kept below, or tried by hand on the running stack):
- one-user powers: bob's one-user key on every route of /v1/openapi.json against alice's and the tenant's
  ids: operator routes (/v1/admin/keys GET/POST/DELETE, /v1/admin/status) 403, alice's requests, sessions
  and erase 403, her memory, skill, session, turns, thread and snapshot 404, lists and /v1/users name only
  bob, /v1/working-memory?user_id=alice serves bob's, an org delete and `reconcile: false` on an org kind
  (term, fact, procedure with allowed_tools) 403; `x-mongomem-as-user` naming another user with a one-user
  key 403, and "#org", "%23org", ".", "..", "", a NUL, 200 letters, "alice,bob" 400; the tenant key with
  `x-mongomem-as-user: eve` and `user_id: alice` everywhere (turns, flush, import, recall, clone,
  snapshots, stats, working memory, search) served eve; a repeated x-api-key or as-user header is read
  the same way (the last) by the authorizer and the function; a restatement with `expires_at` in the
  past from a one-user key does not make the org memory expire; `mongomem mcp --transport http --user-id
  bob` with the tenant key: list_memories refuses status "proposed". The working-memory tool route
  honours `agent_id` like the read (resource scope); thread scope is shared by the thread's agents on
  both sides.
- erasure: after `DELETE /v1/users/ivy` (turns, thread with metadata, thread, resource and agent working
  memory, a private fact, a new org term with alias and domain, a proposal, an org dock_rule, procedure
  feedback, an org procedure) no collection holds her words, alice's request log drops the context and
  search calls that showed them, the vector index files hold none while the stack runs, and after a
  clean stop no file of the data dir does; the stack's log holds no request value. A second erase
  removes 0. Deleted threads' and turns' text left no file after the stop (only soft-deleted memories,
  decided in docs/adr/0074).
- expiry: an expired fact, term, episode, preference, custom-type memory and procedure are gone from
  the list, get, history, search (every mode), context, discover, skill, feedback, /v1/domains, the
  conflicts view, /v1/status's conflict count, `mongomem memories export` (jsonl and skills); an
  expired predecessor is left out of a live version's history; a proposal against an expired org term
  goes with it; an expired superseded version is not found by search with `include_superseded` nor
  listed with `status=superseded`; MongoDB's TTL monitor deleted them within minutes.
- inputs: search, recall, context and discover with FTS / query syntax (quotes, AND/OR/NOT, NEAR(),
  "*", "^", ":", brackets, backslashes, 2,000 letters, 1,000 non-ASCII letters) answer 200 in < 1 s in
  every mode; `subject_prefix` is literal ("." "(a+)+$" "[" ".*"); skill names from "../../evil",
  "a/../../b", "..\\..\\win", "$HOME", "-rf" are slugs ("..", ".", U+2025, U+FF0E U+FF0E, "~" refused);
  chunked bodies 411, a negative or repeated Content-Length 400, 11 MiB refused before reading, 5 MiB
  413, a 3 MiB turn or working memory 413, a 70 KB header 431, 200 headers 431, a 10 KB+ URL 414, 60
  slow clients holding half-sent requests do not delay other calls (0.06 s); import lines naming
  `user_id` or a dot / slash / NUL session id 400; 38 paths (every route, the docs, the console, "/")
  times 10 methods (BREW, PROPFIND, TRACE, CONNECT, lower-case get, HEAD, OPTIONS, PATCH, PUT, M-SEARCH):
  no 5xx, every 405 with Allow; a one-user org custom-type write with 100,000 undeclared payload keys is
  stored without them; an observation line holding a forged block end is served without it; erasing a
  user drops their observation log and leaves no turn text in the vector index.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import socket
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from mongomem.client import MemoryClient, MemoryClientError
from mongomem.models.working_memory import Unchanged
from tests.e2e.probe_stack import Stack, answering_stack, call, config, dock_rule, unique

USERS = ("alice", "bob", "eve", "frank")
# semantic facts extracted (offline rules): a snapshot's turns reach the observation log (finding 5)
CONFIG = config(custom_types=dock_rule("org")).replace("enabled: []", "enabled: [semantic]")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    yield from answering_stack(tmp_path_factory.mktemp("probe21-findings"), USERS, CONFIG)


# -- held: an erased user's proposals, agent notes, feedback and org words leave every file ------------------
def _files_holding(root: Path, needle: str) -> list[str]:
    forms = [needle.encode(), needle.encode("utf-16-le")]
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            data = path.read_bytes()
        except FileNotFoundError:  # WiredTiger retires journal files itself
            continue
        if any(form in data for form in forms):
            found.append(str(path.relative_to(root)))
    return found


def test_an_erased_users_proposals_agent_notes_and_org_words_leave_every_file(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Held (runs first, on its own stack: one stack at a time). Ivy (her one-user key) records turns, a
    thread with metadata and thread working memory, an agent's working memory, a private fact, a new org
    term with an alias and a domain, a proposal against the tenant's term, an org dock_rule, and feedback on
    the tenant's org procedure; alice's context shows ivy's org term. After `DELETE /v1/users/ivy` no
    collection, no other user's request log and no read holds her words, and once the stack stopped no
    file of the data dir does."""
    mark = f"IVY{uuid.uuid4().hex[:10].upper()}"
    root = tmp_path_factory.mktemp("probe21-erase")
    stacks = answering_stack(root, ("alice", "ivy", "eve"), CONFIG)
    stack = next(stacks)
    try:
        ivy = stack.users["ivy"]
        sent = [
            (
                ivy,
                "POST",
                "/v1/sessions/s-ivy/turns",
                {"turns": [{"role": "user", "content": f"{mark} turn"}]},
            ),
            (
                ivy,
                "POST",
                "/v1/threads",
                {"thread_id": "th-ivy", "title": f"{mark} title", "metadata": {"k": mark}},
            ),
            (
                ivy,
                "POST",
                "/v1/working-memory/tool?thread_id=th-ivy&scope=thread",
                {"memory": f"# {mark} thread"},
            ),
            (
                ivy,
                "POST",
                "/v1/working-memory/tool?scope=resource&agent_id=ag1",
                {"memory": f"# {mark} agent"},
            ),
            (
                ivy,
                "POST",
                "/v1/memories",
                {
                    "type": "semantic",
                    "visibility": "private",
                    "payload": {"subject": "ivy", "attribute": "passport", "value": mark},
                },
            ),
            (
                ivy,
                "POST",
                "/v1/memories",
                {
                    "type": "taxonomic",
                    "payload": {
                        "term": f"T{mark}",
                        "definition": f"{mark} the west gate",
                        "aliases": [f"A{mark}"],
                        "domain": f"D{mark}",
                    },
                },
            ),
            (
                stack.tenant,
                "POST",
                "/v1/memories",
                {
                    "user_id": "alice",
                    "type": "taxonomic",
                    "payload": {"term": "GLORP", "definition": "the east gate count"},
                },
            ),
            (
                ivy,
                "POST",
                "/v1/memories",
                {
                    "type": "taxonomic",
                    "payload": {"term": "GLORP", "definition": f"the east gate count {mark}"},
                },
            ),
            (
                ivy,
                "POST",
                "/v1/memories",
                {"type": "dock_rule", "payload": {"rule": f"R{mark}", "value": mark}},
            ),
        ]
        for key, method, path, body in sent:
            status, answer = call(stack, key, method, path, body)
            assert status in (200, 201, 202), (path, answer)
        procedure = {
            "name": "deploy gate",
            "description": "deploy the gate",
            "when_to_use": "when deploying",
            "steps": ["build", "ship"],
        }
        status, written = call(
            stack,
            stack.tenant,
            "POST",
            "/v1/memories",
            {"user_id": "alice", "type": "procedural", "payload": procedure},
        )
        assert status == 201, written
        memory = written["memory"]["memory_id"]
        status, _ = call(stack, ivy, "POST", f"/v1/memories/{memory}/feedback", {"outcome": "success"})
        assert status == 200
        status, context = call(
            stack,
            stack.users["alice"],
            "POST",
            "/v1/context",
            {"session_id": "s-al", "query": f"T{mark} west gate"},
        )
        assert status == 200 and mark in context["context"], context
        status, erased = call(stack, stack.tenant, "DELETE", "/v1/users/ivy")
        assert status == 200 and erased["total"] > 0, erased
        for key, path in (
            (stack.tenant, "/v1/users/alice/requests"),
            (stack.users["eve"], "/v1/memories?limit=200"),
            (stack.users["eve"], "/v1/memories?limit=200&status=proposed"),
        ):
            status, answer = call(stack, key, "GET", path)
            assert status == 200 and mark not in json.dumps(answer), (path, answer)
        db: Any = stack.running.services.db if stack.running.services is not None else None
        for name in db.list_collection_names():
            held = [d["_id"] for d in db[name].find({}) if mark in json.dumps(d, default=str)]
            assert held == [], (name, held)
        data = stack.running.data_dir
    finally:
        next(stacks, None)  # stops the stack (rebuilding its files after the erase)
    assert data is not None and _files_holding(data, mark) == []


# -- 1. ids holding ":" or "@" are unaddressable through the SDKs and the console (MED) ---------------------
def test_the_sdk_records_a_turn_in_a_session_the_api_accepts(stack: Stack) -> None:
    """MED. `POST /v1/sessions/chat:<own>/turns` -> 201; the SDK's record_turn of the same session -> 422
    "must be an identifier ... (got 'chat%3A<own>')"."""
    session = f"chat:{unique()}"
    body = {"user_id": "alice", "turns": [{"role": "user", "content": "first turn"}]}
    status, answer = call(stack, stack.tenant, "POST", f"/v1/sessions/{session}/turns", body)
    assert status == 201, answer
    client = MemoryClient(stack.running.url, api_key=stack.tenant)
    recorded = client.record_turn(session, "alice", "user", "second turn")
    assert [t.seq for t in recorded.turns] == [2]


def test_a_thread_the_sdk_made_can_be_read_and_deleted_through_it(stack: Stack) -> None:
    """MED. `create_thread("th:<own>@a")` -> 201; `get_thread` / `delete_thread` of it -> 422."""
    thread = f"th:{unique()}@a"
    client = MemoryClient(stack.running.url, api_key=stack.tenant)
    client.create_thread(thread, "eve", title="a thread")
    try:
        assert client.get_thread(thread, "eve").thread_id == thread
    finally:
        client.delete_thread(thread, "eve")


def test_an_encoded_user_id_addresses_its_user(stack: Stack) -> None:
    """MED. A user "ana.<own>@x.com" with a session: `/v1/users/ana.<own>@x.com/sessions` -> 200,
    `/v1/users/ana.<own>%40x.com/sessions` (the console's encodeURIComponent path) -> 422."""
    user = f"ana.{unique()}@x.com"
    body = {"user_id": user, "turns": [{"role": "user", "content": "hello"}]}
    assert call(stack, stack.tenant, "POST", "/v1/sessions/s-1/turns", body)[0] == 201
    assert call(stack, stack.tenant, "GET", f"/v1/users/{user}/sessions")[0] == 200
    encoded = user.replace("@", "%40")
    status, answer = call(stack, stack.tenant, "GET", f"/v1/users/{encoded}/sessions")
    assert status == 200, answer


def test_a_plain_id_is_addressable_through_the_sdk(stack: Stack) -> None:
    """Held (a control): the SDK records into a session "chat-<own>" and reads it back."""
    session = f"chat-{unique()}"
    client = MemoryClient(stack.running.url, api_key=stack.tenant)
    client.record_turn(session, "alice", "user", "hello")
    assert client.get_session(session, "alice").turn_count == 1
    with pytest.raises(MemoryClientError):
        client.get_session(".", "alice")


# -- 2. the MCP working-memory tools have no agent_id: an agent writes the user's shared notes (MED) ---------
def _mcp(stack: Stack, user: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """`mongomem mcp --user-id <user>` over stdio with the tenant-wide key (as docs/sdk.md allows): the
    results of `calls`, in order."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH", "LANG")}
    env["MONGOMEM_API_KEY"] = stack.tenant
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mongomem.mcp_server", "--base-url", stack.running.url, "--user-id", user],
        env=env,
    )

    async def scenario() -> list[Any]:
        async with Client(server) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return asyncio.run(asyncio.wait_for(scenario(), 60))


def test_an_agents_mcp_working_memory_is_the_one_its_context_reads(stack: Stack) -> None:
    """MED. Over MCP: the user's shared note "# shared <own>", then `update_working_memory {"memory":
    "# planner <own>", "agent_id": "planner"}` (no error) and `build_context {"agent_id": "planner"}`:
    the context holds no planner note, and the shared note was overwritten."""
    own = unique()
    user = f"wm-{own}"
    results = _mcp(
        stack,
        user,
        [
            ("update_working_memory", {"memory": f"# shared {own}"}),
            ("update_working_memory", {"memory": f"# planner {own}", "agent_id": "planner"}),
            ("build_context", {"session_id": f"s-{own}", "query": "notes", "agent_id": "planner"}),
        ],
    )
    assert not any(r.is_error for r in results), [r.content for r in results]
    shared = MemoryClient(stack.running.url, api_key=stack.tenant).get_working_memory(user)
    context = results[2].content[0].text
    assert not isinstance(shared, Unchanged)
    assert (shared.content, f"planner {own}" in context) == (f"# shared {own}", True), (shared, context)


# -- 3. an erased user's last use of an org procedure stays on it (LOW) --------------------------------------
def test_an_erased_users_last_use_leaves_the_org_procedure(stack: Stack) -> None:
    """LOW. The tenant's org procedure; user "fb-<own>" reports a failure used at 2001-02-03 (one-user
    narrowing header); the user is erased; another user reads usage with no report left, yet
    last_used_at 2001-02-03 and last_outcome "failure"."""
    own = unique()
    user = f"fb-{own}"
    payload = {
        "name": f"rotate keys {own}",
        "description": "rotate the signing keys",
        "when_to_use": "when a key leaks",
        "steps": ["make a key", "ship it"],
    }
    status, written = call(
        stack,
        stack.tenant,
        "POST",
        "/v1/memories",
        {"user_id": "alice", "type": "procedural", "payload": payload},
    )
    assert status == 201, written
    memory = written["memory"]["memory_id"]
    body = {"user_id": user, "outcome": "failure", "used_at": "2001-02-03T04:05:06Z"}
    status, usage = call(stack, stack.tenant, "POST", f"/v1/memories/{memory}/feedback", body)
    assert (status, usage["usage"]["failures"]) == (200, 1), usage
    status, erased = call(stack, stack.tenant, "DELETE", f"/v1/users/{user}")
    assert (status, erased["erased"]["procedure_feedback"]) == (200, 1), erased
    status, read = call(stack, stack.users["eve"], "GET", f"/v1/memories/{memory}")
    assert status == 200, read
    left = read["memory"]["usage"] or {}
    assert (left.get("failures"), left.get("last_used_at"), left.get("last_outcome")) == (0, None, None), left


# -- 4. the users list counts an expired memory (LOW) ----------------------------------------------------------
def test_the_users_list_does_not_count_an_expired_memory(stack: Stack) -> None:
    """LOW. Frank's count in `GET /v1/users` (his own key lists only him), then a private fact that
    expires 1.5 s later: 2.5 s on, the count still holds it."""

    def count() -> int:
        status, page = call(stack, stack.users["frank"], "GET", "/v1/users")
        assert status == 200, page
        return int(page["users"][0]["memories"]) if page["users"] else 0

    before = count()
    expires = (datetime.now(UTC) + timedelta(seconds=1.5)).isoformat()
    fact = {"subject": f"frank kayak {unique()}", "attribute": "colour", "value": "amber"}
    status, written = call(
        stack,
        stack.users["frank"],
        "POST",
        "/v1/memories",
        {"type": "semantic", "payload": fact, "visibility": "private", "expires_at": expires},
    )
    assert status == 201, written
    time.sleep(2.5)
    status, listed = call(stack, stack.users["frank"], "GET", "/v1/memories?limit=200")
    assert status == 200 and fact["subject"] not in json.dumps(listed)  # the list already hides it
    assert count() == before


# -- 5. a deleted thread's words stay in the observation log every context serves (MED) ----------------------
def _observed(stack: Stack, key: str, session: str) -> str:
    status, answer = call(
        stack,
        key,
        "POST",
        "/v1/context",
        {"session_id": session, "query": "spare key", "sources": [{"source": "observations"}]},
    )
    assert status == 200, answer
    return str(answer["context"])


@pytest.mark.parametrize("delete", ["thread", "turns"])
def test_a_deleted_threads_words_leave_the_observation_log(stack: Stack, delete: str) -> None:
    """MED. Alice's thread "th-<own>" holding "I keep my spare key <own> under the blue flowerpot.",
    flushed; once the observation log shows it, `DELETE /v1/threads/th-<own>` (or its turns): the context's
    observations still hold it."""
    own = unique()
    key, thread = stack.users["alice"], f"th-{own}"
    said = f"I keep my spare key K{own} under the blue flowerpot."
    assert call(stack, key, "POST", "/v1/threads", {"thread_id": thread, "title": "keys"})[0] == 201
    turns = [{"role": "user", "content": said}, {"role": "assistant", "content": "Noted."}]
    assert call(stack, key, "POST", f"/v1/sessions/{thread}/turns", {"turns": turns})[0] == 201
    assert call(stack, key, "POST", f"/v1/sessions/{thread}/flush", {})[0] == 200
    deadline = time.monotonic() + 60
    while f"K{own}" not in _observed(stack, key, f"s-{own}"):
        assert time.monotonic() < deadline, "the observation log never showed the turn"
        time.sleep(1.0)
    path = f"/v1/threads/{thread}" if delete == "thread" else f"/v1/sessions/{thread}/turns"
    status, deleted = call(stack, key, "DELETE", path)
    assert status == 200, deleted
    assert f"K{own}" not in _observed(stack, key, f"s-{own}")


# -- held: a one-user key reaches no tenant-only route, and no other user -------------------------------------
def test_a_one_user_key_reaches_no_tenant_only_route(stack: Stack) -> None:
    """Held. Bob's one-user key against the tenant's and alice's ids: operator routes, another user's
    request log, sessions and erase, an org delete, an org write without reconciliation, and the narrowing
    header naming another user or the org's owner are all refused; his lists name only him."""
    bob = stack.users["bob"]
    status, org = call(
        stack,
        stack.tenant,
        "POST",
        "/v1/memories",
        {
            "user_id": "alice",
            "type": "taxonomic",
            "payload": {"term": f"HELD{unique()}", "definition": "a dock"},
        },
    )
    assert status == 201, org
    org_id = org["memory"]["memory_id"]
    refused = [
        ("GET", "/v1/admin/keys", None, 403),
        ("POST", "/v1/admin/keys", {"tenant": "acme", "kind": "memory_service"}, 403),
        ("GET", "/v1/admin/status", None, 403),
        ("GET", "/v1/users/alice/requests", None, 403),
        ("GET", "/v1/users/alice/sessions", None, 403),
        ("DELETE", "/v1/users/alice", None, 403),
        ("DELETE", f"/v1/memories/{org_id}", None, 403),
        (
            "POST",
            "/v1/memories",
            {"type": "taxonomic", "reconcile": False, "payload": {"term": "KRONK", "definition": "bob's"}},
            403,
        ),
    ]
    for method, path, body, want in refused:
        status, answer = call(stack, bob, method, path, body)
        assert status == want, (method, path, answer)
    for header, want in (("alice", 403), ("#org", 400), ("..", 400)):
        request = urllib.request.Request(
            stack.running.url + "/v1/memories", headers={"x-api-key": bob, "x-mongomem-as-user": header}
        )
        with pytest.raises(urllib.error.HTTPError) as refused_header:
            urllib.request.urlopen(request, timeout=30)
        assert refused_header.value.code == want, header
    status, users = call(stack, bob, "GET", "/v1/users")
    assert status == 200 and {u["user_id"] for u in users["users"]} <= {"bob"}, users
    assert call(stack, stack.users["eve"], "GET", f"/v1/memories/{org_id}")[1]["memory"]["status"] == "active"


# -- held: client input is never a 5xx -------------------------------------------------------------------------
def _raw(stack: Stack, request: bytes) -> tuple[int, bytes]:
    host, port = stack.running.url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=15) as conn:
        conn.sendall(request)
        out = b""
        while chunk := conn.recv(65536):
            out += chunk
    return int(out.split(b" ", 2)[1]), out


@pytest.mark.parametrize(
    ("method", "path", "extra", "body", "want"),
    [
        ("POST", "/v1/memories/search", b"Transfer-Encoding: chunked\r\n", b"2\r\n{}\r\n0\r\n\r\n", 411),
        ("POST", "/v1/memories/search", b"Content-Length: -5\r\n", b"{}", 400),
        ("POST", "/v1/memories/search", b"Content-Length: 2\r\nContent-Length: 20\r\n", b"{}", 400),
        ("POST", "/v1/memories/search", b"Content-Encoding: gzip\r\n", gzip.compress(b'{"query":"x"}'), 400),
        (
            "POST",
            "/v1/memories/search",
            b"Content-Type: application/x-www-form-urlencoded\r\n",
            b"query=x",
            400,
        ),
        ("POST", "/v1/memories/search", b"", b'{"query":"x","query":{"a":1}}', 422),
        ("POST", "/v1/memories/search", b"", b"\xef\xbb\xbf{}", 400),
        ("BREW", "/v1/threads", b"", b"", 405),
        ("GET", "/v1/threads/%2E%2E", b"", b"", 422),
        ("GET", "/v1/threads/%EF%BC%8E%EF%BC%8E", b"", b"", 422),
        ("GET", "/v1/threads/a%00b", b"", b"", 422),
        ("GET", "/v1/threads/%ff%fe", b"", b"", 422),
        ("GET", "/v1/memories?type=%ff", b"", b"", 422),
        ("GET", "/v1/status", b"X-Big: " + b"a" * 70000 + b"\r\n", b"", 431),
    ],
)
def test_client_input_is_never_a_5xx(
    stack: Stack, method: str, path: str, extra: bytes, body: bytes, want: int
) -> None:
    """Held: malformed framing, encodings, duplicate keys, a BOM, unknown methods, percent-encoded dot,
    full-width dot, NUL and invalid UTF-8 ids, and an oversized header: each its 4xx (405 with Allow)."""
    length = b"" if b"Length" in extra or b"chunked" in extra else b"Content-Length: %d\r\n" % len(body)
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nx-api-key: {stack.users['alice']}\r\n"
    )
    status, answer = _raw(stack, head.encode() + extra + length + b"\r\n" + body)
    assert status == want, answer[:300]
    if want == 405:
        assert b"\r\nallow: get, post" in answer.lower(), answer[:300]


# -- held: an expired procedure is no skill, takes no feedback and is not discovered ----------------------------
def test_an_expired_procedure_is_gone_from_skills_feedback_and_discovery(stack: Stack) -> None:
    """Held. Eve's private procedure that expires 1.5 s later: 2.5 s on, its SKILL.md and feedback are 404,
    discover and the memories list leave it out."""
    own = unique()
    expires = (datetime.now(UTC) + timedelta(seconds=1.5)).isoformat()
    procedure = {
        "name": f"lash the cargo {own}",
        "description": f"lash {own}",
        "when_to_use": "before sailing",
        "steps": ["tie", "check"],
    }
    status, written = call(
        stack,
        stack.users["eve"],
        "POST",
        "/v1/memories",
        {"type": "procedural", "payload": procedure, "visibility": "private", "expires_at": expires},
    )
    assert status == 201, written
    memory = written["memory"]["memory_id"]
    time.sleep(2.5)
    eve = stack.users["eve"]
    assert call(stack, eve, "GET", f"/v1/memories/{memory}/skill")[0] == 404
    assert call(stack, eve, "POST", f"/v1/memories/{memory}/feedback", {"outcome": "success"})[0] == 404
    status, found = call(stack, eve, "POST", "/v1/procedures/discover", {"query": f"lash the cargo {own}"})
    assert status == 200 and own not in json.dumps(found), found
    status, listed = call(stack, eve, "GET", "/v1/memories?type=procedural&limit=200")
    assert status == 200 and own not in json.dumps(listed), listed
