"""Importing history (issue 14): `mongomem import FILE` and POST /v1/import against the local stack over HTTP.

Past conversations are recorded with their original timestamps, cut into snapshots where the original
conversation went quiet (and not where it did not), extracted (memories observed at the original time),
found by recall after the scan indexes them, and importing the same file again adds nothing.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest

from mongomem.cli.main import main as cli_main
from mongomem.client import MemoryClient, MemoryClientError
from mongomem.local.stack import LocalStack
from mongomem.models.common import Scope
from mongomem.models.recall import RecalledTurn
from tests.helpers import local_stack

T = TypeVar("T")
# a LoCoMo-format conversation written for the tests (tests/data/locomo-mini/README.md)
LOCOMO = Path(__file__).resolve().parents[1] / "data" / "locomo-mini" / "ines-marco.json"
CONFIG = """
memory:
  snapshot: {max_messages: 50, idle_seconds: 1800}
  extraction: {enabled: [semantic, episodic]}
  providers:
    llm: {kind: offline}
    embeddings: {kind: hashing, dim: 64}
"""
MAY_8 = datetime(2023, 5, 8, 10, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    yield from local_stack(tmp_path_factory, "import", CONFIG, scan_seconds=0.5, poll_seconds=0.2)


@pytest.fixture
def client(stack: LocalStack) -> Iterator[MemoryClient]:
    with MemoryClient(stack.url, timeout=30, retries=2, backoff=0.01) as c:
        yield c


def eventually(probe: Callable[[], T], timeout: float = 30.0) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.3)


def history(now: datetime) -> list[dict[str, Any]]:
    """A trip planned over two days (a day's pause between), and a chat still going on right now."""

    def at(minutes: float, base: datetime = MAY_8) -> str:
        return (base + timedelta(minutes=minutes)).isoformat()

    return [
        {"session_id": "trip", "role": "user", "content": "I live in Porto.", "timestamp": at(0)},
        {"session_id": "trip", "role": "assistant", "content": "Porto is lovely.", "timestamp": at(1)},
        {"session_id": "trip", "role": "user", "content": "My home airport is OPO.", "timestamp": at(2)},
        # the next day: a new snapshot
        {
            "session_id": "trip",
            "role": "user",
            "content": "I booked the Berlin flight.",
            "timestamp": at(1440),
        },
        {"session_id": "trip", "role": "assistant", "content": "Enjoy Berlin!", "timestamp": at(1441)},
        {
            "session_id": "live",
            "role": "user",
            "content": "Testing the importer now.",
            "timestamp": at(-0.1, now),
        },
    ]


def write_jsonl(path: Path, turns: list[dict[str, Any]]) -> Path:
    # the file's order is not the time order: the import sorts each session by time
    path.write_text("".join(json.dumps(t) + "\n" for t in reversed(turns)))
    return path


def test_a_jsonl_history_keeps_its_times_follows_its_gaps_and_imports_once(
    stack: LocalStack, client: MemoryClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = f"ana-{uuid.uuid4().hex[:6]}"
    turns = history(datetime.now(UTC))
    path = write_jsonl(tmp_path / "history.jsonl", turns)
    # When the history is imported with the CLI
    assert cli_main(["import", str(path), "--user", user, "--base-url", stack.url]) == 0
    out = capsys.readouterr().out
    assert "imported 6 turns (0 already there) in 2 sessions: 2 snapshots" in out, out
    assert "1 recent turns left for the scan" in out
    # Then the turns are stored in time order with their original timestamps
    stored = client.list_turns("trip", user).turns
    assert [t.content for t in stored] == [t["content"] for t in turns[:5]]
    assert [t.timestamp for t in stored] == [datetime.fromisoformat(t["timestamp"]) for t in turns[:5]]
    # ... cut where the conversation paused for a day, not inside either day
    assert stack.services is not None
    snaps = stack.services.snapshots.of_session(Scope(tenant="default", user_id=user), "trip")
    assert sorted((s.from_seq, s.to_seq, s.reason) for s in snaps) == [(1, 3, "idle"), (4, 5, "idle")]
    # ... and the chat that is still going on is left to the scan (not cut before it goes idle)
    assert client.get_session("live", user).snapshots == []

    # When the same file is imported again, nothing new is recorded or promoted
    assert cli_main(["import", str(path), "--user", user, "--base-url", stack.url]) == 0
    assert "imported 0 turns (6 already there) in 2 sessions: 0 snapshots" in capsys.readouterr().out
    assert len(client.list_turns("trip", user).turns) == 5

    # Then extraction ran on the imported snapshots: the fact is dated by when it was said
    def porto() -> list[Any]:
        return [m for m in client.list_memories(user, type="semantic").memories if "Porto" in str(m.payload)]

    found = eventually(porto)
    assert found, client.list_memories(user).memories
    assert found[0].observed_at is not None and found[0].observed_at.date() == MAY_8.date()

    # ... and recall finds the imported turns once the scan has indexed them (back-filled)
    def berlin_turns() -> list[RecalledTurn]:
        found = client.recall(user_id=user, query="Berlin flight", top_k=3).threads
        return [t for g in found for t in g.turns if "Berlin flight" in t.content]

    berlin = eventually(berlin_turns)
    assert berlin and berlin[0].timestamp.isoformat().startswith("2023-05-09T10:00")


def test_a_locomo_conversation_imports_session_by_session(client: MemoryClient) -> None:
    user = f"ines-{uuid.uuid4().hex[:6]}"
    sample = json.loads(LOCOMO.read_text())
    sessions = [k for k in sample if re.fullmatch(r"session_\d+", k)]
    total = sum(len(sample[k]) for k in sessions)
    # When a LoCoMo sample is posted as it is
    report = client.import_history(user, data=sample, format="locomo")
    # Then every turn is recorded in its own session, promoted along the weeks between sessions
    assert (report.sessions, report.turns_recorded, report.already_imported) == (len(sessions), total, 0)
    assert report.snapshots >= len(sessions) and report.extraction_queued == 2 * report.snapshots
    first = client.list_turns("session_1", user).turns[0]
    assert first.name == sample["speaker_a"] and first.role == "user"
    assert first.timestamp == datetime(2024, 3, 3, 14, 15, tzinfo=UTC)  # "2:15 pm on 3 March, 2024"
    assert first.metadata == {"dia_id": "D1:1"}
    # ... and posting it again is a no-op
    again = client.import_history(user, data=sample, format="locomo")
    assert (again.turns_recorded, again.already_imported, again.snapshots) == (0, total, 0)


def test_a_bad_import_is_refused_whole_naming_what_is_wrong(client: MemoryClient) -> None:
    user = f"bob-{uuid.uuid4().hex[:6]}"
    good = json.dumps({"session_id": "s1", "role": "user", "content": "hi", "timestamp": MAY_8.isoformat()})
    missing_time = json.dumps({"session_id": "s1", "role": "user", "content": "no time"})
    with pytest.raises(MemoryClientError) as err:
        client.import_history(user, data=f"{good}\n{missing_time}\n", format="jsonl")
    assert err.value.status == 400 and "line 2" in err.value.message and "timestamp" in err.value.message
    # a turn over the content limit refuses the whole import before anything is written
    huge = {
        "session_id": "s2",
        "role": "user",
        "content": "x" * (1024 * 1024 + 1),
        "timestamp": MAY_8.isoformat(),
    }
    ok = {"session_id": "s1", "role": "user", "content": "fine", "timestamp": MAY_8.isoformat()}
    with pytest.raises(MemoryClientError) as err:
        client.import_history(user, format="turns", turns=[ok, huge])
    assert err.value.status == 413 and "turns.1.content" in json.dumps(err.value.details)
    with pytest.raises(MemoryClientError) as err:
        client.import_history(user, data={"not": "locomo"}, format="locomo")
    assert err.value.status == 400 and "speaker_a" in err.value.message
    with pytest.raises(MemoryClientError) as err:  # nothing was recorded: the session does not exist
        client.list_turns("s1", user)
    assert err.value.status == 404


def test_a_history_of_more_stretches_than_a_request_cuts_is_refused_whole_and_the_cli_splits_it(
    stack: LocalStack, client: MemoryClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33's thirteenth probe, finding 7: every stretch between idle gaps is recorded and promoted on
    its own, so 2,000 turns two hours apart held the memory API for minutes (a deployed stack's 30 s
    would have cut the request half written). One request cuts at most MAX_IMPORT_STRETCHES."""
    from mongomem.models.imports import MAX_IMPORT_STRETCHES

    user = f"gap-{uuid.uuid4().hex[:6]}"
    count = MAX_IMPORT_STRETCHES + 20
    turns = [
        {"session_id": "shifts", "role": "user", "content": f"shift note {n}",
         "timestamp": (MAY_8 + timedelta(hours=2 * n)).isoformat()}
        for n in range(count)
    ]  # fmt: skip
    # When one request carries more idle-separated stretches than a request may cut
    with pytest.raises(MemoryClientError) as refused:
        client.import_history(user, format="turns", turns=turns)
    # Then it is refused whole, before any write, saying how many it cut and how many it may
    assert (refused.value.status, refused.value.code) == (413, "payload_too_large")
    assert refused.value.details["stretches"] == count
    assert refused.value.details["max_stretches"] == MAX_IMPORT_STRETCHES
    with pytest.raises(MemoryClientError) as nothing:
        client.list_turns("shifts", user)
    assert nothing.value.status == 404  # no session was opened, no turn recorded
    # When the same history is imported with the CLI (the file's order is not the time order)
    path = write_jsonl(tmp_path / "shifts.jsonl", turns)
    assert cli_main(["import", str(path), "--user", user, "--base-url", stack.url]) == 0
    # Then it sends it in requests the API takes, and every turn is recorded once, in time order
    out = capsys.readouterr().out
    assert f"imported {count} turns (0 already there)" in out, out
    assert f"{count} snapshots" in out, out
    stored = client.list_turns("shifts", user, limit=count).turns
    assert [t.content for t in stored] == [t["content"] for t in turns]
