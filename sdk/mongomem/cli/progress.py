"""Progress of long CLI work: a live bar on a terminal (rich), one plain line per step elsewhere (CI, logs)."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any, TextIO


class Bar:
    """`with Bar("re-embedded", "memory versions") as bar: bar.update(done, total)`."""

    def __init__(
        self, verb: str, unit: str, stream: TextIO | None = None, every_seconds: float = 2.0
    ) -> None:
        self.verb, self.unit = verb, unit
        self.stream = stream or sys.stdout
        self.every = every_seconds
        self._rich: Any = None
        self._task: Any = None
        self._last_line = 0.0
        self._last: tuple[int, int] | None = None

    def __enter__(self) -> Bar:
        if self.stream.isatty():
            from rich.console import Console  # lazy: 16 ms
            from rich.progress import (  # lazy: 24 ms
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self._rich = Progress(
                TextColumn(f"{self.verb} {{task.completed}} of {{task.total}} {self.unit}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
            )
            self._rich.start()
            self._task = self._rich.add_task(self.verb, total=None)
        return self

    def update(self, done: int, total: int) -> None:
        self._last = (done, total)
        if self._rich is not None:
            self._rich.update(self._task, completed=done, total=total)
            return
        now = time.monotonic()
        if done in (0, total) or now - self._last_line >= self.every:
            self._last_line = now
            share = f" ({100 * done // total} %)" if total else ""
            print(f"  {self.verb} {done} of {total} {self.unit}{share}", file=self.stream, flush=True)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._rich is not None:
            self._rich.stop()
