"""Issue 33's tenth independent probe (h-probe10, on main b8b8449), over HTTP on a running local stack whose
project config makes semantic facts org-wide (besides terms and procedures) and extracts terms with the
offline rules, with payloads and angles none of the earlier probes used (tests/e2e/test_probe_findings.py,
test_probe2_findings.py ... test_probe9_findings.py, test_org_trust_http.py, test_erasure_copies.py,
test_marker_lookalikes.py, test_linear_patterns.py); finding 8 against a stub server. Each finding's test
fails on b8b8449 for the reason given (seen with `--runxfail`) and is marked `xfail(strict=True)` until it
is fixed; the attacks that held are kept as passing tests. One HIGH (narrow preconditions), five MED, two LOW.

1. (HIGH, narrow preconditions) Erasing the users behind an org lineage's active version brings back a
  version that was never active: a value the tenant recorded as history, with its tool grants. The tenant
  key POST /v1/memories {"user_id": "alice", "type": "procedural", "payload": {"name": N, "when_to_use": W,
  "steps": ["revoke the lost key", "issue a new key"]}} (201 ADD, v1), then records an older version of
  the same procedure, {"payload": {N, W, "steps": ["run the rotation script", "reboot the gate"],
  "allowed_tools": ["Bash(*)"]}, "observed_at": "2020-01-01T00:00:00Z"} (201 UPDATE "stated earlier ...
  than the current one: kept as history": v2, status superseded, never active). Two users U and V state
  the steps with a third step (202 PROPOSE, then 201 UPDATE "stated by 2 user(s) against 1": v3). Both
  erase themselves (their own one-user keys, DELETE /v1/users/{self}, 200 each): v3 goes and
  `MongoErasureRepository._restore_lineage` (adapters/mongo/erasure.py) makes "the newest superseded
  version" *by version number* active - v2, the 2020 history version, not v1, the value the lineage held
  last: every user reads the 2020 steps and GET /v1/memories/{id}/skill answers `allowed-tools:
  "Bash(*)"`, which no current version granted. The same with a term: the tenant's current "within 2
  hours" becomes the 2020 "within 6 hours". Two colluding users can do it on purpose (each may erase
  itself); without intent, any history import of org memory plus the erasure of the users behind a later
  change does it. docs/memory-scopes.md "Erasure": "the newest surviving version becomes active *again*";
  the function's own comment: "a proposal never held the value: only a version that was active comes
  back" (a version kept as history never held it either); docs/security.md "Tool grants are the
  tenant's". Fix: restore the version the deleted one superseded (its `supersedes`, followed past deleted
  versions), or the superseded version with the latest `observed_at` that has a `superseded_by` set by a
  real UPDATE (never one inserted as history, nor a retracted one).
2. (MED) Two values of a many-valued fact spelled with other marks share one key: the second supersedes the
  first (org), or is lost as a restatement (private). The tenant key's org fact {"subject": "dock <own>
  scanner", "attribute": "languages", "value": "C++"} (201 ADD), then "C#" -> 201 UPDATE "same key,
  another value": C++ superseded (likewise "F#"/"F*", ".NET"/"NET"). Bob's one-user "Java" for it is a 201
  ADD beside it, but his "C#" is a 202 PROPOSE "adds to the org memory", and carol's "C#" carries it (201
  UPDATE): two users adding a language replace the tenant's. A one-user key's private "languages: C++"
  then "C#" -> 200 REINFORCE (C# lost). A many-valued attribute (`labels.MANY_VALUED`: languages, skills,
  likes, allergy ..., or `"cardinality": "many"`) keys each value by `labels.value_form`, which is `norm`
  and drops "+", "#", "*" and "."; `MemoryKind.same_name` compares the marks of the `named` fields only
  (subject, attribute), never of a value that is part of the key; `Semantic.same_content` takes equal value
  forms for the same value. docs/security.md "The proposal rule": "Two names of one key spelled with other
  marks ("Q++" and "Q#" ...) are two memories, never one superseding the other"; docs/trust.md "No
  collateral updates": an UPDATE supersedes "exactly the memory whose match key it shares (semantic:
  subject + attribute and, for attributes of many values, the value)". Fix: for a key that holds the
  value, compare the value's marks too (`same_name` over the value of a many-valued fact; `name_marks` in
  `value_form`'s comparison).
3. (MED) Erasure keeps the erased user's text in an org memory whenever any other statement of the lineage
  gave that field, whatever its value. A fresh user U's org term {"term": T, "definition": D, "domain":
  "<U> private project <own>"} (201 ADD); carol and dave add an alias (202, 201 UPDATE: the version every
  user reads carries U's domain); eve proposes another definition with "domain": "logistics" (202,
  pending); U's key DELETE /v1/users/U (200): every user still reads U's domain. Without eve's proposal the
  same erase takes it out (held, below). `erasure.without_erased_words` drops a text field only when `name
  not in given` - no other statement gave that *field* - instead of comparing the value
  (`_forget_carried_words` passes every statement of the lineage, pending proposals included, as `rest`).
  docs/security.md "Erasure": "The words only the user said (... a domain) also leave every other version
  of the lineage that carries them". Fix: keep a text only when another statement gave that same value.
4. (MED) Erasure never takes a user's qualifiers out of an org fact another user restated. A fresh user
  U's org fact {"subject": "north gate <own>", "attribute": "night contact", "value": "the gate office",
  "qualifiers": {"note": "<U> private phone 555 <own>"}} (201 ADD); carol restates the fact without
  qualifiers (200 REINFORCE); U's DELETE /v1/users/U (200): the fact stays and every user reads "(note: <U>
  private phone 555 ...)" in its payload and text. `models.memory.stated_words` records texts and lists of
  texts only, so a mapping (qualifiers, a custom type's object fields) is never in U's `said` and
  `without_erased_words` cannot take it out. docs/security.md "Erasure": "An org memory other users stated
  too loses the words only the erased user said". Fix: record mapping values in `said` (per key) and drop
  the entries only the erased user gave.
5. (MED) Another user's snapshot id, which anyone can compute, lists what their conversation told the org.
  Alice records "P7<OWN> stands for the pallet zone of the north dock" in her session "dock-notes-<own>" and
  flushes it: extraction writes the org term with her snapshot in its evidence (every other user reads
  `snapshot_id: null`). Bob's one-user key computes her snapshot's id, "snap-" +
  sha256("acme|alice|dock-notes-<own>#1")[:24] (`adapters/mongo/ids.snapshot_id`: deterministic), and GET
  /v1/memories?snapshot_id=snap-... lists the term: an oracle for whether alice has a session of a given
  id and which org memories it stated. `MemoryRepository.list_page` filters `evidence.snapshot_id` over
  every user's evidence. docs/security.md "What an org memory reveals": other users' entries show "no
  user_id, snapshot_id or turn seqs". Fix: match only the caller's own evidence (`$elemMatch` on
  snapshot_id and user_id), or refuse a snapshot id that is not one of the caller's snapshots.
6. (MED) A proposal carried after the tenant corrected the term brings back the old version's expiry,
  metadata and time. The tenant's org term v1 with "metadata": {"team": "dock-old <own>"} and "expires_at"
  two hours ahead; bob proposes another definition (202: the proposal copies v1's expiry and metadata,
  `MemoryWriter._store_proposal`); the tenant corrects the term, v2 without expiry, {"team": "dock <own>"}
  (201 UPDATE); carol states bob's definition (201 UPDATE, 2 users against the tenant): the version every
  user reads carries v1's metadata, expires in two hours (then the term is gone for everyone: v2 stays
  superseded) and is observed before v2 (a list with observed_after = v2's time shows the superseded v2,
  not the active term). docs/adr/0072 and docs/security.md: "a proposal keeps the expiry and the metadata
  of the version it would replace and is never dated before it" - at promotion that is v2. Fix: take
  them from the current version in `_promote` (`MemoryStore.activate`), not from the target the proposal
  was made against.
7. (LOW) One user grows an org memory past what any statement may hold. A user's own org term restated
  with 50 new aliases at a time (the most a taxonomic item takes) is a 200 REINFORCE that merges them
  (`TaxonomicKind.merged`, `add_unique`: no cap): after 3, 150 aliases, no valid taxonomic item; measured,
  81 requests made a 3,500-alias term whose every-user search answer was 2.1 MB, growing ~27 KB a request,
  toward Lambda's 6 MB response limit (memory search and lists have no response budget; `wire.
  response_bytes` serves recall and history of turns) and MongoDB's 16 MB document. Any user's distinct
  proposals are unlimited too: 125 proposals by one user (~50 KB each) make every user's GET
  /v1/memories/{id}?history=true of the tenant's term answer 6.4 MB, and 200 made every later write of
  that term 20x slower (18 ms -> 360 ms: `CandidateReader.read` reads the whole lineage, `_pending`
  compares each proposal), so, linearly, some 17,000 would pass the API's 30 s budget and lock the tenant
  out of correcting it (extrapolated, not run). Fix: cap merged lists at the item's limits; cap pending
  proposals per user and lineage; budget memory answers like recall's.
8. (LOW) The Python SDK follows a cursor that never moves, forever. A server answering every GET
  /v1/memories with {"memories": [], "next_cursor": C} (the same C): `MemoryClient.iter_memories` asks
  again and again, back to back (here until the stub refused, 26 requests). The TypeScript SDK's
  `iterMemories` has the same loop (`do { ... } while (cursor)`, read, not run). Issue 33: "the SDKs
  raise their own error types" for bad answers. Fix: raise `invalid_response` when a page's cursor
  repeats the one asked with.

Held: without a version kept as history, the same two erasures make the tenant's v1 active again; U's
domain leaves the version others carried when no other statement gave a domain; a single-valued org fact's
"C#" for "C++" is a proposal; a computed snapshot id of a session nobody had lists nothing; pending
proposals (a domain added, another definition and domain) reach no other user's /v1/domains, conflicts or
search; a proposal made before the tenant revoked a tool grant (it holds the grant) is never what two
later users carry: the active procedure grants nothing and its SKILL.md pre-approves nothing.
"""

