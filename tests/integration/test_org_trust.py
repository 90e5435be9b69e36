"""Who may write a tenant's shared (org) memory, what it reveals of its contributors, and how procedure
feedback counts - through the API handlers (and the extract function) on SecantusDB, with the embedded
index and a real OpenSearch node. The rules: docs/security.md "The tenant's trust model"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mongomem.local.queue import LocalQueue, QueuePolicy
from mongomem.local.worker import drain_all
from mongomem.models.memory import ORG_OWNER
from mongomem.runtime import Services
from mongomem.vectors.embedded import EmbeddedIndex
from tests import helpers
from tests.conftest import load_function
from tests.helpers import EXTRACT_QUEUES
from tests.integration.test_memory_scopes import build, make_index

SLO = {"term": "SLO", "definition": "service level objective"}
SLO_BAD = {"term": "SLO", "definition": "a sales lead opportunity"}


@pytest.fixture(params=["embedded", pytest.param("opensearch", marks=pytest.mark.opensearch)])
def svc(request: pytest.FixtureRequest, make_settings: Any, tmp_path: Path) -> Iterator[Services]:
    with helpers.installed(build(make_settings, make_index(request.param, request, tmp_path))) as services:
        yield services


@pytest.fixture(scope="module")
def fns() -> dict[str, Any]:
    return {name: load_function(name) for name in ("record_turns", "memory_api", "extract")}


def call(
    fns: dict[str, Any], ctx: Any, method: str, target: str, body: Any = None, *, as_user: str | None = None
) -> tuple[int, Any]:
    """A request by a service account bound to `as_user`, else by the tenant's memory_service key."""
    event = helpers.http_event(method, target, body, "acme")
    if as_user is not None:
        event["requestContext"]["authorizer"]["lambda"].update(
            kind="service_account", key_id=f"key-{as_user}", fixed_user_id=as_user
        )
    fn = fns["record_turns"] if target.startswith("/v1/sessions") and method == "POST" else fns["memory_api"]
    return helpers.invoke(fn, ctx, event)


def state(svc: Services) -> list[dict[str, Any]]:
    return list(svc.db["memories"].find({}, {"vector": 0}).sort("_id", 1))


def org_docs(svc: Services, term: str) -> list[dict[str, Any]]:
    found = svc.db["memories"].find({"user_id": ORG_OWNER, "payload.term": term}, {"vector": 0})
    return sorted(found, key=lambda d: d["version"])


def active_definition(fns: dict[str, Any], ctx: Any, reader: str, term: str) -> list[str]:
    """What a user of the tenant reads for the term (search, every mode)."""
    seen = set()
    for mode in ("hybrid", "bm25", "knn"):
        body = {"query": f"{term} definition", "types": ["taxonomic"], "mode": mode, "top_k": 5}
        status, found = call(fns, ctx, "POST", "/v1/memories/search", body, as_user=reader)
        assert status == 200, found
        seen |= {r["payload"]["definition"] for r in found["results"] if r["payload"]["term"] == term}
    return sorted(seen)


