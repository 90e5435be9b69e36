"""The twin's SQS clock: time moves on for the queues without the tests waiting for it.

SQS decides when a received message becomes visible again (the visibility timeout, 720 s on the
extraction queues) and when a message expires (MessageRetentionPeriod). moto's SQS, running inside the
twin's process, reads the time through `moto.sqs.models.unix_time[_millis]`; the twin replaces both
with the real time plus an offset that `advance(seconds)` moves forward, so "twelve minutes later"
costs nothing. Everything else (functions, MongoDB, the index) keeps the real clock.
"""

from __future__ import annotations

import threading
import time
from typing import Any


class QueueClock:
    def __init__(self) -> None:
        self.offset = 0.0
        self._lock = threading.Lock()
        self._installed = False

    def install(self) -> QueueClock:
        import moto.sqs.models as sqs_models

        if not self._installed:
            sqs_models.unix_time = self.unix_time  # type: ignore[assignment]
            sqs_models.unix_time_millis = self.unix_time_millis  # type: ignore[assignment]
            self._installed = True
        return self

    def unix_time(self, dt: Any = None) -> float:
        return time.time() + self.offset

    def unix_time_millis(self, dt: Any = None) -> float:
        return (time.time() + self.offset) * 1000.0

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.offset += seconds