from __future__ import annotations

import datetime
import hashlib
import http.server
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mongomem.client import MemoryClient, MemoryClientError
from mongomem.identity.service import create_key
from mongomem.kinds.taxonomic import TaxonomicItem
from tests.e2e.probe_stack import TENANT, Stack, answering_stack, call, memories, unique, write

USERS = ("alice", "bob", "carol", "dave", "eve")
CONFIG = """
memory:
  snapshot: {max_messages: 50, idle_seconds: 3600}
  extraction:
    enabled: [taxonomic]
    semantic: {visibility: org}
  providers:
    llm: {kind: offline}
    embeddings: {kind: hashing, dim: 64}
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    # one user's facts say "org" where these tests attack shared facts through them (probe_stack.Stack)
    yield from answering_stack(tmp_path_factory.mktemp("probe10-findings"), USERS, CONFIG, says_org=True)


def _fresh_user(stack: Stack, name: str) -> tuple[str, str]:
    user = f"{name}10-{unique()}"
    return user, create_key(stack.running.keys, TENANT, "service_account", user)[0]


def _tenant(stack: Stack, kind: str, payload: dict[str, Any], **more: Any) -> tuple[int, Any]:
    return write(stack, stack.tenant, kind, payload, user_id="alice", **more)


def _org_list(stack: Stack, kind: str, own: str) -> list[dict[str, Any]]:
    """The active org memories of `kind` that mention `own`, as eve (any user of the tenant) lists them."""
    return memories(stack, "eve", kind, own, visibility="org")


# -- 1. erasure restores a version kept as history, never active (HIGH, narrow) -----------------------------
def test_erasure_never_restores_a_version_kept_as_history(stack: Stack) -> None:
    """HIGH (narrow). The tenant's org procedure v1 (no tool grant); the tenant's older version of it, dated
    2020 with allowed_tools ["Bash(*)"] (201 UPDATE "kept as history"); two users carry a third step (202,
    201 UPDATE); both erase themselves (200, 200). Expected: v1 is active again (its steps, no grant);
    seen: the 2020 steps are active and every user's SKILL.md pre-approves Bash(*)."""
    own = unique()
    base = {"name": f"Rotate dock keys {own}", "when_to_use": f"when a key of dock {own} is lost"}
    current = {**base, "steps": ["revoke the lost key", "issue a new key"]}
    status, added = _tenant(stack, "procedural", current)
    assert (status, added["decision"]) == (201, "ADD"), added
    older = {**base, "steps": ["run the rotation script", "reboot the gate"], "allowed_tools": ["Bash(*)"]}
    status, kept = _tenant(stack, "procedural", older, observed_at="2020-01-01T00:00:00Z")
    assert (status, kept["decision"], kept["memory"]["status"]) == (201, "UPDATE", "superseded"), kept
    changed = {**base, "steps": [*current["steps"], "log the rotation"]}
    users = [_fresh_user(stack, name) for name in ("ursa", "vera")]
    answers = [write(stack, key, "procedural", changed) for _, key in users]
    assert [(s, a["decision"]) for s, a in answers] == [(202, "PROPOSE"), (201, "UPDATE")], answers
    for user, key in users:
        status, erased = call(stack, key, "DELETE", f"/v1/users/{user}")
        assert status == 200, erased
    [live] = _org_list(stack, "procedural", own)
    status, skill = call(stack, stack.users["eve"], "GET", f"/v1/memories/{live['memory_id']}/skill")
    assert status == 200, skill
    assert "Bash(*)" not in skill["content"], skill["content"]
    assert live["payload"]["steps"] == current["steps"], live["payload"]


