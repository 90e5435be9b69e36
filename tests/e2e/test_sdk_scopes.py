"""Scopes, preferences and filters through the SDK against the local stack (offline extractor), as `make dev`
runs it: conversations become org terms two users reinforce, an agent's own preferences, filtered searches."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest

from mongomem.client import AsyncMemoryClient, MemoryClient, MemoryClientError
from mongomem.local.stack import LocalStack
from tests.helpers import local_stack

CONFIG = """
memory:
  snapshot: {max_messages: 50, idle_seconds: 3600}
  extraction: {enabled: [semantic, taxonomic, preference]}
  metadata: {partition_keys: [region]}
  providers:
    llm: {kind: offline}
    embeddings: {kind: hashing, dim: 64}
"""

T = TypeVar("T")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    yield from local_stack(tmp_path_factory, "scopes", CONFIG, scan_seconds=60, poll_seconds=0.2)


@pytest.fixture
def client(stack: LocalStack) -> MemoryClient:
    return MemoryClient(stack.url, timeout=10, retries=3, backoff=0.01)


def uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def eventually(probe: Callable[[], T], timeout: float = 30.0) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def say(client: MemoryClient, user: str, text: str, agent_id: str | None = None) -> None:
    session = uid("s")
    client.record_turns(
        session,
        user,
        [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}],
        agent_id=agent_id,
    )
    assert client.flush(session, user).snapshot is not None


def test_two_users_conversations_make_one_org_term_every_user_finds(client: MemoryClient) -> None:
    term = f"QR{uuid.uuid4().hex[:6].upper()}"  # letters first: "Q" + six digits reads as no term
    ana, bob, carol = uid("ana"), uid("bob"), uid("carol")
    # Given two users who say what the same term means, in their own conversations
    say(client, ana, f"{term} means quarterly review of the budget.")
    say(client, bob, f"{term} means quarterly review of the budget.")

    # When the extraction has run, Then one org memory holds both users' evidence
    def reinforced() -> list[Any]:
        found = client.search(carol, term, types=["taxonomic"], visibility="org").results
        return [r for r in found if r.payload["term"] == term and r.reinforcement_count == 2]

    hits = eventually(reinforced)
    assert len(hits) == 1 and hits[0].visibility == "org"
    memory = client.get_memory(hits[0].memory_id, carol).memory
    # carol learns that two statements back it, never whose (each user sees only their own)
    assert [e.user_id for e in memory.evidence] == [None, None] and all(
        e.observed_at for e in memory.evidence
    )
    for user in (ana, bob):
        seen = client.get_memory(hits[0].memory_id, user).memory.evidence
        assert sorted(e.user_id or "" for e in seen) == sorted(["", user])
    # ... a third user sees it beside nothing private of the others
    assert client.search(carol, term, visibility="private").results == []
    # ... and erasing ana keeps the term (bob said it too) with bob's evidence only
    erased = client.request("DELETE", f"/v1/users/{ana}")
    assert erased["erased"]["org_memories_updated"] == 1
    kept = client.get_memory(hits[0].memory_id, bob).memory
    assert [e.user_id for e in kept.evidence] == [bob] and kept.reinforcement_count == 1


def test_an_agents_conversation_gives_it_its_own_preferences(client: MemoryClient) -> None:
    user = uid("pat")
    say(client, user, "I prefer window seats. Please answer in Portuguese.", agent_id="travel")
    prefs = eventually(lambda: client.list_memories(user, type="preference").memories)
    assert sorted(p.payload["preference"] for p in prefs) == ["answers in Portuguese", "window seats"]
    assert {p.agent_id for p in prefs} == {"travel"} and {p.visibility for p in prefs} == {"private"}
    # the agent finds them, another agent of the same user does not
    assert len(client.search(user, "window seats", agent_id="travel", types=["preference"]).results) >= 1
    assert client.search(user, "window seats", agent_id="support", types=["preference"]).results == []


def test_filters_and_domains_through_the_sdk(client: MemoryClient) -> None:
    user = uid("lee")
    client.create_memory(
        user,
        "taxonomic",
        {"term": "gate", "definition": "where you board", "domain": "aviation"},
        visibility="private",
    )
    client.create_memory(
        user, "semantic", {"subject": "user", "attribute": "gate", "value": "B12"}, metadata={"region": "eu"}
    )
    assert [r.payload["term"] for r in client.search(user, "gate", domain="aviation").results] == ["gate"]
    eu = client.search(user, "gate", metadata={"region": "eu"}).results
    assert [r.payload.get("value") for r in eu] == ["B12"]
    listed = client.list_memories(user, metadata={"region": "eu"}).memories
    assert [m.payload["value"] for m in listed] == ["B12"]
    assert {"domain": "aviation", "terms": 1} in client.list_domains(user).model_dump()["domains"]
    with pytest.raises(MemoryClientError) as refused:
        client.search(user, "gate", metadata={"team": "x"})
    assert refused.value.status == 400 and "metadata.team" in str(refused.value.details)


def test_the_async_client_takes_the_same_filters(stack: LocalStack) -> None:
    user = uid("ash")

    async def scenario() -> None:
        async with AsyncMemoryClient(stack.url, retries=2, backoff=0.01) as mem:
            await mem.create_memory(
                user, "preference", {"category": "drink", "preference": "green tea"}, agent_id="barista"
            )
            found = await mem.search(user, "green tea", agent_id="barista", types=["preference"])
            assert [r.agent_id for r in found.results] == ["barista"]
            other = await mem.search(user, "green tea", agent_id="cashier", types=["preference"])
            assert other.results == []
            page = await mem.list_memories(user, agent_id="barista", type="preference")
            assert [m.payload["preference"] for m in page.memories] == ["green tea"]

    asyncio.run(scenario())
