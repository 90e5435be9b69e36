"""The SDK stops at a list cursor that does not move (issue 33's tenth probe, finding 8)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import httpx
import pytest

from mongomem.client import AsyncMemoryClient, MemoryClient, MemoryClientError

MEMORY = {
    "memory_id": "mem-1",
    "lineage_id": "lin-1",
    "version": 1,
    "type": "semantic",
    "status": "active",
    "payload": {"subject": "user", "attribute": "city", "value": "Oslo"},
    "text": "user city: Oslo",
    "reinforcement_count": 1,
    "created_at": "2026-01-01T00:00:00+00:00",
}


def pages(cursors: list[str | None]) -> tuple[list[str | None], Callable[[httpx.Request], httpx.Response]]:
    """A server answering the n-th list with one memory and the n-th of `cursors` as its next cursor."""
    asked: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.params.get("cursor"))
        if len(asked) > 10:
            return httpx.Response(400, json={"error": {"code": "stop", "message": "enough", "details": None}})
        body = {"memories": [MEMORY], "next_cursor": cursors[min(len(asked), len(cursors)) - 1]}
        return httpx.Response(200, content=json.dumps(body), headers={"Content-Type": "application/json"})

    return asked, answer


@pytest.mark.parametrize(
    "cursors", [["2026-01-02T00:00:00+00:00"], ["2026-01-02T00:00:00+00:00", "2026-01-01T00:00:00+00:00"] * 3]
)
def test_a_cursor_asked_with_already_is_the_sdks_error(cursors: list[str | None]) -> None:
    # Given a server whose next cursor never moves, or goes back to one it gave
    asked, answer = pages(cursors)
    with MemoryClient("http://memory.test", retries=0) as client:
        client._http = httpx.Client(transport=httpx.MockTransport(answer))
        # When every memory is iterated, Then the SDK's own error ends it, not the server
        with pytest.raises(MemoryClientError) as raised:
            list(client.iter_memories("alice"))
    assert raised.value.code == "invalid_response"
    assert len(asked) == len(set(cursors)) + 1, asked


def test_the_async_client_stops_too() -> None:
    asked, answer = pages(["2026-01-02T00:00:00+00:00"])

    async def run() -> None:
        async with AsyncMemoryClient("http://memory.test", retries=0) as client:
            client._http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
            client._loop = asyncio.get_running_loop()  # the client keeps a pool per event loop
            async for _ in client.iter_memories("alice"):
                pass

    with pytest.raises(MemoryClientError) as raised:
        asyncio.run(run())
    assert (raised.value.code, len(asked)) == ("invalid_response", 2)


def test_a_moving_cursor_is_followed_to_the_end() -> None:
    asked, answer = pages(["2026-01-02T00:00:00+00:00", "2026-01-01T00:00:00+00:00", None])
    with MemoryClient("http://memory.test", retries=0) as client:
        client._http = httpx.Client(transport=httpx.MockTransport(answer))
        assert len(list(client.iter_memories("alice"))) == 3
    assert asked == [None, "2026-01-02T00:00:00+00:00", "2026-01-01T00:00:00+00:00"]