def test_erasure_restores_the_value_the_term_held_last(stack: Stack) -> None:
    """HIGH (narrow), the same with a term: the tenant's "within 2 hours" (now) and "within 6 hours"
    (2020, kept as history); two users carry "within 3 hours" and erase themselves; every user reads the
    2020 value "within 6 hours"."""
    own = unique()
    term = f"Dock rule {own}"
    status, added = _tenant(
        stack, "taxonomic", {"term": term, "definition": f"pallets of dock {own} are counted within 2 hours"}
    )
    assert (status, added["decision"]) == (201, "ADD"), added
    older = {"term": term, "definition": f"pallets of dock {own} are counted within 6 hours"}
    status, kept = _tenant(stack, "taxonomic", older, observed_at="2020-01-01T00:00:00Z")
    assert (status, kept["decision"]) == (201, "UPDATE"), kept
    users = [_fresh_user(stack, name) for name in ("ursa", "vera")]
    changed = {"term": term, "definition": f"pallets of dock {own} are counted within 3 hours"}
    answers = [write(stack, key, "taxonomic", changed) for _, key in users]
    assert [(s, a["decision"]) for s, a in answers] == [(202, "PROPOSE"), (201, "UPDATE")], answers
    for user, key in users:
        assert call(stack, key, "DELETE", f"/v1/users/{user}")[0] == 200
    definitions = [m["payload"]["definition"] for m in _org_list(stack, "taxonomic", own)]
    assert definitions == [f"pallets of dock {own} are counted within 2 hours"], definitions


