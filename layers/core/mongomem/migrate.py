"""Deploy-time migration: every MongoDB index and the search index, created once per deploy, and the
stored memories' match keys recomputed when a release changed how a kind computes them.

Deployed functions never create indexes on a cold start; the stack's `Migration` custom resource
(mongomem.adapters.cfn_response.custom_resource) runs this on every deploy that changes it (creating an
existing index is a no-op), and `mongomem migrate` runs it by hand. The search index is created for the configured embedding
dimension; an existing index of another dimension is reported (reindex with --re-embed).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from mongomem.config import Settings
from mongomem.errors import MongomemError
from mongomem.kinds import KindRegistry
from mongomem.longterm.ports import MemoryRepository
from mongomem.longterm.write.rekey import rekey
from mongomem.ports import EmbeddingProvider
from mongomem.vectors.port import DimensionMismatch, IndexUnavailable, VectorIndex

# OpenSearch Serverless applies a new data-access policy within a minute or two: keep asking.
SEARCH_READY_SECONDS = 300


class Migratable(Protocol):
    """What the migration works on: the composition root built for it (Services.for_migration())."""

    @property
    def settings(self) -> Settings: ...
    @property
    def vector_index(self) -> VectorIndex | None: ...
    @property
    def embedder(self) -> EmbeddingProvider: ...
    @property
    def memory_store(self) -> MemoryRepository: ...
    @property
    def kinds(self) -> KindRegistry: ...

    def ensure_short_term_indexes(self) -> None:
        """Sessions, turns, snapshots."""
        ...

    def ensure_other_indexes(self) -> None:
        """Memories, retention, API keys."""
        ...


def migrate(
    full: Migratable,
    progress: Callable[[str], None] | None = None,
    search_wait: float = SEARCH_READY_SECONDS,
    deadline: float | None = None,
) -> dict[str, Any]:
    """Create the indexes; returns what was done (for the custom resource's Data and the CLI).

    `deadline` (a time.monotonic() value) bounds the long parts: the re-keying stops there (incomplete,
    reported), the wait for the search index gives up there."""
    say = progress or (lambda _line: None)

    def out_of_time() -> bool:
        return deadline is not None and time.monotonic() >= deadline

    settings = full.settings
    full.ensure_short_term_indexes()
    say(f"MongoDB {settings.db_name}: sessions, turns, snapshots indexes ready")
    full.ensure_other_indexes()
    say(f"MongoDB {settings.db_name}: memories, retention and api_keys indexes ready")
    # stored match keys as the kinds compute them now (a release may change how; mongomem.longterm.write.rekey)
    keys = rekey(full.memory_store, full.kinds, say, should_stop=out_of_time)
    report: dict[str, Any] = {"database": settings.db_name, "search_index": None, "keys": keys.as_dict()}
    index = full.vector_index
    if index is None:
        say("no search index configured (OpenSearchMode=none)")
        return report
    dim = settings.embedding_config.dim or full.embedder.dim
    if not dim:
        raise MongomemError(
            "the embedding dimension is unknown: set EmbeddingDimension (memory.providers.embeddings.dim)"
        )
    waited_until = time.monotonic() + search_wait
    if deadline is not None:
        waited_until = min(waited_until, deadline)
    while True:
        try:
            index.ensure(int(dim))
            break
        except DimensionMismatch as exc:
            raise MongomemError(
                f"the search index has dimension {exc.index_dim} but the embedder gives {exc.got_dim}: "
                "run `mongomem reindex --re-embed` to move to the new embedding model",
                {"index_dim": exc.index_dim, "dim": exc.got_dim},
            ) from exc
        except IndexUnavailable as exc:
            if time.monotonic() >= waited_until:
                raise
            say(f"search index not reachable yet ({exc.message}); retrying")
            time.sleep(max(0.0, min(5.0, waited_until - time.monotonic())))
    report["search_index"] = {"name": settings.opensearch_index, "dim": int(dim)}
    say(f"search index {settings.opensearch_index} ready (dimension {dim})")
    return report


class ServicesRoot(Protocol):
    """Where a deployed function's services come from (mongomem.runtime.Runtime)."""

    def services(self) -> Any: ...


def migrate_deployed(
    root: ServicesRoot,
    deadline: float | None,
    progress: Callable[[str], None] | None = None,
    *,
    search: bool = True,
    search_endpoint: str | None = None,
) -> dict[str, Any]:
    """The deploy-time migration of a stack: its services built now (a failure here is the migration's
    failure, answered to CloudFormation), then `migrate` with index creation on, within `deadline`.

    The stack's first custom resource migrates MongoDB only (`search=False`), before the search domain
    exists; the second gets the search endpoint the template resolved (`search_endpoint`)."""
    from mongomem.observability import logger  # lazy: 16 ms

    services = root.services().for_migration(opensearch_endpoint=search_endpoint if search else None)
    report = migrate(services, progress=progress, deadline=deadline)
    if not report["keys"].get("complete", True):
        logger.warning(
            "re-keying stopped before the function's time ran out; the deploy goes on with the keys "
            "written so far: run `mongomem migrate` with the stack's settings, or deploy again, to finish",
            extra={"keys": report["keys"]},
        )
    return report
