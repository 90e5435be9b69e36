"""The SnapshotRepository contract (shortterm.ports): idempotent cuts, scoped reads, outbox, extraction status."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mongomem.models.common import Scope, utcnow
from mongomem.models.sessions import NewSnapshot, TypeStatus, TypeStatusUpdate

ANA = Scope(tenant="acme", user_id="ana")
BO = Scope(tenant="acme", user_id="bo")


def new(scope: Scope, sid: str, from_seq: int, to_seq: int, **kw: Any) -> NewSnapshot:
    return NewSnapshot(
        tenant=scope.tenant,
        user_id=scope.user_id,
        session_id=sid,
        from_seq=from_seq,
        to_seq=to_seq,
        turn_count=kw.pop("turn_count", to_seq - from_seq + 1),
        reason=kw.pop("reason", "size"),
        created_at=kw.pop("created_at", utcnow()),
        extraction=kw.pop("extraction", {"semantic": TypeStatus(), "episodic": TypeStatus()}),
        **kw,
    )


def test_a_cut_is_stored_once_per_session_and_first_seq(snapshots: Any) -> None:
    first = snapshots.create(new(ANA, "s1", 1, 5, tokens=40, missing_seqs=[3], agent_id="a1"))
    assert first.snapshot_id and (first.from_seq, first.to_seq, first.tokens, first.missing_seqs) == (
        1,
        5,
        40,
        [3],
    )
    assert first.fanned_out is False and first.extraction["semantic"].status == "queued"
    # a racing scanner's cut of the same range (even if it saw other turns) gets the stored one back
    again = snapshots.create(new(ANA, "s1", 1, 4, reason="idle"))
    assert again.snapshot_id == first.snapshot_id and (again.to_seq, again.reason) == (5, "size")
    assert [s.from_seq for s in snapshots.of_session(ANA, "s1")] == [1]
    # another first seq, another session or another user: other snapshots, other ids
    ids = {
        first.snapshot_id,
        snapshots.create(new(ANA, "s1", 6, 8)).snapshot_id,
        snapshots.create(new(ANA, "s2", 1, 5)).snapshot_id,
        snapshots.create(new(BO, "s1", 1, 5)).snapshot_id,
    }
    assert len(ids) == 4


def test_reads_by_id_are_scoped_where_asked(snapshots: Any) -> None:
    snap = snapshots.create(new(ANA, "s1", 1, 2))
    assert snapshots.get(snap.snapshot_id).user_id == "ana"
    assert snapshots.get_for(ANA, snap.snapshot_id).snapshot_id == snap.snapshot_id
    assert snapshots.get_for(BO, snap.snapshot_id) is None
    assert snapshots.get("snap-000000000000000000000000") is None
    assert snapshots.starting_at(ANA, "s1", 1).snapshot_id == snap.snapshot_id
    assert snapshots.starting_at(ANA, "s1", 2) is None and snapshots.starting_at(BO, "s1", 1) is None


def test_a_sessions_snapshots_newest_first(snapshots: Any) -> None:
    for start in (1, 6, 11):
        snapshots.create(new(ANA, "s1", start, start + 4))
    snapshots.create(new(BO, "s1", 1, 3))
    assert [s.from_seq for s in snapshots.of_session(ANA, "s1")] == [11, 6, 1]
    assert [s.from_seq for s in snapshots.of_session(ANA, "s1", limit=2)] == [11, 6]
    public = snapshots.of_session(ANA, "s1")[0].public()
    assert "tokens" not in public.model_dump() and public.snapshot_id


def test_the_outbox_returns_old_snapshots_not_fanned_out(snapshots: Any) -> None:
    now = utcnow()
    old = snapshots.create(new(ANA, "s1", 1, 2, created_at=now - timedelta(minutes=10)))
    sent = snapshots.create(new(ANA, "s1", 3, 4, created_at=now - timedelta(minutes=10)))
    snapshots.create(new(ANA, "s1", 5, 6, created_at=now))  # too recent: its scanner may still be sending
    snapshots.mark_fanned_out(sent.snapshot_id)
    assert [s.snapshot_id for s in snapshots.unfanned(now - timedelta(minutes=2), 10)] == [old.snapshot_id]
    assert snapshots.get(sent.snapshot_id).fanned_out is True
    assert len(snapshots.unfanned(now + timedelta(seconds=1), 1)) == 1


def test_extraction_status_writes_only_the_fields_given(snapshots: Any) -> None:
    snap = snapshots.create(new(ANA, "s1", 1, 2))
    at = utcnow().replace(microsecond=0)
    running = snapshots.set_extraction(
        snap.snapshot_id, "semantic", TypeStatusUpdate(status="running", updated_at=at), inc_attempts=True
    )
    assert (running.extraction["semantic"].status, running.extraction["semantic"].attempts) == ("running", 1)
    failed = snapshots.set_extraction(
        snap.snapshot_id, "semantic", TypeStatusUpdate(status="failed", error="boom")
    )
    status = failed.extraction["semantic"]
    assert (status.status, status.error, status.attempts, status.updated_at) == ("failed", "boom", 1, at)
    cleared = snapshots.set_extraction(snap.snapshot_id, "semantic", TypeStatusUpdate(error=None, memories=3))
    assert (cleared.extraction["semantic"].error, cleared.extraction["semantic"].memories) == (None, 3)
    assert cleared.extraction["episodic"].status == "queued"  # another kind is untouched
    assert (
        snapshots.set_extraction("snap-000000000000000000000000", "semantic", TypeStatusUpdate(status="done"))
        is None
    )


def test_requeue_sets_a_kind_back_to_queued_unless_it_is_done(snapshots: Any) -> None:
    snap = snapshots.create(new(ANA, "s1", 1, 2))
    snapshots.set_extraction(snap.snapshot_id, "semantic", TypeStatusUpdate(status="failed", error="boom"))
    snapshots.set_extraction(snap.snapshot_id, "episodic", TypeStatusUpdate(status="done"))
    at = utcnow().replace(microsecond=0)
    assert snapshots.requeue_extraction(BO, snap.snapshot_id, "semantic", at) is None  # not the owner
    queued = snapshots.requeue_extraction(ANA, snap.snapshot_id, "semantic", at)
    assert queued is not None and queued.extraction["semantic"].status == "queued"
    assert (queued.extraction["semantic"].error, queued.extraction["semantic"].updated_at) == (None, at)
    assert snapshots.requeue_extraction(ANA, snap.snapshot_id, "episodic", at) is None  # done stays done
    assert snapshots.requeue_extraction(ANA, snap.snapshot_id, "procedural", at) is None  # not part of it
    assert snapshots.get(snap.snapshot_id).extraction["episodic"].status == "done"


def test_deleting_a_sessions_snapshots_leaves_other_sessions_and_users(snapshots: Any) -> None:
    snapshots.create(new(ANA, "s1", 1, 2))
    snapshots.create(new(ANA, "s1", 3, 4))
    kept = [snapshots.create(new(ANA, "s2", 1, 2)), snapshots.create(new(BO, "s1", 1, 2))]
    assert snapshots.delete_session(ANA, "s1") == 2
    assert snapshots.of_session(ANA, "s1") == [] and snapshots.delete_session(ANA, "s1") == 0
    assert all(snapshots.get(s.snapshot_id) is not None for s in kept)
