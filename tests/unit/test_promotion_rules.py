"""The promotion rules, database-free: when a session is due (idle, size by turns or tokens), where a
snapshot is cut (max_messages, holes, deleted turns, topic shifts), what it holds, how the promotion point
moves, leases between scanners, and sessions with nothing new; on the runtime's promoter over the
in-memory repositories and queue (tests/fake_roots.py; the fakes pass the adapters' contract suites).

Time is the scan's `now`: the recorder stamps turns with the clock, the tests scan at offsets from it.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mongomem.errors import StoreUnavailable
from mongomem.models.common import Scope, utcnow
from mongomem.models.sessions import Session, StoredSnapshot
from mongomem.models.turns import RecordTurnsRequest
from mongomem.ports import EmbeddingProvider
from mongomem.shortterm.policy import PromotionPolicy
from mongomem.shortterm.promotion import Promoter
from mongomem.shortterm.scan import Follow, run_scan
from tests.fake_roots import CrashingTurns, InMemoryShortTerm, settings_for

ANA = Scope(tenant="acme", user_id="ana")
KINDS = ["semantic", "episodic"]


def root(
    snapshot: dict[str, Any] | None = None, memory: dict[str, Any] | None = None, **kw: Any
) -> InMemoryShortTerm:
    process = {k: kw.pop(k) for k in ("hole_grace_seconds", "lease_seconds", "scan_batch") if k in kw}
    section = {"extraction": {"enabled": KINDS}, "snapshot": snapshot or {}, **(memory or {})}
    return InMemoryShortTerm(settings_for(section, **process), **kw)


def record(st: InMemoryShortTerm, session: str, *contents: str, role: str = "user") -> None:
    turns = [{"role": role, "content": c} for c in contents]
    st.recorder.record(ANA, session, RecordTurnsRequest.model_validate({"turns": turns}))


def crash(st: InMemoryShortTerm, turns: CrashingTurns, session: str, count: int) -> None:
    """A writer allocates `count` seqs and dies before storing its turns: a hole."""
    turns.fail_next, turns.keep = True, 0
    with pytest.raises(StoreUnavailable):
        record(st, session, *(f"lost {i}" for i in range(count)))


def cuts(st: InMemoryShortTerm, session: str = "s1") -> list[tuple[int, int, str]]:
    return [(s.from_seq, s.to_seq, s.reason) for s in snaps(st, session)]


def snaps(st: InMemoryShortTerm, session: str = "s1") -> list[StoredSnapshot]:
    return sorted(st.memory_snapshots.of_session(ANA, session), key=lambda s: s.from_seq)


def session_of(st: InMemoryShortTerm, session: str = "s1") -> Session:
    found = st.sessions.get(ANA, session)
    assert found is not None
    return found


def later(seconds: float) -> datetime:
    return utcnow() + timedelta(seconds=seconds)


# -- the policy: when a session is due ---------------------------------------------------------------
NOW = datetime(2026, 1, 1, 12, 0, tzinfo=utcnow().tzinfo)


def _session(pending: int, tokens: int = 0, idle_in: float | None = 60) -> Session:
    return Session(
        tenant="acme",
        user_id="ana",
        session_id="s1",
        created_at=NOW,
        last_seq=pending,
        pending=pending,
        unpromoted_tokens=tokens,
        idle_due_at=None if idle_in is None else NOW + timedelta(seconds=idle_in),
    )


@pytest.mark.parametrize(
    ("pending", "tokens", "idle_in", "due", "reason", "due_at"),
    [
        (3, 0, 60, False, "idle", NOW + timedelta(seconds=60)),  # waiting for idle
        (3, 0, 0, True, "idle", NOW),  # idle exactly now
        (3, 0, -1, True, "idle", NOW - timedelta(seconds=1)),
        (5, 0, 60, True, "size", NOW),  # max_messages reached
        (4, 99, 60, False, "idle", NOW + timedelta(seconds=60)),  # below 100 tokens
        (4, 100, 60, True, "size", NOW),  # max_tokens reached
        (0, 500, -1, False, "size", None),  # nothing pending: never due
    ],
)
def test_the_policy_says_when_a_session_is_due_and_why(
    pending: int, tokens: int, idle_in: float, due: bool, reason: str, due_at: datetime | None
) -> None:
    policy = PromotionPolicy(max_messages=5, max_tokens=100, idle_seconds=900)
    session = _session(pending, tokens, idle_in)
    assert policy.is_due(session, NOW) is due
    assert policy.due_at(session, NOW) == due_at
    if pending:
        assert policy.reason(session) == reason


def test_without_max_tokens_tokens_never_make_a_session_due() -> None:
    policy = PromotionPolicy(max_messages=5, max_tokens=None, idle_seconds=900)
    assert not policy.is_due(_session(4, tokens=10**9), NOW)
    assert policy.idle_due_at(NOW) == NOW + timedelta(seconds=900)


# -- idle ----------------------------------------------------------------------------------------------
def test_an_idle_session_is_promoted_once_idle_seconds_have_passed_not_before() -> None:
    st = root({"max_messages": 50, "idle_seconds": 900})
    before = utcnow()
    record(st, "s1", "a", "b", "c")
    after = utcnow()
    early = st.promoter.scan(now=before + timedelta(seconds=899))
    assert (early.sessions, cuts(st)) == (0, [])
    done = st.promoter.scan(now=after + timedelta(seconds=900))
    assert (done.sessions, done.reasons, cuts(st)) == (1, {"idle": 1}, [(1, 3, "idle")])
    promoted = session_of(st)
    assert (promoted.promoted_through_seq, promoted.pending, promoted.idle_due_at) == (3, 0, None)


def test_recording_again_puts_the_idle_time_back() -> None:
    st = root({"max_messages": 50, "idle_seconds": 900})
    record(st, "s1", "a")
    first = session_of(st).idle_due_at
    time.sleep(0.002)  # the next turn a few milliseconds later (the store keeps milliseconds)
    record(st, "s1", "b")
    second = session_of(st).idle_due_at
    assert first is not None and second is not None and second > first
    assert st.promoter.scan(now=first).sessions == 0
    assert st.promoter.scan(now=second).sessions == 1 and cuts(st) == [(1, 2, "idle")]


# -- size -------------------------------------------------------------------------------------------------
def test_a_size_due_session_is_cut_in_full_snapshots_and_the_rest_waits_for_idle() -> None:
    st = root({"max_messages": 5, "idle_seconds": 900})
    record(st, "s1", *(f"t{i}" for i in range(1, 13)))
    report = st.promoter.scan(now=utcnow())
    assert cuts(st) == [(1, 5, "size"), (6, 10, "size")] and report.reasons == {"size": 2}
    waiting = session_of(st)
    assert (waiting.promoted_through_seq, waiting.pending, waiting.size_due_at) == (10, 2, None)
    assert st.promoter.scan(now=utcnow()).sessions == 0  # two left: below the size rule
    st.promoter.scan(now=later(901))
    assert cuts(st)[-1] == (11, 12, "idle")


def test_batches_reaching_max_messages_together_make_the_session_due() -> None:
    st = root({"max_messages": 5})
    record(st, "s1", "1", "2", "3")
    assert st.promoter.scan(now=utcnow()).sessions == 0
    record(st, "s1", "4", "5", "6")
    st.promoter.scan(now=utcnow())
    assert cuts(st) == [(1, 5, "size")]


def test_the_token_rule_promotes_a_session_with_few_long_turns() -> None:
    st = root({"max_messages": 50, "max_tokens": 20})
    record(st, "s1", "x" * 40)  # 11 tokens
    assert st.promoter.scan(now=utcnow()).sessions == 0
    record(st, "s1", "y" * 40)  # 22 tokens
    st.promoter.scan(now=utcnow())
    [snap] = snaps(st)
    assert (snap.from_seq, snap.to_seq, snap.reason, snap.tokens) == (1, 2, "size", 22)
    assert session_of(st).unpromoted_tokens == 0


# -- what a snapshot holds -----------------------------------------------------------------------------
def test_a_snapshot_holds_its_turns_in_order_and_is_sent_to_extraction_once() -> None:
    st = root({"max_messages": 3})
    record(st, "s1", "one", "two")
    record(st, "s1", "three", "four")
    st.promoter.scan(now=utcnow())
    [snap] = snaps(st)
    assert (snap.from_seq, snap.to_seq, snap.turn_count, snap.missing_seqs) == (1, 3, 3, [])
    assert snap.tokens == sum(t.tokens for t in st.turns.in_range(ANA, "s1", 1, 3))
    assert set(snap.extraction) == set(KINDS) and {s.status for s in snap.extraction.values()} == {"queued"}
    turns = st.turns.in_range(ANA, "s1", 1, 4)
    assert [(t.content, t.snapshot_id) for t in turns] == [
        ("one", snap.snapshot_id),
        ("two", snap.snapshot_id),
        ("three", snap.snapshot_id),
        ("four", None),
    ]
    # one message, to the first kind's queue, naming the others
    assert st.memory_queue.receive("semantic") == [
        {
            "snapshot_id": snap.snapshot_id,
            "type": "semantic",
            "tenant": "acme",
            "user_id": "ana",
            "then": ["episodic"],
        }
    ]
    assert st.memory_queue.receive("episodic") == [] and snap.fanned_out is True
    # a later scan sends nothing again
    st.promoter.scan(now=later(st.settings.lease_seconds + 1))
    assert st.memory_queue.receive("semantic") == []


def test_a_manual_flush_cuts_whatever_is_unpromoted_in_max_messages_pieces() -> None:
    st = root({"max_messages": 5, "idle_seconds": 900})
    record(st, "s1", "1", "2", "3", "4")
    assert st.promoter.scan(now=utcnow()).sessions == 0  # due by no rule
    assert st.history.flush(ANA, "s1").message == "promoted 4 turns into 1 snapshot(s)"
    record(st, "s1", *(f"t{i}" for i in range(7)))
    answer = st.history.flush(ANA, "s1")
    assert cuts(st) == [(1, 4, "manual"), (5, 9, "manual"), (10, 11, "manual")]
    assert answer.message == "promoted 7 turns into 2 snapshot(s)"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("record"), st.integers(1, 7)),
            st.tuples(st.just("crash"), st.integers(1, 3)),
            st.tuples(st.just("scan"), st.sampled_from([0, 11, 61, 1000])),
            st.tuples(st.just("flush"), st.just(0)),
        ),
        max_size=12,
    )
)
def test_every_recorded_turn_lands_in_exactly_one_snapshot(steps: list[tuple[str, int]]) -> None:
    """Whatever the order of recording, crashed writers, scans and flushes: the snapshots tile the seqs
    without gap or overlap, each at most max_messages long; every stored turn is in the one snapshot
    whose range holds it, every lost one is listed as missing there."""
    turns = CrashingTurns()
    st_ = root({"max_messages": 4, "idle_seconds": 10}, hole_grace_seconds=60, turns=turns)
    lost: set[int] = set()
    for action, n in steps:
        if action == "record":
            record(st_, "s1", *(f"turn {i}" for i in range(n)))
        elif action == "crash":
            first = st_.sessions.get(ANA, "s1")
            crash(st_, turns, "s1", n)
            lost.update(range((first.last_seq if first else 0) + 1, (first.last_seq if first else 0) + n + 1))
        elif action == "scan":
            st_.promoter.scan(now=later(n))
        else:
            st_.promoter.flush(ANA, "s1")
    st_.promoter.scan(now=later(1000))  # everything idle, every hole past its grace period
    session = st_.sessions.get(ANA, "s1")
    if session is None:
        assert snaps(st_) == []
        return
    cut = snaps(st_)
    assert [s.from_seq for s in cut] == [1] + [s.to_seq + 1 for s in cut[:-1]]
    assert cut[-1].to_seq == session.last_seq == session.promoted_through_seq and session.pending == 0
    for snap in cut:
        assert snap.to_seq - snap.from_seq + 1 <= 4
        assert snap.missing_seqs == sorted(s for s in lost if snap.from_seq <= s <= snap.to_seq)
        assert snap.turn_count == snap.to_seq - snap.from_seq + 1 - len(snap.missing_seqs)
        held = st_.turns.in_range(ANA, "s1", snap.from_seq, snap.to_seq)
        assert [t.seq for t in held] == [s for s in range(snap.from_seq, snap.to_seq + 1) if s not in lost]
        assert all(t.snapshot_id == snap.snapshot_id for t in held)
    messages = st_.memory_queue.receive("semantic")
    assert sorted(m["snapshot_id"] for m in messages) == sorted(s.snapshot_id for s in cut)


# -- holes ----------------------------------------------------------------------------------------------
def test_a_hole_waits_for_its_writer_for_the_grace_period_then_is_skipped_and_listed() -> None:
    turns = CrashingTurns()
    st = root({"max_messages": 50, "idle_seconds": 10}, hole_grace_seconds=60, turns=turns)
    record(st, "s1", "a", "b")
    crash(st, turns, "s1", 2)  # seqs 3-4 allocated, never stored
    record(st, "s1", "e", "f")
    recorded = utcnow()
    # idle, but the hole's writer may still be writing: the turns before it are promoted, the rest wait
    first = st.promoter.scan(now=recorded + timedelta(seconds=11))
    assert cuts(st) == [(1, 2, "idle")] and first.sessions == 1
    assert st.promoter.scan(now=recorded + timedelta(seconds=59)).snapshots == []
    # quiet past the grace period: promoted over the hole, which the snapshot lists
    st.promoter.scan(now=recorded + timedelta(seconds=61))
    last = snaps(st)[-1]
    assert (last.from_seq, last.to_seq, last.missing_seqs, last.turn_count) == (3, 6, [3, 4], 2)
    assert [t.content for t in st.turns.in_range(ANA, "s1", 3, 6)] == ["e", "f"]
    assert session_of(st).promoted_through_seq == 6


def test_a_session_waiting_on_a_hole_is_set_aside_and_other_due_sessions_are_promoted() -> None:
    # Given a session due by size whose next seqs are a hole still within its grace period, marked first
    turns = CrashingTurns()
    st = root({"max_messages": 2}, hole_grace_seconds=60, scan_batch=10, turns=turns)
    crash(st, turns, "waiting", 2)
    record(st, "ready", "a", "b")
    # When the scan runs
    report = st.promoter.scan(now=utcnow())
    # Then it claims the waiting session once, and promotes the other one
    assert (report.sessions, report.skipped) == (2, 1)
    assert (cuts(st, "waiting"), cuts(st, "ready")) == ([], [(1, 2, "size")])
    # and the scan job stops after one pass instead of claiming it again until the grace period ends
    assert run_scan(st.promoter, None, scan_batch=10).sessions == 0
    # once the grace period is over it is promoted over its hole
    st.promoter.scan(now=later(61))
    assert [(s.from_seq, s.to_seq, s.missing_seqs) for s in snaps(st, "waiting")] == [(1, 2, [1, 2])]


def test_deleted_turns_are_promoted_over_at_once_without_waiting_for_the_grace_period() -> None:
    st = root({"max_messages": 5, "idle_seconds": 900}, hole_grace_seconds=60)
    record(st, "s1", "a", "b", "c", "d", "e")
    st.history.delete_turns(ANA, "s1", from_seq=4)
    st.promoter.scan(now=utcnow())
    [snap] = snaps(st)
    assert (snap.from_seq, snap.to_seq, snap.missing_seqs, snap.turn_count) == (1, 5, [4, 5], 3)
    assert snap.tokens == sum(t.tokens for t in st.turns.in_range(ANA, "s1", 1, 3))


# -- the promotion point and leases ------------------------------------------------------------------
def test_a_scanner_that_crashed_after_cutting_is_finished_by_the_next_with_the_same_snapshot() -> None:
    st = root({"max_messages": 3}, lease_seconds=30)
    record(st, "s1", "a", "b", "c")
    dying = Promoter(st.sessions, st.turns, st.snapshots, st.queue, st.settings, owner="dying")
    claimed = dying.claim_due(utcnow())
    assert claimed is not None
    orphan = dying.cut_one(claimed, "size", utcnow())
    assert orphan is not None and session_of(st).promoted_through_seq == 0
    # held until its lease expires; then the next scanner completes the same cut
    assert st.promoter.scan(now=utcnow()).sessions == 0
    st.promoter.scan(now=later(31))
    assert [s.snapshot_id for s in snaps(st)] == [orphan.snapshot_id]
    assert session_of(st).promoted_through_seq == 3
    assert [m["snapshot_id"] for m in st.memory_queue.receive("semantic")] == [orphan.snapshot_id]


def test_a_session_leased_by_one_scanner_is_not_taken_by_another_until_the_lease_expires() -> None:
    st = root({"max_messages": 2}, lease_seconds=30)
    record(st, "s1", "a", "b")
    other = Promoter(st.sessions, st.turns, st.snapshots, st.queue, st.settings, owner="other")
    assert other.claim_due(utcnow()) is not None
    assert st.promoter.scan(now=utcnow()).sessions == 0
    assert st.history.flush(ANA, "s1").message == "another promotion is in progress; try again shortly"
    assert cuts(st) == []
    st.promoter.scan(now=later(31))
    assert cuts(st) == [(1, 2, "size")]


def test_a_snapshot_whose_fan_out_was_lost_is_sent_again_once() -> None:
    st = root({"max_messages": 2}, lease_seconds=30)
    record(st, "s1", "a", "b")
    st.promoter.scan(now=utcnow())
    [snap] = snaps(st)
    st.memory_queue.receive("semantic")
    st.memory_snapshots.docs[snap.snapshot_id]["fanned_out"] = False  # the sender died before marking it
    assert st.promoter.scan(now=utcnow()).resent == 0  # may still be in flight
    assert st.promoter.scan(now=later(31)).resent == 1
    assert [m["snapshot_id"] for m in st.memory_queue.receive("semantic")] == [snap.snapshot_id]
    assert st.promoter.scan(now=later(62)).resent == 0


# -- the scan job ------------------------------------------------------------------------------------------
def test_the_scan_job_promotes_more_due_sessions_than_one_batch_until_none_is_left() -> None:
    st = root({"max_messages": 2}, scan_batch=2)
    for i in range(5):
        record(st, f"s{i}", "a", "b")
    totals = run_scan(st.promoter, None, scan_batch=2)
    assert (totals.sessions, totals.snapshots, totals.reasons) == (5, 5, {"size": 5})
    assert all(cuts(st, f"s{i}") == [(1, 2, "size")] for i in range(5))


def test_the_scan_job_stops_taking_sessions_near_its_deadline_and_survives_a_failing_recall_indexer() -> None:
    st = root({"max_messages": 2}, scan_batch=2)
    for i in range(5):
        record(st, f"s{i}", "a", "b")

    def broken() -> Any:
        raise RuntimeError("the recall index is unreachable")

    totals = run_scan(st.promoter, broken, scan_batch=2, deadline_ms=lambda: 5_000)
    # one batch, then out of time; the rest wait for the next run
    assert (totals.sessions, totals.snapshots) == (2, 2)
    assert totals.as_json()["recall"] == {"turns": 0, "reindexed": 0, "failed": 0}
    assert run_scan(st.promoter, None, scan_batch=2).snapshots == 3


def test_a_scan_that_follows_recording_adds_up_its_passes_in_the_answer() -> None:
    st = root({"max_messages": 2}, scan_batch=10)
    record(st, "s1", "a", "b")
    later_sessions = iter(["s2"])
    left_ms = iter([60_000, 60_000, 0])  # time for two passes after the first

    class Indexer:
        def run(self, deadline_ms: Any, safety_ms: int) -> dict[str, int]:
            return {"turns": 1, "reindexed": 0, "failed": 0}

    def sleep(_seconds: float) -> None:
        for session in later_sessions:  # recorded while the scan waits for its next pass (once)
            record(st, session, "c", "d")
            break

    follow = Follow(poll_seconds=0.001, for_seconds=60)
    indexer: Any = Indexer  # builds what run_scan uses of a TurnIndexer
    totals = run_scan(st.promoter, indexer, 10, deadline_ms=lambda: next(left_ms), follow=follow, sleep=sleep)
    # the scan function's answer: each pass's sessions, snapshots, reasons and recall figures added up
    assert totals.as_json() == {
        "sessions": 2,
        "snapshots": 2,
        "resent": 0,
        "reasons": {"size": 2},
        "recall": {"turns": 3, "reindexed": 0, "failed": 0},
        "follow_passes": 2,
    }


# -- nothing new -----------------------------------------------------------------------------------------
def test_a_session_with_nothing_new_is_left_alone_and_the_next_turn_starts_the_next_snapshot() -> None:
    st = root({"max_messages": 2})
    record(st, "s1", "a", "b")
    st.promoter.scan(now=utcnow())
    st.memory_queue.receive("semantic")
    assert st.promoter.scan(now=later(10**6)).sessions == 0
    assert st.history.flush(ANA, "s1").message == "nothing to promote"
    assert st.promoter.flush(ANA, "s1") == []
    assert cuts(st) == [(1, 2, "size")] and st.memory_queue.receive("semantic") == []
    record(st, "s1", "c")
    st.promoter.scan(now=later(901))
    assert cuts(st) == [(1, 2, "size"), (3, 3, "idle")]


# -- topic shifts --------------------------------------------------------------------------------------
TOPICS = ("recipe", "football", "weather")


class TopicEmbedder(EmbeddingProvider):
    """One axis per topic word: turns about one topic are identical, about two orthogonal."""

    model = "topics-3"
    dim = 3

    def __init__(self, fail: bool = False) -> None:
        self.calls = 0
        self.fail = fail

    def embed(self, texts: list[str], purpose: str = "document") -> list[list[float]]:
        self.calls += 1
        if self.fail:
            raise RuntimeError("the embedder is down")
        return [[1.0 if word in text else 0.0 for word in TOPICS] for text in texts]

    def ready(self) -> tuple[bool, str]:
        return True, ""


def topic_root(embedder: TopicEmbedder, enabled: bool = True, **kw: Any) -> InMemoryShortTerm:
    shift = {"enabled": enabled, "window": 2}
    return root({"max_messages": 50, "idle_seconds": 10, "topic_shift": shift}, embedder=embedder, **kw)


def test_a_change_of_topic_cuts_the_snapshot_where_the_new_topic_starts() -> None:
    embedder = TopicEmbedder()
    st = topic_root(embedder)
    record(st, "s1", "a recipe for bread", "the recipe needs yeast", "recipe: bake it", "recipe done")
    st.recorder.record(
        ANA,
        "s1",
        RecordTurnsRequest.model_validate(
            {
                "turns": [
                    {"role": "assistant", "content": " ", "tool_calls": [{"id": "c1", "name": "timer"}]},
                    {"role": "tool", "content": "timer set", "tool_call_id": "c1"},
                ]
            }
        ),
    )
    record(st, "s1", "football tonight?", "football at eight", "the football match", "football again")
    st.promoter.scan(now=later(11))
    # the tool turns of the first topic go with it
    assert cuts(st) == [(1, 6, "topic_shift"), (7, 10, "idle")]


def test_a_hole_after_the_topic_change_is_listed_in_the_snapshot_that_holds_it() -> None:
    turns = CrashingTurns()
    st = topic_root(TopicEmbedder(), turns=turns, hole_grace_seconds=60)
    record(st, "s1", "recipe one", "recipe two", "recipe three", "recipe four", "football", "football")
    crash(st, turns, "s1", 1)  # seq 7
    record(st, "s1", "football", "football")
    st.promoter.scan(now=later(61))
    assert [(s.from_seq, s.to_seq, s.reason, s.missing_seqs, s.turn_count) for s in snaps(st)] == [
        (1, 4, "topic_shift", [], 4),
        (5, 9, "idle", [7], 4),
    ]


def test_one_topic_throughout_is_one_snapshot() -> None:
    st = topic_root(TopicEmbedder())
    record(st, "s1", *(f"recipe step {i}" for i in range(6)))
    st.promoter.scan(now=later(11))
    assert cuts(st) == [(1, 6, "idle")]


def test_topics_are_looked_for_only_when_enabled_and_in_runs_long_enough_to_hold_two() -> None:
    off = TopicEmbedder()
    st = topic_root(off, enabled=False)
    record(st, "s1", "recipe", "recipe", "football", "football")
    st.promoter.scan(now=later(11))
    assert cuts(st) == [(1, 4, "idle")] and off.calls == 0
    short = TopicEmbedder()
    st = topic_root(short)
    record(st, "s1", "recipe", "recipe", "football")  # fewer than two windows of turns
    st.promoter.scan(now=later(11))
    assert cuts(st) == [(1, 3, "idle")] and short.calls == 0


def test_a_manual_flush_never_cuts_by_topic_and_a_failing_embedder_never_stops_promotion() -> None:
    embedder = TopicEmbedder()
    st = topic_root(embedder)
    record(st, "s1", "recipe", "recipe", "football", "football")
    st.history.flush(ANA, "s1")
    assert cuts(st) == [(1, 4, "manual")] and embedder.calls == 0
    failing = TopicEmbedder(fail=True)
    st = topic_root(failing)
    record(st, "s1", "recipe", "recipe", "football", "football")
    st.promoter.scan(now=later(11))
    assert cuts(st) == [(1, 4, "idle")] and failing.calls == 1
