"""Bounded retries with exponential backoff and full jitter, shared by every network provider."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """`max_retries` retries after the first attempt; the n-th wait is uniform in [0, min(cap, base*2^n)].

    A server's Retry-After is honoured up to `max_retry_after` seconds (a longer wait is the caller's
    queue's job, not a Lambda's)."""

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 20.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)
    rng: Callable[[], float] = field(default=random.random, compare=False, repr=False)

    @property
    def max_attempts(self) -> int:
        return self.max_retries + 1

    def backoff(self, retry_number: int) -> float:
        """Seconds to wait before retry `retry_number` (0-based)."""
        ceiling = min(self.max_delay, self.base_delay * (2**retry_number))
        return ceiling * self.rng()

    def delay(self, retry_number: int, retry_after: float | None = None) -> float:
        """The wait before a retry: the server's Retry-After when it gave one, else the backoff."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        return self.backoff(retry_number)


class RetriesExhausted(Exception):
    """Every attempt failed with a retryable error; `last` is the final error."""

    def __init__(self, attempts: int, last: BaseException) -> None:
        super().__init__(f"{last} (gave up after {attempts} attempts)")
        self.attempts = attempts
        self.last = last


def call_with_retries(
    op: Callable[[], T],
    policy: RetryPolicy,
    retryable: Callable[[BaseException], bool],
    retry_after: Callable[[BaseException], float | None] = lambda _exc: None,
    on_retry: Callable[[int, BaseException, float], None] | None = None,
) -> T:
    """Run `op`; retry it while it raises a retryable error, at most `policy.max_retries` times.

    A non-retryable error propagates at once; running out of attempts raises RetriesExhausted."""
    retry_number = 0
    while True:
        try:
            return op()
        except Exception as exc:
            if not retryable(exc):
                raise
            if retry_number >= policy.max_retries:
                raise RetriesExhausted(retry_number + 1, exc) from exc
            delay = policy.delay(retry_number, retry_after(exc))
            if on_retry is not None:
                on_retry(retry_number + 1, exc, delay)
            if delay > 0:
                policy.sleep(delay)
            retry_number += 1
