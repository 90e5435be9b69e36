"""Threads, first-class (Mastra parity), through the SDK against the local stack's HTTP front and handlers.

Create with metadata (an initial `workingMemory` seeds the configured scope), update title and metadata,
list a user's threads, delete one (its turns and recall entries go), clone one (turns and thread working
memory copied). Real servers: SecantusDB (the session's server) and the embedded vector index.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.client import MemoryClient, MemoryClientError
from mongomem.local.stack import LocalStack
from mongomem.models.working_memory import Unchanged, WorkingMemoryState
from tests.conftest import load_event, load_function

CONFIG = """
memory:
  extraction: {enabled: []}
  snapshot: {max_messages: 50, idle_seconds: 3600}
  providers:
    llm: {kind: offline}
    embeddings: {kind: hashing, dim: 64}
  working_memory: {scope: %s}
"""

StackFactory = Callable[[str], tuple[LocalStack, MemoryClient]]


def content(state: WorkingMemoryState | Unchanged) -> str | None:
    """The working memory's content (a read without an etag always gets the state)."""
    assert isinstance(state, WorkingMemoryState)
    return state.content


@pytest.fixture
def start(mongo_server: Any, tmp_path: Path) -> Iterator[StackFactory]:
    """Start the local stack on the session's SecantusDB with working memory in the given scope."""
    stacks: list[LocalStack] = []

    def make(scope: str) -> tuple[LocalStack, MemoryClient]:
        data = tmp_path / f"stack-{len(stacks)}"
        data.mkdir()
        config = data / "project-config.yaml"
        config.write_text(CONFIG % scope)
        stack = LocalStack(
            data_dir=data,
            port=0,
            scan_seconds=3600,
            poll_seconds=3600,
            mongodb_uri=mongo_server.uri,
            config_file=config,
            environ={"MONGOMEM_DB_NAME": f"threads_{uuid.uuid4().hex[:10]}"},
        ).start()
        stacks.append(stack)
        return stack, MemoryClient(stack.url, timeout=20, retries=0)

    yield make
    for stack in stacks:
        db = stack.services.db if stack.services else None
        stack.stop()
        if db is not None:
            db.client.drop_database(db.name)


@pytest.fixture(scope="module")
def scan_fn() -> Any:
    return load_function("scan_sessions")


def uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def scan(scan_fn: Any, ctx: Any) -> dict[str, Any]:
    result: dict[str, Any] = scan_fn.lambda_handler(load_event("scan_schedule.json"), ctx)
    return result


def test_a_new_threads_working_memory_seeds_the_users_memory_in_resource_scope(start: StackFactory) -> None:
    _, client = start("resource")
    ana, bo = uid("ana"), uid("bo")
    # When Ana creates a thread whose metadata carries an initial working memory
    thread = client.create_thread(
        "trip-1", ana, title="Lisbon trip", metadata={"workingMemory": "# User\n- Name: Ana", "topic": "trip"}
    )
    # Then the user's (resource) working memory holds it, not the thread's metadata
    assert content(client.get_working_memory(ana)) == "# User\n- Name: Ana"
    assert thread.title == "Lisbon trip" and thread.metadata == {"topic": "trip"}
    assert content(client.get_working_memory(ana, thread_id="trip-2")) == "# User\n- Name: Ana"
    # and nobody else's memory changed
    assert content(client.get_working_memory(bo)) is None
    # Creating it twice is refused, and nothing changes
    with pytest.raises(MemoryClientError) as refused:
        client.create_thread("trip-1", ana, metadata={"workingMemory": "# User\n- Name: Someone else"})
    assert refused.value.status == 409
    assert content(client.get_working_memory(ana)) == "# User\n- Name: Ana"


def test_a_new_threads_working_memory_seeds_its_own_memory_in_thread_scope(start: StackFactory) -> None:
    _, client = start("thread")
    ana = uid("ana")
    client.create_thread("trip-1", ana, metadata={"workingMemory": "- Topic: Porto"})
    # Then the thread's memory holds the seed, another thread's and the user's do not
    assert content(client.get_working_memory(ana, thread_id="trip-1")) == "- Topic: Porto"
    assert content(client.get_working_memory(ana, thread_id="trip-2")) is None
    assert content(client.get_working_memory(ana, scope="resource")) is None
    assert client.get_thread("trip-1", ana).metadata["workingMemory"] == "- Topic: Porto"