# -- who may create org memories ------------------------------------------------------------------
def test_a_service_account_cannot_share_what_its_project_keeps_private(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    before = state(svc)
    # A service account (one user) asks for an org-visible semantic fact about "user": everyone's context
    fact = {"subject": "user", "attribute": "manager", "value": "mallory"}
    status, body = call(
        fns,
        ctx,
        "POST",
        "/v1/memories",
        {"type": "semantic", "payload": fact, "visibility": "org"},
        as_user="mal",
    )
    assert (status, body["error"]["code"], body["error"]["details"]["path"]) == (
        403,
        "forbidden",
        "visibility",
    )
    # ... or an org term written around reconciliation
    term = {"type": "taxonomic", "payload": SLO, "reconcile": False}
    status, body = call(fns, ctx, "POST", "/v1/memories", term, as_user="mal")
    assert (status, body["error"]["details"]["path"]) == (403, "reconcile")
    assert state(svc) == before
    # The tenant-wide key may do both
    status, _ = call(
        fns,
        ctx,
        "POST",
        "/v1/memories",
        {"user_id": "ops", "type": "semantic", "payload": fact, "visibility": "org"},
    )
    assert status == 201


def test_a_users_new_proposal_withdraws_their_oldest_beyond_five_but_never_one_another_user_backs(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given the tenant's org term that two users restate (three behind it), and mallory's proposal that
    # carol states too (two behind it: pending)
    status, added = call(
        fns, ctx, "POST", "/v1/memories", {"user_id": "ops", "type": "taxonomic", "payload": SLO}
    )
    assert status == 201, added
    for user in ("dee", "eli"):
        assert (
            call(fns, ctx, "POST", "/v1/memories", {"type": "taxonomic", "payload": SLO}, as_user=user)[0]
            == 200
        )

    def propose(user: str, n: int) -> dict[str, Any]:
        payload = {"term": "SLO", "definition": f"a service level objective, draft {n}"}
        status, answer = call(
            fns, ctx, "POST", "/v1/memories", {"type": "taxonomic", "payload": payload}, as_user=user
        )
        assert status == 202, answer
        return dict(answer)

    propose("mal", 0)
    propose("carol", 0)
    # When mallory proposes six more definitions of her own
    answers = [propose("mal", n) for n in range(1, 7)]
    # Then she keeps her five newest (the sixth withdrew her oldest, and says so), and the one carol backs
    assert ["withdrawn" in a["reason"] for a in answers] == [False] * 5 + [True], [
        a["reason"] for a in answers
    ]
    pending = [d for d in org_docs(svc, "SLO") if d["status"] == "proposed"]
    drafts = sorted(int(d["payload"]["definition"].rsplit(" ", 1)[1]) for d in pending)
    assert drafts == [0, 2, 3, 4, 5, 6], drafts
    # and the withdrawn one is gone from every user's history of the term
    status, history = call(
        fns, ctx, "GET", f"/v1/memories/{added['memory']['memory_id']}?history=true", as_user="eli"
    )
    assert status == 200 and "draft 1" not in json.dumps(history), history


# -- who may change them --------------------------------------------------------------------------
def test_a_users_conflicting_value_is_a_proposal_until_more_users_state_it(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given ana's org term (through her service account: a user's statement)
    status, first = call(
        fns, ctx, "POST", "/v1/memories", {"type": "taxonomic", "payload": SLO}, as_user="ana"
    )
    assert (status, first["decision"], first["memory"]["visibility"]) == (201, "ADD", "org")
    original = first["memory"]["memory_id"]
    # When mallory states another definition, twice (counted once: the second changes nothing)
    for answer in ((202, "PROPOSE"), (200, "NOOP")):
        status, proposed = call(
            fns, ctx, "POST", "/v1/memories", {"type": "taxonomic", "payload": SLO_BAD}, as_user="mal"
        )
        assert (status, proposed["decision"], proposed["memory"]["status"]) == (*answer, "proposed")
    # Then every user still reads ana's definition; mallory's waits as a proposal of the same lineage
    assert active_definition(fns, ctx, "carol", "SLO") == ["service level objective"]
    docs = org_docs(svc, "SLO")
    assert [(d["status"], d["lineage_id"] == first["memory"]["lineage_id"]) for d in docs] == [
        ("active", True),
        ("proposed", True),
    ]
    assert {e["user_id"] for e in docs[1]["evidence"]} == {"mal"}
    # When a second user states mallory's definition: two users against one, it becomes the new version
    status, update = call(
        fns, ctx, "POST", "/v1/memories", {"type": "taxonomic", "payload": SLO_BAD}, as_user="bob"
    )
    assert (status, update["decision"]) == (201, "UPDATE")
    assert "2 user(s) against 1" in update["reason"]
    docs = org_docs(svc, "SLO")
    assert [d["status"] for d in docs] == ["superseded", "active"]
    assert docs[1]["supersedes"] == original and docs[0]["superseded_by"] == docs[1]["_id"]
    # ... with every contributor in its evidence and each decision recorded
    assert {e["user_id"] for e in docs[1]["evidence"]} == {"mal", "bob"}
    assert [d["decision"] for d in docs[1]["decisions"]] == ["PROPOSE", "PROPOSE", "UPDATE"]
    assert active_definition(fns, ctx, "carol", "SLO") == ["a sales lead opportunity"]


def test_a_user_corrects_their_own_term_and_the_tenant_key_changes_any(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    rpo = {"term": "RPO", "definition": "recovery point objective"}
    assert (
        call(fns, ctx, "POST", "/v1/memories", {"type": "taxonomic", "payload": rpo}, as_user="ana")[0] == 201
    )
    # ana is the only one behind it: her own correction is the new version at once
    fixed = {**rpo, "definition": "recovery point objective: data loss we accept, in minutes"}
    status, body = call(
        fns, ctx, "POST", "/v1/memories", {"type": "taxonomic", "payload": fixed}, as_user="ana"
    )
    assert (status, body["decision"]) == (201, "UPDATE")
    # bob reinforces it (same value): now two users are behind it, and ana alone cannot change it any more
    assert (
        call(fns, ctx, "POST", "/v1/memories", {"type": "taxonomic", "payload": fixed}, as_user="bob")[0]
        == 200
    )
    again = {**rpo, "definition": "recovery point objective (deprecated)"}
    status, body = call(
        fns, ctx, "POST", "/v1/memories", {"type": "taxonomic", "payload": again}, as_user="ana"
    )
    assert (status, body["decision"]) == (202, "PROPOSE")
    # the tenant-wide key speaks for the tenant: its write is the new version directly
    ops = {"user_id": "ops", "type": "taxonomic", "payload": {**rpo, "definition": "RPO per the 2026 policy"}}
    status, body = call(fns, ctx, "POST", "/v1/memories", ops)
    assert (status, body["decision"]) == (201, "UPDATE")
    assert active_definition(fns, ctx, "carol", "RPO") == ["RPO per the 2026 policy"]


def test_a_users_extraction_proposes_but_does_not_replace_another_users_term(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    queue, policy = LocalQueue(svc.db), QueuePolicy(visibility_timeout=0.0)
    said = {
        "ana": "At Acme, MTTR means mean time to recovery.",
        "mal": "At Acme, MTTR means mean time to resign.",
    }
    for user, text in said.items():
        turns = {"user_id": user, "turns": [{"role": "user", "content": text}]}
        assert call(fns, ctx, "POST", f"/v1/sessions/s-{user}/turns", turns)[0] == 201
        assert call(fns, ctx, "POST", f"/v1/sessions/s-{user}/flush?user_id={user}")[0] == 200
        received = drain_all(queue, EXTRACT_QUEUES, fns["extract"].lambda_handler, policy)
        assert received["extract-taxonomic"] == 1
    docs = org_docs(svc, "MTTR")
    assert [(d["status"], d["payload"]["definition"]) for d in docs] == [
        ("active", "mean time to recovery"),
        ("proposed", "mean time to resign"),
    ]
    assert active_definition(fns, ctx, "bob", "MTTR") == ["mean time to recovery"]
    # a redelivered message changes nothing
    assert call(fns, ctx, "POST", "/v1/sessions/s-mal/flush?user_id=mal")[0] == 200
    assert org_docs(svc, "MTTR") == docs


# -- what org memories reveal ----------------------------------------------------------------------
def test_org_memories_never_name_the_other_users_who_stated_them(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given a term ana and bob stated in conversations (extraction: evidence with snapshots and turns)
    queue, policy = LocalQueue(svc.db), QueuePolicy(visibility_timeout=0.0)
    for user in ("ana", "bob"):
        turns = {
            "user_id": user,
            "turns": [{"role": "user", "content": "At Acme, MTTR means mean time to recovery."}],
        }
        assert call(fns, ctx, "POST", f"/v1/sessions/s-{user}/turns", turns)[0] == 201
        assert call(fns, ctx, "POST", f"/v1/sessions/s-{user}/flush?user_id={user}")[0] == 200
        received = drain_all(queue, EXTRACT_QUEUES, fns["extract"].lambda_handler, policy)
        assert received["extract-taxonomic"] == 1
    doc = org_docs(svc, "MTTR")[0]
    secrets = {"ana", "bob"} | {e["snapshot_id"] for e in doc["evidence"]}
    mid = doc["_id"]
    # When carol reads it every way the API offers (as herself, and through the tenant key for her)
    answers = [
        call(fns, ctx, "GET", f"/v1/memories/{mid}?history=true", as_user="carol"),
        call(fns, ctx, "GET", f"/v1/memories/{mid}?history=true&user_id=carol"),
        call(fns, ctx, "GET", "/v1/memories?type=taxonomic", as_user="carol"),
        call(fns, ctx, "POST", "/v1/memories/search", {"query": "MTTR"}, as_user="carol"),
        call(fns, ctx, "POST", "/v1/context", {"session_id": "s-carol", "query": "MTTR"}, as_user="carol"),
        call(
            fns,
            ctx,
            "POST",
            "/v1/memories",
            {"type": "taxonomic", "payload": {"term": "MTTR", "definition": "mean time to recovery"}},
            as_user="carol",
        ),
    ]
    # Then she learns the term, its counts and when it was stated - never who stated it or where
    for status, body in answers:
        assert status in (200, 201), body
        text = json.dumps(body)
        assert "MTTR" in text
        assert not [s for s in secrets if f'"{s}"' in text or f"{s}:" in text], text[:400]
    memory = call(fns, ctx, "GET", f"/v1/memories/{mid}", as_user="carol")[1]["memory"]
    assert memory["reinforcement_count"] == 3 and len(memory["evidence"]) == 3
    assert [e["user_id"] for e in memory["evidence"]] == [None, None, "carol"]
    assert all(e["observed_at"] for e in memory["evidence"])
    # ... while ana still sees her own contribution
    mine = call(fns, ctx, "GET", f"/v1/memories/{mid}", as_user="ana")[1]["memory"]["evidence"]
    assert [e["user_id"] for e in mine] == ["ana", None, None] and mine[0]["snapshot_id"] and mine[0]["seqs"]


# -- procedure feedback -----------------------------------------------------------------------------
def test_procedure_feedback_counts_once_per_user_refuses_the_future_and_goes_with_the_user(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    procedure = {"name": "Restart the API", "when_to_use": "When it hangs", "steps": ["drain", "restart"]}
    status, body = call(
        fns, ctx, "POST", "/v1/memories", {"user_id": "ops", "type": "procedural", "payload": procedure}
    )
    assert status == 201 and body["memory"]["visibility"] == "org"
    target = f"/v1/memories/{body['memory']['memory_id']}/feedback"
    # one user reporting ten times a day counts once; their last report stands
    for outcome in ["success"] * 9 + ["failure"]:
        status, result = call(fns, ctx, "POST", target, {"outcome": outcome}, as_user="mal")
        assert status == 200, result
    assert (result["usage"]["successes"], result["usage"]["failures"]) == (0, 1)
    status, result = call(fns, ctx, "POST", target, {"outcome": "success"}, as_user="bob")
    assert (result["usage"]["successes"], result["usage"]["failures"]) == (1, 1)
    # a use in the future is refused, and a used_at cannot open another day's count
    later = (datetime.now(UTC) + timedelta(hours=2)).isoformat()
    status, refused = call(fns, ctx, "POST", target, {"outcome": "success", "used_at": later}, as_user="bob")
    assert (status, refused["error"]["details"]["path"]) == (422, "used_at")
    earlier = (datetime.now(UTC) - timedelta(days=3)).isoformat()
    status, result = call(fns, ctx, "POST", target, {"outcome": "success", "used_at": earlier}, as_user="bob")
    assert status == 200 and not result["counted"] and result["usage"]["successes"] == 1
    # When mallory is erased, her report leaves the counts and the database
    assert call(fns, ctx, "DELETE", "/v1/users/mal")[0] == 200
    got = call(fns, ctx, "GET", target.removesuffix("/feedback"), as_user="bob")[1]["memory"]["usage"]
    assert (got["successes"], got["failures"]) == (1, 0)
    assert svc.db["procedure_feedback"].count_documents({"user_id": "mal"}) == 0
    assert svc.db["procedure_feedback"].count_documents({"user_id": "bob"}) == 1


def test_one_users_retraction_does_not_end_a_shared_fact(
    make_settings: Any, fns: dict[str, Any], ctx: Any, tmp_path: Path
) -> None:
    # Given a project that shares semantic facts org-wide, and a fact the tenant's key wrote
    org_facts = {"extraction": {"semantic": {"visibility": "org"}}}
    index = EmbeddedIndex(tmp_path / "vectors")
    with helpers.installed(build(make_settings, index, **org_facts)) as svc:
        fact = {"subject": "acme", "attribute": "on-call tool", "value": "PagerDuty"}
        body = {"user_id": "ops", "type": "semantic", "payload": fact}
        assert call(fns, ctx, "POST", "/v1/memories", body)[0] == 201
        # When one user (their service account) retracts it ("that was wrong"); a user's extraction
        # that retracts a shared fact is a NOOP (longterm.write.decide)
        retraction = {"type": "semantic", "payload": {**fact, "retracted": True}, "visibility": "org"}
        status, answer = call(fns, ctx, "POST", "/v1/memories", retraction, as_user="mal")
        # Then it is refused as a delete would be, and every user still reads the shared fact
        assert (status, answer["error"]["details"]["path"]) == (403, "payload.retracted"), answer
        shared = [d for d in state(svc) if d["user_id"] == ORG_OWNER and d["type"] == "semantic"]
        assert [(d["status"], d["payload"]["value"]) for d in shared] == [("active", "PagerDuty")]
        # while the tenant's key may end it
        status, answer = call(fns, ctx, "POST", "/v1/memories", {"user_id": "ops", **retraction})
        assert answer["decision"] == "RETRACT", answer
        shared = [d for d in state(svc) if d["user_id"] == ORG_OWNER and d["type"] == "semantic"]
        assert [d["status"] for d in shared] == ["superseded"]


def test_a_proposal_whose_backers_statements_expired_backs_nothing_and_is_gone(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given ana's org term, and mallory's proposal of another definition that she says holds for a while
    status, first = call(
        fns, ctx, "POST", "/v1/memories", {"type": "taxonomic", "payload": SLO}, as_user="ana"
    )
    assert status == 201, first
    expires = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    body = {"type": "taxonomic", "payload": SLO_BAD, "expires_at": expires}
    status, proposed = call(fns, ctx, "POST", "/v1/memories", body, as_user="mal")
    assert (status, proposed["decision"]) == (202, "PROPOSE"), proposed
    proposal = proposed["memory"]["memory_id"]
    status, listed = call(fns, ctx, "GET", "/v1/memories?status=proposed", as_user="mal")
    assert [m["memory_id"] for m in listed["memories"]] == [proposal], listed
    # When her statement's expiry passes (moved to the past here, as an hour would)
    past = datetime.now(UTC) - timedelta(seconds=1)
    svc.db["memories"].update_one({"_id": proposal}, {"$set": {"evidence.$[].until": past}})
    # Then the proposal is gone from every read of it ...
    status, listed = call(fns, ctx, "GET", "/v1/memories?status=proposed", as_user="mal")
    assert listed["memories"] == [], listed
    assert call(fns, ctx, "GET", f"/v1/memories/{proposal}", as_user="mal")[0] == 404
    status, history = call(
        fns, ctx, "GET", f"/v1/memories/{first['memory']['memory_id']}?history=true", as_user="carol"
    )
    assert status == 200 and SLO_BAD["definition"] not in json.dumps(history), history
    # ... and bob's statement of the same definition is a proposal of its own, not a second backer
    status, bobs = call(
        fns, ctx, "POST", "/v1/memories", {"type": "taxonomic", "payload": SLO_BAD}, as_user="bob"
    )
    assert (status, bobs["decision"]) == (202, "PROPOSE"), bobs
    assert "backed by 1" in bobs["reason"], bobs["reason"]
    assert active_definition(fns, ctx, "carol", "SLO") == ["service level objective"]
