"""Data for the cross-collection contracts, written through a store's repositories where one exists.

A store is one implementation of every collection the contracts read together: `MongoStore` (one
database, the adapters) or tests.fakes.InMemoryStore (the fakes). Both provide the same seeding hooks,
so the erasure, backlog and directory contracts run against each with the same data.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from mongomem.adapters.mongo.sessions import MongoSessionRepository
from mongomem.adapters.mongo.snapshots import MongoSnapshotRepository
from mongomem.adapters.mongo.turns import MongoTurnRepository
from mongomem.adapters.mongo.working_memory import MongoWorkingMemoryRepository
from mongomem.models.common import Scope, utcnow
from mongomem.models.sessions import NewSnapshot, StoredSnapshot, TypeStatus
from mongomem.models.turns import NewTurn
from mongomem.models.working_memory import WorkingMemoryKey
from mongomem.shortterm.ports import NewBatch


class MongoStore:
    """The MongoDB side: the adapters over one database, and the hooks that write or read it directly."""

    def __init__(self, database: Any) -> None:
        self.database = database
        self.sessions = MongoSessionRepository(database)
        self.turns = MongoTurnRepository(database)
        self.snapshots = MongoSnapshotRepository(database)
        self.working_memory = MongoWorkingMemoryRepository(database)

    def add_memory(self, scope: Scope, memory_id: str, status: str, at: datetime) -> None:
        """A long-term memory version (the memory store's document shape: its repository is another's)."""
        self.database.db["memories"].insert_one(
            {"_id": memory_id, **scope.filter(), "status": status, "updated_at": at, "text": "a fact"}
        )

    def add_record(self, record: Any) -> None:
        """A long-term memory version written through the memory store (the org evidence contract)."""
        from mongomem.adapters.mongo.memory_store import MemoryStore

        assert MemoryStore(self.database.db).insert(record)

    def record(self, scope: Scope, memory_id: str) -> Any:
        from mongomem.adapters.mongo.memory_store import MemoryStore

        return MemoryStore(self.database.db).get(scope, memory_id)

    def add_document(self, collection: str, doc: dict[str, Any]) -> None:
        """A document of the scope in a collection no repository knows (one added later)."""
        self.database.db[collection].insert_one(dict(doc))

    def documents(self, scope: Scope) -> dict[str, int]:
        """How many documents of the scope each collection holds (those holding any)."""
        db = self.database.db
        found = {
            name: db[name].count_documents(scope.filter())
            for name in db.list_collection_names()
            if not name.startswith("system.")
        }
        return {name: n for name, n in found.items() if n}

    def turn_expiry(self) -> dict[tuple[str, int], datetime]:
        """(user_id, seq) -> expire_at of every turn given an expiry."""
        found = self.database.db["turns"].find({"expire_at": {"$exists": True}})
        return {(d["user_id"], d["seq"]): d["expire_at"] for d in found}


def conversation(
    store: Any, scope: Scope, session: str, turns: int = 2, recall: bool = True, at: datetime | None = None
) -> None:
    """A session with `turns` recorded turns (queued for recall when `recall`), nothing promoted."""
    now = at or utcnow()
    batch = NewBatch(turns, 3 * turns, None, None, now + timedelta(minutes=15))
    last = store.sessions.allocate(scope, session, batch, now).last_seq
    new = [
        NewTurn(
            seq=last - turns + 1 + i,
            role="user",
            content=f"{scope.user_id} says {i}",
            timestamp=now,
            recorded_at=now,
            tokens=3,
            recall_indexed=False if recall else None,
        )
        for i in range(turns)
    ]
    store.turns.insert_new(scope, session, new)


def snapshot(
    store: Any, scope: Scope, session: str, statuses: dict[str, str], at: datetime | None = None
) -> StoredSnapshot:
    """A snapshot of the session's first two seqs, with each kind's status, its turns tagged."""
    snap: StoredSnapshot = store.snapshots.create(
        NewSnapshot(
            tenant=scope.tenant,
            user_id=scope.user_id,
            session_id=session,
            from_seq=1,
            to_seq=2,
            turn_count=2,
            reason="size",
            created_at=at or utcnow(),
            extraction={kind: TypeStatus(status=status) for kind, status in statuses.items()},
        )
    )
    store.turns.tag_snapshot(snap)
    return snap


def memory(
    store: Any, scope: Scope, memory_id: str, status: str = "active", at: datetime | None = None
) -> None:
    store.add_memory(scope, memory_id, status, at or utcnow())


def working_memory(store: Any, scope: Scope, value: str) -> None:
    key = WorkingMemoryKey(scope="resource", tenant=scope.tenant, user_id=scope.user_id)
    store.working_memory.save(key, value, 0)
