"""The local stack's schedules (`Every`): a failing tick is logged and counted and the schedule goes on;
a tick that fails because the stack is stopping under it is not reported as a failure."""

from __future__ import annotations

import logging
import threading

import pytest

from mongomem.local.worker import Every


def test_a_failing_tick_is_logged_and_the_schedule_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    calls = threading.Semaphore(0)

    def tick() -> None:
        calls.release()
        raise RuntimeError("store unavailable")

    with caplog.at_level(logging.INFO):
        every = Every("scan", 0.01, tick).start()
        assert calls.acquire(timeout=5) and calls.acquire(timeout=5)  # it ran again after failing
        every.stop()
    assert every.errors >= 2
    assert any(
        r.levelno == logging.ERROR and "local scan tick failed" in r.getMessage() for r in caplog.records
    )


def test_a_tick_failing_while_the_stack_stops_is_no_error(caplog: pytest.LogCaptureFixture) -> None:
    running, stopping = threading.Event(), threading.Event()

    def tick() -> None:
        running.set()
        stopping.wait(5)
        raise RuntimeError("the database went away")  # as a stopped stack's database does

    with caplog.at_level(logging.INFO):
        every = Every("scan", 0.01, tick).start()
        assert running.wait(5)
        stopper = threading.Thread(target=every.stop)
        stopper.start()
        every.stopped.wait(5)
        stopping.set()
        stopper.join(5)
    assert not every.thread.is_alive()
    assert every.errors == 0
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
