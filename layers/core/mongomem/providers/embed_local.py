"""The bundled local embedding model (mongomem.adapters.embed_local) as an EmbeddingProvider.

The model module is imported, and the model built, on first use only: a function that never embeds
never pays for it, and a package without the model still imports (ready() then says why).
"""

from __future__ import annotations

import importlib
import inspect
import threading
from typing import Any

from mongomem.ports import EmbeddingError, Purpose
from mongomem.providers import check_texts, checked_vectors

LOCAL_MODULE = "mongomem.adapters.embed_local"
NOT_INSTALLED = "local model package not installed"


class LocalEmbedderProvider:
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
                impl = cls(model=self._configured_model) if self._configured_model else cls()
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
            return str(self._load().model)
        except EmbeddingError:
            return self._configured_model or "local"

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
            # Models trained with query/document instructions take `purpose`; others embed both alike.
            raw = impl.embed(texts, purpose=purpose) if _accepts_purpose(impl.embed) else impl.embed(texts)
            vectors = [[float(x) for x in v] for v in raw]  # numpy rows become plain floats
        except Exception as exc:
            raise EmbeddingError(f"{impl.model}: {type(exc).__name__}: {exc}") from exc
        return checked_vectors(str(impl.model), int(impl.dim), vectors, len(texts))


def _accepts_purpose(fn: Any) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "purpose" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
