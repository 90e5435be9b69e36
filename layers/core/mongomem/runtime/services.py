"""The composition root: every context's root over the shared infrastructure, in one object."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mongomem.runtime.identity import IdentityRoot
from mongomem.runtime.retrieval import RetrievalRoot

if TYPE_CHECKING:
    from typing import Unpack

    from mongomem.runtime.infra import Parts


class Services(RetrievalRoot, IdentityRoot):
    """The composition root: every repository and service of one process, each built on first use.

    Nothing else builds them: handlers receive this object from `Runtime.handler`, which they pass to
    the API's routers (mongomem.api.app.MemoryApi); logic gets the pieces it needs passed in. The record
    path builds only `database`, `sessions`, `turns` and `recorder`. Tests build their own, replacing any
    collaborator through the constructor.
    """

    def replaced(self, **changes: Unpack[Parts]) -> Services:
        """A new root with the same settings and parts except `changes` (e.g. other extractors)."""
        return Services(self.settings, **(self.parts | changes))

    def for_migration(self, **changes: Any) -> Services:
        """The same deployment with index creation on (what `migrate` runs with), and `changes` to its
        settings (the deploy-time migration's search endpoint)."""
        update = {"ensure_indexes": True, "create_search_index": True, **changes}
        settings = self.settings.model_copy(update=update)
        return Services(settings, mongodb_uri=self.mongodb_uri)

    def ensure_short_term_indexes(self) -> None:
        """Every index of sessions, turns and snapshots (the migration; `ensure_indexes` does it on use)."""
        from mongomem.adapters.mongo.sessions import MongoSessionRepository  # lazy: 0.03 ms
        from mongomem.adapters.mongo.snapshots import MongoSnapshotRepository  # lazy: 1.3 ms
        from mongomem.adapters.mongo.turns import MongoTurnRepository  # lazy: 0.03 ms

        for repository in (MongoSessionRepository, MongoTurnRepository, MongoSnapshotRepository):
            repository(self.database).ensure_indexes()

    def ensure_other_indexes(self) -> None:
        """Every index of memories, retention, API keys and threads."""
        self.memory_store.ensure_indexes()
        self.working_memory_store.ensure_indexes()
        self.erasure.ensure_indexes()
        self.api_keys.ensure_indexes()
        self.recent_requests.ensure_indexes()