def test_erasure_restores_the_version_the_erased_users_replaced(stack: Stack) -> None:
    """Held: without a version kept as history, the same erasure makes the tenant's v1 active again."""
    own = unique()
    term = f"Gate rule {own}"
    status, added = _tenant(
        stack, "taxonomic", {"term": term, "definition": f"trucks wait 20 minutes at gate {own}"}
    )
    assert (status, added["decision"]) == (201, "ADD"), added
    users = [_fresh_user(stack, name) for name in ("ursa", "vera")]
    answers = [
        write(stack, key, "taxonomic", {"term": term, "definition": f"trucks wait 25 minutes at gate {own}"})
        for _, key in users
    ]
    assert [s for s, _ in answers] == [202, 201], answers
    for user, key in users:
        assert call(stack, key, "DELETE", f"/v1/users/{user}")[0] == 200
    definitions = [m["payload"]["definition"] for m in _org_list(stack, "taxonomic", own)]
    assert definitions == [f"trucks wait 20 minutes at gate {own}"], definitions


# -- 2. a many-valued fact's values spelled with other marks share one key (MED) --------------------------
@pytest.mark.parametrize(("first", "second"), [("C++", "C#"), ("F#", "F*"), (".NET", "NET")])
def test_the_tenants_second_value_of_a_many_valued_org_fact_is_kept_beside_the_first(
    stack: Stack, first: str, second: str
) -> None:
    """MED. The tenant key's org fact {"subject": "dock <own>", "attribute": "languages", "value": first}
    (201 ADD), then the same with `second` -> 201 UPDATE (first superseded); expected 201 ADD, both listed."""
    own = unique()
    fact = {"subject": f"dock {own} scanner", "attribute": "languages"}
    status, added = _tenant(stack, "semantic", {**fact, "value": first})
    assert (status, added["decision"]) == (201, "ADD"), added
    status, again = _tenant(stack, "semantic", {**fact, "value": second})
    assert (status, again["decision"]) == (201, "ADD"), again
    values = sorted(m["payload"]["value"] for m in _org_list(stack, "semantic", own))
    assert values == sorted([first, second]), values


def test_a_users_second_private_value_spelled_with_other_marks_is_kept(stack: Stack) -> None:
    """MED. A fresh user's one-user key: private {"subject": "user", "attribute": "languages", "value":
    "C++"} (201 ADD), then "C#" -> 200 REINFORCE "same key and the same value" (C# lost)."""
    _, key = _fresh_user(stack, "lang")
    fact = {"subject": "user", "attribute": "languages"}
    status, added = write(stack, key, "semantic", {**fact, "value": "C++"}, visibility="private")
    assert (status, added["decision"]) == (201, "ADD"), added
    status, again = write(stack, key, "semantic", {**fact, "value": "C#"}, visibility="private")
    assert (status, again["decision"]) == (201, "ADD"), again


