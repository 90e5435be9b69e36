"""The short-term context's root: sessions, turns, snapshots, recording, promotion, history, threads
and working memory.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

# The record path's repositories and logic load with the function (its init phase).
from mongomem.adapters.mongo.sessions import MongoSessionRepository
from mongomem.adapters.mongo.turns import MongoTurnRepository
from mongomem.runtime.infra import Infrastructure
from mongomem.shortterm.policy import PromotionPolicy
from mongomem.shortterm.record import TurnRecorder

if TYPE_CHECKING:
    from mongomem.adapters.mongo.working_memory import MongoWorkingMemoryRepository
    from mongomem.models.common import Scope
    from mongomem.models.turns import Turn
    from mongomem.retrieval.turn_indexing import TurnIndexer
    from mongomem.shortterm.history import History
    from mongomem.shortterm.importing import Importer
    from mongomem.shortterm.policy import PromotionPolicy
    from mongomem.shortterm.ports import SessionRepository, SnapshotRepository, TurnRepository
    from mongomem.shortterm.promotion import Promoter
    from mongomem.shortterm.topics import TopicSegmenter
    from mongomem.workingmemory.config import WorkingMemoryConfig
    from mongomem.workingmemory.service import WorkingMemoryService
    from mongomem.workingmemory.threads import Threads


class ShortTermRoot(Infrastructure):
    """Short-term memory: what the record, scan and session routes use."""

    @cached_property
    def sessions(self) -> SessionRepository:
        return self._indexed(MongoSessionRepository(self.database))

    @cached_property
    def turns(self) -> TurnRepository:
        return self._indexed(MongoTurnRepository(self.database))

    @cached_property
    def snapshots(self) -> SnapshotRepository:
        from mongomem.adapters.mongo.snapshots import MongoSnapshotRepository  # lazy: 1.4 ms

        return self._indexed(MongoSnapshotRepository(self.database))

    @cached_property
    def recorder(self) -> TurnRecorder:
        return TurnRecorder(self.sessions, self.turns, self.settings.memory)

    @cached_property
    def policy(self) -> PromotionPolicy:
        return PromotionPolicy.from_config(self.settings.memory)

    @cached_property
    def promoter(self) -> Promoter:
        from mongomem.shortterm.promotion import Promoter  # lazy: 18 ms

        topics = None
        if self.settings.memory.snapshot.topic_shift.enabled:
            topics = self._topic_segmenter
        return Promoter(self.sessions, self.turns, self.snapshots, self.queue, self.settings, topics=topics)

    def _topic_segmenter(self) -> TopicSegmenter:
        from mongomem.shortterm.topics import TopicSegmenter  # lazy: 18 ms

        return TopicSegmenter(self.embedder, self.settings.memory.snapshot.topic_shift)

    @cached_property
    def importer(self) -> Importer:
        from mongomem.shortterm.importing import Importer  # lazy: 20 ms

        return Importer(self.turns, self.recorder, self.promoter, self.settings.memory)

    @cached_property
    def history(self) -> History:
        from mongomem.shortterm.history import History  # lazy: 22 ms

        return History(
            self.sessions,
            self.turns,
            self.snapshots,
            self.promoter,
            self.policy,
            self.settings.memory.limits.max_response_bytes,
            forget_observed=self.forget_observed,
        )

    @cached_property
    def turn_indexer(self) -> TurnIndexer:
        from mongomem.retrieval.turn_indexing import TurnIndexer  # lazy: 38 ms

        return TurnIndexer(self.turns, self.vector_index, self.embedder, self.settings.memory.recall)

    @property
    def turn_indexing(self) -> Callable[[], TurnIndexer] | None:
        """What the scan runs after promotion: the recall indexer, built when it runs (None: recall off)."""
        if not self.settings.memory.recall.enabled:
            return None
        return lambda: self.turn_indexer

    @cached_property
    def working_memory_store(self) -> MongoWorkingMemoryRepository:
        from mongomem.adapters.mongo.working_memory import MongoWorkingMemoryRepository  # lazy: 23 ms

        return self._indexed(MongoWorkingMemoryRepository(self.database))

    @cached_property
    def working_memory_config(self) -> WorkingMemoryConfig:
        if (given := self.parts.get("working_memory_config")) is not None:
            return given
        from mongomem.workingmemory.config import parse_working_memory_config  # lazy: 21 ms

        return parse_working_memory_config(self.settings.memory.working_memory)

    @cached_property
    def working_memory(self) -> WorkingMemoryService:
        from mongomem.workingmemory.service import WorkingMemoryService  # lazy: 37 ms

        return WorkingMemoryService(self.working_memory_store, self.working_memory_config)

    def forget_turns(self, turns: list[Turn]) -> int:
        """Remove deleted turns' recall index entries (no embedder is built for it)."""
        if not turns:
            return 0
        from mongomem.retrieval.turn_indexing import forget_turns  # lazy: 41 ms

        return forget_turns(self.vector_index, self.settings.memory.recall, turns)

    def forget_observed(self, scope: Scope, session_id: str, from_seq: int | None) -> int:
        """Take deleted turns' lines out of the user's observation log (whether observing is on now or
        not: a log written before stays until erasure), how many went."""
        from mongomem.adapters.mongo.observations import MongoObservationRepository  # lazy: 0.5 ms

        return MongoObservationRepository(self.database).forget(scope, session_id, from_seq)

    @cached_property
    def threads(self) -> Threads:
        from mongomem.workingmemory.threads import Threads  # lazy: 40 ms

        return Threads(
            self.working_memory,
            self.sessions,
            self.turns,
            self.snapshots,
            self.forget_turns,
            self.forget_observed,
        )
