"""The composition root: every context's root over the shared infrastructure, in one object."""

from __future__ import annotations

from typing import Any

from mongomem.runtime.identity import IdentityRoot
from mongomem.runtime.retrieval import RetrievalRoot


class Services(RetrievalRoot, IdentityRoot):
    """The composition root: every repository and service of one process, each built on first use.

    Nothing else builds them: handlers receive this object from `Runtime.handler`, which they pass to
    the API's routers (mongomem.api.app.MemoryApi); logic gets the pieces it needs passed in. The record
    path builds only `database`, `sessions`, `turns` and `recorder`. Tests build their own, replacing any
    collaborator through the constructor.
    """

    def replaced(self, **changes: Any) -> Services:
        """A new root with the same constructor arguments except `changes` (e.g. other extractors)."""
        args: dict[str, Any] = {
            "settings": self.settings,
            "queue": self._queue,
            "queue_factory": self._queue_factory,
            "llm": self._llm,
            "embedder": self._embedder,
            "vector_index": self._vector_index,
            "mongodb_uri": self._mongodb_uri,
            "extractors": self._extractors,
            "working_memory_config": self._working_memory_config,
        }
        args.update(changes)
        return Services(**args)

    def for_migration(self, **changes: Any) -> Services:
        """The same deployment with index creation on (what `migrate` runs with), and `changes` to its
        settings (the deploy-time migration's search endpoint)."""
        update = {"ensure_indexes": True, "create_search_index": True, **changes}
        settings = self.settings.model_copy(update=update)
        return Services(settings, mongodb_uri=self.mongodb_uri)

    def ensure_short_term_indexes(self) -> None:
        """Every index of sessions, turns and snapshots (the migration; `ensure_indexes` does it on use)."""
        for repository in (self.sessions, self.turns, self.snapshots):
            repository.ensure_indexes()

    def ensure_other_indexes(self) -> None:
        """Every index of memories, retention, API keys and threads."""
        self.memory_store.ensure_indexes()
        self.working_memory_store.ensure_indexes()  # type: ignore[attr-defined]
        self.erasure.ensure_indexes()
        self.api_keys.ensure_indexes()
        self.recent_requests.ensure_indexes()  # type: ignore[attr-defined]
