"""An extractor that answers nothing: told, never a quiet "done" (docs/operations.md "An extractor that
answers nothing").

When a model proposes no item for a snapshot, the extractor runs the offline rules over the same turns
(pure Python, milliseconds) and records what they find: `empty_answer` with `rules_found` > 0 is an
empty answer the rules contradict. One such answer is a quiet snapshot the model judged better; several
in a row, with no answer holding an item in between, is a model that never extracts (a prompt it copies
`{"items": []}` from, a structured-output mode it cannot follow, the wrong model). `SuspectEmpty` counts
them in one process (the WARNING, once) and `suspect_empty` over the store's recent window (the
`/v1/status` figure).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Empty answers the rules contradict, with no answer holding an item in the window, before it is said.
THRESHOLD = 3
WINDOW_SECONDS = 3600.0

# The outcomes of an answer that held items (kept or refused): the model does extract.
ANSWERED = frozenset({"stored", "refused"})

HINT = (
    "the model answered no item for {n} snapshot(s) of {kinds} where the offline rules found facts, and "
    "no item at all in that time. Check: the project's prompt override (memory.extraction.<kind>.prompt) "
    'and any literal in it a model can copy as its whole answer (such as {{"items": []}}); the model '
    "(an instruction-tuned one with a chat template; a base model answers nothing useful); the server's "
    "structured-output mode (memory.providers.llm.structured_output: try json_object or prompt); the extraction answers "
    "in the logs (`mongomem dev` prints them; the snapshot's per-kind status says empty_answer)."
)


def suspect(empty: int, answered: int, threshold: int = THRESHOLD) -> bool:
    """Whether `empty` answers the rules contradict, with `answered` answers holding items beside them,
    make a model that never extracts."""
    return empty >= threshold and answered == 0


def hint(empty: int, kinds: list[str]) -> str:
    return HINT.format(n=empty, kinds=", ".join(kinds) or "every kind")


def suspect_empty(health: Mapping[str, Any], threshold: int = THRESHOLD) -> dict[str, Any]:
    """The `/v1/status` figure from the store's per-kind health over its window (models.stats.KindHealth):
    per kind, the empty answers the offline rules contradict and whether they make it suspect; overall,
    suspect when one kind is (a provider answering nothing for every kind makes each one suspect)."""
    kinds: dict[str, dict[str, Any]] = {}
    for name, figures in sorted(health.items()):
        outcomes = dict(getattr(figures, "outcomes", None) or {})
        empty = int(getattr(figures, "suspect_empty", 0) or 0)
        answered = sum(n for outcome, n in outcomes.items() if outcome in ANSWERED)
        if empty or outcomes:
            kinds[name] = {
                "empty_answers": empty,
                "answered": answered,
                "suspect": suspect(empty, answered, threshold),
            }
    flagged = [name for name, row in kinds.items() if row["suspect"]]
    total = sum(row["empty_answers"] for name, row in kinds.items() if row["suspect"])
    out: dict[str, Any] = {"suspect": bool(flagged), "threshold": threshold, "kinds": kinds}
    if flagged:
        out["hint"] = hint(total, flagged)
    return out


@dataclass
class SuspectEmpty:
    """One process's empty answers per kind over the last `window` seconds: `note` returns the warning to
    log when a kind becomes suspect, once (again only after the kind answered an item, or a window
    after the last warning)."""

    threshold: int = THRESHOLD
    window: float = WINDOW_SECONDS
    _empty: dict[str, deque[float]] = field(default_factory=dict)
    _answered: dict[str, float] = field(default_factory=dict)  # when the kind last answered an item
    _warned: dict[str, float] = field(default_factory=dict)

    def note(
        self, kind: str, outcome: str | None, rules_found: int | None, now: float | None = None
    ) -> str | None:
        at = time.monotonic() if now is None else now
        if outcome in ANSWERED:
            self._answered[kind] = at
            self._empty.pop(kind, None)
            self._warned.pop(kind, None)
            return None
        if outcome != "empty_answer" or not rules_found:
            return None
        seen = self._empty.setdefault(kind, deque())
        seen.append(at)
        while seen and seen[0] < at - self.window:
            seen.popleft()
        answered = self._answered.get(kind)
        recent = answered is not None and answered >= at - self.window
        warned = self._warned.get(kind)
        if not suspect(len(seen), int(recent), self.threshold) or (
            warned is not None and warned >= at - self.window
        ):
            return None
        self._warned[kind] = at
        return hint(len(seen), [kind])
