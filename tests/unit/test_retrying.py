"""The one HTTP retry policy (mongomem.retrying): outcomes, backoff, Retry-After, attempts, deadline, async."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mongomem.retrying import DeadlineExceeded, RetriesExhausted, RetryPolicy, TransportFailure


class Status(Exception):
    def __init__(self, status: int, retry_after: float | None = None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.retry_after = retry_after


class FakeClock:
    """time.monotonic() that only moves when the policy sleeps (or a test says so)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    async def async_sleep(self, seconds: float) -> None:
        self.sleep(seconds)


def policy(clock: FakeClock, **kw: Any) -> RetryPolicy:
    params: dict[str, Any] = {"max_retries": 3, "base_delay": 0.1, "max_delay": 0.3, "rng": lambda: 1.0}
    params.update(kw)
    return RetryPolicy(sleep=clock.sleep, async_sleep=clock.async_sleep, clock=clock, **params)


def failing(*errors: BaseException, result: str = "ok") -> Any:
    """An attempt that raises the given errors in turn, then returns `result`; keeps its timeouts."""
    budgets: list[float | None] = []

    def attempt(budget: float | None) -> str:
        budgets.append(budget)
        if len(budgets) <= len(errors):
            raise errors[len(budgets) - 1]
        return result

    attempt.budgets = budgets  # type: ignore[attr-defined]
    return attempt


def test_backs_off_exponentially_within_bounds_and_caps_retry_after() -> None:
    clock = FakeClock()
    p = policy(clock, max_retries=4, max_retry_after=5)
    assert [p.backoff(n) for n in range(4)] == [0.1, 0.2, 0.3, 0.3]
    assert p.delay(0, retry_after=60) == 5
    attempt = failing(TimeoutError("slow"), TransportFailure("reset"))
    assert p.call(attempt) == "ok"
    assert clock.sleeps == [0.1, 0.2]


def test_jitter_is_full_between_zero_and_the_ceiling() -> None:
    p = RetryPolicy(base_delay=1.0, max_delay=8.0, rng=lambda: 0.25)
    assert [p.backoff(n) for n in range(5)] == [0.25, 0.5, 1.0, 2.0, 2.0]


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_transient_statuses_retry(status: int) -> None:
    clock = FakeClock()
    assert policy(clock).call(failing(Status(status))) == "ok"
    assert len(clock.sleeps) == 1


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422])
def test_client_errors_fail_at_once(status: int) -> None:
    clock = FakeClock()
    attempt = failing(Status(status))
    with pytest.raises(Status):
        policy(clock).call(attempt)
    assert len(attempt.budgets) == 1 and clock.sleeps == []


def test_a_request_that_must_not_run_twice_retries_only_refusals() -> None:
    p = RetryPolicy()
    assert p.retryable(Status(429), resend_safe=False) and p.retryable(Status(503), resend_safe=False)
    assert not p.retryable(Status(500), resend_safe=False)
    assert not p.retryable(Status(504), resend_safe=False)
    assert not p.retryable(TimeoutError(), resend_safe=False)
    assert p.retryable(ConnectionRefusedError()) and p.retryable(TimeoutError()) and p.retryable(Status(502))
    assert not p.retryable(KeyError("bug"))


def test_retry_after_is_honoured_instead_of_the_backoff() -> None:
    clock = FakeClock()
    assert policy(clock).call(failing(Status(429, retry_after=2.5), Status(503, retry_after=0))) == "ok"
    assert clock.sleeps == [2.5, 0]


def test_gives_up_after_max_retries_with_the_last_error() -> None:
    clock = FakeClock()
    attempt = failing(*(Status(503) for _ in range(10)))
    with pytest.raises(RetriesExhausted) as err:
        policy(clock, max_retries=2).call(attempt)
    assert err.value.attempts == 3 and len(attempt.budgets) == 3
    assert isinstance(err.value.last, Status) and "gave up after 3 attempts" in str(err.value)
    assert err.value.deadline is False


