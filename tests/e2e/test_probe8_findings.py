"""Issue 33's eighth independent probe (h-probe8, on main 9d9fc34; rebased on b51c0c6), over HTTP on a
running local stack whose project config makes more kinds org-wide than the default (semantic facts,
preferences and a custom type `dock_rule` with `visibility: org`) and declares a working-memory schema,
with payloads and angles none of the earlier probes used (tests/e2e/test_probe_findings.py,
test_probe2_findings.py ... test_probe7_findings.py, test_org_trust_http.py, test_erasure_copies.py,
test_marker_lookalikes.py, test_linear_patterns.py). Each finding's test fails on b51c0c6 and is marked
`xfail(strict=True)` until it is fixed; the attacks that held are kept as passing tests. Fixed since
(markers removed): 1 (a many-valued statement takes the org fact's form: `MemoryKind.held_forms`), 2 (the
match key's fields are the names of every kind: preferences and custom types too), 3 (one user counts
once per org version), 4 (such a schema is refused at config load), 6 (the SDK's own error), 7 (the
metadata a user gave is cleared on erasure: `metadata_by`). Open: 5 (LOW, a design question).

1. (MED) A semantic org fact is restated beside itself with `"cardinality": "many"`. The tenant's org fact
  {"subject": "north dock ...", "attribute": "opening time", "value": "7 am"} (cardinality one); bob's
  one-user key POST /v1/memories {"type": "semantic", "payload": {same subject, same attribute, "value":
  "11 pm", "cardinality": "many"}} -> 201 ADD, not 202 PROPOSE: a many-valued attribute's key holds the
  value (`Semantic.key`), so no version of the key is found, the match by meaning skips org memories, and
  every user's list now shows two active opening times of the same dock, one only bob backs. The same
  statement without `cardinality` is a proposal (held, below). The same through `mongomem mcp --user-id bob`
  holding the tenant-wide key (create_memory: decision ADD). docs/security.md "The proposal rule": a
  user's statement that would change an org memory "does not change it: another value under the same
  key"; "Names that read alike": "never a second term beside the tenant's that nobody backs".
2. (MED) Look-alike letters are not read in the names of org kinds that declare no naming fields: custom
  types (`CustomKind`) and preferences. The tenant's org `dock_rule` {"rule": "PLTZ...", "value": "pallets
  are counted at 2 pm"}; bob's one-user key writes {"rule": "\u0420LTZ..." (Cyrillic ER U+0420), "value":
  "pallets are counted at 4 pm, ignore the 2 pm count"}: 201 ADD, and every user lists both rules; the
  same for the rule spelled letter by letter ("P.L.T.Z.8.8.0.3.", which a taxonomic term's name now reads
  as the word: 193b100). Likewise
  the tenant's org preference {"subject": "dock team ...", "category": "answer language", "preference":
  "answers in English"} and bob's {... "preference": "answers in \u0415nglish" (Cyrillic IE U+0415),
  "polarity": "negative", "strength": "strong"}: 201 ADD ("dock team ... hates answers in English" as every
  user reads it). `MemoryKind.read_key` / `reads_as` fold look-alikes only in `named` fields, which these
  kinds leave empty, so `CandidateReader.read_alike` never finds the org memory. docs/security.md "Names
  that read alike": "a new org memory whose name reads as an org memory's name is that memory".
3. (MED, arguable: the docs say a restatement's "evidence [is] counted") One user's restatements of an
  org memory are counted without limit: bob's one-user key restating the tenant's org term word for word
  12 times (12 x 200 REINFORCE) raises its `reinforcement_count` from 1 to 13 and appends 12 evidence
  entries (each with every word of the payload in `said`) and 12 decision records to the shared document
  (`MemoryRepository.reinforce`: deduplicated per snapshot only, and an API write has none).
  `reinforcement_count` is the search rank boost of every user (`retrieval/search.py`: 1 + 0.05 ln n,
  +35 % at 1,000), so one user lifts any org memory - one they created included - above the others in
  every user's search and context (seen: 20 restatements of the tenant's term B put it above term A in
  eve's search, where A ranked first); and the document grows by the payload's size per request toward
  MongoDB's 16 MB limit (a term with 50 long aliases: under a thousand requests, by extrapolation).
  docs/security.md "The proposal rule": "One user counts once however often they say it"; procedure
  feedback "counts once per user, per version and per day".
4. (MED) A working-memory schema's patterns run on Python's backtracking `re` when `unevaluatedProperties`
  sits beside an `allOf` (or `anyOf`, `oneOf`, `if`/`then`, `$ref`, `dependentSchemas`) whose subschema
  holds the `patternProperties`: `regex_problems` refuses `unevaluatedProperties` only in the same node
  as `patternProperties`, so the config {type: object, properties: {note}, allOf: [{patternProperties:
  {'^(x+x+)+y$': {type: string}}}], unevaluatedProperties: false} loads, and jsonschema's
  `find_evaluated_property_keys_by_schema` runs `re.search` on every property name of user data. Bob's
  one-user key PUT /v1/working-memory {"data": {"x" * 27: "v"}} holds the memory API for seconds
  (doubling per letter) before its 422. docs/security.md and tests/e2e/test_linear_patterns.py: "Every
  pattern user data meets now runs on RE2 (linear time), or the config that declares it is refused."
5. (LOW, a design question) A deleted memory stays readable: after DELETE /v1/memories/{id} (the tenant
  key deleting an org term, or a user their own memory: 200), GET /v1/memories/{id} answers 200 with the
  whole payload and text (status "deleted"), and GET /v1/memories?status=deleted lists it, to every user
  of the tenant for an org term. `MemoryRepository.delete_lineage` only sets `status` (and drops the
  vector, "a trace of the text"); `MemoryService.get` serves any status. docs/console.md lists "deleted"
  as a status the console shows, while the request log treats the same memory as gone ("expired or
  deleted means gone from every read, the log included": `requestlog.without_gone`, docs/security.md
  "Retention"): one of the two should give way.
6. (LOW) The Python SDK's `status()` lets a raw `TypeError` / `ValueError` escape when the API answers JSON
  that is not an object (`[1, 2]`, `"ok"`): its parser `_as_dict` is `dict(data or {})` and `_read` wraps
  only pydantic's `ValidationError` (docs/security.md: the SDK "wraps an answer of an unexpected shape in
  `MemoryClientError` (`invalid_response`), never a raw pydantic error").
7. (MED) Erasure leaves the erased user's `metadata` on an org memory another user restated. Bob's
  one-user key writes a new org term with "metadata": {"note": "<bob's private words>"} (201 ADD); carol
  restates the term word for word (200 REINFORCE: metadata is neither compared nor merged); bob's key
  DELETE /v1/users/{bob} -> 200. The version stays (carol backs it) and every user still reads bob's note
  in its `metadata` (GET /v1/memories/{id}, and GET /v1/memories?metadata={"note": ...} finds it):
  `_without_user` (adapters/mongo/erasure.py) takes the erased user's words out of the payload only
  (`EvidenceRef.said` holds the payload's words, never the metadata). Worse, a proposal keeps the metadata
  of the version it replaces (docs/adr/0072), so when alice and carol carry another definition over bob's
  term, their version shows bob's note, and it stays there after bob's erasure deletes his own version.
  docs/security.md "Erasure": "The
  words only the user said ... also leave every other version of the lineage"; the erase "leaves none of
  the user's content".

Held: a semantic org fact's other value (cardinality one), a custom org type's other value under its exact
name, and an org preference with its polarity flipped are proposals (202) every user's list leaves out; a
one-user key's retraction of a semantic org fact is a 403.
"""

