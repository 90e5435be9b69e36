"""One small pool for the work a read runs beside its request's thread (a context block's sources, the
"not yet" figures of a search), shared by the process's requests."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
WORKERS = 6
_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def in_background(fn: Callable[..., T], *args: Any) -> Future[T]:
    """Run `fn(*args)` on the pool, with the caller's context variables (log keys, request)."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="read-source")
    return _pool.submit(contextvars.copy_context().run, fn, *args)