def test_users_adding_a_value_to_a_many_valued_org_fact_keep_the_tenants(stack: Stack) -> None:
    """MED. The tenant's org fact {"subject": "scanner <own>", "attribute": "languages", "value": "C++"};
    bob states "Java" for it: 201 ADD (a value beside it, as a many-valued attribute takes); bob states
    "C#": 202 PROPOSE "adds to the org memory", and carol's "C#" carries it (201 UPDATE "stated by 2
    user(s) against 1"): every user's list now shows Java and C#, and the tenant's C++ is superseded."""
    own = unique()
    fact = {"subject": f"scanner {own}", "attribute": "languages"}
    status, added = _tenant(stack, "semantic", {**fact, "value": "C++"})
    assert (status, added["decision"]) == (201, "ADD"), added
    status, java = write(stack, stack.users["bob"], "semantic", {**fact, "value": "Java"})
    assert (status, java["decision"]) == (201, "ADD"), java
    for user in ("bob", "carol"):
        write(stack, stack.users[user], "semantic", {**fact, "value": "C#"})
    values = sorted(m["payload"]["value"] for m in _org_list(stack, "semantic", own))
    assert "C++" in values, values


def test_a_users_other_value_of_a_single_valued_org_fact_spelled_with_other_marks_is_a_proposal(
    stack: Stack,
) -> None:
    """Held: a single-valued org fact ("dock <own> | scanner language: C++") said by bob as "C#" is a
    proposal (202), never a restatement."""
    own = unique()
    fact = {"subject": f"dock {own} scanner", "attribute": "firmware language"}
    status, added = _tenant(stack, "semantic", {**fact, "value": "C++"})
    assert (status, added["decision"]) == (201, "ADD"), added
    status, said = write(stack, stack.users["bob"], "semantic", {**fact, "value": "C#"})
    assert (status, said["decision"]) == (202, "PROPOSE"), said


# -- 3. erasure keeps the erased user's text when another statement gave the field any value (MED) ---------
def test_erasure_takes_the_erased_users_domain_out_whatever_other_domains_were_said(stack: Stack) -> None:
    """MED. A fresh user U's org term with "domain": "<U>'s private project <own>" (201 ADD); carol and dave
    add an alias (202 PROPOSE, 201 UPDATE: the active version carries U's domain); eve proposes another
    definition with "domain": "logistics" (202, pending); U's key DELETE /v1/users/U (200). Every user
    still reads U's domain in the active term."""
    own = unique()
    user, key = _fresh_user(stack, "dom")
    said = {"term": f"Yard code {own}", "definition": f"the code of the {own} yard"}
    private = f"{user} private project {own}"
    status, added = write(stack, key, "taxonomic", {**said, "domain": private})
    assert (status, added["decision"]) == (201, "ADD"), added
    answers = [
        write(stack, stack.users[u], "taxonomic", {**said, "aliases": [f"yc {own}"]})
        for u in ("carol", "dave")
    ]
    assert [(s, a["decision"]) for s, a in answers] == [(202, "PROPOSE"), (201, "UPDATE")], answers
    other = {"term": said["term"], "definition": f"the gate code of the {own} yard", "domain": "logistics"}
    status, proposed = write(stack, stack.users["eve"], "taxonomic", other)
    assert status == 202, proposed
    status, erased = call(stack, key, "DELETE", f"/v1/users/{user}")
    assert status == 200, erased
    [live] = _org_list(stack, "taxonomic", own)
    assert private not in str(live), live["payload"]


def test_erasure_takes_the_erased_users_domain_out_of_a_version_others_carried(stack: Stack) -> None:
    """Held: the same without eve's proposal: U's domain leaves the version carol and dave carried."""
    own = unique()
    user, key = _fresh_user(stack, "dom")
    said = {"term": f"Yard code {own}", "definition": f"the code of the {own} yard"}
    private = f"{user} private project {own}"
    status, added = write(stack, key, "taxonomic", {**said, "domain": private})
    assert (status, added["decision"]) == (201, "ADD"), added
    for other in ("carol", "dave"):
        status, _ = write(stack, stack.users[other], "taxonomic", {**said, "aliases": [f"yc {own}"]})
        assert status in (201, 202)
    assert call(stack, key, "DELETE", f"/v1/users/{user}")[0] == 200
    [live] = _org_list(stack, "taxonomic", own)
    assert private not in str(live), live["payload"]