from __future__ import annotations

import http.server
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mongomem.client import MemoryClient, MemoryClientError
from mongomem.identity.service import create_key
from tests.e2e.probe_stack import (
    TENANT,
    Stack,
    answering_stack,
    call,
    config,
    dock_rule,
    memories,
    seed,
    unique,
)

USERS = ("alice", "bob", "carol", "eve")
# The working-memory schema of finding 4: the patterns sit in an allOf beside unevaluatedProperties.
CATASTROPHIC = "^(x+x+)+y$"
BEHIND_ALL_OF = {
    "type": "object",
    "properties": {"note": {"type": "string"}},
    "allOf": [{"patternProperties": {CATASTROPHIC: {"type": "string"}}}],
    "unevaluatedProperties": False,
}
CONFIG = config(org=("semantic", "preference"), custom_types=dock_rule("org"))


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # one user's facts say "org" where these tests attack shared facts through them (probe_stack.Stack)
    yield from answering_stack(tmp_path_factory.mktemp("probe8-findings"), USERS, CONFIG, says_org=True)


def _org_list(stack: Stack, kind: str) -> list[dict[str, Any]]:
    """The active org memories of `kind` as eve (any user of the tenant) lists them."""
    return memories(stack, "eve", kind, "", visibility="org")


# -- 1. a semantic org fact restated as many-valued ----------------------------------------------------
def test_a_many_valued_statement_of_an_org_fact_is_not_a_second_fact(stack: Stack) -> None:
    """MED. The tenant's org fact {"subject": "north dock S", "attribute": "opening time", "value": "7 am"};
    bob's one-user key POST /v1/memories {"type": "semantic", "payload": {"subject": "north dock S",
    "attribute": "opening time", "value": "11 pm", "cardinality": "many"}} -> 201 ADD (expected 202
    PROPOSE), and eve's list of org facts shows "11 pm" beside "7 am"."""
    subject = f"north dock {unique()}"
    seed(stack, "semantic", {"subject": subject, "attribute": "opening time", "value": "7 am"})
    said = {"subject": subject, "attribute": "opening time", "value": "11 pm", "cardinality": "many"}
    status, written = call(
        stack, stack.users["bob"], "POST", "/v1/memories", {"type": "semantic", "payload": said}
    )
    values = [
        m["payload"]["value"] for m in _org_list(stack, "semantic") if m["payload"]["subject"] == subject
    ]
    assert values == ["7 am"], values
    assert (status, written.get("decision")) == (202, "PROPOSE"), written


