"""The time a request may still spend on its dependencies (Bedrock, the search index).

API Gateway answers a client 503 when an integration has not answered within 30 s, and the function
runs on unseen. So an API request carries a deadline: MemoryApi.handle opens `request_budget` for it,
and the providers cut their timeouts and retries to end before it (a clear 503 of our own, with
Retry-After, instead of API Gateway's). Background work (extraction, the scan) sets its own deadlines.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# What an API request may spend: API Gateway's 30 s less the answer's own time and a cold start's share.
API_BUDGET_SECONDS = 25.0

_deadline: ContextVar[float | None] = ContextVar("mongomem_request_deadline", default=None)


def request_deadline() -> float | None:
    """The current request's deadline (a time.monotonic() value), None outside a request."""
    return _deadline.get()


@contextmanager
def request_budget(seconds: float) -> Iterator[float]:
    """Run a request with `seconds` to spend (a tighter enclosing deadline wins)."""
    deadline = time.monotonic() + max(0.0, seconds)
    outer = _deadline.get()
    if outer is not None:
        deadline = min(deadline, outer)
    token = _deadline.set(deadline)
    try:
        yield deadline
    finally:
        _deadline.reset(token)
