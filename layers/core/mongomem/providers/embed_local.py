"""The bundled local embedding model (mongomem.adapters.e5_model) as an EmbeddingProvider.

The model module is imported, and the model loaded, on first use (ready(), model, dim or embed()):
a function that never embeds never pays for it, and a package without the model still imports
(ready() then says why). Queries and documents are embedded with the model's own roles (e5's
``query:`` / ``passage:``) when its embed() takes them.
"""

from __future__ import annotations

import importlib
import inspect
import threading
from typing import Any

from mongomem.ports import EmbeddingError, EmbeddingProvider, Purpose
from mongomem.providers import check_texts, checked_vectors

LOCAL_MODULE = "mongomem.adapters.e5_model"
NOT_INSTALLED = "local model package not installed"


class LocalEmbedderProvider(EmbeddingProvider):
    # e5 scores unrelated short facts at 0.85-0.92 and restatements at 0.96-0.99 (measured on memory
    # texts, docs/embeddings.md), so reconciliation needs higher cut-offs than the defaults.
    similarity_thresholds = (0.975, 0.95)
    # Mean of 4 turns against the next 4 (docs/adr/0006-topic-shift-snapshots-memory-snapshot-topic-shift.md): topic changes
    # measured at 0.889-0.902, single-topic conversations at 0.907 and above.
    topic_shift_threshold = 0.915
    # A question scores 0.79-0.88 against the turns that answer it and 0.73-0.84 against other turns of
    # the same conversation, and 0.83 against an unrelated procedure (bench/studies/context/RESULTS.md): only a
    # match above this is relevant by meaning alone; below it a memory or turn must share a word.
    relevance_floor = 0.87

    def __init__(
        self, model: str | None = None, dim: int | None = None, *, module: str = LOCAL_MODULE
    ) -> None:
        self._configured_model = model
        self._configured_dim = dim
        self._module = module
        self._impl: Any = None
        self._error: str | None = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        """The wrapped LocalEmbedder; EmbeddingError with the reason when it cannot be built."""
        with self._lock:
            if self._impl is not None:
                return self._impl
            if self._error is not None:
                raise EmbeddingError(self._error)
            try:
                module = importlib.import_module(self._module)
                cls = module.LocalEmbedder
                impl = cls(model=_bare(self._configured_model)) if self._configured_model else cls()
                # Load the weights now, so ready() is only true when embed() can work.
                warmup = getattr(impl, "warmup", None)
                if callable(warmup):
                    warmup()
                dim = int(impl.dim)
            except ImportError as exc:
                missing = getattr(exc, "name", None)
                self._error = (
                    NOT_INSTALLED if missing in (None, self._module) else f"{NOT_INSTALLED} ({missing})"
                )
                raise EmbeddingError(self._error) from exc
            except Exception as exc:
                self._error = f"local model failed to load: {type(exc).__name__}: {exc}"
                raise EmbeddingError(self._error) from exc
            if self._configured_dim is not None and dim != self._configured_dim:
                self._error = (
                    f"the local model {impl.model} gives dim {dim} but memory.providers.embeddings.dim "
                    f"is {self._configured_dim}"
                )
                raise EmbeddingError(self._error)
            self._impl = impl
            return impl

    # model and dim are what the port asks for; they come from the loaded model when it loads.
    @property
    def model(self) -> str:
        try:
            return _prefixed(str(self._load().model))
        except EmbeddingError:
            return _prefixed(self._configured_model) if self._configured_model else "local"

    @model.setter
    def model(self, value: str) -> None:
        self._configured_model = value

    @property
    def dim(self) -> int:
        try:
            return int(self._load().dim)
        except EmbeddingError:
            return self._configured_dim or 0

    @dim.setter
    def dim(self, value: int) -> None:
        self._configured_dim = value

    def ready(self) -> tuple[bool, str]:
        try:
            self._load()
        except EmbeddingError as exc:
            return False, str(exc)
        return True, ""

    def embed(self, texts: list[str], purpose: Purpose = "document") -> list[list[float]]:
        texts = check_texts(texts)
        impl = self._load()
        try:
            raw = impl.embed(texts, **_purpose_kwargs(impl.embed, purpose))
            vectors = [[float(x) for x in v] for v in raw]  # numpy rows become plain floats
        except Exception as exc:
            raise EmbeddingError(f"{self.model}: {type(exc).__name__}: {exc}") from exc
        return checked_vectors(self.model, int(impl.dim), vectors, len(texts))


def _bare(model: str) -> str:
    return model.removeprefix("local:")


def _prefixed(model: str) -> str:
    """Stored model names say where vectors came from, e.g. local:multilingual-e5-small-q4."""
    return model if model.startswith("local:") else f"local:{model}"


def _purpose_kwargs(fn: Any, purpose: Purpose) -> dict[str, str]:
    """How this model's embed() is told query vs document: e5-style `kind`, or `purpose`, or not at all."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    if "kind" in params:
        return {"kind": "query" if purpose == "query" else "passage"}
    if "purpose" in params:
        return {"purpose": purpose}
    return {}
