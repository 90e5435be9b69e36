"""The ErasureRepository contract (mongomem.erasure): a user's data goes everywhere, nobody else's does."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mongomem.models.common import Scope, utcnow
from tests.contract import seed

ANA = Scope(tenant="acme", user_id="ana")
BO = Scope(tenant="acme", user_id="bo")
ANA_ELSEWHERE = Scope(tenant="globex", user_id="ana")


def test_erasing_a_user_removes_their_documents_everywhere_and_only_theirs(erasure: Any, store: Any) -> None:
    for scope in (ANA, BO, ANA_ELSEWHERE):
        seed.conversation(store, scope, "s1", turns=3)
        seed.snapshot(store, scope, "s1", {"semantic": "queued"})
        seed.memory(store, scope, f"mem-{scope.tenant}-{scope.user_id}")
        seed.working_memory(store, scope, "notes")
        store.add_document("audit", {**scope.filter(), "what": "a collection added later"})
    kept = (store.documents(BO), store.documents(ANA_ELSEWHERE))
    erased = erasure.erase(ANA)
    assert {k: erased[k] for k in ("sessions", "turns", "snapshots", "memories", "resources")} == {
        "sessions": 1,
        "turns": 3,
        "snapshots": 1,
        "memories": 1,
        "resources": 1,
    }
    assert erased["other"] == 1  # the collection nobody told the adapter about
    assert store.documents(ANA) == {}
    assert (store.documents(BO), store.documents(ANA_ELSEWHERE)) == kept
    assert sum(erasure.erase(ANA).values()) == 0  # again: nothing left, nothing fails


def test_turns_expire_from_the_given_time_once_and_only_the_snapshots(erasure: Any, store: Any) -> None:
    seed.conversation(store, ANA, "s1", turns=4)
    seed.conversation(store, BO, "s1", turns=2)
    snap = seed.snapshot(store, ANA, "s1", {"semantic": "done"})
    seed.snapshot(store, BO, "s1", {"semantic": "done"})
    at = utcnow().replace(microsecond=0) + timedelta(days=365)
    assert erasure.expire_turns(snap, at) == 2
    assert store.turn_expiry() == {("ana", 1): at, ("ana", 2): at}
    assert store.snapshots.get(snap.snapshot_id).turns_expire_at == at
    # a later run keeps the first clock
    assert erasure.expire_turns(snap, at + timedelta(days=1)) == 0
    assert store.turn_expiry() == {("ana", 1): at, ("ana", 2): at}


def org_version(
    memory_id: str, lineage: str, version: int, status: str, said: list[tuple[str, str]], **kw: Any
) -> Any:
    """A version of an org memory stated by each (user, snapshot) of `said`."""
    from mongomem.models.memory import ORG_OWNER, DecisionRecord, EvidenceRef, MemoryRecord

    at = kw.pop("at", utcnow().replace(microsecond=0) - timedelta(days=1))
    return MemoryRecord(
        memory_id=memory_id,
        lineage_id=lineage,
        version=version,
        tenant=kw.pop("tenant", "acme"),
        user_id=ORG_OWNER,
        type="semantic",
        key=lineage,
        payload={},
        text=f"{lineage} v{version}",
        visibility="org",
        status=status,
        reinforcement_count=len(said),
        evidence=[
            EvidenceRef(snapshot_id=snap, user_id=user, observed_at=at + timedelta(hours=i))
            for i, (user, snap) in enumerate(said)
        ],
        decisions=[
            DecisionRecord(decision="REINFORCE", reason="said again", snapshot_id=snap, at=at)
            for _, snap in said
        ],
        created_at=at,
        updated_at=at,
        index_state="indexed",
        **kw,
    )


def test_forgetting_a_users_org_evidence_drops_what_only_they_said(erasure: Any, store: Any) -> None:
    from mongomem.models.memory import ORG_OWNER

    org = Scope(tenant="acme", user_id=ORG_OWNER)
    at = utcnow().replace(microsecond=0) - timedelta(days=1)
    # a lineage whose active version only ana stated: it falls back to bo's superseded version
    store.add_record(org_version("l1-v1", "l1", 1, "superseded", [("bo", "snap-b1")], superseded_by="l1-v2"))
    store.add_record(org_version("l1-v2", "l1", 2, "active", [("ana", "snap-a1")], supersedes="l1-v1"))
    # stated by both: only ana's part goes
    store.add_record(org_version("l2-v1", "l2", 1, "active", [("ana", "snap-a2"), ("bo", "snap-b2")], at=at))
    # another tenant's org memory keeps ana's evidence
    store.add_record(org_version("g1-v1", "g1", 1, "active", [("ana", "snap-g")], tenant="globex"))
    now = utcnow().replace(microsecond=0)

    changed, deleted = erasure.forget_org_evidence(ANA, now)
    assert (sorted(changed), deleted) == (["l1-v1", "l2-v1"], ["l1-v2"])
    assert store.record(org, "l1-v2") is None
    back = store.record(org, "l1-v1")
    assert (back.status, back.superseded_by, back.updated_at, back.index_state) == (
        "active",
        None,
        now,
        "pending",
    )
    shared = store.record(org, "l2-v1")
    assert [(e.user_id, e.snapshot_id) for e in shared.evidence] == [("bo", "snap-b2")]
    assert [d.snapshot_id for d in shared.decisions] == ["snap-b2"] and shared.reinforcement_count == 1
    assert (shared.observed_at, shared.updated_at, shared.index_state) == (
        at + timedelta(hours=1),
        now,
        "pending",
    )
    elsewhere = store.record(Scope(tenant="globex", user_id=ORG_OWNER), "g1-v1")
    assert [e.user_id for e in elsewhere.evidence] == ["ana"] and elsewhere.index_state == "indexed"
    assert erasure.forget_org_evidence(ANA, now) == ([], [])  # again: nothing left to forget


def test_forgetting_restores_the_version_replaced_never_one_kept_as_history(erasure: Any, store: Any) -> None:
    from mongomem.models.memory import ORG_OWNER

    org = Scope(tenant="acme", user_id=ORG_OWNER)
    # v1 was active until ana's v3 replaced it; v2 was recorded as history (stated earlier than v1,
    # superseded at once by it: a higher number than the version that superseded it)
    store.add_record(org_version("h-v1", "h", 1, "superseded", [("bo", "snap-b")], superseded_by="h-v3"))
    store.add_record(org_version("h-v2", "h", 2, "superseded", [("bo", "snap-c")], superseded_by="h-v1"))
    store.add_record(org_version("h-v3", "h", 3, "active", [("ana", "snap-a")], supersedes="h-v1"))
    erasure.forget_org_evidence(ANA, utcnow().replace(microsecond=0))
    # the value the lineage held before ana's version comes back, never the history version
    assert [(v, store.record(org, v).status) for v in ("h-v1", "h-v2")] == [
        ("h-v1", "active"),
        ("h-v2", "superseded"),
    ]