def test_a_many_valued_org_fact_through_a_one_user_mcp_server_is_not_a_second_fact(stack: Stack) -> None:
    """MED. As above through `mongomem mcp --transport http --user-id bob` holding the tenant-wide key:
    create_memory {"type": "semantic", "payload": {..., "value": "11 pm", "cardinality": "many"}} answers
    decision ADD (expected PROPOSE), and eve lists bob's "11 pm" beside the tenant's "7 am"."""
    from tests.e2e.test_probe7_findings import _mcp_create

    subject = f"west dock {unique()}"
    seed(stack, "semantic", {"subject": subject, "attribute": "opening time", "value": "7 am"})
    said = {"subject": subject, "attribute": "opening time", "value": "11 pm", "cardinality": "many"}
    got = _mcp_create(stack, "bob", {"type": "semantic", "payload": said, "visibility": "org"})
    assert not got.is_error, got
    values = [
        m["payload"]["value"] for m in _org_list(stack, "semantic") if m["payload"]["subject"] == subject
    ]
    assert values == ["7 am"], values
    assert got.structured_content["decision"] == "PROPOSE", got.structured_content


# -- 2. look-alike letters in kinds without naming fields ---------------------------------------------------
def _rule_name() -> str:
    return f"PLTZ{uuid.uuid4().hex[:4].upper()}"


def _lookalike_cases() -> dict[str, tuple[str, Any, Any, str]]:
    """(kind, the tenant's payload, bob's, bob's words that must not reach eve) per kind."""
    name, spelled, team = _rule_name(), _rule_name(), f"dock team {unique()}"
    later = f"pallets are counted at 4 pm, ignore the 2 pm count {unique()}"
    preference = {"subject": team, "category": "answer language", "preference": "answers in English"}
    return {
        "custom type": (
            "dock_rule",
            {"rule": name, "value": "pallets are counted at 2 pm"},
            {"rule": "\u0420" + name[1:], "value": later},  # Cyrillic ER for the P
            later,
        ),
        "custom type, spelled": (
            "dock_rule",
            {"rule": spelled, "value": "crates are counted at 2 pm"},
            {"rule": ".".join(spelled) + ".", "value": f"crates are counted at 4 pm {unique()}"},
            "crates are counted at 4 pm",
        ),
        "preference": (
            "preference",
            {**preference, "polarity": "positive", "strength": "moderate"},
            {
                **preference,
                "preference": "answers in \u0415nglish",
                "polarity": "negative",
                "strength": "strong",
            },
            "negative",
        ),
    }


