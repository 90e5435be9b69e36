"""The Python SDK and an answer without a body, or a redirect (issue 33's eleventh probe, finding 5): its own
error (`invalid_response`), never a raw pydantic error; a call that expects nothing still gets nothing."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from mongomem.client import AsyncMemoryClient, MemoryClient, MemoryClientError


def _answering(status: int, location: str | None = None) -> httpx.MockTransport:
    headers = {"Location": location} if location else {}
    return httpx.MockTransport(lambda request: httpx.Response(status, headers=headers))


@pytest.mark.parametrize("status", [200, 204, 302, 307])
def test_a_model_answered_without_a_body_is_the_sdks_error(status: int) -> None:
    # Given an API that answers with no content (or redirects elsewhere)
    with MemoryClient("http://memory.test", retries=0) as client:
        client._http = httpx.Client(transport=_answering(status, "http://elsewhere.test/v1/memories/mem-1"))
        # When a call expecting a memory is made, Then the SDK raises its own error
        with pytest.raises(MemoryClientError) as raised:
            client.get_memory("mem-1", user_id="u")
    assert raised.value.code == "invalid_response"


def test_the_async_client_wraps_an_empty_answer_too() -> None:
    async def run() -> None:
        async with AsyncMemoryClient("http://memory.test", retries=0) as client:
            client._http = httpx.AsyncClient(transport=_answering(204))
            client._loop = asyncio.get_running_loop()
            await client.get_memory("mem-1", user_id="u")

    with pytest.raises(MemoryClientError) as raised:
        asyncio.run(run())
    assert raised.value.code == "invalid_response"


def test_a_call_that_expects_nothing_still_accepts_no_content() -> None:
    with MemoryClient("http://memory.test", retries=0) as client:
        client._http = httpx.Client(transport=_answering(204))
        assert client.request("DELETE", "/v1/anything") is None
        assert client.status() == {}