# -- 4. erasure never takes a user's qualifiers out of an org fact another user restated (MED) -------------
def test_erasure_takes_the_erased_users_qualifiers_out_of_an_org_fact(stack: Stack) -> None:
    """MED. Project config `semantic: {visibility: org}`. A fresh user U's one-user key: {"subject": "north
    gate <own>", "attribute": "night contact", "value": "the gate office", "qualifiers": {"note": "<U>
    private phone 555 <own>"}} (201 ADD, org); carol restates the fact without qualifiers (200 REINFORCE);
    U's key DELETE /v1/users/U (200). The fact stays (carol backs it) and every user still reads U's note
    in its payload and text ("... (note: <U> private phone 555 ...)")."""
    own = unique()
    user, key = _fresh_user(stack, "qual")
    fact = {"subject": f"north gate {own}", "attribute": "night contact", "value": "the gate office"}
    private = f"night guard private phone 555 {own}"  # (naming the user, the fact would be theirs)
    status, added = write(stack, key, "semantic", {**fact, "qualifiers": {"note": private}})
    assert (status, added["decision"]) == (201, "ADD"), added
    status, restated = write(stack, stack.users["carol"], "semantic", fact)
    assert (status, restated["decision"]) == (200, "REINFORCE"), restated
    status, erased = call(stack, key, "DELETE", f"/v1/users/{user}")
    assert status == 200, erased
    [live] = _org_list(stack, "semantic", own)
    assert private not in json.dumps(live), (live["payload"], live["text"])


# -- 5. another user's snapshot id, computed, lists what their conversation told the org (MED) ---------------
def _extracted(stack: Stack, key: str, session: str) -> None:
    """Flush `session` and wait until its extraction is done."""
    status, flushed = call(stack, key, "POST", f"/v1/sessions/{session}/flush")
    assert status == 200 and flushed["snapshot"] is not None, flushed
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        report = call(stack, stack.tenant, "GET", "/v1/status")[1]
        if not report["snapshots_pending_extraction"]:
            return
        time.sleep(0.3)
    raise AssertionError(f"extraction still pending: {report['snapshots_pending_extraction']}")


def _snapshot_id(user: str, session: str, from_seq: int) -> str:
    """A snapshot's id as the store makes it (adapters/mongo/ids.snapshot_id): anyone can compute it."""
    digest = hashlib.sha256(f"{TENANT}|{user}|{session}#{from_seq}".encode()).hexdigest()
    return "snap-" + digest[:24]


def test_another_users_snapshot_id_lists_nothing_of_theirs(stack: Stack) -> None:
    """MED. Alice records "P7<OWN> stands for the pallet zone of the north dock" in her session
    "dock-notes-<own>" and flushes it: extraction writes the org term with her snapshot's evidence (every
    other user reads it with `snapshot_id: null`). Bob's one-user key computes her snapshot's id,
    sha256("acme|alice|dock-notes-<own>#1")[:24], and GET /v1/memories?snapshot_id=snap-... lists the term:
    bob learns that alice has that session and what it told the org (an oracle over her session ids and
    topics). Expected: an empty list (only the caller's own evidence matches)."""
    own = unique()
    term, session = f"P7{own.upper()}", f"dock-notes-{own}"
    said = [f"{term} stands for the pallet zone of the north dock.", f"Noted: {term} is that pallet zone."]
    turns = {"turns": [{"role": r, "content": t} for r, t in zip(("user", "assistant"), said, strict=True)]}
    status, recorded = call(stack, stack.users["alice"], "POST", f"/v1/sessions/{session}/turns", turns)
    assert status == 201, recorded
    _extracted(stack, stack.users["alice"], session)
    [shared] = _org_list(stack, "taxonomic", term)
    assert [e["snapshot_id"] for e in shared["evidence"]] == [None], shared["evidence"]  # hidden from eve
    status, page = call(
        stack, stack.users["bob"], "GET", f"/v1/memories?snapshot_id={_snapshot_id('alice', session, 1)}"
    )
    assert status == 200, page
    assert [m["payload"].get("term") for m in page["memories"]] == [], page["memories"]


def test_a_snapshot_id_of_nobodys_session_lists_nothing(stack: Stack) -> None:
    """Held (control): a computed id of a session alice never had lists nothing."""
    sid = _snapshot_id("alice", f"no-such-session-{unique()}", 1)
    status, page = call(stack, stack.users["bob"], "GET", f"/v1/memories?snapshot_id={sid}")
    assert (status, page["memories"]) == (200, []), page