LOOKALIKES = _lookalike_cases()


@pytest.mark.parametrize("case", LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_a_look_alike_name_of_an_org_memory_without_naming_fields_is_that_memory(
    stack: Stack, case: tuple[str, Any, Any, str]
) -> None:
    """MED. The tenant's org dock_rule {"rule": "PLTZ....", "value": "pallets are counted at 2 pm"}; bob's
    one-user key writes {"rule": "\u0420LTZ....", "value": "pallets are counted at 4 pm, ignore the 2 pm
    count"} -> 201 ADD (expected 202 PROPOSE). The tenant's org preference {"subject": "dock team ...",
    "category": "answer language", "preference": "answers in English", "polarity": "positive"}; bob's
    {..., "preference": "answers in \u0415nglish", "polarity": "negative", "strength": "strong"} -> 201 ADD.
    Eve's list of org memories shows bob's words beside the tenant's."""
    kind, tenants, bobs, marker = case
    seed(stack, kind, tenants)
    status, written = call(stack, stack.users["bob"], "POST", "/v1/memories", {"type": kind, "payload": bobs})
    listed = [m["payload"] for m in _org_list(stack, kind)]
    assert not [p for p in listed if marker in str(p) and p != tenants], listed
    assert (status, written.get("decision")) == (202, "PROPOSE"), written


# -- 3. one user's restatements counted without limit ---------------------------------------------------
def test_one_users_restatements_of_an_org_term_count_once(stack: Stack) -> None:
    """MED. The tenant's org term T; bob's one-user key POST /v1/memories {"type": "taxonomic", "payload":
    {"term": T, "definition": <the tenant's, word for word>}} 12 times -> 12 x 200 REINFORCE; eve reads T
    with reinforcement_count 13 and 13 evidence entries (expected: bob counted once, 2)."""
    term = f"P8{uuid.uuid4().hex[:4].upper()}"
    definition = f"the count of pallets waiting at the {unique()} dock"
    memory = seed(stack, "taxonomic", {"term": term, "definition": definition})
    said = {"type": "taxonomic", "payload": {"term": term, "definition": definition}}
    for n in range(12):  # counted once: the restatements after the first change nothing
        status, written = call(stack, stack.users["bob"], "POST", "/v1/memories", said)
        assert (status, written["decision"]) == (200, "NOOP" if n else "REINFORCE"), written
    status, found = call(stack, stack.users["eve"], "GET", f"/v1/memories/{memory['memory_id']}")
    assert status == 200, found
    read = found["memory"]
    assert (read["reinforcement_count"], len(read["evidence"])) == (2, 2), (
        read["reinforcement_count"],
        len(read["evidence"]),
    )


def _ranked(stack: Stack, query: str) -> list[str]:
    """The taxonomic terms eve's search ranks for `query`, best first."""
    body = {"query": query, "types": ["taxonomic"], "top_k": 10}
    status, found = call(stack, stack.users["eve"], "POST", "/v1/memories/search", body)
    assert status == 200, found
    return [str(r["payload"]["term"]) for r in found["results"]]


def test_one_users_restatements_do_not_rerank_every_users_search(stack: Stack) -> None:
    """MED. The tenant's org terms A "the pallet count of the Y yard" and B "the pallet count of the Y yard
    at night"; eve's search "pallet count of the Y yard" ranked A, B. Bob's one-user key restates B word for
    word 20 times (20 x 200 REINFORCE); eve's search now ranked B, A (B's reinforcement_count 21: boost
    1 + 0.05 ln 21). Now bob counts once: the ranking after his 20 restatements is the one after his
    first, and B's count is 2."""
    own = unique()
    first, second = f"YARD{own}A", f"YARD{own}B"
    seed(stack, "taxonomic", {"term": first, "definition": f"the pallet count of the {own} yard"})
    night = {"term": second, "definition": f"the pallet count of the {own} yard at night"}
    b = seed(stack, "taxonomic", night)
    query = f"pallet count of the {own} yard"
    # Which of the two ranks first on their own turns on the closer meaning of a random name (an RRF tie
    # goes to the nearer vector), so the claim is the ranking's and the count's, not A's place.
    assert sorted(t for t in _ranked(stack, query) if t.startswith(f"YARD{own}")) == [first, second]
    once: list[str] = []
    for n in range(20):
        status, written = call(
            stack, stack.users["bob"], "POST", "/v1/memories", {"type": "taxonomic", "payload": night}
        )
        assert (status, written["decision"]) == (200, "NOOP" if n else "REINFORCE"), written
        if n == 0:
            once = [t for t in _ranked(stack, query) if t.startswith(f"YARD{own}")]
    assert [t for t in _ranked(stack, query) if t.startswith(f"YARD{own}")] == once
    status, found = call(stack, stack.users["eve"], "GET", f"/v1/memories/{b['memory_id']}")
    assert status == 200 and found["memory"]["reinforcement_count"] == 2, found["memory"]


# -- 4. a working-memory schema's patterns behind allOf run on Python's re ---------------------------------
@pytest.mark.parametrize("nest", ["allOf", "anyOf", "oneOf", "then", "$defs"])
def test_a_pattern_under_all_of_is_refused_at_config_load(nest: str) -> None:
    """MED (fixed: refused at config load). Config: working_memory.schema {type: object, properties: {note:
    {type: string}}, allOf: [{patternProperties: {'^(x+x+)+y$': {type: string}}}], unevaluatedProperties:
    false} loaded, and bob's one-user key PUT /v1/working-memory {"data": {"xxxxxxxxxxxxxxxxxxxxxxxxxxx":
    "v"}} (27 x) held the memory API for seconds before its 422: jsonschema evaluates the patternProperties
    of every subschema unevaluatedProperties reaches with Python's `re`. Such a schema is refused now,
    wherever the patternProperties sit."""
    from mongomem.errors import ConfigError
    from mongomem.workingmemory.config import parse_working_memory_config

    inner = {"patternProperties": {CATASTROPHIC: {"type": "string"}}}
    without_all_of = {k: v for k, v in BEHIND_ALL_OF.items() if k != "allOf"}
    nested: dict[str, Any] = {
        "allOf": BEHIND_ALL_OF,
        "anyOf": {**without_all_of, "anyOf": [inner]},
        "oneOf": {**without_all_of, "oneOf": [inner]},
        "then": {**without_all_of, "if": {"required": ["note"]}, "then": inner},
        "$defs": {**BEHIND_ALL_OF, "allOf": [{"$ref": "#/$defs/p"}], "$defs": {"p": inner}},
    }
    with pytest.raises(ConfigError) as refused:
        parse_working_memory_config({"schema": nested[nest]})
    assert "unevaluatedProperties" in str(refused.value)


# -- 5. a deleted memory stays readable -------------------------------------------------------------------
@pytest.mark.xfail(
    strict=True,
    reason="probe 8 finding 5 (LOW): a deleted memory's payload is still served by id and by the list",
)
def test_a_deleted_org_term_is_gone_from_every_read(stack: Stack) -> None:
    """LOW. The tenant's org term T "... DELETEME <marker>"; the tenant key DELETE
    /v1/memories/{id} -> 200; eve's GET /v1/memories/{id} -> 200 with the definition (status "deleted"),
    and GET /v1/memories?type=taxonomic&status=deleted lists it (expected: 404, and no text)."""
    marker = f"DELETEME{unique()}"
    memory = seed(
        stack, "taxonomic", {"term": f"P8{uuid.uuid4().hex[:4].upper()}", "definition": f"the dock {marker}"}
    )
    status, deleted = call(stack, stack.tenant, "DELETE", f"/v1/memories/{memory['memory_id']}?user_id=alice")
    assert status == 200, deleted
    status, found = call(stack, stack.users["eve"], "GET", f"/v1/memories/{memory['memory_id']}")
    status_list, listed = call(
        stack, stack.users["eve"], "GET", "/v1/memories?type=taxonomic&status=deleted&limit=200"
    )
    assert status_list in (200, 422) and marker not in str(listed), listed
    assert status == 404 and marker not in str(found), found


# -- 6. the SDK's status() and an answer that is no object --------------------------------------------------
class _OddAnswer(http.server.BaseHTTPRequestHandler):
    body = b"[1, 2]"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.mark.parametrize("body", [b"[1, 2]", b'"ok"', b"5"], ids=["list", "string", "number"])
def test_the_sdk_status_wraps_an_answer_that_is_no_object(body: bytes) -> None:
    """LOW. A server answering GET /v1/status with 200 and the JSON `[1, 2]`, `"ok"` or `5`:
    MemoryClient.status() raises TypeError / ValueError, not MemoryClientError("invalid_response")."""

    class Odd(_OddAnswer):
        pass

    Odd.body = body
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Odd)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        with MemoryClient(url, retries=0) as client, pytest.raises(MemoryClientError) as raised:
            client.status()
        assert raised.value.code == "invalid_response", raised.value
    finally:
        server.shutdown()
        server.server_close()


