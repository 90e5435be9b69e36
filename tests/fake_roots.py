"""The runtime's composition roots over the in-memory fakes of tests/fakes.py: unit tests get the recorder,
the promoter, the importer and history built by the runtime's own code, with no database behind them."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from mongomem.adapters.mongo.driver import MongoDatabase
from mongomem.config import Settings, parse_project_config, settings_from_env
from mongomem.errors import StoreUnavailable
from mongomem.models.common import Scope
from mongomem.models.turns import NewTurn
from mongomem.ports import EmbeddingProvider
from mongomem.runtime.shortterm import ShortTermRoot
from mongomem.shortterm.ports import SessionRepository, SnapshotRepository, TurnRepository
from tests.fakes import (
    InMemoryQueue,
    InMemorySessionRepository,
    InMemorySnapshotRepository,
    InMemoryTurnRepository,
)


def settings_for(memory: dict[str, Any] | None = None, **settings: Any) -> Settings:
    """A process's settings (no environment) with the project config's `memory` section, as
    project-config.yaml writes it, and the settings given (hole_grace_seconds, lease_seconds, ...)."""
    return settings_from_env({}, project=parse_project_config({"memory": memory or {}}), **settings)


class InMemoryShortTerm(ShortTermRoot):
    """The short-term root (runtime/shortterm.py) whose sessions, turns, snapshots and queue are the fakes.

    Their contract suites (tests/contract) hold them to the MongoDB adapters' and SQS's behaviour. The
    fakes are typed as themselves here (`memory_sessions`, ...), for the tests that look inside them.
    """

    def __init__(
        self,
        settings: Settings,
        embedder: EmbeddingProvider | None = None,
        sessions: InMemorySessionRepository | None = None,
        turns: InMemoryTurnRepository | None = None,
    ) -> None:
        self.memory_queue = InMemoryQueue(settings.queue_kinds)
        super().__init__(settings, queue=self.memory_queue, embedder=embedder)
        self.memory_sessions = sessions or InMemorySessionRepository()
        self.memory_turns = turns or InMemoryTurnRepository()
        self.memory_snapshots = InMemorySnapshotRepository()

    def forget_observed(self, scope: Scope, session_id: str, from_seq: int | None) -> int:
        return 0  # no observation log in memory (observing is a retrieval root's, over MongoDB)

    # what the recorder, the promoter and the rest are built over
    @cached_property
    def sessions(self) -> SessionRepository:
        return self.memory_sessions

    @cached_property
    def turns(self) -> TurnRepository:
        return self.memory_turns

    @cached_property
    def snapshots(self) -> SnapshotRepository:
        return self.memory_snapshots

    @cached_property
    def database(self) -> MongoDatabase:
        raise AssertionError("a unit test reached for MongoDB: every repository it uses has a fake")


class CrashingTurns(InMemoryTurnRepository):
    """The store fails the next insert of fresh seqs after storing its first `keep` turns (a writer dying
    between its two writes, or halfway through its insert)."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_next = False
        self.keep = 0

    def insert_new(self, scope: Scope, session_id: str, turns: list[NewTurn]) -> bool:
        if self.fail_next:
            self.fail_next = False
            super().insert_new(scope, session_id, turns[: self.keep])
            raise StoreUnavailable("the document store is unavailable", {"retry_after_seconds": 2})
        return super().insert_new(scope, session_id, turns)
