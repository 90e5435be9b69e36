"""The record rules, database-free: seqs, limits, client-token retries, agents, the size mark, recall
queueing and import keys, on the runtime's recorder over the in-memory repositories (tests/fake_roots.py;
the fakes pass the MongoDB adapters' contract suites)."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from typing import Any

import pytest

from mongomem.api.app import MemoryApi
from mongomem.api.sessions import routes as sessions_routes
from mongomem.errors import Conflict, InvalidInput, PayloadTooLarge, StoreUnavailable
from mongomem.models.common import Scope, utcnow
from mongomem.models.imports import ImportRequest
from mongomem.models.turns import RecordTurnsRequest, RecordTurnsResponse, TurnIn
from mongomem.shortterm.ports import TOKEN_WINDOW
from mongomem.shortterm.record import TurnRecorder, estimate_tokens
from tests.conftest import Ctx, load_event
from tests.fake_roots import CrashingTurns, InMemoryShortTerm, settings_for
from tests.fakes import InMemorySessionRepository

ANA = Scope(tenant="acme", user_id="ana")
BO = Scope(tenant="acme", user_id="bo")


class CountingSessions(InMemorySessionRepository):
    """Counts the size marks the record path asks for."""

    def __init__(self) -> None:
        super().__init__()
        self.marks = 0

    def mark_size_due(self, scope: Scope, session_id: str, at: datetime) -> None:
        self.marks += 1
        super().mark_size_due(scope, session_id, at)


def root(memory: dict[str, Any] | None = None, **kw: Any) -> InMemoryShortTerm:
    return InMemoryShortTerm(settings_for(memory), **kw)


def batch(*contents: str, token: str | None = None, agent: str | None = None, role: str = "user") -> Any:
    body: dict[str, Any] = {"turns": [{"role": role, "content": c} for c in contents]}
    if token:
        body["client_token"] = token
    if agent:
        body["agent_id"] = agent
    return RecordTurnsRequest.model_validate(body)


def seqs(response: RecordTurnsResponse) -> list[int]:
    return [t.seq for t in response.turns]


def stored(st: InMemoryShortTerm, session: str = "s1", scope: Scope = ANA) -> list[tuple[int, str]]:
    return [(t.seq, t.content) for t in st.memory_turns.latest(scope, session, 1000)]


# -- seqs ------------------------------------------------------------------------------------------------
def test_batches_get_consecutive_seqs_and_each_user_session_counts_from_one() -> None:
    st = root()
    first = st.recorder.record(ANA, "s1", batch("a", "b", "c"))
    second = st.recorder.record(ANA, "s1", batch("d", "e"))
    assert (seqs(first), seqs(second)) == ([1, 2, 3], [4, 5])
    assert [t.turn_id for t in second.turns] == ["s1:4", "s1:5"]
    assert first.replayed is False and first.user_id == "ana"
    assert stored(st) == [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]
    # another session, another user: their own seqs
    assert seqs(st.recorder.record(ANA, "s2", batch("x"))) == [1]
    assert seqs(st.recorder.record(BO, "s1", batch("y"))) == [1]
    session = st.sessions.get(ANA, "s1")
    assert session is not None and (session.last_seq, session.pending) == (5, 5)


def test_the_token_estimate_counts_content_and_tool_calls_and_feeds_the_session() -> None:
    plain = TurnIn(role="user", content="x" * 40)
    call = TurnIn.model_validate(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "search", "arguments": {"q": 1}}],
        }
    )
    # about four characters a token, never zero
    assert estimate_tokens(plain) == 11
    assert estimate_tokens(TurnIn(role="user", content="hi")) == 1
    assert estimate_tokens(call) == (len("search") + len('{"q": 1}')) // 4 + 1
    st = root()
    st.recorder.record(ANA, "s1", RecordTurnsRequest(turns=[plain, call]))
    session = st.sessions.get(ANA, "s1")
    assert session is not None and session.unpromoted_tokens == 11 + estimate_tokens(call)
    assert [t.tokens for t in st.memory_turns.latest(ANA, "s1", 10)] == [11, estimate_tokens(call)]


# -- limits: the whole batch or nothing --------------------------------------------------------------
def test_a_batch_over_max_batch_is_refused_whole_and_the_session_is_unchanged() -> None:
    st = root({"limits": {"max_batch": 3}})
    st.recorder.record(ANA, "s1", batch("kept"))
    before = st.sessions.get(ANA, "s1")
    with pytest.raises(InvalidInput) as refused:
        st.recorder.record(ANA, "s1", batch("1", "2", "3", "4"))
    assert refused.value.details == {"max_batch": 3}
    assert stored(st) == [(1, "kept")] and st.sessions.get(ANA, "s1") == before
    # a new session is not even created
    with pytest.raises(InvalidInput):
        st.recorder.record(ANA, "s2", batch("1", "2", "3", "4"))
    assert st.sessions.get(ANA, "s2") is None
    assert seqs(st.recorder.record(ANA, "s1", batch("1", "2", "3"))) == [2, 3, 4]  # at the limit: taken


def test_one_turn_over_max_content_bytes_refuses_the_batch_before_any_write() -> None:
    st = root({"limits": {"max_content_bytes": 10}})
    st.recorder.record(ANA, "s1", batch("kept"))
    before = st.sessions.get(ANA, "s1")
    # six characters, twelve UTF-8 bytes: the limit is on bytes
    with pytest.raises(PayloadTooLarge) as refused:
        st.recorder.record(ANA, "s1", batch("fine", "also fine", "éééééé", "late"))
    assert refused.value.details == {"path": "turns.2.content", "max_content_bytes": 10}
    assert stored(st) == [(1, "kept")] and st.sessions.get(ANA, "s1") == before
    assert seqs(st.recorder.record(ANA, "s1", batch("x" * 10))) == [2]  # exactly at the limit: taken


# -- client tokens ---------------------------------------------------------------------------------
def test_a_retry_with_the_client_token_answers_the_original_seqs_and_stores_nothing_twice() -> None:
    st = root()
    first = st.recorder.record(ANA, "s1", batch("a", "b", token="tok-1"))
    st.recorder.record(ANA, "s1", batch("c"))
    retry = st.recorder.record(ANA, "s1", batch("a", "b", token="tok-1"))
    assert (seqs(first), first.replayed) == ([1, 2], False)
    assert (seqs(retry), retry.replayed) == ([1, 2], True)
    assert stored(st) == [(1, "a"), (2, "b"), (3, "c")]
    session = st.sessions.get(ANA, "s1")
    assert session is not None and (session.last_seq, session.pending) == (3, 3)  # no seq allocated


def test_a_retry_from_beyond_the_token_window_still_answers_the_original_seqs() -> None:
    # Given a token the session no longer remembers (as many batches with tokens since as it remembers)
    st = root()
    st.recorder.record(ANA, "s1", batch("a", "b", token="tok-old"))
    for i in range(TOKEN_WINDOW):
        st.recorder.record(ANA, "s1", batch(f"later {i}", token=f"tok-{i}"))
    # When it is retried, then the stored batch answers; the seqs it allocated are left as a hole
    retry = st.recorder.record(ANA, "s1", batch("a", "b", token="tok-old"))
    assert (seqs(retry), retry.replayed) == ([1, 2], True)
    assert stored(st)[:2] == [(1, "a"), (2, "b")] and len(stored(st)) == 2 + TOKEN_WINDOW
    assert seqs(st.recorder.record(ANA, "s1", batch("c"))) == [2 + TOKEN_WINDOW + 2 + 1]


def test_a_retry_finishes_a_half_stored_batch_at_its_original_seqs() -> None:
    # Given a first attempt whose insert stopped after two of its three turns
    turns = CrashingTurns()
    st = root(turns=turns)
    turns.fail_next, turns.keep = True, 2
    with pytest.raises(StoreUnavailable):
        st.recorder.record(ANA, "s1", batch("a", "b", "c", token="tok-1"))
    assert stored(st) == [(1, "a"), (2, "b")]
    retry = st.recorder.record(ANA, "s1", batch("a", "b", "c", token="tok-1"))
    assert (seqs(retry), retry.replayed) == ([1, 2, 3], True)
    assert stored(st) == [(1, "a"), (2, "b"), (3, "c")]


def test_a_token_reused_for_a_batch_of_another_size_is_a_conflict() -> None:
    st = root()
    st.recorder.record(ANA, "s1", batch("a", "b", token="tok-1"))
    with pytest.raises(Conflict) as refused:
        st.recorder.record(ANA, "s1", batch("a", "b", "c", token="tok-1"))
    assert refused.value.details == {"client_token": "tok-1", "original_turns": 2}
    assert stored(st) == [(1, "a"), (2, "b")]
    # the same token in another session is another batch
    assert seqs(st.recorder.record(ANA, "s2", batch("a", "b", "c", token="tok-1"))) == [1, 2, 3]


def test_a_retry_after_a_first_attempt_that_stored_nothing_waits_out_the_settle_window() -> None:
    # Given a first attempt that allocated seqs 1-2 and died before storing its turns
    turns = CrashingTurns()
    st = root(turns=turns)
    recorder = TurnRecorder(st.sessions, st.turns, st.settings.memory, settle_seconds=0.2)
    turns.fail_next = True
    with pytest.raises(StoreUnavailable):
        recorder.record(ANA, "s1", batch("a", "b", token="tok-1"))
    # When it is retried inside the window, then the client is told to retry later; nothing is stored
    with pytest.raises(Conflict) as early:
        recorder.record(ANA, "s1", batch("a", "b", token="tok-1"))
    assert early.value.details == {"client_token": "tok-1", "retry_after_seconds": 1}
    assert stored(st) == []
    # After the window the batch is recorded afresh, the abandoned seqs left as a hole
    time.sleep(0.2)
    late = recorder.record(ANA, "s1", batch("a", "b", token="tok-1"))
    assert (seqs(late), late.replayed) == ([3, 4], True)
    assert stored(st) == [(3, "a"), (4, "b")]
    # and a further retry answers those seqs, allocating nothing
    again = recorder.record(ANA, "s1", batch("a", "b", token="tok-1"))
    assert seqs(again) == [3, 4] and stored(st) == [(3, "a"), (4, "b")]
    session = st.sessions.get(ANA, "s1")
    assert session is not None and session.last_seq == 4


def test_the_settle_window_is_the_recorders_and_is_answered_in_whole_seconds() -> None:
    turns = CrashingTurns()
    st = root(turns=turns)
    turns.fail_next = True
    with pytest.raises(StoreUnavailable):
        st.recorder.record(ANA, "s1", batch("a", token="tok-1"))
    with pytest.raises(Conflict) as early:
        st.recorder.record(ANA, "s1", batch("a", token="tok-1"))
    # the runtime's recorder waits out the record function's timeout (10 s) and some
    assert early.value.details["retry_after_seconds"] == 15


# -- agents ----------------------------------------------------------------------------------------
def test_a_batch_naming_another_agent_is_refused_with_both_agents_named() -> None:
    st = root()
    st.recorder.record(ANA, "s1", batch("a", agent="planner"))
    with pytest.raises(Conflict) as refused:
        st.recorder.record(ANA, "s1", batch("b", agent="writer"))
    assert "belongs to agent 'planner'" in refused.value.message
    assert "names agent 'writer'" in refused.value.message
    assert refused.value.details == {"path": "agent_id", "session_id": "s1", "session_agent_id": "planner"}
    assert stored(st) == [(1, "a")]
    # a batch naming no agent is the session's own
    assert seqs(st.recorder.record(ANA, "s1", batch("c"))) == [2]


def test_a_session_started_without_an_agent_refuses_one_naming_an_agent() -> None:
    st = root()
    st.recorder.record(ANA, "s1", batch("a"))
    with pytest.raises(Conflict) as refused:
        st.recorder.record(ANA, "s1", batch("b", agent="writer"))
    assert "belongs to no agent (its first turns named none)" in refused.value.message
    assert refused.value.details["session_agent_id"] is None
    assert stored(st) == [(1, "a")]


# -- the size mark -----------------------------------------------------------------------------------
def test_a_session_is_marked_due_by_size_once_per_promotion_not_per_turn() -> None:
    sessions = CountingSessions()
    st = root({"snapshot": {"max_messages": 3}}, sessions=sessions)
    st.recorder.record(ANA, "s1", batch("1", "2"))
    assert sessions.marks == 0
    st.recorder.record(ANA, "s1", batch("3"))
    marked = st.sessions.get(ANA, "s1")
    assert sessions.marks == 1 and marked is not None and marked.size_due_at is not None
    st.recorder.record(ANA, "s1", batch("4"))
    st.recorder.record(ANA, "s1", batch("5", "6"))
    assert sessions.marks == 1  # already marked: recording more never marks again
    # promoted below the rule, the session is marked again when it reaches it again
    st.promoter.scan()
    after = st.sessions.get(ANA, "s1")
    assert after is not None and (after.promoted_through_seq, after.size_due_at) == (6, None)
    st.recorder.record(ANA, "s1", batch("7", "8", "9"))
    assert sessions.marks == 2


def test_the_token_rule_marks_a_session_due_by_size() -> None:
    st = root({"snapshot": {"max_messages": 50, "max_tokens": 20}})
    st.recorder.record(ANA, "s1", batch("x" * 40))  # 11 tokens
    first = st.sessions.get(ANA, "s1")
    assert first is not None and first.size_due_at is None
    st.recorder.record(ANA, "s1", batch("y" * 40))  # 22 >= 20
    second = st.sessions.get(ANA, "s1")
    assert second is not None and second.size_due_at is not None


# -- recall queueing -------------------------------------------------------------------------------
def _mixed() -> RecordTurnsRequest:
    return RecordTurnsRequest.model_validate(
        {
            "turns": [
                {"role": "system", "content": "you are helpful"},
                {"role": "user", "content": "book a table"},
                {"role": "assistant", "content": " ", "tool_calls": [{"id": "c1", "name": "book"}]},
                {"role": "tool", "content": "booked", "tool_call_id": "c1"},
                {"role": "assistant", "content": "done"},
            ]
        }
    )


def test_only_user_and_assistant_turns_with_content_are_queued_for_recall() -> None:
    st = root()
    st.recorder.record(ANA, "s1", _mixed())
    assert [t.recall_indexed for t in st.memory_turns.latest(ANA, "s1", 10)] == [
        None,
        False,
        None,
        None,
        False,
    ]
    assert [t.content for t in st.memory_turns.unindexed(10)] == ["book a table", "done"]


def test_with_recall_off_no_turn_is_queued() -> None:
    st = root({"recall": {"enabled": False}})
    st.recorder.record(ANA, "s1", _mixed())
    assert st.memory_turns.unindexed(10) == []
    assert {t.recall_indexed for t in st.memory_turns.latest(ANA, "s1", 10)} == {None}


# -- import keys -----------------------------------------------------------------------------------
def test_an_imports_turns_carry_their_keys() -> None:
    st = root()
    st.recorder.record(ANA, "s1", batch("a", "b"), import_keys=["k-a", "k-b"])
    st.recorder.record(ANA, "s1", batch("c"))
    assert st.memory_turns.import_keys(ANA, "s1") == {"k-a", "k-b"}
    assert [t.import_key for t in st.memory_turns.latest(ANA, "s1", 10)] == ["k-a", "k-b", None]


def test_importing_the_same_history_twice_records_it_once() -> None:
    st = root({"snapshot": {"idle_seconds": 900}})
    lines = [
        {
            "session_id": "trip",
            "role": "user",
            "content": "I fly to Oslo",
            "timestamp": "2024-05-01T10:00:00Z",
        },
        {"session_id": "trip", "role": "assistant", "content": "Noted", "timestamp": "2024-05-01T10:00:05Z"},
    ]
    request = ImportRequest.model_validate({"format": "turns", "turns": lines})
    first = st.importer.run(ANA, request)
    # the same history plus one new turn: only the new one is recorded
    again = ImportRequest.model_validate(
        {
            "format": "turns",
            "turns": [
                *lines,
                {
                    "session_id": "trip",
                    "role": "user",
                    "content": "in May",
                    "timestamp": "2024-05-01T10:01:00Z",
                },
            ],
        }
    )
    second = st.importer.run(ANA, again)
    assert (first.turns_recorded, first.already_imported) == (2, 0)
    assert (second.turns_recorded, second.already_imported) == (1, 2)
    assert stored(st, "trip") == [(1, "I fly to Oslo"), (2, "Noted"), (3, "in May")]
    assert len(st.memory_turns.import_keys(ANA, "trip")) == 3
    # recorded at their own times, and promoted along them (the history went idle long ago)
    assert st.memory_turns.latest(ANA, "trip", 1)[0].timestamp == datetime.fromisoformat(
        "2024-05-01T10:01:00+00:00"
    )
    assert (first.snapshots, second.snapshots) == (1, 1)
    assert [(s.from_seq, s.to_seq) for s in st.memory_snapshots.of_session(ANA, "trip")] == [(3, 3), (1, 2)]


def test_a_retry_of_a_half_stored_batch_after_the_session_was_promoted_over_it_is_a_conflict() -> None:
    # Given a half-stored batch the scan promoted over once its hole's grace period ended
    turns = CrashingTurns()
    st = root({"snapshot": {"idle_seconds": 5}}, turns=turns)
    turns.fail_next, turns.keep = True, 1
    with pytest.raises(StoreUnavailable):
        st.recorder.record(ANA, "s1", batch("a", "b", token="tok-1"))
    later = utcnow() + timedelta(seconds=st.settings.hole_grace_seconds + 1)
    st.promoter.scan(now=later)
    [snap] = st.memory_snapshots.of_session(ANA, "s1")
    assert (snap.from_seq, snap.to_seq, snap.missing_seqs) == (1, 2, [2])
    # When the client retries, then it learns its turn was not kept, and nothing is stored behind the snapshot
    with pytest.raises(Conflict, match="too late"):
        st.recorder.record(ANA, "s1", batch("a", "b", token="tok-1"))
    assert stored(st) == [(1, "a")]


# -- through the API ---------------------------------------------------------------------------------
def _post(st: InMemoryShortTerm, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    event = load_event("record_turn_single.json")
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/v1/sessions/s1/turns"
    event["body"] = json.dumps({"user_id": "ana", **body})
    api: MemoryApi[InMemoryShortTerm] = MemoryApi(sessions_routes)
    answer = api.handle(event, Ctx(), st)
    return answer["statusCode"], json.loads(answer["body"])


def test_the_record_route_answers_201_then_200_for_a_retry_and_413_for_a_turn_too_large() -> None:
    st = root({"limits": {"max_content_bytes": 10}})
    created = _post(st, {"role": "user", "content": "hello", "client_token": "tok-1"})
    replayed = _post(st, {"role": "user", "content": "hello", "client_token": "tok-1"})
    too_large = _post(
        st, {"turns": [{"role": "user", "content": "ok"}, {"role": "user", "content": "x" * 11}]}
    )
    assert (created[0], created[1]["turns"], created[1]["replayed"]) == (
        201,
        [{"turn_id": "s1:1", "seq": 1}],
        False,
    )
    assert (replayed[0], replayed[1]["turns"], replayed[1]["replayed"]) == (
        200,
        [{"turn_id": "s1:1", "seq": 1}],
        True,
    )
    assert too_large[0] == 413 and too_large[1]["error"]["code"] == "payload_too_large"
    assert too_large[1]["error"]["details"] == {"path": "turns.1.content", "max_content_bytes": 10}
    # a request without an authorizer context acts in the deployment's default tenant (a local stack)
    assert stored(st, scope=Scope(tenant=st.settings.tenant_default, user_id="ana")) == [(1, "hello")]