# -- 7. erasure leaves the erased user's metadata on an org term ------------------------------------------
def test_erasure_takes_the_users_metadata_off_an_org_term(stack: Stack) -> None:
    """MED. Bob (a fresh user B) POST /v1/memories {"type": "taxonomic", "payload": {"term": T,
    "definition": "the pallet count of the <own> dock"}, "metadata": {"note": "BOBNOTE <own> call me at
    555-0100"}} -> 201 ADD; carol restates {"term": T, "definition": <the same>} -> 200 REINFORCE; B's key
    DELETE /v1/users/B -> 200; eve's GET /v1/memories/{id} -> 200 and its metadata still holds BOBNOTE."""
    own = unique()
    user = f"bob8-{own}"
    key = create_key(stack.running.keys, TENANT, "service_account", user)[0]
    term, note = f"P8{own.upper()}", f"BOBNOTE {own} call me at 555-0100"
    said = {
        "type": "taxonomic",
        "payload": {"term": term, "definition": f"the pallet count of the {own} dock"},
    }
    status, bobs = call(stack, key, "POST", "/v1/memories", {**said, "metadata": {"note": note}})
    assert (status, bobs["decision"], bobs["memory"]["visibility"]) == (201, "ADD", "org"), bobs
    status, carols = call(stack, stack.users["carol"], "POST", "/v1/memories", said)
    assert (status, carols["decision"]) == (200, "REINFORCE"), carols
    status, erased = call(stack, key, "DELETE", f"/v1/users/{user}")
    assert status == 200, erased
    status, found = call(stack, stack.users["eve"], "GET", f"/v1/memories/{bobs['memory']['memory_id']}")
    assert status == 200, found  # carol still backs the term
    assert note not in str(found), found["memory"]["metadata"]


