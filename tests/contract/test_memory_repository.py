"""The MemoryRepository contract (longterm.ports): versions scoped by (tenant, user), idempotent inserts,
supersede and reinforce, key lookups, pages, the index outbox and the embedding census."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from mongomem.models.common import Scope
from mongomem.models.memory import (
    ORG_OWNER,
    DecisionRecord,
    EvidenceRef,
    MemoryRecord,
    MemoryView,
    ObservedRange,
    PayloadFilter,
)

ANA = Scope(tenant="acme", user_id="ana")
BO = Scope(tenant="acme", user_id="bo")
OTHER = Scope(tenant="globex", user_id="ana")
T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def record(scope: Scope, n: int, *, version: int = 1, lineage: str | None = None, **kw: Any) -> MemoryRecord:
    values: dict[str, Any] = {
        "memory_id": f"mem-{scope.user_id}-{n}-v{version}",
        "lineage_id": lineage or f"lin-{scope.user_id}-{n}",
        "version": version,
        "tenant": scope.tenant,
        "user_id": scope.user_id,
        "type": "semantic",
        "key": f"user|detail {n}",
        "payload": {"subject": "user", "attribute": f"detail {n}", "value": f"v{version}"},
        "text": f"user detail {n}: v{version}",
        "created_at": T0 + timedelta(minutes=n, seconds=version),
        "updated_at": T0 + timedelta(minutes=n, seconds=version),
        "observed_at": T0 + timedelta(days=n),
        "evidence": [EvidenceRef(snapshot_id=f"snap-{n}-{version}", seqs=[1])],
        "decisions": [DecisionRecord(decision="ADD", reason="new", at=T0)],
        "vector": [0.1, 0.2, 0.3],
        "embedding_model": "model-a",
        "embedding_dim": 3,
        "index_state": "pending",
    }
    values.update(kw)
    return MemoryRecord(**values)


def test_a_version_is_stored_once_and_read_only_in_its_scope(memories: Any) -> None:
    first = record(ANA, 1)
    assert memories.insert(first) is True
    assert memories.insert(first) is False  # a redelivery of the same version
    got = memories.get(ANA, first.memory_id)
    assert got is not None and got.payload == first.payload and got.observed_at == first.observed_at
    assert memories.get(BO, first.memory_id) is None and memories.get(OTHER, first.memory_id) is None
    assert [r.memory_id for r in memories.get_many(ANA, [first.memory_id, "mem-missing"])] == [
        first.memory_id
    ]
    assert memories.get_many(BO, [first.memory_id]) == []


def test_supersede_keeps_one_active_version_per_lineage(memories: Any) -> None:
    old, new = record(ANA, 1), record(ANA, 1, version=2, lineage="lin-ana-1", supersedes="mem-ana-1-v1")
    memories.insert(old)
    memories.insert(new)
    memories.supersede(ANA, old.memory_id, new.memory_id, T0 + timedelta(hours=1))
    assert [r.memory_id for r in memories.active_by_key(ANA, "semantic", old.key)] == [new.memory_id]
    versions = {r.version: r for r in memories.lineage(ANA, "lin-ana-1")}
    assert versions[1].status == "superseded" and versions[1].superseded_by == new.memory_id
    assert versions[2].status == "active"
    assert memories.lineage(BO, "lin-ana-1") == []  # another user's view of the lineage is empty


def test_repair_lineage_supersedes_what_a_crash_left_active(memories: Any) -> None:
    old, new = record(ANA, 2), record(ANA, 2, version=2, lineage="lin-ana-2")
    memories.insert(old)
    memories.insert(new)  # crashed before supersede: two active versions
    assert len(memories.active_by_key(ANA, "semantic", old.key)) == 2
    memories.repair_lineage(ANA, "lin-ana-2", 2, new.memory_id, T0)
    assert [r.version for r in memories.active_by_key(ANA, "semantic", old.key)] == [2]


def test_reinforce_counts_each_snapshot_once_and_finds_its_evidence(memories: Any) -> None:
    mem = record(ANA, 3)
    memories.insert(mem)
    proof = EvidenceRef(snapshot_id="snap-later", seqs=[4], observed_at=T0 + timedelta(days=30))
    decision = DecisionRecord(decision="REINFORCE", reason="restated", at=T0, snapshot_id="snap-later")
    once = memories.reinforce(ANA, mem.memory_id, proof, decision, T0 + timedelta(days=30))
    assert once is not None and once.reinforcement_count == 2 and "snap-later" in once.snapshot_ids()
    # the same snapshot again (an SQS redelivery) changes nothing
    assert memories.reinforce(ANA, mem.memory_id, proof, decision, T0 + timedelta(days=31)) is None
    assert memories.get(ANA, mem.memory_id).reinforcement_count == 2
    assert memories.with_evidence(ANA, "semantic", mem.key, "snap-later").memory_id == mem.memory_id
    assert memories.with_evidence(ANA, "semantic", mem.key, "snap-never") is None
    assert memories.reinforce(BO, mem.memory_id, proof, decision, T0) is None  # not Bo's memory


def test_pages_filter_by_kind_payload_and_observed_time_newest_first(memories: Any) -> None:
    for n in range(1, 6):
        memories.insert(record(ANA, n))
    memories.insert(record(ANA, 9, type="taxonomic", key="term|x", payload={"term": "X", "definition": "d"}))
    memories.insert(record(BO, 1))
    page = memories.list_page(ANA, "semantic", "active", 3, None)
    assert [r.payload["attribute"] for r in page] == ["detail 5", "detail 4", "detail 3"]
    rest = memories.list_page(ANA, "semantic", "active", 3, page[-1].created_at)
    assert [r.payload["attribute"] for r in rest] == ["detail 2", "detail 1"]
    exact = memories.list_page(
        ANA, None, None, 10, None, payload=PayloadFilter(exact={"attribute": "detail 2"})
    )
    assert [r.memory_id for r in exact] == ["mem-ana-2-v1"]
    prefix = memories.list_page(
        ANA, None, None, 10, None, payload=PayloadFilter(prefix={"attribute": "detail "})
    )
    assert len(prefix) == 5
    observed = ObservedRange(after=T0 + timedelta(days=2), before=T0 + timedelta(days=4))
    within = memories.list_page(ANA, None, None, 10, None, observed=observed)
    assert sorted(r.payload["attribute"] for r in within) == ["detail 2", "detail 3"]


def test_the_index_outbox_and_the_embedding_census(memories: Any) -> None:
    a, b = record(ANA, 1), record(ANA, 2, embedding_model="model-b", embedding_dim=4, vector=[0.0] * 4)
    memories.insert(a)
    memories.insert(b)
    pending = memories.pending_index(T0 + timedelta(days=1), 10)
    assert {r.memory_id for r in pending} == {a.memory_id, b.memory_id}
    memories.set_index_state([a.memory_id], "indexed", T0 + timedelta(hours=2))
    assert [r.memory_id for r in memories.pending_index(T0 + timedelta(days=1), 10)] == [b.memory_id]
    assert memories.embedding_models() == {("model-a", 3), ("model-b", 4)}
    assert memories.count_embedded_otherwise("model-a", 3) == 1
    assert [r.memory_id for r in memories.embedded_otherwise("model-a", 3, 10)] == [b.memory_id]
    memories.set_embeddings([(b.memory_id, [0.5, 0.5, 0.5])], "model-a", T0 + timedelta(hours=3))
    assert memories.count_embedded_otherwise("model-a", 3) == 0
    assert memories.get(ANA, b.memory_id).index_state == "pending"  # re-embedded: the index must follow
    assert {r.memory_id for r in memories.all_versions(batch=1)} == {a.memory_id, b.memory_id}


def test_deleting_a_lineage_removes_it_from_reads_and_its_vectors(memories: Any) -> None:
    old, new = record(ANA, 7), record(ANA, 7, version=2, lineage="lin-ana-7")
    memories.insert(old)
    memories.insert(new)
    memories.insert(record(BO, 7, lineage="lin-ana-7"))  # same lineage id in another scope: untouched
    assert memories.delete_lineage(ANA, "lin-ana-7", T0) == 2
    assert memories.active_by_key(ANA, "semantic", old.key) == []
    assert all(r.memory_id.startswith("mem-bo") for r in memories.all_versions())
    assert memories.embedding_models() == {("model-a", 3)}  # Bo's memory still holds its vector
    assert len(memories.active_by_key(BO, "semantic", old.key)) == 1


def test_decisions_are_counted_per_day(memories: Any) -> None:
    mem = record(ANA, 1, decisions=[DecisionRecord(decision="ADD", reason="new", at=T0)])
    memories.insert(mem)
    later = DecisionRecord(decision="REINFORCE", reason="again", at=T0 + timedelta(days=1), snapshot_id="s2")
    memories.reinforce(ANA, mem.memory_id, EvidenceRef(snapshot_id="s2"), later, T0 + timedelta(days=1))
    days = memories.decisions_per_day("acme", "ana", T0 - timedelta(days=1))
    assert sorted(days) == [("2026-11-01", "ADD", 1), ("2026-11-02", "REINFORCE", 1)]
    assert memories.decisions_per_day("acme", "bo", T0 - timedelta(days=1)) == []


def test_a_batch_of_keys_reads_active_versions_and_the_snapshots_own(memories: Any) -> None:
    # Given an active version, a superseded one holding snapshot s-old, and one of another agent
    memories.insert(record(ANA, 1))
    memories.insert(record(ANA, 2, status="superseded", evidence=[EvidenceRef(snapshot_id="s-old")]))
    memories.insert(record(ANA, 3, agent_id="travel"))
    memories.insert(record(BO, 1))
    keys = ["user|detail 1", "user|detail 2", "user|detail 3"]
    # Then one read returns the active ones of the keys, and the superseded one only for its snapshot
    assert {r.memory_id for r in memories.by_keys(ANA, "semantic", keys, None)} == {
        "mem-ana-1-v1",
        "mem-ana-3-v1",
    }
    assert "mem-ana-2-v1" in {r.memory_id for r in memories.by_keys(ANA, "semantic", keys, "s-old")}
    assert memories.by_keys(ANA, "taxonomic", keys, None) == []
    # and a key's actives are those of one agent's part of the scope
    assert memories.active_by_key(ANA, "semantic", "user|detail 3") == []
    assert [r.memory_id for r in memories.active_by_key(ANA, "semantic", "user|detail 3", "travel")] == [
        "mem-ana-3-v1"
    ]


def test_retract_ends_an_active_version_once_with_its_evidence(memories: Any) -> None:
    mem = record(ANA, 4)
    memories.insert(mem)
    proof = EvidenceRef(snapshot_id="snap-no", seqs=[2], user_id="ana")
    note = DecisionRecord(decision="RETRACT", reason="not true", at=T0, candidate_id=mem.memory_id)
    at = T0 + timedelta(days=9)
    assert memories.retract(BO, mem.memory_id, proof, note, at) is None  # not Bo's
    ended = memories.retract(ANA, mem.memory_id, proof, note, at)
    assert ended is not None and ended.status == "superseded" and ended.superseded_by is None
    assert ended.valid_to == at.isoformat() and ended.decisions[-1].decision == "RETRACT"
    assert "snap-no" in ended.snapshot_ids()
    assert memories.active_by_key(ANA, "semantic", mem.key) == []
    assert memories.retract(ANA, mem.memory_id, proof, note, at) is None  # ended already


def test_a_proposal_is_backed_once_per_snapshot_and_activated_once(memories: Any) -> None:
    org = Scope(tenant="acme", user_id=ORG_OWNER)
    current = record(org, 5)
    proposal = record(
        org, 5, version=2, lineage=f"lin-{ORG_OWNER}-5", status="proposed", payload={"value": "other"}
    )
    memories.insert(current)
    memories.insert(proposal)
    # a proposal is not what anyone reads as the key's value
    assert [r.memory_id for r in memories.active_by_key(org, "semantic", current.key)] == [current.memory_id]
    backing = EvidenceRef(snapshot_id="snap-bo", user_id="bo")
    note = DecisionRecord(decision="PROPOSE", reason="backed", at=T0)
    # reinforce touches only a version of the status asked for
    assert memories.reinforce(org, proposal.memory_id, backing, note, T0) is None
    backed = memories.reinforce(org, proposal.memory_id, backing, note, T0, status="proposed")
    assert backed is not None and backed.reinforcement_count == 2 and backed.status == "proposed"
    assert memories.reinforce(org, proposal.memory_id, backing, note, T0, status="proposed") is None
    promote = DecisionRecord(decision="UPDATE", reason="enough users", at=T0)
    assert (
        memories.activate(org, current.memory_id, "x", promote, T0, {"v": 1}, "t", {}) is None
    )  # not proposed
    carried = {"metadata": {"team": "dock"}, "metadata_by": None, "expires_at": None, "observed_at": T0}
    active = memories.activate(
        org, proposal.memory_id, current.memory_id, promote, T0, {"value": "o2"}, "o2", carried
    )
    assert active is not None and active.status == "active" and active.supersedes == current.memory_id
    assert active.payload == {"value": "o2"} and active.text == "o2" and active.metadata == {"team": "dock"}
    assert [d.decision for d in active.decisions] == ["ADD", "PROPOSE", "UPDATE"]
    assert memories.activate(org, proposal.memory_id, current.memory_id, promote, T0, {}, "", {}) is None
    # the version it replaces is superseded once: a second writer's supersede finds it replaced already
    assert memories.supersede(org, current.memory_id, proposal.memory_id, T0) is True
    assert memories.supersede(org, current.memory_id, "another", T0) is False
    # a promotion that lost the race goes back to a proposal, its activation's decision taken back
    memories.withdraw(org, proposal.memory_id, T0)
    back = memories.get(org, proposal.memory_id)
    assert back is not None and back.status == "proposed"
    assert [d.decision for d in back.decisions] == ["ADD", "PROPOSE"]


def test_a_view_reads_the_users_and_the_orgs_memories(memories: Any) -> None:
    org = Scope(tenant="acme", user_id=ORG_OWNER)
    mine, shared, theirs = record(ANA, 6), record(org, 6, visibility="org"), record(BO, 6)
    travel = record(ANA, 7, agent_id="travel")
    for r in (mine, shared, theirs, travel):
        memories.insert(r)
    ids = [mine.memory_id, shared.memory_id, theirs.memory_id, travel.memory_id]
    assert {r.memory_id for r in memories.get_many(MemoryView(ANA), ids)} == {
        mine.memory_id,
        shared.memory_id,
        travel.memory_id,
    }
    assert memories.get(MemoryView(ANA, "support"), travel.memory_id) is None  # another agent's
    assert memories.get(MemoryView(ANA, visibility="org"), mine.memory_id) is None
    assert memories.get(MemoryView(ANA, visibility="org"), shared.memory_id) is not None


def test_a_proposal_no_standing_statement_backs_is_gone_from_reads(memories: Any) -> None:
    org = Scope(tenant="acme", user_id=ORG_OWNER)
    now = datetime.now(UTC).replace(microsecond=0)
    lapsed = EvidenceRef(snapshot_id="snap-l", user_id="mal", until=now - timedelta(seconds=1))
    standing = EvidenceRef(snapshot_id="snap-s", user_id="bob", until=now + timedelta(hours=1))
    gone = record(org, 1, status="proposed", evidence=[lapsed])
    kept = record(org, 2, status="proposed", evidence=[lapsed, standing])
    forever = record(
        org, 3, status="proposed", evidence=[lapsed, EvidenceRef(snapshot_id="s", user_id="eve")]
    )
    for r in (gone, kept, forever):
        assert memories.insert(r) is True
    listed = memories.list_page(org, None, "proposed", 10, None)
    assert sorted(r.memory_id for r in listed) == [kept.memory_id, forever.memory_id]
    assert memories.get(org, gone.memory_id) is None
    assert [r.memory_id for r in memories.get_many(org, [gone.memory_id, kept.memory_id])] == [kept.memory_id]
    assert memories.get(org, kept.memory_id).evidence[1].until == standing.until


def test_shared_keys_groups_a_tenants_active_versions_of_one_key(memories: Any) -> None:
    # what GET /v1/memories/conflicts and /v1/status compare: two active versions of one key, per owner
    one, two = record(ANA, 8), record(ANA, 9, key="user|detail 8")
    alone, elsewhere = record(BO, 8), record(OTHER, 8)
    gone = record(ANA, 10, key="user|detail 8", status="superseded")
    for r in (one, two, alone, elsewhere, gone, record(OTHER, 9, key="user|detail 8")):
        memories.insert(r)
    groups = memories.shared_keys("acme", None, 10)
    assert [sorted(r.memory_id for r in g) for g in groups] == [sorted([one.memory_id, two.memory_id])]
    assert memories.shared_keys("acme", "bo", 10) == []
