"""Issue 33's fifth independent probe (h-probe5, on main 548d08f), over HTTP on a running local stack, with
payloads none of the earlier probes used (tests/e2e/test_probe_findings.py, test_probe2_findings.py,
test_probe3_findings.py, test_probe4_findings.py, tests/corrections.py). Each finding's test failed when
it was written; the attacks that held are kept as passing tests.

- Shared memory: `worded` (the letter rule of an org restatement) reads punctuation attached to a word
  as a space, so a host name, an e-mail address, a file name or a range that differs only by a dot, a
  dash, an underscore or a comma is "the same value": a user's correction backs the old value (200
  REINFORCE, not 202 PROPOSE) and the tenant's correction is lost (200, not 201).
- The tenant's key cannot empty a list of an org memory: `allowed_tools: []` (every tool grant
  revoked), `tags: []`, `aliases: []` are a REINFORCE, and the exported SKILL.md keeps pre-approving the
  revoked tools (docs/security.md: "A tenant-wide key's labels are compared whole").
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.probe_stack import Stack, api, running_stack

USERS = ("alice", "bob", "carol", "eve")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    yield from running_stack(tmp_path_factory.mktemp("probe5-findings"), USERS)


def seed(stack: Stack, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    body = {"user_id": "alice", "type": kind, "payload": payload, "reconcile": False}
    status, written = api(stack, stack.tenant, "POST", "/v1/memories", body)
    assert (status, written["memory"]["visibility"]) == (201, "org"), written
    return dict(written["memory"])


def active_payload(stack: Stack, memory: dict[str, Any]) -> dict[str, Any]:
    status, found = api(stack, stack.users["eve"], "GET", f"/v1/memories/{memory['memory_id']}?history=true")
    assert status == 200, found
    live = [v for v in [found["memory"], *found.get("history", [])] if v["status"] == "active"]
    return dict(live[0]["payload"])


# -- shared memory: punctuation inside a host name, an address, a file name or a range -------------------
ORG_CORRECTIONS = {
    # another host: pkg-acme.io and pkg.acme.io are two registrable domains (acme-io vs acme.io owners)
    "host name": (
        "download the agent installer from pkg-acme.io/agent only",
        "download the agent installer from pkg.acme.io/agent only",
    ),
    # another mailbox
    "e-mail address": (
        "send incident reports to ops.team@acme.com within the hour",
        "send incident reports to ops-team@acme.com within the hour",
    ),
    # another file
    "file name": (
        "the service reads its settings from app_config.yaml at the repo root",
        "the service reads its settings from app.config.yaml at the repo root",
    ),
    # a range of five days against two days
    "range / list": (
        "the help desk of the north depot is staffed Monday-Friday",
        "the help desk of the north depot is staffed Monday, Friday",
    ),
}


@pytest.mark.parametrize(("before", "after"), ORG_CORRECTIONS.values(), ids=ORG_CORRECTIONS.keys())
def test_punctuation_inside_a_name_or_range_is_a_new_org_value(stack: Stack, before: str, after: str) -> None:
    """MED. POST /v1/memories (bob's one-user key) {"type":"taxonomic","payload":{"term":T,
    "definition":"download the agent installer from pkg.acme.io/agent only"}} against the org term
    "... from pkg-acme.io/agent only" answers 200 REINFORCE (expected 202 PROPOSE), and the same from the
    tenant key 200 REINFORCE (expected 201 UPDATE): the tenant's correction of a host is lost."""
    term = f"P5{uuid.uuid4().hex[:6].upper()}"
    original = seed(stack, "taxonomic", {"term": term, "definition": before})
    said = {"type": "taxonomic", "payload": {"term": term, "definition": after}}
    status, bobs = api(stack, stack.users["bob"], "POST", "/v1/memories", said)
    assert (status, bobs["decision"]) == (202, "PROPOSE"), bobs
    status, written = api(stack, stack.tenant, "POST", "/v1/memories", {**said, "user_id": "alice"})
    assert (status, written["decision"]) == (201, "UPDATE"), written
    assert active_payload(stack, original)["definition"] == after


# -- shared memory: the tenant's key empties a list -----------------------------------------------------
PROCEDURE = {
    "when_to_use": "before a release goes out",
    "steps": ["build it", "ship it"],
    "trigger_conditions": ["release day"],
    "allowed_tools": ["Read", "Bash(*)"],
    "tags": ["release"],
}
TERM = {"definition": "the pallet ledger", "aliases": ["PL"], "related_terms": ["pallet"]}
EMPTIED = {
    "revoke every tool grant": ("procedural", PROCEDURE, "allowed_tools"),
    "drop every trigger": ("procedural", PROCEDURE, "trigger_conditions"),
    "drop every tag": ("procedural", PROCEDURE, "tags"),
    "drop every alias": ("taxonomic", TERM, "aliases"),
    "drop every related term": ("taxonomic", TERM, "related_terms"),
}


@pytest.mark.parametrize(("kind", "base", "field"), EMPTIED.values(), ids=EMPTIED.keys())
def test_the_tenants_empty_list_is_the_org_memorys_new_version(
    stack: Stack, kind: str, base: dict[str, Any], field: str
) -> None:
    """MED. POST /v1/memories (tenant key) {"user_id":"alice","type":"procedural","payload":{...the org
    procedure..., "allowed_tools": []}} answers 200 REINFORCE (expected 201 UPDATE) and GET
    /v1/memories/{id}/skill still says `allowed-tools: "Read Bash(*)"`: a tool grant cannot be revoked
    whole (only one of two, tests/e2e/test_probe4_findings.py)."""
    tag = uuid.uuid4().hex[:6]
    name = {"name": f"deploy {tag}"} if kind == "procedural" else {"term": f"PE{tag.upper()}"}
    original = seed(stack, kind, {**name, **base})
    body = {"user_id": "alice", "type": kind, "payload": {**name, **base, field: []}}
    status, written = api(stack, stack.tenant, "POST", "/v1/memories", body)
    assert (status, written["decision"]) == (201, "UPDATE"), written
    assert not active_payload(stack, original).get(field)
    if field == "allowed_tools":
        status, skill = api(stack, stack.users["eve"], "GET", f"/v1/memories/{original['memory_id']}/skill")
        assert status == 200 and "Bash(*)" not in skill["content"], skill
