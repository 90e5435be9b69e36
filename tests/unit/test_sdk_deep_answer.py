"""The SDK wraps an answer nested deeper than the JSON decoder recurses (issue 33's ninth probe, finding 9)."""

from __future__ import annotations

import httpx
import pytest

from mongomem.client import MemoryClient, MemoryClientError

DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("status", [200, 500])
def test_an_answer_nested_too_deep_is_the_sdks_error(status: int) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=DEEP, headers={"Content-Type": "application/json"})

    with MemoryClient("http://memory.test", retries=0) as client:
        client._http = httpx.Client(transport=httpx.MockTransport(answer))
        with pytest.raises(MemoryClientError) as raised:
            client.status()
    assert raised.value.status == (None if status == 200 else 500)
    assert raised.value.code == ("invalid_response" if status == 200 else "http_500")
