"""Process caches keyed by content (a turn's text, the words of a memory): forgotten when this process
erases a user, and by every process at least every `FORGET_SECONDS`, so an erased user's words outlive
their erasure in no cache for longer (issue 33's twenty-seventh probe: a warm process kept an erased
user's turn and words in two caches for hours)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, Generic, ParamSpec, TypeVar

FORGET_SECONDS = 600.0

P = ParamSpec("P")
R = TypeVar("R")
_clears: list[Callable[[], None]] = []
_forgotten_at = time.monotonic()


def _now() -> float:
    return time.monotonic()


class ContentCached(Generic[P, R]):
    """`fn` behind a `functools.lru_cache` that `forget` empties, and that empties itself every
    `FORGET_SECONDS` whoever calls it."""

    def __init__(self, fn: Callable[P, R], maxsize: int) -> None:
        self._cached: Any = functools.lru_cache(maxsize=maxsize)(fn)
        functools.update_wrapper(self, fn)
        _clears.append(self.cache_clear)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if _now() - _forgotten_at >= FORGET_SECONDS:
            forget()
        result: R = self._cached(*args, **kwargs)
        return result

    def cache_info(self) -> Any:
        return self._cached.cache_info()

    def cache_clear(self) -> None:
        self._cached.cache_clear()


def content_cache(maxsize: int) -> Callable[[Callable[P, R]], ContentCached[P, R]]:
    """Decorate a function keyed by content: `ContentCached`."""
    return lambda fn: ContentCached(fn, maxsize)


def forget() -> None:
    """Empty every content cache of this process."""
    global _forgotten_at
    _forgotten_at = _now()
    for clear in _clears:
        clear()
