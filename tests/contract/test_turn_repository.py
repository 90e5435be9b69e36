"""The TurnRepository contract (shortterm.ports): batches, client tokens, reads by seq and id, recall state."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from mongomem.errors import StoreUnavailable
from mongomem.models.common import Scope, utcnow
from mongomem.models.sessions import StoredSnapshot
from mongomem.models.turns import NewTurn

ANA = Scope(tenant="acme", user_id="ana")
BO = Scope(tenant="acme", user_id="bo")


def turn(
    seq: int,
    content: str = "",
    *,
    token: str | None = None,
    index: int | None = None,
    size: int | None = None,
    **kw: Any,
) -> NewTurn:
    now = kw.pop("now", utcnow())
    return NewTurn(
        seq=seq,
        role=kw.pop("role", "user"),
        content=content or f"turn {seq}",
        timestamp=kw.pop("timestamp", now),
        recorded_at=now,
        tokens=kw.pop("tokens", 3),
        client_token=token,
        batch_index=index,
        batch_size=size,
        **kw,
    )


def batch(first: int, size: int, token: str | None = None, **kw: Any) -> list[NewTurn]:
    return [
        turn(first + i, token=token, index=i if token else None, size=size if token else None, **kw)
        for i in range(size)
    ]


def test_a_batch_reads_back_in_order_with_every_field(turns: Any) -> None:
    at = utcnow().replace(microsecond=123000)
    stored = [
        turn(
            1,
            "I fly from LIS",
            timestamp=at - timedelta(days=1),
            name="Ana",
            metadata={"lang": "en"},
            recall_indexed=False,
        ),
        turn(2, "", role="assistant", tool_calls=[{"id": "c1", "name": "book", "arguments": {"to": "OPO"}}]),
        turn(3, "booked", role="tool", tool_call_id="c1"),
    ]
    assert turns.insert_new(ANA, "s1", stored) is True
    got = turns.latest(ANA, "s1", 10)
    assert [t.seq for t in got] == [1, 2, 3] and [t.content for t in got] == [
        "I fly from LIS",
        "turn 2",
        "booked",
    ]
    first, second, third = got
    assert (first.tenant, first.user_id, first.session_id, first.name, first.metadata) == (
        "acme",
        "ana",
        "s1",
        "Ana",
        {"lang": "en"},
    )
    assert first.timestamp == at - timedelta(days=1) and first.timestamp.tzinfo is not None
    assert first.recall_indexed is False and second.recall_indexed is None and first.public_id == "s1:1"
    assert (
        second.tool_calls == [{"id": "c1", "name": "book", "arguments": {"to": "OPO"}}]
        and third.tool_call_id == "c1"
    )
    assert len({t.id for t in got}) == 3
    assert [t.seq for t in turns.in_range(ANA, "s1", 2, 3)] == [2, 3]
    assert turns.present_seqs(ANA, "s1", 1, 5) == [(1, 3), (2, 3), (3, 3)]


def test_turns_are_scoped_by_tenant_and_user(turns: Any) -> None:
    turns.insert_new(ANA, "shared", batch(1, 2))
    turns.insert_new(BO, "shared", batch(1, 1))
    assert [t.user_id for t in turns.latest(BO, "shared", 10)] == ["bo"]
    anas = turns.latest(ANA, "shared", 10)
    assert turns.by_ids(BO, [t.id for t in anas]) == []
    assert {t.seq for t in turns.by_ids(ANA, [anas[1].id, "no-such-id"])} == {2}
    assert (
        turns.in_ranges(BO, [("shared", 1, 5)])[0].content == "turn 1"
        and len(turns.in_ranges(BO, [("shared", 1, 5)])) == 1
    )


def test_latest_pages_backwards_from_before_seq(turns: Any) -> None:
    turns.insert_new(ANA, "s1", batch(1, 7))
    assert [t.seq for t in turns.latest(ANA, "s1", 3)] == [5, 6, 7]
    assert [t.seq for t in turns.latest(ANA, "s1", 3, before_seq=5)] == [2, 3, 4]
    assert [t.seq for t in turns.latest(ANA, "s1", 3, before_seq=2)] == [1]
    assert turns.latest(ANA, "missing", 3) == []


def test_in_ranges_reads_several_sessions_in_one_go(turns: Any) -> None:
    turns.insert_new(ANA, "a", batch(1, 5))
    turns.insert_new(ANA, "b", batch(1, 5))
    got = turns.in_ranges(ANA, [("b", 2, 3), ("a", 4, 9)])
    assert [(t.session_id, t.seq) for t in got] == [("a", 4), ("a", 5), ("b", 2), ("b", 3)]
    assert turns.in_ranges(ANA, []) == []


def test_a_client_token_stores_its_batch_once_however_late_the_retry(turns: Any) -> None:
    assert turns.insert_new(ANA, "s1", batch(1, 3, token="tok-1")) is True
    # a retry under fresh seqs collides on the token and inserts nothing
    assert turns.insert_new(ANA, "s1", batch(10, 3, token="tok-1")) is False
    assert [t.seq for t in turns.latest(ANA, "s1", 10)] == [1, 2, 3]
    found = turns.token_batch(ANA, "s1", "tok-1")
    assert (found.first_seq, found.size, found.stored) == (1, 3, 3)
    assert turns.token_batch(ANA, "s1", "tok-2") is None and turns.token_batch(BO, "s1", "tok-1") is None
    # the same token in another session is another batch
    assert turns.insert_new(ANA, "s2", batch(1, 1, token="tok-1")) is True


def test_an_imports_keys_are_read_back_per_user_session(turns: Any) -> None:
    turns.insert_new(ANA, "s1", [turn(1, import_key="k-1"), turn(2, import_key="k-2"), turn(3)])
    turns.insert_new(ANA, "s2", [turn(1, import_key="k-other-session")])
    turns.insert_new(BO, "s1", [turn(1, import_key="k-other-user")])
    assert turns.import_keys(ANA, "s1") == {"k-1", "k-2"}
    assert [t.import_key for t in turns.latest(ANA, "s1", 10)] == ["k-1", "k-2", None]
    assert turns.import_keys(ANA, "no-such-session") == set()


def test_fresh_seqs_that_exist_are_never_acknowledged(turns: Any) -> None:
    turns.insert_new(ANA, "s1", batch(1, 2))
    with pytest.raises(StoreUnavailable):
        turns.insert_new(ANA, "s1", batch(2, 2))


def test_insert_missing_finishes_a_half_stored_batch_idempotently(turns: Any) -> None:
    whole = batch(1, 4, token="tok-1")
    turns.insert_new(ANA, "s1", whole[:2])
    assert turns.token_batch(ANA, "s1", "tok-1").stored == 2
    turns.insert_missing(ANA, "s1", whole)
    turns.insert_missing(ANA, "s1", whole)
    assert [t.seq for t in turns.latest(ANA, "s1", 10)] == [1, 2, 3, 4]
    assert turns.token_batch(ANA, "s1", "tok-1").stored == 4


def test_delete_from_a_seq_reports_what_went(turns: Any) -> None:
    turns.insert_new(ANA, "s1", batch(1, 5, tokens=7))
    turns.insert_new(BO, "s1", batch(1, 5))
    removed = turns.delete_from(ANA, "s1", 4)
    assert removed.deleted == 2 and removed.seqs == [(4, 7), (5, 7)]
    assert [t.seq for t in turns.latest(ANA, "s1", 10)] == [1, 2, 3]
    assert turns.delete_from(ANA, "s1", None).deleted == 3 and turns.latest(ANA, "s1", 10) == []
    assert len(turns.latest(BO, "s1", 10)) == 5


def test_tagging_marks_only_the_snapshots_range(turns: Any) -> None:
    turns.insert_new(ANA, "s1", batch(1, 5))
    turns.insert_new(BO, "s1", batch(1, 5))
    snap = StoredSnapshot(
        snapshot_id="snap-abc",
        tenant="acme",
        user_id="ana",
        session_id="s1",
        from_seq=2,
        to_seq=3,
        turn_count=2,
        reason="size",
        created_at=utcnow(),
    )
    turns.tag_snapshot(snap)
    assert [t.snapshot_id for t in turns.latest(ANA, "s1", 10)] == [None, "snap-abc", "snap-abc", None, None]
    assert {t.snapshot_id for t in turns.latest(BO, "s1", 10)} == {None}


def test_the_recall_queue_holds_unindexed_turns_oldest_first(turns: Any) -> None:
    start = utcnow() - timedelta(minutes=5)
    turns.insert_new(BO, "late", [turn(1, now=start + timedelta(minutes=2), recall_indexed=False)])
    turns.insert_new(
        ANA, "early", [turn(1, now=start, recall_indexed=False), turn(2, now=start, recall_indexed=False)]
    )
    turns.insert_new(ANA, "never", [turn(1, role="system")])  # not recallable: never queued
    queued = turns.unindexed(10)
    assert [(t.user_id, t.session_id, t.seq) for t in queued] == [
        ("ana", "early", 1),
        ("ana", "early", 2),
        ("bo", "late", 1),
    ]
    assert len(turns.unindexed(2)) == 2
    first, second, third = queued
    turns.set_recall_state([first.id], indexed=True, ctx_next=False)
    turns.note_recall_failure([second.id], "EmbeddingError: down")
    turns.note_recall_failure([second.id], "EmbeddingError: down")
    turns.set_recall_state([third.id], indexed="failed")
    assert [t.id for t in turns.unindexed(10)] == [second.id]
    again = {t.seq: t for t in turns.latest(ANA, "early", 10)}
    assert (again[1].recall_indexed, again[1].recall_ctx_next) == (True, False)
    assert again[2].recall_attempts == 2 and again[2].recall_indexed is False
    turns.set_recall_state([first.id], ctx_next=True)  # leaves recall_indexed as it was
    assert turns.latest(ANA, "early", 10)[0].recall_indexed is True
    # after the index is dropped, every indexed or parked turn is queued again, attempts forgotten
    assert turns.requeue_recall() == 2
    assert len(turns.unindexed(10)) == 3 and turns.latest(ANA, "never", 1)[0].recall_indexed is None


def test_the_recall_queue_is_read_one_lane_per_user(turns: Any) -> None:
    start = utcnow() - timedelta(minutes=5)
    # Given ana's backlog recorded first, then one turn of bo's, then more of ana's
    turns.insert_new(
        ANA, "a", [turn(i, now=start + timedelta(seconds=i), recall_indexed=False) for i in (1, 2, 3)]
    )
    turns.insert_new(BO, "b", [turn(1, now=start + timedelta(seconds=10), recall_indexed=False)])
    turns.insert_new(ANA, "c", [turn(1, now=start + timedelta(seconds=20), recall_indexed=False)])
    turns.insert_new(BO, "never", [turn(1, role="system")])
    # Then the lanes are the two users, the one waiting longest first, with their oldest turn's time
    lanes = turns.recall_lanes(10)
    assert [(lane.tenant, lane.user_id) for lane in lanes] == [("acme", "ana"), ("acme", "bo")]
    assert lanes[0].oldest < lanes[1].oldest
    assert len(turns.recall_lanes(1)) == 1
    # and a lane is read oldest first, without the turns a batch already holds
    ana = [t.id for t in turns.unindexed(10, ANA)]
    assert [i.rsplit("|", 1)[1] for i in ana] == ["a#1", "a#2", "a#3", "c#1"]
    assert [t.id for t in turns.unindexed(2, ANA, exclude=ana[:2])] == ana[2:]
    assert [t.user_id for t in turns.unindexed(10, BO)] == ["bo"]
    # an indexed turn leaves its lane; a lane with nothing queued is gone
    turns.set_recall_state([t.id for t in turns.unindexed(10, BO)], indexed=True)
    assert [lane.user_id for lane in turns.recall_lanes(10)] == ["ana"]


def test_deleting_a_snapshots_turns_returns_them_and_leaves_the_rest(turns: Any) -> None:
    turns.insert_new(ANA, "s1", batch(1, 4))
    turns.insert_new(BO, "s1", batch(1, 2))
    snap = StoredSnapshot(
        snapshot_id="snap-del",
        tenant="acme",
        user_id="ana",
        session_id="s1",
        from_seq=1,
        to_seq=2,
        turn_count=2,
        reason="size",
        created_at=utcnow(),
    )
    turns.tag_snapshot(snap)
    gone = turns.delete_of_snapshot(snap)
    assert sorted((t.seq, t.content) for t in gone) == [(1, "turn 1"), (2, "turn 2")]
    assert [t.seq for t in turns.in_range(ANA, "s1", 1, 10)] == [3, 4]
    assert [t.seq for t in turns.in_range(BO, "s1", 1, 10)] == [1, 2]
    assert turns.delete_of_snapshot(snap) == []
