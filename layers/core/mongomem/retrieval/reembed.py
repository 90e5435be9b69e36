"""Move stored memories to the current embedding model (`mongomem reindex --re-embed`).

MongoDB holds every version's text, so the vectors can always be rebuilt: each version whose vector
comes from another (model, dimension) is embedded again and marked pending for the index. The work is
resumable: a stopped run leaves the rest on the old model, and the next run picks up only those.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mongomem.errors import MongomemError
from mongomem.longterm.ports import MemoryRepository
from mongomem.models.common import utcnow
from mongomem.ports import EmbeddingProvider


class ReEmbedStuck(MongomemError):
    """A batch came back unchanged: the embedder's vectors do not have the dimension it reports."""


@dataclass
class EmbeddingDrift:
    """Stored vectors from other models than the embedder's: search and reconciliation by meaning are off."""

    current: tuple[str, int]
    others: list[tuple[str, int]]
    versions: int  # live versions to re-embed (of the tenant asked about, or all)

    def reason(self) -> str:
        names = ", ".join(f"{m} ({d} dims)" for m, d in self.others)
        model, dim = self.current
        return (
            f"embeddings: {self.versions} memory versions were embedded with {names}, the embedder is now "
            f"{model} ({dim} dims); run `mongomem reindex --re-embed`"
        )


def drift(store: MemoryRepository, embedder: EmbeddingProvider, tenant: str | None) -> EmbeddingDrift | None:
    """None when every stored vector comes from the embedder's model and dimension."""
    current = (str(embedder.model), int(embedder.dim))
    others = sorted(m for m in store.embedding_models() if m != current)
    if not others:
        return None
    return EmbeddingDrift(current, others, store.count_embedded_otherwise(*current, tenant=tenant))


def re_embed(
    store: MemoryRepository,
    embedder: EmbeddingProvider,
    batch: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Re-embed every live version not embedded by `embedder`; `progress(done, total)` after each batch."""
    model, dim = str(embedder.model), int(embedder.dim)
    store.forget_deleted_embeddings()
    total = store.count_embedded_otherwise(model, dim)
    done = 0
    if progress is not None:
        progress(done, total)
    while True:
        page = store.embedded_otherwise(model, dim, batch)
        if not page:
            return done
        vectors = embedder.embed([r.text for r in page], "document")
        if any(len(v) != dim for v in vectors):
            raise ReEmbedStuck(
                f"the embedder {model} reports {dim} dimensions but returned {len(vectors[0])}",
                {"model": model, "dim": dim},
            )
        store.set_embeddings([(r.memory_id, v) for r, v in zip(page, vectors, strict=True)], model, utcnow())
        done += len(page)
        if progress is not None:
            progress(done, max(total, done))
