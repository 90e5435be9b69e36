"""Every API method once, as a request spec (`Call`): what to send and how to read the answer.

`MemoryClient` (sync) and `AsyncMemoryClient` (async) both get their methods from `Methods` through the
`endpoint` descriptor, so request building, response models and retry safety exist in one copy; the
clients only execute calls (mongomem.client._transport).

A method whose route takes a request body names its request model with `takes`: the body is the
method's arguments that are the model's fields (`_fields`), its docstring lists each parameter with the
model field's description, and tests/unit/test_api_surface.py fails while its parameters and the
model's fields differ (a field added to the API must reach the SDK).

`Call`, `endpoint` and `takes` live in `_call`; the methods, one class per API area that `Methods`
joins, in `_sessions` (turns, sessions, threads), `_memories` (memories, procedures, search, import)
and `_context` (recall, the context block, working memory).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mongomem.client._call import Call, Takes, _as_dict, endpoint, json_default, takes
from mongomem.client._context import ContextMethods
from mongomem.client._memories import MemoryMethods, next_memories_page
from mongomem.client._sessions import SessionMethods

__all__ = ["Call", "Methods", "Takes", "endpoint", "json_default", "next_memories_page", "takes"]


class Methods(SessionMethods, MemoryMethods, ContextMethods):
    """The memory API's methods; each returns the API's pydantic model (dicts where none exists). One
    class per area (turns and threads, memories, context and working memory) holds them; the service's own
    methods are here."""

    # -- the service -----------------------------------------------------------------------------------

    @endpoint
    def status() -> Call[dict[str, Any]]:
        """Readiness (LLM and embedding providers, with reasons), configuration and backlog.

        A dict on purpose: the operator's status document grows with the service (docs/sdk.md)."""
        return Call("GET", "/v1/status", parse=_as_dict)

    @endpoint
    def request(
        method: str,
        path: str,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        *,
        safe: bool | None = None,
    ) -> Call[Any]:
        """Call any route; returns the decoded JSON body. `safe` marks a request that may be re-sent."""
        return Call(method.upper(), path, query, body, safe=safe)
