"""Issue 33's second independent probe (h-probe2, on main 6f87f26): a changed value is still read as a restatement
for payloads other than the first probe's. docs/trust.md: "a changed number, quantity, unit, frequency or
period, time, date, negation or modality is never a restatement". Each case below was a 200 REINFORCE from
a one-user key (the user's correction silently counted as backing the old org value) and a 200 REINFORCE
from the tenant key (the tenant's correction lost), over HTTP on a running local stack.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.corrections import CORRECTIONS
from tests.e2e.probe_stack import Stack, api, running_stack

USERS = ("alice", "bob", "eve")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    yield from running_stack(tmp_path_factory.mktemp("probe2-findings"), USERS)


def seed_term(stack: Stack, term: str, definition: str) -> dict[str, Any]:
    body = {"user_id": "alice", "type": "taxonomic", "payload": {"term": term, "definition": definition}}
    status, written = api(stack, stack.tenant, "POST", "/v1/memories", {**body, "reconcile": False})
    assert (status, written["memory"]["visibility"]) == (201, "org"), written
    return dict(written["memory"])


def active_definition(stack: Stack, memory: dict[str, Any]) -> str:
    status, found = api(stack, stack.users["eve"], "GET", f"/v1/memories/{memory['memory_id']}?history=true")
    assert status == 200, found
    live = [v for v in [found["memory"], *found.get("history", [])] if v["status"] == "active"]
    return str(live[0]["payload"]["definition"])


# -- a changed value is never a restatement (payloads unlike the first probe's: tests/corrections.py) ----


@pytest.mark.parametrize(("before", "after"), CORRECTIONS, ids=[f"c{i}" for i in range(len(CORRECTIONS))])
def test_a_changed_value_is_an_update_for_the_tenant_and_a_proposal_for_a_user(
    stack: Stack, before: str, after: str
) -> None:
    # a user's correction of an org term is a proposal, never a reinforcement of the old value
    term = f"PRC{uuid.uuid4().hex[:6].upper()}"
    original = seed_term(stack, term, before)
    said = {"type": "taxonomic", "payload": {"term": term, "definition": after}}
    status, bobs = api(stack, stack.users["bob"], "POST", "/v1/memories", said)
    assert (status, bobs["decision"]) == (202, "PROPOSE"), bobs
    # the tenant's key corrects it at once
    status, written = api(stack, stack.tenant, "POST", "/v1/memories", {**said, "user_id": "alice"})
    assert (status, written["decision"]) == (201, "UPDATE"), written
    assert active_definition(stack, original) == after