def test_each_attempt_gets_the_timeout_without_a_deadline() -> None:
    clock = FakeClock()
    attempt = failing(TimeoutError())
    policy(clock).call(attempt, timeout=7.0)
    assert attempt.budgets == [7.0, 7.0]


def test_a_deadline_cuts_the_attempt_timeout_to_the_time_left() -> None:
    # Given 1 s left and a 30 s per-attempt timeout
    clock = FakeClock()
    attempt = failing(TimeoutError())
    policy(clock).call(attempt, timeout=30.0, deadline=clock.now + 1.0)
    # Then the first attempt may use the whole second, the retry what is left after the 0.1 s wait
    assert attempt.budgets == [1.0, pytest.approx(0.9)]


def test_never_sleeps_past_the_deadline() -> None:
    # Given a server asking for a 10 s pause and 3 s left
    clock = FakeClock()
    start = clock.now
    attempt = failing(Status(429, retry_after=10))
    with pytest.raises(RetriesExhausted) as err:
        policy(clock, max_retry_after=20).call(attempt, deadline=start + 3.0)
    # Then it gives up at once instead of sleeping, saying the budget ran out
    assert clock.sleeps == [] and clock.now == start and len(attempt.budgets) == 1
    assert err.value.deadline is True and "time budget ran out" in str(err.value)


def test_never_starts_an_attempt_that_cannot_finish_before_the_deadline() -> None:
    # Given waits of 0.1, 0.2, 0.3 s and 0.42 s left: after two waits only 0.12 s remain, a third
    # wait of 0.3 s would end past the deadline
    clock = FakeClock()
    start = clock.now
    attempt = failing(*(TimeoutError() for _ in range(10)))
    with pytest.raises(RetriesExhausted) as err:
        policy(clock, max_retries=5).call(attempt, timeout=5.0, deadline=start + 0.42)
    assert err.value.attempts == 3 and clock.sleeps == [0.1, 0.2]
    assert clock.now <= start + 0.42
    assert all(b is not None for b in attempt.budgets)
    assert attempt.budgets[0] == pytest.approx(0.42) and attempt.budgets[2] == pytest.approx(0.12)


def test_a_deadline_already_passed_starts_nothing() -> None:
    clock = FakeClock()
    attempt = failing()
    with pytest.raises(DeadlineExceeded):
        policy(clock).call(attempt, deadline=clock.now - 1)
    assert attempt.budgets == []


def test_on_retry_hears_each_retry_with_its_wait() -> None:
    clock = FakeClock()
    heard: list[tuple[int, str, float]] = []
    policy(clock).call(
        failing(Status(500), Status(502)), on_retry=lambda n, exc, wait: heard.append((n, str(exc), wait))
    )
    assert heard == [(1, "HTTP 500", 0.1), (2, "HTTP 502", 0.2)]


def test_the_async_variant_has_the_same_outcomes_waits_and_deadline() -> None:
    clock = FakeClock()
    p = policy(clock, max_retries=5)
    calls: list[float | None] = []

    async def attempt(budget: float | None) -> str:
        calls.append(budget)
        if len(calls) < 3:
            raise Status(503)
        return "ok"

    assert asyncio.run(p.acall(attempt, timeout=4.0)) == "ok"
    assert clock.sleeps == [0.1, 0.2] and calls == [4.0, 4.0, 4.0]

    async def permanent(budget: float | None) -> str:
        raise Status(404)

    with pytest.raises(Status):
        asyncio.run(p.acall(permanent))

    async def throttled(budget: float | None) -> str:
        raise Status(429, retry_after=10)

    with pytest.raises(RetriesExhausted) as err:
        asyncio.run(p.acall(throttled, deadline=clock.now + 2))
    assert err.value.deadline is True and clock.sleeps == [0.1, 0.2]
