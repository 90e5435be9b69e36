"""The extractor behind every memory type: prompt -> LLM -> validate -> embed -> reconcile -> index."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import ValidationError

from mongomem.adapters.memory_store import MemoryStore
from mongomem.config import MemoryType
from mongomem.errors import ExtractionFailed
from mongomem.extraction import prompts
from mongomem.extraction.reconcile import NewMemory, Reconciler
from mongomem.extraction.registry import ExtractionResult, SnapshotInput
from mongomem.extraction.schemas import ANSWERS, json_schema
from mongomem.models.common import Scope, as_utc
from mongomem.models.memory import memory_key, memory_text
from mongomem.observability import logger
from mongomem.ports import EmbeddingProvider, LLMProvider, LLMRequest
from mongomem.retrieval.indexing import MemoryIndexer


class LLMExtractor:
    def __init__(
        self,
        memory_type: MemoryType,
        llm: LLMProvider,
        embedder: EmbeddingProvider,
        store: MemoryStore,
        reconciler: Reconciler,
        indexer: MemoryIndexer,
    ) -> None:
        self.memory_type = memory_type
        self.llm = llm
        self.embedder = embedder
        self.store = store
        self.reconciler = reconciler
        self.indexer = indexer

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        snap, turns = item.snapshot, item.turns
        if not turns:
            return ExtractionResult(note="the snapshot holds no turns")
        task = self.memory_type.value
        snapshot_time = as_utc(snap["created_at"]).isoformat()
        system, prompt = prompts.build(task, turns, snapshot_time)
        context = {
            "turns": [
                {
                    "seq": t["seq"],
                    "role": t["role"],
                    "content": t["content"],
                    "timestamp": as_utc(t["timestamp"]).isoformat(),
                    "name": t.get("name"),
                }
                for t in turns
            ],
            "snapshot_time": snapshot_time,
            "user_id": snap["user_id"],
        }
        answer_model = ANSWERS[task]
        result = self.llm.complete_json(
            LLMRequest(
                task=self.memory_type.value,
                system=system,
                prompt=prompt,
                schema=json_schema(answer_model),
                schema_name=f"{task}_memories",
                context=context,
                deadline=item.deadline,
            )
        )
        try:
            answer = answer_model.model_validate_json(result.text)
        except ValidationError as exc:
            logger.warning(
                "LLM answer rejected: it does not match the schema; the message will be retried",
                extra={
                    "snapshot_id": snap["_id"],
                    "memory_type": task,
                    "errors": exc.error_count(),
                    "answer_chars": len(result.text),
                    "model": result.model,
                },
            )
            raise ExtractionFailed(
                f"the {task} answer did not match its schema ({exc.error_count()} errors)"
            ) from exc
        items = list(getattr(answer, "items", []))
        usage = ExtractionResult(input_tokens=result.input_tokens, output_tokens=result.output_tokens)
        if not items:
            usage.note = "nothing of this kind in the snapshot"
            return usage
        # The snapshot's owner scopes every write, never anything in the LLM's answer.
        scope = Scope(tenant=snap["tenant"], user_id=snap["user_id"])
        seqs = {t["seq"] for t in turns}
        payloads: list[tuple[dict[str, Any], list[int]]] = []
        for entry in items:
            evidence = sorted({s for s in entry.evidence_seqs if s in seqs}) or sorted(seqs)
            payloads.append((entry.model_dump(exclude={"evidence_seqs"}, exclude_none=True), evidence))
        texts = [memory_text(task, p) for p, _ in payloads]
        vectors = self.embedder.embed(texts, "document")
        decisions: Counter[str] = Counter()
        touched: list[str] = []
        ids: list[str] = []
        for (payload, evidence), text, vector in zip(payloads, texts, vectors, strict=True):
            outcome = self.reconciler.apply(
                scope,
                NewMemory(
                    type=task,
                    payload=payload,
                    key=memory_key(task, payload),
                    text=text,
                    vector=vector,
                    evidence={"snapshot_id": snap["_id"], "seqs": evidence, "source": "extraction"},
                    embedding_model=self.embedder.model,
                ),
                deadline=item.deadline,
            )
            decisions[outcome.decision] += 1
            touched.extend(outcome.touched)
            ids.append(outcome.doc["_id"])
            logger.info(
                "reconciled",
                extra={
                    "decision": outcome.decision,
                    "reason": outcome.reason,
                    "memory_id": outcome.doc["_id"],
                    "by": outcome.by,
                },
            )
        if touched:
            self.indexer.sync(self.store.get_many(scope, list(dict.fromkeys(touched))))
        usage.memories = [{"memory_id": i} for i in ids]
        usage.decisions = dict(decisions)
        return usage
