"""Per-process singletons: settings, the MongoDB store and the queue, created lazily and reused.

A Lambda execution environment builds each once on first use; tests and the local stack can
install their own with `configure()`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

from mongomem.config import Settings, settings_from_env

if TYPE_CHECKING:
    from mongomem.adapters.memory_store import MemoryStore
    from mongomem.adapters.mongo import MongoStore
    from mongomem.extraction.reconcile import Reconciler
    from mongomem.longterm.service import MemoryService
    from mongomem.ports import EmbeddingProvider, LLMProvider, QueuePort
    from mongomem.retrieval.indexing import MemoryIndexer
    from mongomem.retrieval.turn_indexing import TurnIndexer
    from mongomem.shortterm.promotion import Promoter
    from mongomem.vectors.port import VectorIndex


class Services:
    """Everything a handler needs, each piece built on first use (the record path builds only `store`)."""

    def __init__(
        self,
        settings: Settings,
        queue: QueuePort | None = None,
        queue_factory: Callable[[Services], QueuePort] | None = None,
        llm: LLMProvider | None = None,
        embedder: EmbeddingProvider | None = None,
        vector_index: VectorIndex | None = None,
    ) -> None:
        self.settings = settings
        self._queue = queue
        self._queue_factory = queue_factory
        self._llm = llm
        self._embedder = embedder
        self._vector_index = vector_index

    @cached_property
    def store(self) -> MongoStore:
        from mongomem.adapters.mongo import MongoStore, get_client, write_concern_for

        uri = self.settings.mongodb_uri
        if self.settings.mongodb_secret_arn:
            from mongomem.adapters.secrets import mongodb_uri_from_secret

            uri = mongodb_uri_from_secret(self.settings.mongodb_secret_arn)
        client = get_client(uri)
        # A 2xx means kept: every write through this store is journaled (and majority-replicated
        # where the deployment replicates), see docs/decisions.md "Durability".
        concern = write_concern_for(
            client, self.settings.write_concern, self.settings.write_concern_timeout_ms
        )
        store = MongoStore(client, self.settings.db_name, concern)
        if self.settings.ensure_indexes:
            store.ensure_indexes()
        return store

    @cached_property
    def queue(self) -> QueuePort:
        if self._queue is not None:
            return self._queue
        if self._queue_factory is not None:
            return self._queue_factory(self)
        from mongomem.adapters.queues import queue_for

        return queue_for(self.settings)

    @cached_property
    def llm(self) -> LLMProvider:
        if self._llm is not None:
            return self._llm
        from mongomem.providers.factory import llm_from_config

        return llm_from_config(self.settings.memory.providers.llm, self.provider_env)

    @cached_property
    def embedder(self) -> EmbeddingProvider:
        if self._embedder is not None:
            return self._embedder
        from mongomem.providers.factory import embedder_from_config

        return embedder_from_config(self.settings.memory.providers.embeddings, self.provider_env)

    @property
    def provider_env(self) -> dict[str, str]:
        """What the provider factories may read: the configured key variables and the region."""
        env = dict(self.settings.provider_secrets)
        if self.settings.aws_region:
            env["AWS_REGION"] = self.settings.aws_region
        return env

    @cached_property
    def vector_index(self) -> VectorIndex | None:
        if self._vector_index is not None:
            return self._vector_index
        s = self.settings
        if s.opensearch_endpoint:
            from mongomem.vectors.opensearch import OpenSearchIndex, make_client

            client = make_client(s.opensearch_endpoint, auth=s.opensearch_auth, region=s.aws_region)
            return OpenSearchIndex(client, s.opensearch_index, engine=s.opensearch_engine)
        if s.vector_index_path:
            from pathlib import Path

            from mongomem.vectors.embedded import EmbeddedIndex

            return EmbeddedIndex(Path(s.vector_index_path))
        return None

    @cached_property
    def memory_store(self) -> MemoryStore:
        from mongomem.adapters.memory_store import MemoryStore

        store = MemoryStore(self.store.db)
        if self.settings.ensure_indexes:
            store.ensure_indexes()
            from mongomem.erasure import ensure_indexes as ensure_retention_indexes

            ensure_retention_indexes(self.store.db)
        return store

    @cached_property
    def indexer(self) -> MemoryIndexer:
        from mongomem.retrieval.indexing import MemoryIndexer

        return MemoryIndexer(self.memory_store, self.vector_index)

    @cached_property
    def reconciler(self) -> Reconciler:
        from mongomem.extraction.reconcile import Reconciler, thresholds_for

        reinforce_at, ambiguous_from = thresholds_for(self.embedder)
        return Reconciler(self.memory_store, self.llm, reinforce_at, ambiguous_from)

    @cached_property
    def memories(self) -> MemoryService:
        from mongomem.longterm.service import MemoryService

        return MemoryService(self.memory_store, self.reconciler, self.embedder, self.indexer)

    @cached_property
    def turn_indexer(self) -> TurnIndexer:
        from mongomem.retrieval.turn_indexing import TurnIndexer

        return TurnIndexer(self.store, self.vector_index, self.embedder, self.settings.memory.recall)

    @cached_property
    def promoter(self) -> Promoter:
        from mongomem.shortterm.promotion import Promoter

        return Promoter(self.store, self.queue, self.settings)


_current: Services | None = None
_lock = threading.Lock()


def services() -> Services:
    """The process's services, built from the environment on first use."""
    global _current
    with _lock:
        if _current is None:
            _current = Services(settings_from_env())
        return _current


def configure(new: Services | None) -> None:
    """Install services explicitly (the local stack, tests); None resets to lazy env-based setup."""
    global _current
    with _lock:
        _current = new
