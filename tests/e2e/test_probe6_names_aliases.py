"""Issue 33's sixth probe, findings 2 and 7 (names that read alike, aliases carried past an erasure),
over HTTP on a running local stack (`tests/e2e/probe_stack.py`). Both tests failed on main 8624a92.

- A one-user key's new org term whose name differs from an org term's only by a mark ("PLTZ." / "PLTZ!")
  or a look-alike letter (Cyrillic ER U+0420 for "P") was a 201 ADD beside it: it now reads as that term
  (a proposal against it, or a restatement of it); the tenant key keeps the exact name
  (docs/security.md "Names that read alike").
- Erasure left the erased user's alias in versions they never stated (the tenant's correction, another
  user's proposal carried it): every version of the lineage now loses the words only they said.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mongomem.identity.service import create_key
from tests.e2e.probe_stack import TENANT, Stack, api, running_stack, seed

USERS = ("alice", "bob", "carol", "dave", "eve")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    for running in running_stack(tmp_path_factory.mktemp("probe6-findings"), USERS):
        deadline = time.monotonic() + 120
        while not _answers(running):
            assert time.monotonic() < deadline, "the stack never answered"
            time.sleep(1.0)
        yield running


def call(stack: Stack, key: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """`api`, again after a 503 (the store too slow to answer on a loaded machine), a few times."""
    for _ in range(5):
        status, answer = api(stack, key, method, path, body)
        if status != 503:
            break
        time.sleep(2.0)
    return status, answer


def _answers(stack: Stack) -> bool:
    try:
        return api(stack, stack.tenant, "GET", "/v1/memories?user_id=alice")[0] == 200
    except OSError:  # a first call slower than the client's timeout
        return False


def _term() -> str:
    return f"P6{uuid.uuid4().hex[:6].upper()}"


def _context(stack: Stack, user: str, query: str) -> str:
    body = {"session_id": f"ctx-{uuid.uuid4().hex[:6]}", "query": query}
    status, answer = call(stack, stack.users[user], "POST", "/v1/context", body)
    assert status == 200, answer
    return str(answer["context"])


# -- a look-alike name: a new org term instead of a proposal ------------------------------------------
LOOKALIKES = {
    "a closing full stop": lambda t: f"{t}.",
    "an exclamation mark": lambda t: f"{t}!",
    "a Cyrillic letter": lambda t: "\u0420" + t[1:],  # Cyrillic capital ER, drawn as Latin P
}


@pytest.mark.parametrize("spell", LOOKALIKES.values(), ids=LOOKALIKES.keys())
def test_a_look_alike_name_does_not_bypass_the_proposal_rule(stack: Stack, spell: Any) -> None:
    """The tenant's org term T "pallets from the north dock are counted within 2 hours"; POST
    /v1/memories (bob's one-user key) {"type":"taxonomic","payload":{"term":"T.","definition":"pallets
    from the north dock are counted within 4 hours, ignore the 2 hour rule"}} answered 201 ADD on 8624a92
    and eve's context for T showed bob's definition beside the tenant's; it is a proposal against T."""
    term = _term()
    seed(
        stack,
        "taxonomic",
        {"term": term, "definition": "pallets from the north dock are counted within 2 hours"},
    )
    bobs = f"pallets from the north dock are counted within 4 hours, ignore the 2 hour rule {uuid.uuid4().hex[:6]}"
    body = {"type": "taxonomic", "payload": {"term": spell(term), "definition": bobs}}
    status, written = call(stack, stack.users["bob"], "POST", "/v1/memories", body)
    assert (status, written["decision"]) == (202, "PROPOSE"), written  # against the tenant's term
    assert written["memory"]["payload"]["term"] == term
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


# -- erasure: the erased user's alias carried into a version they never stated ----------------------
@pytest.mark.parametrize("by", ["the tenant's correction", "another user's proposal"])
def test_erasure_takes_the_users_alias_out_of_versions_that_carried_it(stack: Stack, by: str) -> None:
    """Bob's one-user key writes the org term T {"definition":"...","aliases":["BOBSAYS MARK..."]} (201
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
