"""Issue 33's sixth independent probe (h-probe6, on main 6874f03), over HTTP on a running local stack, with
payloads and angles none of the earlier probes used (tests/e2e/test_probe_findings.py,
test_probe2_findings.py ... test_probe5_findings.py, test_org_trust_http.py, test_erasure_copies.py,
test_marker_lookalikes.py, test_linear_patterns.py, tests/corrections.py). Each finding's test was seen
failing on 6874f03 with `--runxfail` (finding 6 at a precondition since corrected; its last assertion
follows from `decide._retract`'s reason), and is marked `xfail(strict=True)` until it is fixed; the
attacks that held are kept as passing tests (one-user keys against other users' views and the operator
routes; a full-width or lower-case term name is the same org term).

Fixed since (their markers removed): 1, 3 and 4 (docs/adr/0072: no statement dated after now, 422 for
an API write; one user's word never moves an org memory's `observed_at`; a proposal keeps the expiry of
the version it would replace), 5 (the request log reads deleted turns as gone and forgets the calls
that showed cleared working memory), 6 (logs keep decisions and field names, no values), 2 (a user's
org term whose name reads as an org term's - marks, TR39 confusables - is decided as that term) and 7
(an erase takes the user's own words out of every version of the lineage that carried them).

1. (MED) A statement's `observed_at` may lie in the future: a one-user key's new org term written with
  `"observed_at": "9999-01-01T00:00:00Z"` can never be corrected. The tenant key's correction answers
  201 "UPDATE" but is stored as a superseded history version ("stated earlier than the current one:
  kept as history"), and two other users' corrections are proposals that can never carry (an older
  statement "cannot carry" a proposal): one user's term is locked against the tenant and every other user
  (docs/security.md: "A tenant-wide key's write changes the value ... at once").
2. (MED) A one-user key's new org term whose name differs from an existing org term only by a mark
  ("PLTZ." / "PLTZ!") or by a look-alike letter (Cyrillic ER, U+0420, for "P") is a 201 ADD, not a proposal:
  every user's context then shows the user's conflicting definition of what reads as the same term,
  beside the tenant's, with nobody's backing - the proposal rule is bypassed by spelling the name
  another way (`MemoryKind.same_name` keeps "X." and "X" apart on purpose, so the tenant's "X#" does not
  supersede "X++"; for a one-user caller that makes a look-alike term a way around the rule).
3. (MED) A proposal's `expires_at` becomes the org term's: bob proposes another definition with
  `expires_at` a few seconds ahead, carol states the same definition (no expiry), the proposal becomes
  the active version with bob's expiry, and when it passes the term is gone from every user's context
  (the version it superseded stays superseded). Only bob chose the expiry; "the version that becomes
  active is exactly what its backers stated".
4. (MED, narrow) A one-user restatement of an org term with `"observed_at": "0001-01-02T00:00:00Z"` is a
  REINFORCE that moves the org memory's `observed_at` back to year 1 (`$min`): every other user's search
  or context with `observed_after` no longer finds the term.
5. (MED) Deleting a thread (`DELETE /v1/threads/{id}`, "deletes ... its turns") or clearing working memory
  leaves their words in the request log (`GET /v1/users/{u}/requests`, the console's Agent calls, kept
  30 days): the context block that held the thread's recent turns or the working memory is still served
  (`requestlog.without_gone` forgets only memories, by their `mem-` ids).
6. (MED) The logs hold the values users state: at the deployed default level (INFO) a retraction's
  "reconciled" line carries the retracted value and the value the memory holds in its `reason`
  (`decide._retract`); docs/security.md promises "CloudWatch Logs: ids only: logs never hold request
  values", and erasure cannot reach them for the log group's retention (30 days by default).
7. (MED) Erasure leaves the erased user's alias in versions they never stated: a taxonomic UPDATE keeps
  the aliases of the version it supersedes (`TaxonomicKind.updated`), so the tenant's correction of bob's
  org term, or carol's proposal against it, carries bob's alias; `DELETE /v1/users/bob` visits only the
  versions holding bob's evidence (`forget_org_evidence`), and every user still reads his alias (in the
  active version, or in `GET /v1/memories?status=proposed`).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from mongomem.identity.service import create_key
from mongomem.models.common import utcnow
from mongomem.observability import logger
from tests.e2e.probe_stack import (
    TENANT,
    Stack,
    active_payload,
    answering_stack,
    call,
    seed,
)

USERS = ("alice", "bob", "carol", "dave", "eve")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    yield from answering_stack(tmp_path_factory.mktemp("probe6-findings"), USERS)


def _term() -> str:
    return f"P6{uuid.uuid4().hex[:6].upper()}"


def _context(stack: Stack, user: str, query: str) -> str:
    body = {"session_id": f"ctx-{uuid.uuid4().hex[:6]}", "query": query}
    status, answer = call(stack, stack.users[user], "POST", "/v1/context", body)
    assert status == 200, answer
    return str(answer["context"])


# -- a statement dated in the future locks an org term ------------------------------------------------
def _future_dated_term(stack: Stack) -> tuple[dict[str, Any], str]:
    """A new org term bob's one-user key states as observed 4 minutes ahead of the server's clock (within
    the skew the API allows; the probe's "9999" is a 422 now), and a word of its own the definitions of
    the test carry (the hashing embedder finds any other test's term alike)."""
    term, own = _term(), uuid.uuid4().hex[:6]
    said = {"type": "taxonomic", "payload": {"term": term, "definition": f"the {own} tally of the east dock"}}
    ahead = (utcnow() + timedelta(minutes=4)).isoformat()
    status, bobs = call(stack, stack.users["bob"], "POST", "/v1/memories", {**said, "observed_at": ahead})
    assert (status, bobs["decision"], bobs["memory"]["visibility"]) == (201, "ADD", "org"), bobs
    return dict(bobs["memory"]), own


def test_a_statement_dated_after_now_is_refused(stack: Stack) -> None:
    """Fixed (finding 1, docs/adr/0072): POST /v1/memories with "observed_at": "9999-01-01T00:00:00Z" is
    a 422 naming the field, from any key; nothing is written."""
    term = _term()
    said = {"type": "taxonomic", "payload": {"term": term, "definition": "the tally of the north dock"}}
    for key in (stack.users["bob"], stack.tenant):
        body = {
            **said,
            "observed_at": "9999-01-01T00:00:00Z",
            **({"user_id": "alice"} if key == stack.tenant else {}),
        }
        status, answer = call(stack, key, "POST", "/v1/memories", body)
        assert status == 422 and "observed_at" in str(answer), answer
    status, listed = call(stack, stack.users["eve"], "GET", "/v1/memories?type=taxonomic&limit=200")
    assert status == 200 and term not in str(listed), listed


def test_a_future_dated_org_term_is_still_corrected_by_the_tenant(stack: Stack) -> None:
    """MED. POST /v1/memories (bob's one-user key) {"type":"taxonomic","payload":{"term":T,"definition":
    "the X tally of the east dock"},"observed_at":"9999-01-01T00:00:00Z"} -> 201 ADD (org); the tenant
    key's {"user_id":"alice", ... "definition":"the X tally of the west dock"} answers 201 UPDATE, but
    the version is "kept as history" (superseded): eve still reads bob's east dock."""
    bobs, own = _future_dated_term(stack)
    west = {"term": bobs["payload"]["term"], "definition": f"the {own} tally of the west dock"}
    body = {"user_id": "alice", "type": "taxonomic", "payload": west}
    status, written = call(stack, stack.tenant, "POST", "/v1/memories", body)
    assert status in (200, 201), written
    assert active_payload(stack, bobs)["definition"] == west["definition"]


def test_a_future_dated_org_term_is_still_carried_by_more_users(stack: Stack) -> None:
    """MED. As above; instead of the tenant, carol and dave (two users against bob's one) state "the X
    tally of the south dock": 202 PROPOSE twice ("backed by 2 ... 0 more user(s)"), as a statement older
    than the current version, which can never carry a proposal: the term stays bob's."""
    bobs, own = _future_dated_term(stack)
    south = {"term": bobs["payload"]["term"], "definition": f"the {own} tally of the south dock"}
    for user in ("carol", "dave"):
        status, said = call(
            stack, stack.users[user], "POST", "/v1/memories", {"type": "taxonomic", "payload": south}
        )
        assert status in (201, 202), said
    assert active_payload(stack, bobs)["definition"] == south["definition"]


# -- a look-alike name: a new org term instead of a proposal ------------------------------------------
LOOKALIKES = {
    "a closing full stop": lambda t: f"{t}.",
    "an exclamation mark": lambda t: f"{t}!",
    "a Cyrillic letter": lambda t: "\u0420" + t[1:],  # Cyrillic capital ER, drawn as Latin P
}


@pytest.mark.parametrize("spell", LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_a_look_alike_name_does_not_bypass_the_proposal_rule(stack: Stack, spell: Any) -> None:
    """MED. The tenant's org term T "pallets from the north dock are counted within 2 hours"; POST
    /v1/memories (bob's one-user key) {"type":"taxonomic","payload":{"term":"T.","definition":"pallets
    from the north dock are counted within 4 hours, ignore the 2 hour rule"}} answers 201 ADD (expected
    202 PROPOSE or a refusal), and eve's context for T shows bob's definition beside the tenant's."""
    term = _term()
    seed(
        stack,
        "taxonomic",
        {"term": term, "definition": "pallets from the north dock are counted within 2 hours"},
    )
    bobs = f"pallets from the north dock are counted within 4 hours, ignore the 2 hour rule {uuid.uuid4().hex[:6]}"
    body = {"type": "taxonomic", "payload": {"term": spell(term), "definition": bobs}}
    status, written = call(stack, stack.users["bob"], "POST", "/v1/memories", body)
    assert status != 201, written
    assert bobs not in _context(stack, "eve", f"{term} north dock pallets counted")


def test_a_full_width_or_cased_name_is_the_same_org_term(stack: Stack) -> None:
    """Held: a full-width or lower-case spelling of the term's name is its key: bob's other definition is
    a proposal (202), and eve's context keeps the tenant's definition only."""
    term = _term()
    seed(stack, "taxonomic", {"term": term, "definition": "crates from the east dock are sealed by noon"})
    for spelled in ("".join(chr(ord(c) + 0xFEE0) for c in term), term.lower()):
        other = f"crates from the east dock are sealed by midnight {uuid.uuid4().hex[:6]}"
        body = {"type": "taxonomic", "payload": {"term": spelled, "definition": other}}
        status, written = call(stack, stack.users["bob"], "POST", "/v1/memories", body)
        assert (status, written["decision"]) == (202, "PROPOSE"), written
        assert other not in _context(stack, "eve", f"{term} east dock crates sealed")


# -- a proposal's expiry becomes the org term's -------------------------------------------------------
def test_a_proposals_expiry_does_not_end_the_org_term(stack: Stack) -> None:
    """MED. The tenant's org term T "the export pallet count"; bob POST /v1/memories {"type":"taxonomic",
    "payload":{"term":T,"definition":"the export parcel count"},"expires_at":now+4s} -> 202 PROPOSE;
    carol states the same definition (no expiry) -> 201 UPDATE with bob's expires_at; 5 s later eve's
    context holds no definition of T (the tenant's version superseded, bob's expired)."""
    term = _term()
    original = seed(stack, "taxonomic", {"term": term, "definition": "the export pallet count of the yard"})
    expires_at = utcnow() + timedelta(seconds=4)
    parcel = {
        "type": "taxonomic",
        "payload": {"term": term, "definition": "the export parcel count of the yard"},
    }
    status, bobs = call(
        stack, stack.users["bob"], "POST", "/v1/memories", {**parcel, "expires_at": expires_at.isoformat()}
    )
    assert (status, bobs["decision"]) == (202, "PROPOSE"), bobs
    status, carols = call(stack, stack.users["carol"], "POST", "/v1/memories", parcel)
    assert status in (200, 201, 202), carols
    time.sleep(max(0.0, (expires_at - utcnow()).total_seconds()) + 1.5)
    status, found = call(
        stack, stack.users["eve"], "GET", f"/v1/memories/{original['memory_id']}?history=true"
    )
    live = [v for v in [found["memory"], *found.get("history", [])] if v["status"] == "active"]
    assert live, found  # some version of the term is still what every user reads
    assert term in _context(stack, "eve", f"{term} export count of the yard")


# -- an earlier restatement moves an org term out of time-filtered reads -------------------------------
def test_an_old_dated_restatement_does_not_hide_an_org_term(stack: Stack) -> None:
    """MED (narrow). The tenant's org term T "the outbound load docket"; bob restates it to the letter with
    "observed_at":"0001-01-02T00:00:00Z" -> 200 REINFORCE, and the org memory's observed_at is now year 1:
    eve's POST /v1/memories/search {"query":T,"observed_after":"2020-01-01T00:00:00Z"} no longer finds it."""
    term = _term()
    seed(stack, "taxonomic", {"term": term, "definition": "the outbound load docket of the west yard"})
    query = {"query": f"{term} outbound load docket", "observed_after": "2020-01-01T00:00:00Z"}
    status, before = call(stack, stack.users["eve"], "POST", "/v1/memories/search", query)
    assert status == 200, before
    assert term in str(before), f"precondition: eve finds the term before bob's statement: {before}"
    said = {
        "type": "taxonomic",
        "payload": {"term": term, "definition": "the outbound load docket of the west yard"},
    }
    status, bobs = call(
        stack, stack.users["bob"], "POST", "/v1/memories", {**said, "observed_at": "0001-01-02T00:00:00Z"}
    )
    assert status in (200, 202), bobs
    status, after = call(stack, stack.users["eve"], "POST", "/v1/memories/search", query)
    assert status == 200 and term in str(after), after


# -- a deleted thread or cleared working memory stays in the request log --------------------------------
def test_a_deleted_threads_turns_leave_the_request_log(stack: Stack) -> None:
    """MED. Bob records a turn "my door code is MARK..." in thread T, POST /v1/context {"session_id":T}
    (the block holds the turn), DELETE /v1/threads/T -> 200 (its turns deleted); GET /v1/users/bob/requests
    still returns the block with "my door code is MARK..."."""
    marker = f"MARK{uuid.uuid4().hex[:8]}"
    thread = f"t6-{uuid.uuid4().hex[:6]}"
    turn = {"role": "user", "content": f"my door code is {marker}"}
    status, recorded = call(stack, stack.users["bob"], "POST", f"/v1/sessions/{thread}/turns", turn)
    assert status == 201, recorded
    body = {"session_id": thread, "query": "door code"}
    status, answer = call(stack, stack.users["bob"], "POST", "/v1/context", body)
    assert status == 200 and marker in answer["context"], answer
    status, deleted = call(stack, stack.users["bob"], "DELETE", f"/v1/threads/{thread}")
    assert status == 200 and deleted["deleted"]["turns"] == 1, deleted
    status, logged = call(stack, stack.users["bob"], "GET", "/v1/users/bob/requests")
    assert status == 200 and marker not in str(logged), logged


def test_cleared_working_memory_leaves_the_request_log(stack: Stack) -> None:
    """MED. Carol PUT /v1/working-memory {"memory":"# Notes\\nthe safe code is MARK..."}, POST /v1/context
    (the block holds it), DELETE /v1/working-memory -> 200; GET /v1/users/carol/requests still returns it."""
    marker = f"MARK{uuid.uuid4().hex[:8]}"
    status, put = call(
        stack,
        stack.users["carol"],
        "PUT",
        "/v1/working-memory",
        {"memory": f"# Notes\nthe safe code is {marker}"},
    )
    assert status == 200, put
    body = {"session_id": f"wm-{uuid.uuid4().hex[:6]}", "query": "safe code"}
    status, answer = call(stack, stack.users["carol"], "POST", "/v1/context", body)
    assert status == 200 and marker in answer["context"], answer
    status, cleared = call(stack, stack.users["carol"], "DELETE", "/v1/working-memory")
    assert status == 200 and marker not in str(cleared), cleared
    status, logged = call(stack, stack.users["carol"], "GET", "/v1/users/carol/requests")
    assert status == 200 and marker not in str(logged), logged


# -- erasure: the erased user's alias carried into a version they never stated ----------------------
@pytest.mark.parametrize("by", ["the tenant's correction", "another user's proposal"])
def test_erasure_takes_the_users_alias_out_of_versions_that_carried_it(stack: Stack, by: str) -> None:
    """MED. Bob's one-user key writes the org term T {"definition":"...","aliases":["BOBSAYS MARK..."]} (201
    ADD); the tenant key corrects T's definition (201 UPDATE: the new version keeps the aliases,
    `TaxonomicKind.updated`), or carol proposes another definition (202: the proposal holds them too);
    DELETE /v1/users/bob -> 200, and eve still reads "BOBSAYS MARK..." in the active version / in
    GET /v1/memories?status=proposed: `forget_org_evidence` visits only versions holding bob's evidence."""
    user = f"bob6-{uuid.uuid4().hex[:6]}"
    marker = f"MARK{uuid.uuid4().hex[:8]}"
    term, own = _term(), uuid.uuid4().hex[:6]
    bobs = {
        "term": term,
        "definition": f"the {own} ledger of the north yard",
        "aliases": [f"BOBSAYS {marker}"],
    }
    key = create_key(stack.running.keys, TENANT, "service_account", user)[0]  # a one-user key
    status, written = call(stack, key, "POST", "/v1/memories", {"type": "taxonomic", "payload": bobs})
    assert (status, written["memory"]["visibility"]) == (201, "org"), written
    other = {"term": term, "definition": f"the {own} ledger of the south yard"}
    if by == "the tenant's correction":
        said = {"user_id": "alice", "type": "taxonomic", "payload": other}
        status, corrected = call(stack, stack.tenant, "POST", "/v1/memories", said)
        assert (status, corrected["decision"]) == (201, "UPDATE"), corrected
        read = "/v1/memories?type=taxonomic&limit=200"
    else:
        status, proposed = call(
            stack, stack.users["carol"], "POST", "/v1/memories", {"type": "taxonomic", "payload": other}
        )
        assert (status, proposed["decision"]) == (202, "PROPOSE"), proposed
        read = "/v1/memories?type=taxonomic&status=proposed&limit=200"
    assert marker in str(call(stack, stack.users["eve"], "GET", read)[1])  # what every user reads
    status, erased = call(stack, stack.tenant, "DELETE", f"/v1/users/{user}")
    assert status == 200, erased
    status, listed = call(stack, stack.users["eve"], "GET", read)
    assert status == 200 and marker not in str(listed), listed


# -- attacks that held ----------------------------------------------------------------------------------
def test_one_user_keys_reach_no_other_users_views(stack: Stack) -> None:
    """Held: bob's one-user key names alice in paths, queries and bodies of the views the earlier probes
    did not walk (sessions, requests, snapshots, threads, clone, working memory, stats): 403, or bob's own
    (empty) data, never alice's; neither bob's key nor the tenant-wide key reaches the operator routes
    (`/v1/admin/keys`: 403)."""
    marker = f"MARK{uuid.uuid4().hex[:8]}"
    thread = f"al-{uuid.uuid4().hex[:6]}"
    turn = {"role": "user", "content": f"alice's note {marker}"}
    assert call(stack, stack.users["alice"], "POST", f"/v1/sessions/{thread}/turns", turn)[0] == 201
    bob = stack.users["bob"]
    assert call(stack, bob, "GET", "/v1/users/alice/sessions")[0] == 403
    assert call(stack, bob, "GET", "/v1/users/alice/requests")[0] == 403
    assert call(stack, bob, "DELETE", "/v1/users/alice")[0] == 403
    for key in (bob, stack.tenant):  # keyed callers are no operators, even the tenant-wide key
        assert call(stack, key, "GET", "/v1/admin/keys")[0] == 403
        created = {"tenant": TENANT, "kind": "memory_service"}
        assert call(stack, key, "POST", "/v1/admin/keys", created)[0] == 403
    reads = [
        ("GET", f"/v1/threads/{thread}?user_id=alice", None),
        ("GET", f"/v1/sessions/{thread}/turns?user_id=alice", None),
        ("POST", f"/v1/threads/{thread}/clone", {"user_id": "alice"}),
        ("GET", "/v1/snapshots?user_id=alice", None),
        ("GET", "/v1/stats/memories?user_id=alice", None),
        ("GET", "/v1/working-memory?user_id=alice", None),
        ("POST", "/v1/recall", {"user_id": "alice", "query": "alice's note"}),
    ]
    for method, path, body in reads:
        status, answer = call(stack, bob, method, path, body)
        assert status < 500 and marker not in str(answer), (path, status, answer)


# -- the logs hold a user's words ----------------------------------------------------------------------
class _Lines(logging.Handler):
    """The log lines the stack writes, formatted as they reach CloudWatch Logs."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        # the message and every field the formatter writes beside it (a log call's `extra`)
        self.lines.append(f"{record.getMessage()} {record.__dict__}")


def test_the_logs_hold_no_value_a_user_stated(stack: Stack) -> None:
    """MED. At the deployed default log level (template.yaml `LogLevel: INFO`), carol's POST /v1/memories
    {"type":"semantic","payload":{"subject":"user","attribute":"gate code","value":"the gate code of the
    yard is MARK...","retracted":true}} logs "reconciled" with the reason "the user said 'the gate code of
    the yard is MARK...' is not, or no longer, true: ended"; a retraction of another value logs the value
    the memory holds ("it holds '...'"). docs/security.md: "CloudWatch Logs | ids only: logs never hold
    request values" - and erasure cannot reach them."""
    marker = f"MARK{uuid.uuid4().hex[:8]}"
    fact = {"subject": "user", "attribute": "gate code", "value": f"the gate code of the yard is {marker}"}
    lines = _Lines()
    std = logging.getLogger(logger.name)  # the logging.Logger under Powertools' one
    level = std.level
    std.setLevel(logging.INFO)
    std.addHandler(lines)
    try:
        carol = stack.users["carol"]
        assert call(stack, carol, "POST", "/v1/memories", {"type": "semantic", "payload": fact})[0] == 201
        other = {**fact, "value": "the gate code of the yard is 1234", "retracted": True}
        assert call(stack, carol, "POST", "/v1/memories", {"type": "semantic", "payload": other})[0] in (
            200,
            201,
            404,
        )
        retracted = {**fact, "retracted": True}
        assert call(stack, carol, "POST", "/v1/memories", {"type": "semantic", "payload": retracted})[0] in (
            200,
            201,
        )
    finally:
        std.removeHandler(lines)
        std.setLevel(level)
    assert any(line.startswith("reconciled ") for line in lines.lines), lines.lines  # what was logged
    holding = [line for line in lines.lines if marker in line]
    assert not holding, holding
