"""Keep the vector index in step with MongoDB: write-through after each change, outbox for the rest.

MongoDB is written first (index_state pending), the index second, then the state becomes indexed.
Whatever failed stays pending for index_sync. Active and superseded versions are indexed with
their status (search filters status=active unless asked for history); deleted ones leave the index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import timedelta
from typing import Any

from mongomem.longterm.ports import MemoryRepository
from mongomem.models.common import Scope, utcnow
from mongomem.models.memory import MemoryRecord
from mongomem.observability import logger
from mongomem.vectors.port import (
    DimensionMismatch,
    FieldValue,
    IndexDoc,
    IndexUnavailable,
    VectorIndex,
    term_of,
    time_key,
)

# The index field holding a memory's metadata value of a partition key (memory.metadata.partition_keys).
METADATA_PREFIX = "metadata."


def filter_fields(record: MemoryRecord, partition_keys: Sequence[str] = ()) -> dict[str, FieldValue]:
    """The fields search filters on inside the index query: scope, tags, domain, partition keys."""
    payload = record.payload
    fields: dict[str, FieldValue] = {"visibility": record.visibility}
    if record.agent_id:
        fields["agent_id"] = record.agent_id
    tags = [str(t) for t in payload.get("tags") or [] if isinstance(t, str)]
    if tags:
        fields["tags"] = tags
    if isinstance(payload.get("domain"), str):
        fields["domain"] = payload["domain"]
    for key in partition_keys:
        value: Any = record.metadata.get(key)
        if isinstance(value, str | int | float | bool):
            # as keywords, whatever the type: one tenant's number never clashes with another's string
            fields[METADATA_PREFIX + key] = term_of(value)
    return fields


def index_doc(record: MemoryRecord, partition_keys: Sequence[str] = ()) -> IndexDoc:
    return IndexDoc(
        id=record.memory_id,
        tenant=record.tenant,
        user_id=record.user_id,
        kind="memory",
        text=record.text,
        vector=list(record.vector or []),
        fields={
            "type": record.type,
            "status": record.status,
            "lineage_id": record.lineage_id,
            "created_at": record.created_at.isoformat(),
            "reinforcement_count": record.reinforcement_count,
            **({"observed_at": time_key(record.observed_at)} if record.observed_at else {}),
            # candidates for reconciliation come only from vectors of the same embedding model
            "model": record.embedding_model or "",
            **filter_fields(record, partition_keys),
        },
    )


class MemoryIndexer:
    def __init__(
        self, store: MemoryRepository, index: VectorIndex | None, partition_keys: Sequence[str] = ()
    ) -> None:
        self.store = store
        self.index = index
        self.partition_keys = tuple(partition_keys)

    def sync(self, records: Iterable[MemoryRecord]) -> int:
        """Upsert active and superseded versions, remove deleted ones; returns how many were synced.

        Versions are written one vector dimension at a time: after a change of embedding model an
        update supersedes an old-model version with a new-model one, and the group the index cannot
        take stays pending (until `mongomem reindex --re-embed`) while the other is indexed.
        """
        if self.index is None:
            return 0
        records = list(records)
        # Superseded versions stay indexed (with status) so include_superseded searches rank them too.
        groups: dict[int, list[MemoryRecord]] = {}
        for r in records:
            if r.status != "deleted" and r.vector:
                groups.setdefault(len(r.vector), []).append(r)
        gone = [r.memory_id for r in records if r.status == "deleted"]
        done: list[str] = []
        for dim, live in sorted(groups.items()):
            try:
                self.index.ensure(dim)
                self.index.upsert([index_doc(r, self.partition_keys) for r in live])
            except (IndexUnavailable, DimensionMismatch) as exc:
                logger.warning(
                    "vector index cannot take these versions; left pending for index_sync",
                    extra={"count": len(live), "dim": dim, "reason": str(exc)},
                )
                continue
            done.extend(r.memory_id for r in live)
        if gone:
            try:
                self.index.delete(gone)
                done.extend(gone)
            except IndexUnavailable as exc:
                logger.warning(
                    "vector index unavailable; deletions left pending for index_sync",
                    extra={"count": len(gone), "reason": str(exc)},
                )
        self.store.set_index_state(done, "indexed", utcnow())
        return len(done)

    def sync_ids(self, scope: Scope, ids: list[str]) -> int:
        """Sync the versions of `scope` with these ids (MongoDB's current state)."""
        return self.sync(self.store.get_many(scope, ids))

    def sync_pending(self, older_than_seconds: float = 60.0, limit: int = 500) -> int:
        """Re-index what is still pending after `older_than_seconds` (the index_sync schedule)."""
        done = 0
        while True:
            batch = self.store.pending_index(utcnow() - timedelta(seconds=older_than_seconds), limit)
            if not batch:
                return done
            written = self.sync(batch)
            if written == 0:
                return done
            done += written

    def rebuild(self, drop: bool = True, progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the index from MongoDB (`mongomem reindex`), dropping it first unless `drop` is False.

        `progress(synced, seen)` is called after every batch; returns how many versions were synced.
        """
        if self.index is None:
            return 0
        if drop:
            self.index.drop()
        batch: list[MemoryRecord] = []
        total = seen = 0
        for record in self.store.all_versions():
            batch.append(record)
            if len(batch) >= 500:
                total += self.sync(batch)
                seen += len(batch)
                batch = []
                if progress is not None:
                    progress(total, seen)
        if batch:
            total += self.sync(batch)
            seen += len(batch)
        if progress is not None:
            progress(total, seen)
        return total