# -- 6. a proposal made against an older version carries that version's expiry and metadata (MED) ----------
def test_a_carried_proposal_keeps_the_expiry_and_metadata_of_the_version_it_replaces(stack: Stack) -> None:
    """MED. The tenant's org term v1 with "metadata": {"team": "dock-old <own>"} and "expires_at" two hours
    ahead (a temporary rule); bob proposes another definition (202: the proposal copies v1's expiry and
    metadata); the tenant corrects the term, v2 without expiry and with {"team": "dock <own>"} (201
    UPDATE); carol states bob's definition (201 UPDATE, 2 users against the tenant). The version every user
    now reads carries v1's metadata and expires in two hours (then the term is gone for every user: v2
    stays superseded), not v2's (none, {"team": "dock <own>"}); and it is observed before v2 (bob's time),
    so a list filtered by observed_after = v2's time shows the superseded v2 and not the active term."""
    own = unique()
    term = f"Cold room rule {own}"
    soon = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=2)).isoformat()
    old, current = {"team": f"dock-old {own}"}, {"team": f"dock {own}"}
    status, added = _tenant(
        stack,
        "taxonomic",
        {"term": term, "definition": f"the cold room {own} is checked every 2 hours"},
        metadata=old,
        expires_at=soon,
    )
    assert (status, added["decision"]) == (201, "ADD"), added
    bobs = {"term": term, "definition": f"the cold room {own} is checked every 8 hours"}
    status, proposed = write(stack, stack.users["bob"], "taxonomic", bobs)
    assert status == 202, proposed
    corrected = {"term": term, "definition": f"the cold room {own} is checked every 3 hours"}
    status, updated = _tenant(stack, "taxonomic", corrected, metadata=current)
    assert (status, updated["decision"]) == (201, "UPDATE"), updated
    assert (updated["memory"]["metadata"], updated["memory"]["expires_at"]) == (current, None)
    status, carried = write(stack, stack.users["carol"], "taxonomic", bobs)
    assert (status, carried["decision"]) == (201, "UPDATE"), carried
    [live] = _org_list(stack, "taxonomic", own)
    assert live["payload"]["definition"] == bobs["definition"], live["payload"]
    kept = (live["metadata"], live["expires_at"], live["observed_at"] >= updated["memory"]["observed_at"])
    assert kept == (current, None, True), (kept, live["observed_at"], updated["memory"]["observed_at"])


# -- 7. one user grows an org memory past what any statement may hold (LOW) -------------------------------
def test_an_org_term_stays_a_valid_term_however_often_its_only_user_adds_to_it(stack: Stack) -> None:
    """LOW. A fresh user's org term (201 ADD), then 3 restatements with 50 new aliases each (200 REINFORCE,
    merged): the stored term held 150 aliases, more than a taxonomic item may (50). Fixed: the first 50
    merge, the later rounds merge nothing and say so (docs/adr/0077)."""
    own = unique()
    _, key = _fresh_user(stack, "grow")
    said = {"term": f"Dock code {own}", "definition": f"the code of the {own} dock gate"}
    status, added = write(stack, key, "taxonomic", said)
    assert (status, added["decision"]) == (201, "ADD"), added
    for round_ in range(3):
        aliases = [f"dock {own} code {round_}-{i} " + "x" * 200 for i in range(50)]
        status, grown = write(stack, key, "taxonomic", {**said, "aliases": aliases})
        # the first 50 merge (REINFORCE); later rounds merge nothing (the user counted already: NOOP),
        # and the answer says what was not merged
        assert (status, grown["decision"]) == (200, "NOOP" if round_ else "REINFORCE"), grown
        assert ("50 aliases (it holds at most 50)" in grown["reason"]) == bool(round_), grown["reason"]
    [term] = _org_list(stack, "taxonomic", own)
    TaxonomicItem.model_validate(term["payload"])  # aliases: at most 50


# Lambda's synchronous response limit (config/project.py: "a synchronous Lambda invocation 6 MB").
LAMBDA_RESPONSE_BYTES = 6 * 1024 * 1024


def test_one_users_proposals_keep_an_org_terms_history_answerable(stack: Stack) -> None:
    """LOW. The tenant's org term; a fresh user's one-user key proposes 125 other definitions (4,000
    characters) with 50 aliases and 50 related terms of 280 characters each (202 each); eve's GET
    /v1/memories/{id}?history=true answers every proposal whole: over 6 MB, more than a Lambda function
    may answer, so every user's history of that term fails on a deployed stack."""
    own = unique()
    term = f"Gate rule {own}"
    status, added = _tenant(
        stack, "taxonomic", {"term": term, "definition": f"lorries queue 20 minutes at bay {own}"}
    )
    assert (status, added["decision"]) == (201, "ADD"), added
    _, key = _fresh_user(stack, "many")
    for n in range(125):
        payload = {
            "term": term,
            "definition": f"lorries queue {n + 30} minutes at bay {own} " + "z" * 3950,
            "aliases": [f"a{n}-{i} " + "y" * 270 for i in range(50)],
            "related_terms": [f"r{n}-{i} " + "w" * 270 for i in range(50)],
        }
        status, proposed = write(stack, key, "taxonomic", payload)
        assert status == 202, proposed
    path = f"/v1/memories/{added['memory']['memory_id']}?history=true"
    status, answer = call(stack, stack.users["eve"], "GET", path)
    assert status == 200, answer
    size = len(json.dumps(answer, ensure_ascii=False).encode())
    assert size < LAMBDA_RESPONSE_BYTES, f"{size} bytes"


