"""The long-term context's root: the memory store, kinds, extraction and the write path."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from mongomem.models.common import utcnow
from mongomem.runtime.infra import Infrastructure

if TYPE_CHECKING:
    from mongomem.adapters.mongo.memory_store import MemoryStore
    from mongomem.extraction.extractor import EmptyCheck, Extractor
    from mongomem.extraction.proposal import Proposer
    from mongomem.extraction.watch import SuspectEmpty
    from mongomem.kinds import KindRegistry
    from mongomem.kinds.declared import KindSchemaRepository
    from mongomem.longterm.service import MemoryService
    from mongomem.longterm.write.indexing import MemoryIndexer
    from mongomem.longterm.write.writer import MemoryWriter
    from mongomem.retrieval.reembed import EmbeddingDrift


class LongTermRoot(Infrastructure):
    """Long-term memory: kinds, extractors, the writer (longterm/write), the memory service."""

    @cached_property
    def memory_store(self) -> MemoryStore:
        from mongomem.adapters.mongo.memory_store import MemoryStore  # lazy: 42 ms

        store = MemoryStore(self.database.db)
        if self.settings.ensure_indexes:
            store.ensure_indexes()
            _ = self.erasure  # the memories' retention index
        return store

    @cached_property
    def kind_schemas(self) -> KindSchemaRepository:
        from mongomem.adapters.mongo.kind_schemas import MongoKindSchemaRepository  # lazy: 41 ms

        return MongoKindSchemaRepository(self.database)

    def check_custom_types(self, record: bool = True) -> None:
        """Refuse (ConfigError) custom types whose declaration changes a stored one incompatibly; with
        `record`, store new ones (a type is created the first time a deployment runs with it)."""
        if not self.settings.memory.custom_types:
            return
        from mongomem.kinds.declared import check_declared  # lazy: 38 ms

        check_declared(self.kind_schemas, list(self.settings.memory.custom_types), utcnow(), record=record)

    @cached_property
    def kinds(self) -> KindRegistry:
        """The built-in memory kinds and the project's custom types."""
        from mongomem.kinds import project_registry  # lazy: 33 ms

        return project_registry(self.settings.memory.custom_types)

    @cached_property
    def indexer(self) -> MemoryIndexer:
        from mongomem.longterm.write.indexing import MemoryIndexer  # lazy: 46 ms

        return MemoryIndexer(
            self.memory_store, self.vector_index, self.settings.memory.metadata.partition_keys
        )

    @cached_property
    def writer(self) -> MemoryWriter:
        """Every long-term write: extraction, the API's direct writes, imported history."""
        from mongomem.extraction.judge import LLMJudge  # lazy: 54 ms
        from mongomem.longterm.write.decision import Thresholds  # lazy: 55 ms
        from mongomem.longterm.write.writer import MemoryWriter  # lazy: 84 ms

        extraction = self.settings.memory.extraction
        visibilities = {
            kind.name: chosen for kind in self.kinds if (chosen := extraction.of(kind.name).visibility)
        }
        # an LLM that answers nothing (the offline setting): ambiguous matches are decided by rules
        judge = LLMJudge(self.llm) if "answers" in self.llm.capabilities else None
        thresholds = Thresholds.for_embedder(self.embedder)
        return MemoryWriter(
            self.memory_store, self.vector_index, self.indexer, self.embedder, judge, thresholds, visibilities
        )

    @cached_property
    def proposer(self) -> Proposer:
        from mongomem.providers.factory import proposer_for  # lazy: 21 ms

        return proposer_for(self.llm, self.kinds, with_rules=self.settings.memory.extraction.with_rules)

    @cached_property
    def empty_check(self) -> EmptyCheck | None:
        """The offline rules' second opinion on an empty model answer (mongomem.extraction.watch)."""
        from mongomem.providers.factory import empty_answer_check  # lazy: 22 ms

        return empty_answer_check(self.llm)

    @cached_property
    def suspect_empty(self) -> SuspectEmpty:
        """This process's count of empty answers the offline rules contradict (the WARNING, once)."""
        from mongomem.extraction.watch import SuspectEmpty  # lazy: 1.8 ms

        return SuspectEmpty()

    @cached_property
    def memories(self) -> MemoryService:
        from mongomem.longterm.service import MemoryService  # lazy: 77 ms

        return MemoryService(
            self.memory_store,
            self.kinds,
            self.writer,
            self.settings.memory.metadata.partition_keys,
        )

    def extractor(self, kind: str) -> Extractor | None:
        """The kind's extractor: the factory `extractors` names (None: none), else the built-in one
        (None for a kind nobody knows or the project turned off). Built once per kind."""
        kind = str(getattr(kind, "value", kind))
        if kind not in self._built:
            if kind in self._extractors:
                factory = self._extractors[kind]
                self._built[kind] = factory(self) if factory is not None else None
            else:
                enabled = kind in {str(t) for t in self.settings.enabled_extractions}
                self._built[kind] = self.builtin_extractor(kind) if enabled and kind in self.kinds else None
        return self._built[kind]

    def builtin_extractor(self, kind: str) -> Extractor:
        """The extractor every known kind has: its proposer, then the one writer (what
        `extractors` may wrap or replace)."""
        from mongomem.extraction.extractor import KindExtractor  # lazy: 97 ms

        kind = str(getattr(kind, "value", kind))
        configured = self.settings.memory.extraction.of(kind)
        return KindExtractor(
            self.kinds[kind],
            self.proposer,
            self.writer,
            configured.roles,
            configured.prompt,
            self.settings.memory.metadata.partition_keys,
            check=self.empty_check,
        )

    def embedding_drift(self, tenant: str | None) -> EmbeddingDrift | None:
        """Whether stored vectors (of one tenant, None: all) come from another model than the embedder's."""
        from mongomem.retrieval.reembed import drift  # lazy: 29 ms

        return drift(self.memory_store, self.embedder, tenant)
