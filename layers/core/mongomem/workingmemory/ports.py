"""The store working memory needs: versioned load and compare-and-set save, plus threads."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from mongomem.models.common import Scope
from mongomem.models.working_memory import Thread, WorkingMemoryKey


class Stored(BaseModel):
    """A scope key's working memory (None when never written) and the version a save must match."""

    model_config = ConfigDict(frozen=True)

    value: Any
    version: int
    updated_at: datetime | None = None


class WorkingMemoryPort(Protocol):
    def load(self, key: WorkingMemoryKey) -> Stored | None:
        """The stored memory, or None when its resource record or thread does not exist yet."""
        ...

    def save(self, key: WorkingMemoryKey, value: Any, expected_version: int) -> Stored | None:
        """Write `value` (None clears) if the version is still `expected_version` (0: record absent).

        Returns the new state, or None when another writer got there first. A value the store cannot
        keep (e.g. an integer beyond 64 bits) raises InvalidInput and changes nothing.
        """
        ...

    def create_thread(
        self, scope: Scope, thread_id: str, title: str | None, metadata: dict[str, Any]
    ) -> Thread:
        """Insert a thread; raises Conflict when the user already has one with this id."""
        ...

    def get_thread(self, scope: Scope, thread_id: str) -> Thread | None: ...

    def list_threads(
        self, scope: Scope, limit: int, before: tuple[datetime, str] | None = None
    ) -> list[Thread]:
        """The user's threads, most recently updated first; `before` = (updated_at, thread_id) pages."""
        ...

    def thread_ids(self, scope: Scope, thread_ids: list[str]) -> set[str]:
        """Which of these ids have a thread record for the user."""
        ...

    def update_thread(
        self,
        scope: Scope,
        thread_id: str,
        title: str | None,
        metadata: dict[str, Any] | None,
        set_title: bool,
    ) -> Thread | None:
        """Set the title (when `set_title`) and replace the metadata (when given) except its working
        memory, which only `save` changes. None when the thread does not exist."""
        ...

    def delete_thread(self, scope: Scope, thread_id: str) -> bool:
        """Remove the thread and its thread-scoped working memory; False when it did not exist."""
        ...
