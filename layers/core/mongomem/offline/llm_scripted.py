"""A scripted LLMProvider for tests and demos: replays recorded answers per task, in order."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mongomem.ports import ANSWERS, LLMError, LLMRequest, LLMResult


def _load(answers: Mapping[str, Sequence[Any]] | str | Path) -> dict[str, list[str]]:
    if isinstance(answers, str | Path):
        path = Path(answers)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"scripted LLM: cannot read answers from {path}: {exc}") from exc
    else:
        data = answers
    if not isinstance(data, Mapping):
        raise ValueError("scripted LLM: answers must map a task name to a list of answers")
    script: dict[str, list[str]] = {}
    for task, items in data.items():
        if isinstance(items, str | bytes) or not isinstance(items, Sequence):
            raise ValueError(f"scripted LLM: answers for task {task!r} must be a list")
        # An answer may be recorded as JSON text or as the JSON value itself.
        script[str(task)] = [a if isinstance(a, str) else json.dumps(a, ensure_ascii=False) for a in items]
    return script


class ScriptedLLM:
    """Answers each task's requests with that task's recorded answers, in order.

    `requests` keeps every request received, so tests can assert what was asked. With `loop=True`
    a task's answers start over once used up; otherwise running out raises LLMError."""

    name = "scripted"
    capabilities = ANSWERS

    def __init__(self, answers: Mapping[str, Sequence[Any]] | str | Path, loop: bool = False) -> None:
        self.script = _load(answers)
        self.loop = loop
        self.requests: list[LLMRequest] = []
        self._next: dict[str, int] = {}
        self._lock = threading.Lock()

    def ready(self) -> tuple[bool, str]:
        return True, ""

    def remaining(self, task: str) -> int:
        """Answers not yet given for `task` (without looping)."""
        return max(0, len(self.script.get(task, [])) - self._next.get(task, 0))

    def complete_json(self, request: LLMRequest) -> LLMResult:
        with self._lock:
            self.requests.append(request)
            answers = self.script.get(request.task, [])
            index = self._next.get(request.task, 0)
            if index >= len(answers):
                if not (self.loop and answers):
                    raise LLMError(
                        f"scripted LLM: no recorded answer left for task {request.task!r} "
                        f"(request #{index + 1}; {len(answers)} recorded)"
                    )
                index = 0
            self._next[request.task] = index + 1
        text = answers[index]
        return LLMResult(text=text, model="scripted")
