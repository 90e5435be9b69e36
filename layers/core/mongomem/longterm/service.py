"""Direct memory writes (same reconciliation as extraction), reads with history, lists, deletes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import ValidationError

from mongomem.adapters.memory_store import MemoryStore
from mongomem.errors import InvalidInput, NotFound
from mongomem.extraction.reconcile import NewMemory, Reconciler
from mongomem.extraction.schemas import PAYLOADS
from mongomem.models.common import Scope, as_utc, parse_utc_datetime, utcnow
from mongomem.models.memory import (
    CreateMemoryRequest,
    DeleteResult,
    MemoryOut,
    MemoryPage,
    MemoryWithHistory,
    PayloadFilter,
    WriteResult,
    memory_key,
    memory_text,
)
from mongomem.ports import EmbeddingProvider
from mongomem.retrieval.indexing import MemoryIndexer


def memory_out(doc: dict[str, Any]) -> MemoryOut:
    embedding = doc.get("embedding") or {}
    return MemoryOut(
        memory_id=doc["_id"],
        lineage_id=doc["lineage_id"],
        version=doc["version"],
        type=doc["type"],
        status=doc["status"],
        payload=doc["payload"],
        text=doc["text"],
        reinforcement_count=doc.get("reinforcement_count", 1),
        last_reinforced_at=as_utc(doc["last_reinforced_at"]) if doc.get("last_reinforced_at") else None,
        created_at=as_utc(doc["created_at"]),
        supersedes=doc.get("supersedes"),
        superseded_by=doc.get("superseded_by"),
        evidence=doc.get("evidence") or [],
        decisions=[{**d, "at": as_utc(d["at"])} for d in doc.get("decisions") or []],
        embedding_model=embedding.get("model"),
        embedding_dim=embedding.get("dim"),
        index_state=doc.get("index_state"),
        valid_from=doc.get("valid_from"),
        valid_to=doc.get("valid_to"),
        expires_at=as_utc(doc["expires_at"]) if doc.get("expires_at") else None,
    )


class MemoryService:
    def __init__(
        self, store: MemoryStore, reconciler: Reconciler, embedder: EmbeddingProvider, indexer: MemoryIndexer
    ) -> None:
        self.store = store
        self.reconciler = reconciler
        self.embedder = embedder
        self.indexer = indexer

    def create(self, scope: Scope, request: CreateMemoryRequest) -> WriteResult:
        model = PAYLOADS[request.type.value]
        try:
            item = model.model_validate(request.payload)
        except ValidationError as exc:
            details = [
                {"path": "payload." + ".".join(str(p) for p in e["loc"]), "message": e["msg"]}
                for e in exc.errors()
            ]
            raise InvalidInput(f"payload is not a valid {request.type.value} memory", details) from exc
        payload = item.model_dump(exclude={"evidence_seqs"}, exclude_none=True)
        text = memory_text(request.type.value, payload)
        vector = self.embedder.embed([text], "document")[0]
        outcome = self.reconciler.apply(
            scope,
            NewMemory(
                type=request.type.value,
                payload=payload,
                key=memory_key(request.type.value, payload),
                text=text,
                vector=vector,
                evidence={"snapshot_id": None, "seqs": [], "source": "api"},
                embedding_model=self.embedder.model,
                expires_at=request.expires_at,
            ),
            reconcile=request.reconcile,
        )
        if outcome.touched:
            self.indexer.sync(self.store.get_many(scope, outcome.touched))
        fresh = self.store.get(scope, outcome.doc["_id"]) or outcome.doc
        return WriteResult(decision=outcome.decision, reason=outcome.reason, memory=memory_out(fresh))

    def get(self, scope: Scope, memory_id: str, history: bool) -> MemoryWithHistory:
        doc = self.store.get(scope, memory_id)
        if doc is None:
            raise NotFound(f"memory {memory_id!r} not found for this user", {"memory_id": memory_id})
        chain = [memory_out(d) for d in self.store.lineage(scope, doc["lineage_id"])] if history else None
        return MemoryWithHistory(memory=memory_out(doc), history=chain)

    def list(
        self,
        scope: Scope,
        memory_type: str | None,
        status: str | None,
        limit: int,
        cursor: str | None,
        payload: PayloadFilter | None = None,
    ) -> MemoryPage:
        before: datetime | None = None
        if cursor:
            try:
                before = parse_utc_datetime(cursor)
            except ValueError as exc:
                raise InvalidInput("cursor is not one this API returned", {"path": "cursor"}) from exc
        if payload is not None and (payload.exact or payload.prefix) and memory_type != "semantic":
            raise InvalidInput(
                "subject, attribute and subject_prefix filter semantic facts: add type=semantic",
                {"path": "type"},
            )
        docs = self.store.list_page(scope, memory_type, status, limit + 1, before, payload)
        more = len(docs) > limit
        docs = docs[:limit]
        return MemoryPage(
            memories=[memory_out({**d, "vector": None}) for d in docs],
            next_cursor=as_utc(docs[-1]["created_at"]).isoformat() if more and docs else None,
        )

    def delete(self, scope: Scope, memory_id: str) -> DeleteResult:
        doc = self.store.get(scope, memory_id)
        if doc is None or doc["status"] == "deleted":
            raise NotFound(f"memory {memory_id!r} not found for this user", {"memory_id": memory_id})
        count = self.store.delete_lineage(scope, doc["lineage_id"], utcnow())
        self.indexer.sync(self.store.lineage(scope, doc["lineage_id"]))
        return DeleteResult(lineage_id=doc["lineage_id"], deleted_versions=count)
