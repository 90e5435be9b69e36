"""The recall indexer's batches: every user's lane in turn, bounded in turns and in texts to embed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mongomem.models.common import Scope, utcnow
from mongomem.models.turns import NewTurn, Turn
from mongomem.retrieval.turn_indexing import Lanes, chunks
from tests.fakes import InMemoryTurnRepository


def queue(repo: Any, scope: Scope, session: str, contents: list[str], at_s: int) -> None:
    start = utcnow() - timedelta(hours=1) + timedelta(seconds=at_s)
    repo.insert_new(
        scope,
        session,
        [
            NewTurn(
                seq=i + 1,
                role="user",
                content=c,
                timestamp=start,
                recorded_at=start,
                tokens=3,
                recall_indexed=False,
            )
            for i, c in enumerate(contents)
        ],
    )


def texts_of(turn: Turn) -> int:  # as the indexer counts: own chunks (at most 4 here) and the context
    return len(chunks(turn.content, 100, 0, 4)) + 1


def drain(repo: Any, limit: int, max_texts: int) -> list[list[Turn]]:
    """Batches until the queue is empty, each marked indexed before the next is built (as the indexer)."""
    lanes = Lanes(repo, repo.recall_lanes(1000))
    out = []
    while batch := lanes.next_batch(limit, max_texts, texts_of):
        out.append(batch)
        repo.set_recall_state([t.id for t in batch], indexed=True)
    return out


def test_many_users_each_wait_no_more_than_their_share_of_batches() -> None:
    repo = InMemoryTurnRepository()
    # Given 20 users with a backlog of 10 turns each, recorded one user after the other
    for u in range(20):
        queue(repo, Scope(tenant=f"t{u % 3}", user_id=f"u{u}"), "s", [f"turn {i}" for i in range(10)], u)
    # When batches of 8 turns are built until the queue is empty
    batches = drain(repo, 8, 16)
    # Then every turn was taken exactly once, in full batches
    taken = [t.id for b in batches for t in b]
    assert len(taken) == len(set(taken)) == 200
    assert all(len(b) == 8 for b in batches)
    # and every user had a turn within the first 20 / 8 -> 3 batches (not after the others' backlogs)
    first = {t.user_id for b in batches[:3] for t in b}
    assert len(first) == 20
    # and each user's turns went oldest first
    for u in range(20):
        seqs = [t.seq for b in batches for t in b if t.user_id == f"u{u}"]
        assert seqs == sorted(seqs)


def test_a_long_turn_takes_the_room_of_the_turns_it_costs_as_much_as() -> None:
    repo = InMemoryTurnRepository()
    # Given ana's long turn (4 chunks after the cap: 5 texts) and backlog, then bo's one turn
    queue(repo, Scope(tenant="a", user_id="ana"), "s", ["x " * 5000, *[f"turn {i}" for i in range(30)]], 0)
    queue(repo, Scope(tenant="b", user_id="bo"), "s", ["hello"], 10)
    batches = drain(repo, 8, 16)
    # Then bo is in the first batch, and no batch embeds more than its 16 texts
    assert "bo" in {t.user_id for t in batches[0]}
    assert all(sum(texts_of(t) for t in b) <= 16 for b in batches)
    assert sum(len(b) for b in batches) == 32


def test_a_turn_costing_more_than_a_batch_goes_alone() -> None:
    repo = InMemoryTurnRepository()
    queue(repo, Scope(tenant="a", user_id="ana"), "s", ["x " * 5000, "after"], 0)
    batches = drain(repo, 8, 3)
    assert [len(b) for b in batches] == [1, 1]


def test_a_text_over_the_cap_keeps_its_head_and_tail() -> None:
    text = " ".join(f"w{i:04d}" for i in range(2000))  # 12,000 characters
    pieces = chunks(text, 1000, 0, 8)
    assert len(pieces) == 8
    assert pieces[0].startswith("w0000") and pieces[-1].endswith("w1999")
    assert pieces[:6] == chunks(text, 1000, 0)[:6]
    assert chunks("short", 1000, 0, 8) == ["short"]
