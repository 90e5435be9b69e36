"""Topic-shift cuts: where a session's unpromoted turns change topic, so one snapshot holds one topic.

At every point between two conversation turns with `window` turns on both sides, the mean embedding of
the `window` turns after it is compared (cosine) with the mean embedding of the `window` turns before
it. The first run of points whose similarity falls below the threshold marks the shift; the cut goes
at that run's lowest point.
Only user and assistant turns are compared; tool and system turns go with the turns around them.
Runs in the scan job (never on the record path), with the configured embedder.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mongomem.config import TopicShiftConfig
from mongomem.models.turns import Turn
from mongomem.ports import EmbeddingProvider

# Characters of a turn compared (its opening states what it is about; long tool output adds noise).
TEXT_CHARS = 2000
ROLES = frozenset({"user", "assistant"})
# Without a threshold in the config or one measured for the embedder (docs/adr/README.md).
DEFAULT_THRESHOLD = 0.8


def _mean(vectors: Sequence[Sequence[float]]) -> list[float]:
    size = len(vectors[0])
    return [sum(v[i] for v in vectors) / len(vectors) for i in range(size)]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(math.fsum(x * x for x in a))
    nb = math.sqrt(math.fsum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def similarities(vectors: Sequence[Sequence[float]], window: int) -> list[tuple[int, float]]:
    """(i, cosine of the mean of the `window` vectors before i and of the `window` from i), every i."""
    return [
        (i, _cosine(_mean(vectors[i - window : i]), _mean(vectors[i : i + window])))
        for i in range(window, len(vectors) - window + 1)
    ]


def first_shift(vectors: Sequence[Sequence[float]], threshold: float, window: int) -> int | None:
    """Index of the first vector of a new topic (None: one topic throughout)."""
    profile = similarities(vectors, window)
    run: list[tuple[int, float]] = []
    for point in profile:
        if point[1] < threshold:
            run.append(point)
        elif run:
            break
    if not run:
        return None
    return min(run, key=lambda p: (p[1], p[0]))[0]


class TopicSegmenter:
    """Finds the seq where a run of turns changes topic, embedding them with the configured embedder."""

    def __init__(self, embedder: EmbeddingProvider, config: TopicShiftConfig) -> None:
        self.embedder = embedder
        self.config = config
        measured = embedder.topic_shift_threshold
        self.threshold = (
            config.threshold
            if config.threshold is not None
            else float(measured)
            if isinstance(measured, int | float)
            else DEFAULT_THRESHOLD
        )

    def first_topic_end(self, turns: Sequence[Turn]) -> int | None:
        """The last seq of the first topic among `turns` (in seq order); None when there is no shift."""
        spoken = [t for t in turns if t.role in ROLES and t.content.strip()]
        if len(spoken) < 2 * self.config.window:
            return None
        # "query" for both sides: e5's role for symmetric comparisons (others ignore the purpose)
        vectors = self.embedder.embed([t.content[:TEXT_CHARS] for t in spoken], "query")
        shift = first_shift(vectors, self.threshold, self.config.window)
        if shift is None:
            return None
        # everything before the new topic's first spoken turn (tool results of the old topic included)
        return spoken[shift].seq - 1
