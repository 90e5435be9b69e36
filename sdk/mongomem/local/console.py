"""What `mongomem dev` prints: one readable line per request and per warning, details behind --log-level.

The functions log and measure as they do in Lambda (Powertools JSON lines, EMF metric lines on stdout),
which is what CloudWatch wants and what a person at a terminal does not. Here:

- every API request is one line: time, method, path, status, the error code of a refused one, duration;
- a log record is one line: time, level, message, its extra keys; an exception shows as `Type: message`
  (the full traceback at --log-level DEBUG);
- EMF metric lines are dropped, except at --log-level DEBUG.
"""

from __future__ import annotations

import io
import json
import logging
import sys
import threading
import time
import traceback
from typing import Any, TextIO

from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

# LogRecord attributes that are not a record's extra keys
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}
_POWERTOOLS = {
    "location",
    "service",
    "sampling_rate",
    "xray_trace_id",
    "cold_start",
    "function_name",
    "function_memory_size",
    "function_arn",
    "function_request_id",
    "correlation_id",
    "timestamp",
}


def clock(at: float | None = None) -> str:
    return time.strftime("%H:%M:%S", time.localtime(time.time() if at is None else at))


def request_line(method: str, target: str, status: int, ms: float, code: str | None = None) -> str:
    """`12:03:04 POST /v1/sessions/chat-1/turns 201 12 ms` (a refused one adds its error code)."""
    outcome = f"{status} {code}" if code else str(status)
    return f"{clock()} {method} {target} {outcome} {ms:.0f} ms"


class OneLineFormatter(LambdaPowertoolsFormatter):
    """A log record as one line; its traceback only when `tracebacks` is on. (A Powertools formatter,
    so the logger's append_keys and friends keep working; only the output changes.)"""

    def __init__(self, tracebacks: bool) -> None:
        super().__init__()
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        extras = {
            k: v
            for k, v in vars(record).items()
            if k not in _STANDARD and k not in _POWERTOOLS and not k.startswith("_")
        }
        line = f"{clock(record.created)} {record.levelname} {record.getMessage()}"
        if extras:
            line += " " + " ".join(f"{k}={_short(v)}" for k, v in extras.items())
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            if self.tracebacks:
                line += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
            else:
                line += (
                    f" ({type(exc).__name__}: {_short(str(exc), 200)}; --log-level DEBUG shows the traceback)"
                )
        return line


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class MetricFilter(io.TextIOBase):
    """stdout without the EMF metric lines Powertools prints (`{"_aws": ...}`)."""

    def __init__(self, target: TextIO) -> None:
        self.target = target
        self._partial = ""
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            lines = (self._partial + text).split("\n")
            self._partial = lines.pop()
            for line in lines:
                if not line.startswith('{"_aws"'):
                    self.target.write(line + "\n")
            self.target.flush()
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def fileno(self) -> int:
        return self.target.fileno()


def install(log_level: str) -> None:
    """Make this process's console readable: one-line logs, no metric lines below DEBUG."""
    from mongomem.observability import logger  # lazy: 1.1 ms

    debug = log_level.upper() == "DEBUG"
    handler = logger.registered_handler
    handler.setFormatter(OneLineFormatter(tracebacks=debug))
    if not debug and not isinstance(sys.stdout, MetricFilter):
        sys.stdout = MetricFilter(sys.stdout)