# -- 8. the SDK follows a cursor that never moves, forever (LOW) ------------------------------------------
class _StuckCursor(http.server.BaseHTTPRequestHandler):
    """Answers every GET /v1/memories with an empty page whose next_cursor is always the same; after
    `limit` answers it refuses (400), so a client that never stops is stopped here."""

    served = 0
    limit = 25

    def do_GET(self) -> None:
        type(self).served += 1
        if type(self).served > self.limit:
            body = json.dumps({"error": {"code": "stop", "message": "enough", "details": None}}).encode()
            self.send_response(400)
        else:
            body = json.dumps({"memories": [], "next_cursor": "2026-01-01T00:00:00+00:00"}).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


def test_the_sdk_stops_at_a_cursor_that_does_not_move() -> None:
    """LOW. A server answering every GET /v1/memories with {"memories": [], "next_cursor": C} (the same C):
    MemoryClient.iter_memories(...) asks again and again (here until the server refuses, 26 requests; a
    server that keeps answering holds the caller forever, requests back to back). Expected: the SDK's own
    error (`invalid_response`) once a page's cursor repeats the one it asked with."""

    class Stuck(_StuckCursor):
        served = 0

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stuck)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        with MemoryClient(url, retries=0) as client, pytest.raises(MemoryClientError):
            list(client.iter_memories("alice"))
        assert Stuck.served <= 2, f"{Stuck.served} requests for one cursor"
    finally:
        server.shutdown()
        server.server_close()


# -- 9. held: what pending proposals reach, and a stale proposal's tool grant --------------------------
def test_a_pending_proposal_reaches_no_other_users_domains_conflicts_or_search(stack: Stack) -> None:
    """Held: bob's and carol's pending proposals (a domain added, another definition with another domain)
    appear in none of eve's GET /v1/domains, GET /v1/memories/conflicts and search results."""
    own = unique()
    term, definition = f"Bay code {own}", f"the code of bay {own}"
    status, added = _tenant(stack, "taxonomic", {"term": term, "definition": definition})
    assert (status, added["decision"]) == (201, "ADD"), added
    proposals = [
        ("bob", {"term": term, "definition": definition, "domain": f"injected {own}"}),
        ("carol", {"term": term, "definition": f"another code of bay {own}", "domain": f"other {own}"}),
    ]
    for user, payload in proposals:
        assert write(stack, stack.users[user], "taxonomic", payload)[0] == 202
    eve = stack.users["eve"]
    status, domains = call(stack, eve, "GET", "/v1/domains")
    assert status == 200 and own not in json.dumps(domains), domains
    status, conflicts = call(stack, eve, "GET", "/v1/memories/conflicts")
    assert status == 200 and own not in json.dumps(conflicts), conflicts
    status, found = call(stack, eve, "POST", "/v1/memories/search", {"query": f"injected {own} code of bay"})
    assert status == 200, found
    texts = [r.get("text") for r in found["results"] if own in json.dumps(r)]
    assert texts == [f"{term}: {definition}"], texts


def test_a_proposal_made_before_the_tenant_revoked_a_tool_grant_never_brings_it_back(stack: Stack) -> None:
    """Held: the tenant's org procedure grants Bash(*); bob adds a tag (202: his proposal holds the grant
    the version had); the tenant revokes every grant ("allowed_tools": [], 201 UPDATE); carol and dave
    state bob's very statement: what becomes active grants nothing (their statements make the revoked
    version's additions, never bob's stale proposal)."""
    own = unique()
    procedure = {
        "name": f"Reset the dock scanner {own}",
        "when_to_use": f"when the scanner of dock {own} hangs",
        "steps": ["unplug it", "plug it in"],
    }
    status, added = _tenant(stack, "procedural", {**procedure, "allowed_tools": ["Bash(*)"]})
    assert (status, added["decision"]) == (201, "ADD"), added
    tagged = {**procedure, "tags": [f"dock {own}"]}
    assert write(stack, stack.users["bob"], "procedural", tagged)[0] == 202
    status, revoked = _tenant(stack, "procedural", {**procedure, "allowed_tools": []})
    assert (status, revoked["decision"]) == (201, "UPDATE"), revoked
    for user in ("carol", "dave"):
        status, said = write(stack, stack.users[user], "procedural", tagged)
        assert status in (201, 202), said
    [live] = _org_list(stack, "procedural", own)
    assert not live["payload"].get("allowed_tools"), live["payload"]
    status, skill = call(stack, stack.users["eve"], "GET", f"/v1/memories/{live['memory_id']}/skill")
    assert status == 200 and "Bash" not in skill["content"], skill
