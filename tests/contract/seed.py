"""Data for the cross-collection contracts: written through the repositories where one exists."""

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


def conversation(
    database: Any, scope: Scope, session: str, turns: int = 2, recall: bool = True, at: datetime | None = None
) -> None:
    """A session with `turns` recorded turns (queued for recall when `recall`), nothing promoted."""
    now = at or utcnow()
    sessions = MongoSessionRepository(database)
    last = sessions.allocate(
        scope, session, None, turns, 3 * turns, None, now + timedelta(minutes=15), now
    ).last_seq
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
    MongoTurnRepository(database).insert_new(scope, session, new)


def snapshot(
    database: Any, scope: Scope, session: str, statuses: dict[str, str], at: datetime | None = None
) -> StoredSnapshot:
    """A snapshot of the session's first two seqs, with each kind's status, its turns tagged."""
    snap = MongoSnapshotRepository(database).create(
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
    MongoTurnRepository(database).tag_snapshot(snap)
    return snap


def memory(
    database: Any, scope: Scope, memory_id: str, status: str = "active", at: datetime | None = None
) -> None:
    """A long-term memory version (the memory store's document shape: its repository is another's work)."""
    database.db["memories"].insert_one(
        {"_id": memory_id, **scope.filter(), "status": status, "updated_at": at or utcnow(), "text": "a fact"}
    )


def working_memory(database: Any, scope: Scope, value: str) -> None:
    key = WorkingMemoryKey(scope="resource", tenant=scope.tenant, user_id=scope.user_id)
    MongoWorkingMemoryRepository(database).save(key, value, 0)