def test_erasure_takes_the_users_metadata_off_a_version_others_carried(stack: Stack) -> None:
    """MED. Bob (a fresh user B) adds the org term T with "metadata": {"note": "BOBNOTE ..."} (201 ADD);
    alice and carol state another definition of T (202 PROPOSE, then 201 UPDATE: two users outnumber bob),
    and the version they carried keeps bob's metadata (a proposal keeps the metadata of the version it
    replaces, docs/adr/0072); B's key DELETE /v1/users/B -> 200: bob's version goes, and the active
    version - stated by alice and carol only - still shows BOBNOTE to every user."""
    own = unique()
    user = f"bob8-{own}"
    key = create_key(stack.running.keys, TENANT, "service_account", user)[0]
    term, note = f"P8{own.upper()}", f"BOBNOTE {own} lives at 4 Elm Street"
    bobs = {
        "type": "taxonomic",
        "payload": {"term": term, "definition": f"the crate count of the {own} yard"},
    }
    status, added = call(stack, key, "POST", "/v1/memories", {**bobs, "metadata": {"note": note}})
    assert (status, added["decision"]) == (201, "ADD"), added
    other = {
        "type": "taxonomic",
        "payload": {"term": term, "definition": f"the parcel count of the {own} yard"},
    }
    status, proposed = call(stack, stack.users["alice"], "POST", "/v1/memories", other)
    assert (status, proposed["decision"]) == (202, "PROPOSE"), proposed
    status, carried = call(stack, stack.users["carol"], "POST", "/v1/memories", other)
    assert (status, carried["decision"]) == (201, "UPDATE"), carried
    status, erased = call(stack, key, "DELETE", f"/v1/users/{user}")
    assert status == 200, erased
    status, found = call(stack, stack.users["eve"], "GET", f"/v1/memories/{carried['memory']['memory_id']}")
    assert status == 200 and found["memory"]["status"] == "active", found
    assert note not in str(found), found["memory"]["metadata"]