@pytest.mark.parametrize("scope", ["resource", "thread"])
def test_updating_title_and_metadata_and_working_memory_through_the_thread(
    start: StackFactory, scope: str
) -> None:
    _, client = start(scope)
    ana = uid("ana")
    client.create_thread("t1", ana, title="Draft", metadata={"topic": "flights", "stage": 1})
    # When the title and metadata change (working memory not mentioned)
    renamed = client.update_thread("t1", ana, title="Flights to Porto", metadata={"topic": "porto"})
    # Then both changed (the metadata replaced whole)
    assert renamed.title == "Flights to Porto" and renamed.metadata == {"topic": "porto"}
    assert client.get_thread("t1", ana).updated_at >= renamed.created_at
    # When the metadata carries a working memory
    updated = client.update_thread("t1", ana, metadata={"topic": "porto", "workingMemory": "- Seat: aisle"})
    # Then the configured scope's working memory is replaced, the title kept
    assert content(client.get_working_memory(ana, thread_id="t1")) == "- Seat: aisle"
    assert updated.title == "Flights to Porto"
    other = "thread" if scope == "resource" else "resource"
    assert content(client.get_working_memory(ana, thread_id="t1", scope=other)) is None
    # and a later metadata change without it keeps the working memory
    client.update_thread("t1", ana, metadata={"topic": "lisbon"})
    assert content(client.get_working_memory(ana, thread_id="t1")) == "- Seat: aisle"
    assert client.get_thread("t1", ana).metadata.get("topic") == "lisbon"
    # An unknown thread is a 404
    with pytest.raises(MemoryClientError) as missing:
        client.update_thread("nope", ana, title="x")
    assert missing.value.status == 404


def test_a_users_threads_are_listed_most_recently_updated_first_in_pages(start: StackFactory) -> None:
    _, client = start("resource")
    ana, bo = uid("ana"), uid("bo")
    for name in ("a", "b", "c"):
        client.create_thread(name, ana, title=name.upper())
    client.create_thread("bo-thread", bo)
    client.update_thread("a", ana, title="A again")  # now the most recently updated
    # When Ana lists her threads two at a time
    first = client.list_threads(ana, limit=2)
    second = client.list_threads(ana, limit=2, cursor=first.next_cursor)
    # Then she sees her three, newest update first, and never Bo's
    assert [t.thread_id for t in first.threads] == ["a", "c"]
    assert [t.thread_id for t in second.threads] == ["b"] and second.next_cursor is None
    assert [t.thread_id for t in client.list_threads(bo).threads] == ["bo-thread"]


def test_sessions_recorded_without_a_thread_are_threads_too(start: StackFactory) -> None:
    """Issue 25: list_threads omitted the sessions an agent recorded turns in without creating a thread."""
    _, client = start("resource")
    ana = uid("ana")
    client.create_thread("planned", ana, title="Planned")
    for name in ("chat-1", "chat-2", "chat-3"):
        client.record_turn(name, ana, "user", f"hello from {name}")
    client.record_turn("planned", ana, "user", "turns in a created thread")
    # When Ana's threads are listed two at a time
    first = client.list_threads(ana, limit=2)
    rest = client.list_threads(ana, limit=2, cursor=first.next_cursor)
    last = client.list_threads(ana, limit=2, cursor=rest.next_cursor) if rest.next_cursor else None
    listed = [t.thread_id for page in (first, rest, last) if page for t in page.threads]
    # Then every session with turns is there once, newest first, beside the created thread
    assert sorted(listed) == ["chat-1", "chat-2", "chat-3", "planned"] and len(listed) == 4
    assert listed.index("chat-3") < listed.index("chat-2") < listed.index("chat-1")
    # ... readable as a thread, and renaming one gives it a record without touching its turns
    assert client.get_thread("chat-2", ana).title is None
    assert client.update_thread("chat-2", ana, title="Second chat").title == "Second chat"
    assert [t.content for t in client.list_turns("chat-2", ana).turns] == ["hello from chat-2"]
    titles = {t.thread_id: t.title for t in client.list_threads(ana, limit=10).threads}
    assert titles["chat-2"] == "Second chat" and len(titles) == 4
    with pytest.raises(MemoryClientError) as missing:
        client.get_thread("never", ana)
    assert missing.value.status == 404


