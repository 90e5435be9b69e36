"""Python clients for the mongomem HTTP API: `MemoryClient` (sync) and `AsyncMemoryClient` (async).

    from mongomem.client import MemoryClient

    mem = MemoryClient("http://127.0.0.1:3000")
    mem.record_turn("chat-1", "ana", "user", "I moved to Lisbon.")
    mem.search("ana", "where does Ana live?")

Both have the same methods, models and errors (`MemoryClientError`: status, code, message, details
from the API's `{"error": {...}}`), run on httpx (connection reuse, timeouts) and retry through
mongomem.retrying (429/503 honouring Retry-After; 5xx and lost connections only when re-sending is
safe). Record writes carry a client token, generated when not given, so a retry records nothing twice.
"""

from mongomem.client._calls import Call, Methods
from mongomem.client._transport import AsyncMemoryClient, Auth, MemoryClient, MemoryClientError, sigv4_auth

__all__ = ["AsyncMemoryClient", "Auth", "Call", "MemoryClient", "MemoryClientError", "Methods", "sigv4_auth"]
