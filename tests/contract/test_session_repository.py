"""The SessionRepository contract (shortterm.ports): seq allocation, client tokens, leases, promotion points."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from mongomem.models.common import Scope, utcnow
from mongomem.models.sessions import StoredSnapshot
from mongomem.shortterm.ports import DELETED_RANGES, TOKEN_WINDOW, NewBatch, TokenSeen

ANA = Scope(tenant="acme", user_id="ana")
BO = Scope(tenant="acme", user_id="bo")
OTHER_TENANT = Scope(tenant="globex", user_id="ana")


def allocate(sessions: Any, scope: Scope, sid: str, count: int = 1, tokens: int = 5, **kw: Any) -> int:
    now = kw.pop("now", utcnow())
    due = kw.pop("idle_due_at", now + timedelta(seconds=900))
    batch = NewBatch(count, tokens, kw.pop("agent_id", None), kw.pop("token", None), due)
    allocated = sessions.allocate(scope, sid, batch, now)
    return int(allocated.last_seq)


def cut(scope: Scope, sid: str, from_seq: int, to_seq: int, tokens: int = 0) -> StoredSnapshot:
    return StoredSnapshot(
        snapshot_id="snap-test",
        tenant=scope.tenant,
        user_id=scope.user_id,
        session_id=sid,
        from_seq=from_seq,
        to_seq=to_seq,
        turn_count=to_seq - from_seq + 1,
        reason="size",
        created_at=utcnow(),
        tokens=tokens,
    )


def test_allocation_creates_the_session_and_hands_out_consecutive_seqs(sessions: Any) -> None:
    now = utcnow()
    assert allocate(sessions, ANA, "s1", 3, tokens=12, agent_id="planner", now=now) == 3
    assert allocate(sessions, ANA, "s1", 2, tokens=8) == 5
    session = sessions.get(ANA, "s1")
    assert (session.tenant, session.user_id, session.session_id, session.agent_id) == (
        "acme",
        "ana",
        "s1",
        "planner",
    )
    assert (session.last_seq, session.pending, session.unpromoted_tokens, session.promoted_through_seq) == (
        5,
        5,
        20,
        0,
    )
    assert session.unpromoted == 5 and session.idle_due_at is not None and session.last_turn_at is not None
    assert abs(session.created_at - now) < timedelta(seconds=1) and session.created_at.tzinfo is not None


def test_sessions_are_scoped_by_tenant_and_user(sessions: Any) -> None:
    allocate(sessions, ANA, "shared")
    assert sessions.get(BO, "shared") is None and sessions.get(OTHER_TENANT, "shared") is None
    assert allocate(sessions, BO, "shared") == 1  # a session id of another user is another session
    assert sessions.get(ANA, "shared").last_seq == 1


def test_a_remembered_client_token_allocates_nothing(sessions: Any) -> None:
    first = utcnow()
    assert allocate(sessions, ANA, "s1", 2, token="tok-1", now=first) == 2
    with pytest.raises(TokenSeen):
        allocate(sessions, ANA, "s1", 2, token="tok-1")
    assert sessions.get(ANA, "s1").last_seq == 2
    seen = sessions.token_seen_at(ANA, "s1", "tok-1")
    assert seen is not None and abs(seen - first) < timedelta(seconds=1)
    assert sessions.token_seen_at(ANA, "s1", "tok-unknown") is None
    assert sessions.token_seen_at(BO, "s1", "tok-1") is None
    # the token belongs to this session: another session takes it
    assert allocate(sessions, ANA, "s2", 1, token="tok-1") == 1


def test_the_session_remembers_its_last_tokens_only(sessions: Any) -> None:
    allocate(sessions, ANA, "s1", token="tok-0")
    for i in range(1, TOKEN_WINDOW + 1):
        allocate(sessions, ANA, "s1", token=f"tok-{i}")
    assert sessions.token_seen_at(ANA, "s1", "tok-0") is None
    assert allocate(sessions, ANA, "s1", token="tok-0") == TOKEN_WINDOW + 2
    with pytest.raises(TokenSeen):
        allocate(sessions, ANA, "s1", token=f"tok-{TOKEN_WINDOW}")


def test_user_sessions_are_listed_most_recent_first_in_pages(sessions: Any) -> None:
    start = utcnow() - timedelta(hours=1)
    for i in range(5):
        allocate(sessions, ANA, f"s{i}", now=start + timedelta(minutes=i))
    allocate(sessions, BO, "elsewhere")
    page = sessions.user_sessions(ANA, 3)
    assert [s.session_id for s in page] == ["s4", "s3", "s2"]
    last = page[-1]
    rest = sessions.user_sessions(ANA, 3, before=(last.last_turn_at, last.session_id))
    assert [s.session_id for s in rest] == ["s1", "s0"]


def test_due_sessions_are_claimed_by_one_owner_until_released_or_expired(sessions: Any) -> None:
    now = utcnow()
    allocate(sessions, ANA, "idle", idle_due_at=now - timedelta(seconds=1), now=now - timedelta(minutes=20))
    allocate(sessions, ANA, "busy", idle_due_at=now + timedelta(minutes=15), now=now)
    claimed = sessions.claim_due("scanner-a", now, 60)
    assert claimed is not None and claimed.session_id == "idle"
    # held: nobody else gets it, and the not-due session is never handed out
    assert sessions.claim_due("scanner-b", now, 60) is None
    assert sessions.claim(ANA, "idle", "scanner-b", now, 60) is None
    # a release by someone else changes nothing; the owner's does
    sessions.release(ANA, "idle", "scanner-b")
    assert sessions.claim_due("scanner-b", now, 60) is None
    sessions.release(ANA, "idle", "scanner-a")
    assert sessions.claim_due("scanner-b", now, 60).session_id == "idle"
    # an expired lease is taken over
    later = now + timedelta(seconds=61)
    assert sessions.claim_due("scanner-c", later, 60).session_id == "idle"


def test_a_session_marked_due_by_size_is_claimed_until_promoted_below_the_rules(sessions: Any) -> None:
    now = utcnow()
    far = now + timedelta(hours=1)
    first = sessions.allocate(ANA, "many", NewBatch(5, 5, None, None, far), now)
    assert (first.last_seq, first.pending, first.unpromoted_tokens, first.size_marked) == (5, 5, 5, False)
    allocate(sessions, ANA, "quiet", 1, tokens=5, idle_due_at=far)
    assert sessions.claim_due("o", now, 60) is None  # counters alone never make a session due
    sessions.mark_size_due(ANA, "many", now)
    sessions.mark_size_due(ANA, "many", now + timedelta(minutes=5))  # marked once: the first mark stays
    assert sessions.get(ANA, "many").size_due_at == now.replace(microsecond=now.microsecond // 1000 * 1000)
    assert sessions.allocate(ANA, "many", NewBatch(1, 5, None, None, far), now).size_marked is True
    claimed = sessions.claim_due("o", now, 60)
    assert claimed is not None and claimed.session_id == "many"
    sessions.release(ANA, "many", "o")
    # still at the rule (6 pending >= 5): the mark stays; below it, the mark goes
    sessions.clear_size_due(ANA, "many", 5, None)
    assert sessions.get(ANA, "many").size_due_at is not None
    sessions.clear_size_due(ANA, "many", 10, None)
    assert sessions.get(ANA, "many").size_due_at is None
    assert sessions.claim_due("o", now, 60) is None
    # the token rule alike; and a session promoted to nothing pending leaves the size index
    sessions.mark_size_due(ANA, "quiet", now)
    sessions.clear_size_due(ANA, "quiet", 10, 3)  # 5 tokens >= 3: kept
    assert sessions.claim_due("o", now, 60).session_id == "quiet"
    sessions.release(ANA, "quiet", "o")
    assert sessions.advance(ANA, "quiet", cut(ANA, "quiet", 1, 1, tokens=5)).size_due_at is None
    assert sessions.get(ANA, "quiet").size_due_at is None
    assert sessions.claim_due("o", now, 60) is None


def test_advance_moves_the_promotion_point_once(sessions: Any) -> None:
    allocate(sessions, ANA, "s1", 5, tokens=50)
    advanced = sessions.advance(ANA, "s1", cut(ANA, "s1", 1, 3, tokens=30))
    assert advanced is not None
    assert (advanced.promoted_through_seq, advanced.pending, advanced.unpromoted_tokens) == (3, 2, 20)
    # the same range again (a racing scanner) and a range that does not start at the point: refused
    assert sessions.advance(ANA, "s1", cut(ANA, "s1", 1, 3, tokens=30)) is None
    assert sessions.advance(ANA, "s1", cut(ANA, "s1", 5, 5)) is None
    assert sessions.get(ANA, "s1").promoted_through_seq == 3
    # fully promoted: nothing pending, out of the idle rule
    done = sessions.advance(ANA, "s1", cut(ANA, "s1", 4, 5, tokens=20))
    assert done is not None and (done.pending, done.idle_due_at) == (0, None)
    stored = sessions.get(ANA, "s1")
    assert (stored.pending, stored.unpromoted_tokens, stored.idle_due_at) == (0, 0, None)
    assert sessions.claim_due("o", utcnow() + timedelta(days=1), 60) is None


def test_deleted_turns_leave_their_tokens_and_range_behind(sessions: Any) -> None:
    allocate(sessions, ANA, "s1", 10, tokens=100)
    sessions.forget_deleted(ANA, "s1", 40, (7, 10))
    session = sessions.get(ANA, "s1")
    assert session.unpromoted_tokens == 60 and session.deleted_ranges == [(7, 10)]
    sessions.forget_deleted(ANA, "s1", 0, None)
    assert sessions.get(ANA, "s1").deleted_ranges == [(7, 10)]
    for i in range(DELETED_RANGES):
        sessions.forget_deleted(ANA, "s1", 0, (100 + i, 100 + i))
    ranges = sessions.get(ANA, "s1").deleted_ranges
    assert (
        len(ranges) == DELETED_RANGES
        and ranges[-1] == (100 + DELETED_RANGES - 1,) * 2
        and (7, 10) not in ranges
    )


def test_a_copy_has_the_sources_seqs_all_promoted_and_is_made_once(sessions: Any) -> None:
    allocate(sessions, ANA, "src", count=4, agent_id="a1")
    source = sessions.get(ANA, "src")
    now = utcnow()
    assert sessions.create_copy(ANA, "copy", source, now) is True
    copy = sessions.get(ANA, "copy")
    assert (copy.last_seq, copy.promoted_through_seq, copy.pending, copy.agent_id) == (4, 4, 0, "a1")
    assert copy.idle_due_at is None  # nothing to promote: the scanner never claims it
    assert sessions.claim_due("scanner", now + timedelta(days=1), 60) is not None  # the source
    assert sessions.claim_due("scanner", now + timedelta(days=1), 60) is None
    assert sessions.create_copy(ANA, "copy", source, now) is False
    # the next turn recorded in the copy follows the copied seqs
    assert allocate(sessions, ANA, "copy") == 5


def test_deleting_a_session_removes_only_it(sessions: Any) -> None:
    allocate(sessions, ANA, "s1")
    allocate(sessions, BO, "s1")
    assert sessions.delete(ANA, "s1") is True and sessions.get(ANA, "s1") is None
    assert sessions.delete(ANA, "s1") is False and sessions.get(BO, "s1") is not None