def test_deleting_a_thread_removes_its_turns_recall_entries_and_memory(
    start: StackFactory, scan_fn: Any, ctx: Any
) -> None:
    stack, client = start("thread")
    ana = uid("ana")
    client.create_thread("doomed", ana, metadata={"workingMemory": "- Note: gone soon"})
    client.record_turns(
        "doomed",
        ana,
        [
            {"role": "user", "content": "My locker code is 4711."},
            {"role": "assistant", "content": "Noted, locker 4711."},
        ],
    )
    client.record_turn("kept", ana, "user", "My bike is a green Brompton.")
    scan(scan_fn, ctx)
    index = stack.services.vector_index if stack.services else None
    assert index is not None and index.count(kind="turn") == 6
    assert client.recall(ana, "locker code").matched
    # When the thread is deleted
    result = client.delete_thread("doomed", ana)
    # Then its turns, recall entries and thread working memory are gone; the other thread is untouched
    assert result.deleted["turns"] == 2 and result.deleted["thread"] == 1
    assert index.count(kind="turn") == 2
    assert all(not t.startswith("doomed:") for t in client.recall(ana, "locker code").turn_ids)
    for read in (lambda: client.list_turns("doomed", ana), lambda: client.get_thread("doomed", ana)):
        with pytest.raises(MemoryClientError) as gone:
            read()
        assert gone.value.status == 404
    assert (
        stack.services is not None
        and stack.services.db["turns"].count_documents({"session_id": "doomed"}) == 0
    )
    assert content(client.get_working_memory(ana, thread_id="doomed")) is None
    assert [t.content for t in client.list_turns("kept", ana).turns] == ["My bike is a green Brompton."]
    with pytest.raises(MemoryClientError) as again:
        client.delete_thread("doomed", ana)
    assert again.value.status == 404


def test_cloning_a_thread_copies_its_turns_and_thread_working_memory(
    start: StackFactory, scan_fn: Any, ctx: Any
) -> None:
    _, client = start("thread")
    ana, bo = uid("ana"), uid("bo")
    client.create_thread("src", ana, title="Packing", metadata={"workingMemory": "- Bag: blue", "x": 1})
    client.record_turns(
        "src",
        ana,
        [
            {"role": "user", "content": "Pack the snorkel and the fins."},
            {"role": "assistant", "content": "Snorkel and fins are packed."},
            {"role": "tool", "content": '{"ok": true}', "tool_call_id": "c1"},
        ],
    )
    # When Ana clones it
    clone = client.clone_thread("src", ana, new_thread_id="src-copy")
    # Then the new thread has the same turns (seqs, roles, content, timestamps) and working memory
    source_turns = client.list_turns("src", ana).turns
    copied = client.list_turns("src-copy", ana).turns
    assert clone.turns == 3 and clone.thread.thread_id == "src-copy" and clone.thread.title == "Packing"
    assert [(t.seq, t.role, t.content, t.timestamp) for t in copied] == [
        (t.seq, t.role, t.content, t.timestamp) for t in source_turns
    ]
    assert content(client.get_working_memory(ana, thread_id="src-copy")) == "- Bag: blue"
    assert clone.thread.metadata["x"] == 1 and clone.thread.metadata["clone"]["source_thread_id"] == "src"
    # and the two evolve separately
    client.update_working_memory(ana, content="- Bag: red", thread_id="src-copy")
    assert content(client.get_working_memory(ana, thread_id="src")) == "- Bag: blue"
    # The clone's turns are recallable within the clone's thread once indexed
    scan(scan_fn, ctx)
    found = client.recall(ana, "snorkel", thread="src-copy", scope="thread")
    assert found.matched and all(t.startswith("src-copy:") for t in found.turn_ids)
    # A taken id, an unknown source, or another user's thread are refused
    calls: tuple[tuple[Callable[[], object], int], ...] = (
        (lambda: client.clone_thread("src", ana, new_thread_id="src-copy"), 409),
        (lambda: client.clone_thread("nope", ana), 404),
        (lambda: client.clone_thread("src", bo), 404),
    )
    for call, status in calls:
        with pytest.raises(MemoryClientError) as refused:
            call()
        assert refused.value.status == status
    # Without an id, one is generated
    generated = client.clone_thread("src", ana)
    assert generated.thread.thread_id.startswith("src-clone-") and generated.turns == 3
