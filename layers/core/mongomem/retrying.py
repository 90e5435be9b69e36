"""The one HTTP retry policy, on tenacity: the SDK and the HTTP providers (OpenAI-compatible, Voyage).

What retries: HTTP 408, 429, 500, 502, 503, 504, timeouts and refused or dropped connections. A
request that must not be sent twice (a non-idempotent write) retries only 429 and 503, the answers
of a server that refused it before doing anything. Waits grow exponentially with full jitter; a
server's Retry-After is honoured instead, up to `max_retry_after`. An optional deadline (a
`time.monotonic()` value) bounds the whole call: no sleep ends past it, no attempt starts without
`min_attempt_seconds` left, and each attempt's timeout is cut to the time that remains.

Bedrock does not use this: botocore's own retry configuration serves it (providers/llm_bedrock.py).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import tenacity

T = TypeVar("T")

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
# Statuses that say the server did nothing: safe to retry even for a request that must not run twice.
REFUSED_STATUSES = frozenset({429, 503})

Attempt = Callable[[float | None], T]  # called with the attempt's timeout (None: no limit)
OnRetry = Callable[[int, BaseException, float], None]  # (retry number, error, seconds to wait)


class TransportFailure(Exception):
    """No usable answer: a timeout, a refused, reset or truncated connection. Always worth a retry."""


class RetriesExhausted(Exception):
    """Every attempt failed with a retryable error, or the deadline left no room for another one."""

    def __init__(self, attempts: int, last: BaseException, deadline: bool = False) -> None:
        why = ": the time budget ran out" if deadline else ""
        super().__init__(f"{last} (gave up after {attempts} attempts{why})")
        self.attempts = attempts
        self.last = last
        self.deadline = deadline


class DeadlineExceeded(TimeoutError):
    """The deadline had passed (or left less than one attempt's minimum) before the first attempt."""


def is_transport_failure(exc: BaseException) -> bool:
    return isinstance(exc, TransportFailure | TimeoutError | ConnectionError) or (
        getattr(exc, "transport_failure", False) is True
    )


@dataclass(frozen=True)
class RetryPolicy:
    """`max_retries` retries after the first attempt; retry n (0-based) waits uniform [0, min(cap, base*2^n)]."""

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 20.0  # a longer wait is the caller's queue's job, not a Lambda's
    min_attempt_seconds: float = 0.05  # an attempt with less time than this left is not started
    statuses: frozenset[int] = RETRY_STATUSES
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)
    async_sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, compare=False, repr=False)
    rng: Callable[[], float] = field(default=random.random, compare=False, repr=False)
    clock: Callable[[], float] = field(default=time.monotonic, compare=False, repr=False)

    @property
    def max_attempts(self) -> int:
        return self.max_retries + 1

    def backoff(self, retry_number: int) -> float:
        """Seconds to wait before retry `retry_number` (0-based), without a Retry-After."""
        return float(min(self.max_delay, self.base_delay * (2**retry_number)) * self.rng())

    def delay(self, retry_number: int, retry_after: float | None = None) -> float:
        """The server's Retry-After when it gave one (capped), else the backoff."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        return self.backoff(retry_number)

    def retryable(self, exc: BaseException, *, resend_safe: bool = True) -> bool:
        """Whether `exc` is worth another attempt; `resend_safe=False` for a request that must not run twice."""
        if isinstance(exc, DeadlineExceeded):
            return False
        status = getattr(exc, "status", None)
        if isinstance(status, int):
            return status in (self.statuses if resend_safe else self.statuses & REFUSED_STATUSES)
        return resend_safe and is_transport_failure(exc)

    # -- running a call --------------------------------------------------------------------------------

    def call(
        self,
        attempt: Attempt[T],
        *,
        timeout: float | None = None,
        deadline: float | None = None,
        retryable: Callable[[BaseException], bool] | None = None,
        on_retry: OnRetry | None = None,
    ) -> T:
        """Run `attempt(timeout)` until it succeeds, fails for good, runs out of attempts or of time.

        A non-retryable error propagates as it is; running out raises RetriesExhausted."""
        retrying = tenacity.Retrying(sleep=self.sleep, **self._options(deadline, retryable, on_retry))
        try:
            return retrying(lambda: attempt(self._attempt_timeout(timeout, deadline)))
        except tenacity.RetryError as exc:
            raise self._exhausted(exc, deadline) from exc.last_attempt.exception()

    async def acall(
        self,
        attempt: Callable[[float | None], Awaitable[T]],
        *,
        timeout: float | None = None,
        deadline: float | None = None,
        retryable: Callable[[BaseException], bool] | None = None,
        on_retry: OnRetry | None = None,
    ) -> T:
        """`call` for a coroutine: the same outcomes, waits and deadline, sleeping with asyncio."""
        retrying = tenacity.AsyncRetrying(
            sleep=self.async_sleep, **self._options(deadline, retryable, on_retry)
        )

        async def once() -> T:
            return await attempt(self._attempt_timeout(timeout, deadline))

        try:
            return await retrying(once)
        except tenacity.RetryError as exc:
            raise self._exhausted(exc, deadline) from exc.last_attempt.exception()

    def _options(
        self,
        deadline: float | None,
        retryable: Callable[[BaseException], bool] | None,
        on_retry: OnRetry | None,
    ) -> dict[str, Any]:
        stop: Any = tenacity.stop_after_attempt(self.max_attempts)
        if deadline is not None:
            stop = stop | _StopBeforeDeadline(deadline, self)
        options: dict[str, Any] = {
            "stop": stop,
            "wait": self._wait,
            "retry": tenacity.retry_if_exception(retryable or self.retryable),
            "reraise": False,
        }
        if on_retry is not None:

            def before_sleep(state: tenacity.RetryCallState) -> None:
                exc = state.outcome.exception() if state.outcome else None
                if exc is not None:
                    on_retry(state.attempt_number, exc, state.upcoming_sleep)

            options["before_sleep"] = before_sleep
        return options

    def _wait(self, state: tenacity.RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        retry_after = getattr(exc, "retry_after", None)
        return self.delay(
            state.attempt_number - 1, retry_after if isinstance(retry_after, int | float) else None
        )

    def _attempt_timeout(self, timeout: float | None, deadline: float | None) -> float | None:
        if deadline is None:
            return timeout
        left = deadline - self.clock()
        if left < self.min_attempt_seconds:
            raise DeadlineExceeded(f"no time left for an attempt ({max(left, 0.0):.3f}s before the deadline)")
        return left if timeout is None else min(timeout, left)

    def _exhausted(self, exc: tenacity.RetryError, deadline: float | None) -> RetriesExhausted:
        last = exc.last_attempt
        error = last.exception() or RuntimeError("the last attempt returned no result")
        out_of_time = deadline is not None and last.attempt_number < self.max_attempts
        return RetriesExhausted(last.attempt_number, error, deadline=out_of_time)


class _StopBeforeDeadline(tenacity.stop.stop_base):
    """Stop when the next wait plus a minimal attempt would end past the deadline."""

    def __init__(self, deadline: float, policy: RetryPolicy) -> None:
        self.deadline = deadline
        self.policy = policy

    def __call__(self, state: tenacity.RetryCallState) -> bool:
        starts_at = self.policy.clock() + state.upcoming_sleep
        return starts_at + self.policy.min_attempt_seconds > self.deadline


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date); None when absent or bad."""
    import email.utils  # lazy: 5.7 ms

    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
