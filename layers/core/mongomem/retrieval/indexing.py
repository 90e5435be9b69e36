"""Keep the vector index in step with MongoDB: write-through after each change, outbox for the rest.

MongoDB is written first (index_state pending), the index second, then the state becomes indexed.
Whatever failed stays pending for index_sync. Active and superseded versions are indexed with
their status (search filters status=active unless asked for history); deleted ones leave the index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

from mongomem.adapters.memory_store import MemoryStore
from mongomem.models.common import utcnow
from mongomem.observability import logger
from mongomem.vectors.port import IndexDoc, IndexUnavailable, VectorIndex


def index_doc(doc: dict[str, Any]) -> IndexDoc:
    created = doc.get("created_at")
    return IndexDoc(
        id=doc["_id"],
        tenant=doc["tenant"],
        user_id=doc["user_id"],
        kind="memory",
        text=doc["text"],
        vector=list(doc["vector"]),
        fields={
            "type": doc["type"],
            "status": doc["status"],
            "lineage_id": doc["lineage_id"],
            "created_at": created.isoformat() if created is not None else None,
            "reinforcement_count": int(doc.get("reinforcement_count", 1)),
        },
    )


class MemoryIndexer:
    def __init__(self, store: MemoryStore, index: VectorIndex | None) -> None:
        self.store = store
        self.index = index

    def sync(self, docs: Iterable[dict[str, Any]]) -> int:
        """Upsert active and superseded versions, remove deleted ones; returns how many were synced."""
        if self.index is None:
            return 0
        docs = list(docs)
        # Superseded versions stay indexed (with status) so include_superseded searches rank them too.
        live = [d for d in docs if d["status"] != "deleted"]
        gone = [d["_id"] for d in docs if d["status"] == "deleted"]
        try:
            if live:
                self.index.ensure(len(live[0]["vector"]))
                self.index.upsert([index_doc(d) for d in live])
            if gone:
                self.index.delete(gone)
        except IndexUnavailable:
            logger.warning(
                "vector index unavailable; left pending for index_sync", extra={"count": len(docs)}
            )
            return 0
        self.store.set_index_state([d["_id"] for d in docs], "indexed", utcnow())
        return len(docs)

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
        batch: list[dict[str, Any]] = []
        total = seen = 0
        for doc in self.store.all_for_reindex():
            batch.append(doc)
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
