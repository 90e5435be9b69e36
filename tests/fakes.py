"""In-memory implementations of repository ports, for unit tests of the logic.

Each one passes the same contract suite as the MongoDB adapter (tests/contract), so a unit test that
uses it tests the logic against the behaviour the real store has.
"""

from __future__ import annotations

import copy
import threading
import time
from datetime import UTC, datetime
from typing import Any

from mongomem.errors import Conflict, InvalidInput
from mongomem.models.common import Scope
from mongomem.models.working_memory import Thread, WorkingMemoryKey
from mongomem.workingmemory.ports import Stored


def _now() -> datetime:
    # the MongoDB adapter keeps milliseconds (BSON dates); so does this one
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def _storable(value: Any) -> None:
    """What BSON cannot hold is refused, as the MongoDB adapter refuses it (integers beyond 64 bits)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool) and not -(2**63) <= item < 2**63:
            raise InvalidInput("working memory holds a value the store cannot keep", {"path": "data"})


class InMemoryWorkingMemory:
    """workingmemory.ports.WorkingMemoryPort in a dict, with the same compare-and-set contract."""

    def __init__(self, load_delay: float = 0.0) -> None:
        self.docs: dict[tuple[Any, ...], Stored] = {}
        self.threads: dict[tuple[str, str, str], Thread] = {}
        self.lock = threading.Lock()
        self.load_delay = load_delay
        self.saves = 0
        self.lost_races = 0

    @staticmethod
    def _id(key: WorkingMemoryKey) -> tuple[Any, ...]:
        return (key.scope, key.tenant, key.user_id, key.thread_id)

    def load(self, key: WorkingMemoryKey) -> Stored | None:
        with self.lock:
            found = self.docs.get(self._id(key))
            if found is None and key.scope == "thread" and key.thread_id is not None:
                thread = self.threads.get((key.tenant, key.user_id, key.thread_id))
                found = Stored(value=None, version=1, updated_at=thread.updated_at) if thread else None
            found = found.model_copy(update={"value": copy.deepcopy(found.value)}) if found else None
        # Widen the read-to-write window so concurrent writers really interleave.
        time.sleep(self.load_delay)
        return found

    def save(self, key: WorkingMemoryKey, value: Any, expected_version: int) -> Stored | None:
        _storable(value)
        with self.lock:
            found = self.docs.get(self._id(key))
            if found is None and key.scope == "thread" and key.thread_id is not None:
                thread = self.threads.get((key.tenant, key.user_id, key.thread_id))
                found = Stored(value=None, version=1, updated_at=thread.updated_at) if thread else None
            if (found.version if found else 0) != expected_version:
                self.lost_races += 1
                return None
            self.saves += 1
            saved = Stored(value=copy.deepcopy(value), version=expected_version + 1, updated_at=_now())
            self.docs[self._id(key)] = saved
            if key.scope == "thread" and key.thread_id is not None:
                tid = (key.tenant, key.user_id, key.thread_id)
                old = self.threads.get(tid)
                metadata = dict(old.metadata) if old else {}
                if value is None:
                    metadata.pop("workingMemory", None)
                else:
                    metadata["workingMemory"] = copy.deepcopy(value)
                created = old.created_at if old else saved.updated_at
                self.threads[tid] = Thread(
                    thread_id=key.thread_id,
                    user_id=key.user_id,
                    title=old.title if old else None,
                    metadata=metadata,
                    created_at=created or _now(),
                    updated_at=saved.updated_at or _now(),
                )
            return saved

    def create_thread(
        self, scope: Scope, thread_id: str, title: str | None, metadata: dict[str, Any]
    ) -> Thread:
        with self.lock:
            tid = (scope.tenant, scope.user_id, thread_id)
            if tid in self.threads:
                raise Conflict(f"thread {thread_id!r} already exists for this user", {"thread_id": thread_id})
            now = _now()
            thread = Thread(
                thread_id=thread_id,
                user_id=scope.user_id,
                title=title,
                metadata=copy.deepcopy(metadata),
                created_at=now,
                updated_at=now,
            )
            self.threads[tid] = thread
            key = WorkingMemoryKey(
                scope="thread", tenant=scope.tenant, user_id=scope.user_id, thread_id=thread_id
            )
            self.docs[self._id(key)] = Stored(
                value=copy.deepcopy(metadata.get("workingMemory")), version=1, updated_at=now
            )
            return thread

    def get_thread(self, scope: Scope, thread_id: str) -> Thread | None:
        with self.lock:
            found = self.threads.get((scope.tenant, scope.user_id, thread_id))
            return found.model_copy(deep=True) if found else None

    def list_threads(
        self, scope: Scope, limit: int, before: tuple[datetime, str] | None = None
    ) -> list[Thread]:
        with self.lock:
            mine = [
                t
                for (tenant, user, _), t in self.threads.items()
                if (tenant, user) == (scope.tenant, scope.user_id)
            ]
        mine.sort(key=lambda t: (t.updated_at, t.thread_id), reverse=True)
        if before is not None:
            mine = [t for t in mine if (t.updated_at, t.thread_id) < before]
        return [t.model_copy(deep=True) for t in mine[:limit]]

    def thread_ids(self, scope: Scope, thread_ids: list[str]) -> set[str]:
        with self.lock:
            return {t for t in thread_ids if (scope.tenant, scope.user_id, t) in self.threads}

    def update_thread(
        self,
        scope: Scope,
        thread_id: str,
        title: str | None,
        metadata: dict[str, Any] | None,
        set_title: bool,
    ) -> Thread | None:
        _storable(metadata)
        with self.lock:
            tid = (scope.tenant, scope.user_id, thread_id)
            old = self.threads.get(tid)
            if old is None:
                return None
            changes: dict[str, Any] = {"updated_at": _now()}
            if set_title:
                changes["title"] = title
            if metadata is not None:
                new = {k: copy.deepcopy(v) for k, v in metadata.items() if k != "workingMemory"}
                if "workingMemory" in old.metadata:
                    new["workingMemory"] = old.metadata["workingMemory"]
                changes["metadata"] = new
            self.threads[tid] = old.model_copy(update=changes)
            return self.threads[tid].model_copy(deep=True)

    def delete_thread(self, scope: Scope, thread_id: str) -> bool:
        with self.lock:
            tid = (scope.tenant, scope.user_id, thread_id)
            key = WorkingMemoryKey(
                scope="thread", tenant=scope.tenant, user_id=scope.user_id, thread_id=thread_id
            )
            self.docs.pop(self._id(key), None)
            return self.threads.pop(tid, None) is not None