# -- attacks that held --------------------------------------------------------------------------------------
def test_another_value_of_a_semantic_org_fact_is_a_proposal(stack: Stack) -> None:
    """Held: the tenant's org fact "north dock S opening time: 7 am"; bob's "11 pm" for the same subject and
    attribute (cardinality one) is a 202 PROPOSE, and eve's list keeps "7 am" only."""
    subject = f"north dock {unique()}"
    seed(stack, "semantic", {"subject": subject, "attribute": "opening time", "value": "7 am"})
    said = {"subject": subject, "attribute": "opening time", "value": "11 pm"}
    status, written = call(
        stack, stack.users["bob"], "POST", "/v1/memories", {"type": "semantic", "payload": said}
    )
    assert (status, written["decision"]) == (202, "PROPOSE"), written
    values = [
        m["payload"]["value"] for m in _org_list(stack, "semantic") if m["payload"]["subject"] == subject
    ]
    assert values == ["7 am"], values


def test_a_one_user_retraction_of_a_semantic_org_fact_is_refused(stack: Stack) -> None:
    """Held: bob's one-user key retracting the tenant's org fact ("retracted": true) is a 403, and eve still
    lists it."""
    subject = f"south dock {unique()}"
    seed(stack, "semantic", {"subject": subject, "attribute": "closing time", "value": "6 pm"})
    said = {"subject": subject, "attribute": "closing time", "value": "6 pm", "retracted": True}
    status, answer = call(
        stack, stack.users["bob"], "POST", "/v1/memories", {"type": "semantic", "payload": said}
    )
    assert status == 403, answer
    values = [
        m["payload"]["value"] for m in _org_list(stack, "semantic") if m["payload"]["subject"] == subject
    ]
    assert values == ["6 pm"], values


HELD = {
    "custom type, exact name": (
        "dock_rule",
        {"rule": "QRTZ{own}", "value": "crates are weighed at noon"},
        {"rule": "QRTZ{own}", "value": "crates are weighed at midnight {own}"},
    ),
    "preference, polarity flipped": (
        "preference",
        {
            "subject": "yard team {own}",
            "category": "format",
            "preference": "bullet lists",
            "polarity": "positive",
        },
        {
            "subject": "yard team {own}",
            "category": "format",
            "preference": "bullet lists",
            "polarity": "negative",
        },
    ),
}


@pytest.mark.parametrize("case", HELD.values(), ids=HELD.keys())
def test_another_value_of_a_custom_or_preference_org_memory_is_a_proposal(
    stack: Stack, case: tuple[str, dict[str, str], dict[str, str]]
) -> None:
    """Held: bob's other value of the tenant's org dock_rule under its exact name, and his flipped polarity
    of the tenant's org preference, are 202 PROPOSE; eve's list keeps the tenant's only."""
    kind, tenants, bobs = case
    own = unique()
    tenants = {k: v.format(own=own) for k, v in tenants.items()}
    bobs = {k: v.format(own=own) for k, v in bobs.items()}
    seed(stack, kind, tenants)
    status, written = call(stack, stack.users["bob"], "POST", "/v1/memories", {"type": kind, "payload": bobs})
    assert (status, written["decision"]) == (202, "PROPOSE"), written
    listed = [m["payload"] for m in _org_list(stack, kind) if own in str(m["payload"])]
    assert len(listed) == 1 and all(listed[0].get(k) == v for k, v in tenants.items()), listed
