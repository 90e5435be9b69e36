"""The scan uses indexes and recall reads turns by id: their cost grows with due work, not with idle data.

Each test records the commands a repository sends (pymongo command monitoring on its own client) and
explains them on the real server (SecantusDB) with the hint they carried.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from pymongo import MongoClient, monitoring

from mongomem.adapters.mongo.driver import MongoDatabase
from mongomem.adapters.mongo.sessions import MongoSessionRepository
from mongomem.adapters.mongo.turns import MongoTurnRepository
from mongomem.models.common import Scope, utcnow
from mongomem.models.turns import NewTurn
from mongomem.shortterm.ports import NewBatch


class Recorder(monitoring.CommandListener):
    def __init__(self) -> None:
        self.on = False
        self.commands: list[dict[str, Any]] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if self.on:
            self.commands.append(dict(event.command))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


@pytest.fixture
def recorded(mongo_server: Any, db_name: str) -> Iterator[tuple[MongoDatabase, Recorder]]:
    recorder = Recorder()
    client: MongoClient[dict[str, Any]] = MongoClient(mongo_server.uri, event_listeners=[recorder])
    yield MongoDatabase(client, db_name), recorder
    client.drop_database(db_name)
    client.close()


def reads(commands: list[dict[str, Any]], collection: str) -> list[dict[str, Any]]:
    """The find/update/findAndModify commands on `collection` as (filter, hint, limit)."""
    out = []
    for cmd in commands:
        name = next(iter(cmd))
        if cmd[name] != collection:
            continue
        if name == "find":
            out.append({"filter": cmd.get("filter", {}), "hint": cmd.get("hint"), "limit": cmd.get("limit")})
        elif name == "findAndModify":
            out.append({"filter": cmd.get("query", {}), "hint": cmd.get("hint"), "limit": 1})
        elif name == "update":
            first = cmd["updates"][0]
            out.append({"filter": first["q"], "hint": first.get("hint"), "limit": 1})
    return out


def explain(database: MongoDatabase, collection: str, read: dict[str, Any]) -> tuple[str, int]:
    """(plan, keys or documents examined, capped at the command's limit) of one read."""
    inner: dict[str, Any] = {"find": collection, "filter": read["filter"]}
    if read["hint"]:
        inner["hint"] = read["hint"]
    reply = database.db.command({"explain": inner, "verbosity": "executionStats"})
    stage = reply["queryPlanner"]["winningPlan"]
    while "inputStage" in stage and stage.get("stage") != "IXSCAN":
        stage = stage["inputStage"]
    stats = reply["executionStats"]
    if stage.get("stage") != "IXSCAN":
        return "COLLSCAN", int(stats["totalDocsExamined"])
    keys = int(stats["totalKeysExamined"])
    return f"IXSCAN {stage['indexName']}", min(keys, read["limit"]) if read["limit"] else keys


def test_claiming_due_sessions_reads_only_due_keys_among_many_idle_sessions(recorded: Any) -> None:
    database, recorder = recorded
    sessions = MongoSessionRepository(database)
    sessions.ensure_indexes()
    now = utcnow()
    # Given 300 sessions quiet for less than the idle time and 2 that went quiet long ago
    for i in range(302):
        scope = Scope(tenant="t", user_id=f"u{i}")
        due_at = now - timedelta(hours=1) if i in (7, 250) else now + timedelta(hours=1)
        sessions.allocate(scope, "s", NewBatch(2, 20, None, None, due_at), now - timedelta(hours=2))
    # When a scanner claims until nothing is due
    recorder.on = True
    claimed = []
    while (session := sessions.claim_due("scanner", now, 60)) is not None:
        claimed.append(session.user_id)
    recorder.on = False
    # Then it claimed exactly the two due sessions
    assert sorted(claimed) == ["u250", "u7"]
    # and every query that looked for work read an index, two keys per due session at most
    looking = [r for r in reads(recorder.commands, "sessions") if "_id" not in r["filter"]]
    assert looking
    examined = 0
    for read in looking:
        plan, keys = explain(database, "sessions", read)
        assert plan.startswith("IXSCAN"), (read, plan)
        examined += keys
    assert examined <= 2 * len(claimed)


def test_turns_by_id_and_their_neighbours_are_read_from_the_id_index(recorded: Any) -> None:
    database, recorder = recorded
    turns = MongoTurnRepository(database)
    turns.ensure_indexes()
    now = utcnow()
    # Given 40 users with 50 turns in each of two sessions
    for u in range(40):
        for session in ("a", "b"):
            batch = [
                NewTurn.model_construct(
                    seq=seq,
                    role="user",
                    content=f"turn {seq}",
                    timestamp=now,
                    recorded_at=now,
                    tokens=3,
                    tool_calls=None,
                    tool_call_id=None,
                    name=None,
                    metadata=None,
                    client_token=None,
                    batch_index=None,
                    batch_size=None,
                    recall_indexed=None,
                )
                for seq in range(1, 51)
            ]
            turns.insert_new(Scope(tenant="t", user_id=f"u{u}"), session, batch)
    scope = Scope(tenant="t", user_id="u3")
    # When recall reads its matches by id and their neighbours in two sessions
    recorder.on = True
    matches = turns.by_ids(scope, [f"t|u3|a#{s}" for s in (5, 30)] + ["t|u4|a#5"])
    around = turns.in_ranges(scope, [("a", 4, 6), ("b", 9, 11), ("a", 6, 7)])
    recorder.on = False
    # Then it gets the caller's turns only, each once, in session and seq order
    assert sorted(t.seq for t in matches) == [5, 30]
    assert [(t.session_id, t.seq) for t in around] == [
        ("a", 4),
        ("a", 5),
        ("a", 6),
        ("a", 7),
        ("b", 9),
        ("b", 10),
        ("b", 11),
    ]
    # and each was one fetch by the turns' ids (the _id index on every server; an $or of ranges is a
    # collection scan on SecantusDB, whose explain, note, does not show the _id fast path)
    found = reads(recorder.commands, "turns")
    assert len(found) == 2
    for read, asked in zip(found, (3, 7), strict=True):
        assert set(read["filter"]) == {"_id", "tenant", "user_id"}
        assert len(read["filter"]["_id"]["$in"]) == asked


def test_recording_keeps_only_the_idle_and_size_mark_indexes_on_sessions(recorded: Any) -> None:
    database, _ = recorded
    sessions = MongoSessionRepository(database)
    # Given a deployment whose earlier version indexed the counters every recorded turn changes
    sessions.coll.create_index("pending", name="pending", partialFilterExpression={"pending": {"$gt": 0}})
    sessions.coll.create_index("unpromoted_tokens", name="unpromoted_tokens")
    # When its migration ensures the indexes
    sessions._create_indexes()
    # Then a turn rewrites one due-rule entry (idle_due_at); the size rule reads the marks only
    names = {ix["name"] for ix in sessions.coll.list_indexes()}
    assert {"idle_due", "size_due"} <= names
    assert not names & {"pending", "unpromoted_tokens"}


def test_the_recall_indexer_reads_its_lanes_through_the_queue_index(recorded: Any) -> None:
    from mongomem.retrieval.turn_indexing import Lanes

    database, recorder = recorded
    turns = MongoTurnRepository(database)
    turns.ensure_indexes()
    now = utcnow()

    def new(seq: int, queued: bool) -> NewTurn:
        return NewTurn(
            seq=seq,
            role="user",
            content=f"turn {seq}",
            timestamp=now,
            recorded_at=now,
            tokens=3,
            recall_indexed=not queued,
        )

    # Given 200 indexed turns of one user, and 12 users (in two tenants) with 10 queued turns each
    turns.insert_new(Scope(tenant="t", user_id="old"), "s", [new(i, False) for i in range(1, 201)])
    for u in range(12):
        turns.insert_new(
            Scope(tenant=f"t{u % 2}", user_id=f"u{u}"), "s", [new(i, True) for i in range(1, 11)]
        )
    # When the indexer finds its lanes and builds a batch of 24 turns
    recorder.on = True
    lanes = turns.recall_lanes(1000)
    batch = Lanes(turns, lanes).next_batch(24, 48, lambda t: 2)
    recorder.on = False
    # Then it served every user, two turns each
    assert len(lanes) == 12 and len(batch) == 24 and len({t.user_id for t in batch}) == 12
    # and the lanes came from one aggregate over the queue's index: the queued keys only
    [aggregate] = [c for c in recorder.commands if "aggregate" in c]
    reply = database.db.command(
        {
            "explain": {k: aggregate[k] for k in ("aggregate", "pipeline", "cursor", "hint")},
            "verbosity": "executionStats",
        }
    )
    cursor = reply["stages"][0]["$cursor"] if "stages" in reply else reply
    stage = cursor["queryPlanner"]["winningPlan"]
    while "inputStage" in stage and stage.get("stage") != "IXSCAN":
        stage = stage["inputStage"]
    assert (stage["stage"], stage["indexName"]) == ("IXSCAN", "recall_lanes")
    assert cursor["executionStats"]["totalKeysExamined"] <= 120
    # and each lane was read through the same index, a share at a time
    looking = reads(recorder.commands, "turns")
    assert len(looking) == 12, " ".join(f"{r['filter'].get('user_id')}/{r['limit']}" for r in looking)
    for read in looking:
        assert set(read["filter"]) == {"recall_indexed", "tenant", "user_id"}
        plan, keys = explain(database, "turns", read)
        assert plan == "IXSCAN recall_lanes" and keys <= 2


def test_the_former_oldest_first_recall_queue_index_is_dropped(recorded: Any) -> None:
    database, _ = recorded
    turns = MongoTurnRepository(database)
    # Given a deployment whose earlier version kept the recall queue oldest first across every user
    turns.coll.create_index(
        [("recall_indexed", 1), ("recorded_at", 1), ("seq", 1)],
        name="recall_unindexed",
        partialFilterExpression={"recall_indexed": False},
    )
    # When its migration ensures the indexes
    turns._create_indexes()
    # Then the queue is kept by user (the lanes) and the former index no longer costs every write
    names = {ix["name"] for ix in turns.coll.list_indexes()}
    assert "recall_lanes" in names and "recall_unindexed" not in names
