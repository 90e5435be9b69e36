"""The retrieval context's root: search, recall, the context block and the pending figures."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from mongomem.runtime.longterm import LongTermRoot
from mongomem.runtime.shortterm import ShortTermRoot

if TYPE_CHECKING:
    from mongomem.longterm.procedures import ProcedureService
    from mongomem.observations.service import ObservationService
    from mongomem.retrieval.context import ContextBuilder
    from mongomem.retrieval.pending import Pending
    from mongomem.retrieval.recall import Recall
    from mongomem.retrieval.search import MemorySearch


class RetrievalRoot(LongTermRoot, ShortTermRoot):
    """Reading memory: over long-term memories and short-term turns."""

    @cached_property
    def search(self) -> MemorySearch:
        from mongomem.retrieval.search import MemorySearch  # lazy: 71 ms

        return MemorySearch(
            self.memory_store,
            self.vector_index,
            self.embedder,
            self.kinds,
            self.settings.memory.metadata.partition_keys,
            pending=self.pending,
        )

    @cached_property
    def recall(self) -> Recall:
        from mongomem.retrieval.recall import Recall  # lazy: 62 ms

        memory = self.settings.memory
        return Recall(
            self.turns, self.vector_index, self.embedder, memory.recall, memory.limits.max_response_bytes
        )

    @cached_property
    def observations(self) -> ObservationService | None:
        """Observational memory (memory.observations; None when turned off): the observer is the LLM when
        it answers, else the offline rules, which also stand in when the model fails."""
        cfg = self.settings.memory.observations
        if not cfg.enabled:
            return None
        from mongomem.adapters.mongo.observations import MongoObservationRepository  # lazy: 0.5 ms
        from mongomem.observations.observe import LLMObserver, Observer, RulesObserver  # lazy: 2.5 ms
        from mongomem.observations.service import ObservationService  # lazy: 4.9 ms

        rules = RulesObserver()
        observer: Observer = rules
        if cfg.observer == "auto" and "answers" in self.llm.capabilities:
            observer = LLMObserver(self.llm)
        logs = self._indexed(MongoObservationRepository(self.database))
        return ObservationService(logs, self.snapshots, self.turns, observer, rules, cfg.max_tokens)

    @cached_property
    def context_builder(self) -> ContextBuilder:
        from mongomem.retrieval.context import ContextBuilder  # lazy: 137 ms

        wm = self.working_memory_config
        return ContextBuilder(
            self.turns,
            self.working_memory,
            wm.scope,
            self.search,
            self.recall,
            self.kinds,
            pending=self.pending,
            observations=self.observations,
        )

    @cached_property
    def pending(self) -> Pending:
        """The "not yet" figures search and context answers carry."""
        from mongomem.retrieval.pending import Pending  # lazy: 51 ms

        return Pending(self.backlog, self.settings.memory.recall.enabled)

    @cached_property
    def procedures(self) -> ProcedureService:
        from mongomem.longterm.procedures import ProcedureService  # lazy: 90 ms

        return ProcedureService(self.memory_store, self.search)
