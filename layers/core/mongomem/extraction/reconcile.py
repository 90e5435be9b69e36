"""Reconcile a new memory with what is known: ADD, UPDATE (new version) or REINFORCE (counted once).

Clear cases are decided by rules (exact key, value equality, cosine thresholds); only ambiguous
vector matches go to the LLM. Every decision is stored with its reason. History is never destroyed:
UPDATE writes a new version and marks the old one superseded.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from mongomem.adapters.memory_store import MemoryStore
from mongomem.errors import ExtractionFailed
from mongomem.extraction.schemas import ReconcileAnswer, json_schema
from mongomem.models.common import Scope, utcnow
from mongomem.models.memory import memory_text, norm
from mongomem.ports import LLMProvider, LLMRequest

# Cosine similarity above which a memory restates a candidate, and below which it is unrelated.
# These suit embedders whose unrelated texts score low (Titan, Voyage, OpenAI, hashing); an embedder
# with a different similarity profile declares its own `similarity_thresholds` (e.g. the local e5).
REINFORCE_AT = 0.93
AMBIGUOUS_FROM = 0.80


def thresholds_for(embedder: object) -> tuple[float, float]:
    """(reinforce_at, ambiguous_from) for an embedder's similarity profile."""
    declared = getattr(embedder, "similarity_thresholds", None)
    return (float(declared[0]), float(declared[1])) if declared else (REINFORCE_AT, AMBIGUOUS_FROM)


@dataclass
class NewMemory:
    type: str
    payload: dict[str, Any]
    key: str
    text: str
    vector: list[float]
    evidence: dict[str, Any]
    embedding_model: str
    expires_at: datetime | None = None

    @property
    def snapshot_id(self) -> str | None:
        value = self.evidence.get("snapshot_id")
        return str(value) if value else None


@dataclass
class Outcome:
    decision: str
    reason: str
    doc: dict[str, Any]
    by: str = "rule"
    score: float | None = None
    touched: list[str] = field(default_factory=list)  # ids whose index entry must be (re)written


def cosine(a: list[float], b: list[float]) -> float:
    if len(a) != len(b):
        return -1.0
    return sum(x * y for x, y in zip(a, b, strict=True))


def _same_content(memory_type: str, old: dict[str, Any], new: dict[str, Any], score: float) -> bool:
    if memory_type == "semantic":
        return norm(old["value"]) == norm(new["value"]) or score >= 0.97
    if memory_type == "episodic":
        return True  # the key already holds title and date
    if memory_type == "procedural":
        return [norm(s) for s in old["steps"]] == [norm(s) for s in new["steps"]] or score >= 0.97
    return norm(old["definition"]) == norm(new["definition"]) or score >= 0.90


def _merged_payload(memory_type: str, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
    """What a restatement adds to the stored payload (taxonomic aliases, episode participants)."""
    if memory_type == "taxonomic":
        seen = {norm(a) for a in old.get("aliases") or []} | {norm(old["term"])}
        extra = [a for a in [*(new.get("aliases") or []), new["term"]] if norm(a) not in seen]
        if extra:
            return {**old, "aliases": [*(old.get("aliases") or []), *dict.fromkeys(extra)]}
    if memory_type == "episodic":
        seen = {norm(p) for p in old.get("participants") or []}
        extra = [p for p in new.get("participants") or [] if norm(p) not in seen]
        if extra:
            return {**old, "participants": [*(old.get("participants") or []), *extra]}
    return None


class Reconciler:
    def __init__(
        self,
        store: MemoryStore,
        llm: LLMProvider | None,
        reinforce_at: float = REINFORCE_AT,
        ambiguous_from: float = AMBIGUOUS_FROM,
    ) -> None:
        self.store = store
        self.llm = llm
        self.reinforce_at = reinforce_at
        self.ambiguous_from = ambiguous_from

    def apply(
        self, scope: Scope, new: NewMemory, reconcile: bool = True, deadline: float | None = None
    ) -> Outcome:
        """Decide and write; safe to repeat for the same snapshot (a redelivery changes nothing)."""
        now = utcnow()
        if new.snapshot_id:
            prior = self.store.with_evidence(scope, new.type, new.key, new.snapshot_id)
            if prior is not None:
                self.store.heal_lineage(scope, prior["lineage_id"], prior["version"], prior["_id"], now)
                return Outcome("NOOP", "already applied from this snapshot", prior)
        if not reconcile:
            return self._add(scope, new, now, "reconciliation switched off by the caller", "api")
        by_key = self.store.active_by_key(scope, new.type, new.key)
        if by_key:
            target = by_key[0]
            score = cosine(new.vector, target.get("vector") or [])
            if _same_content(new.type, target["payload"], new.payload, score):
                return self._reinforce(scope, new, target, now, "same key and same content", "rule", score)
            return self._update(scope, new, target, now, "same key, new content", "rule", score)
        ranked = sorted(
            ((cosine(new.vector, c.get("vector") or []), c) for c in self.store.candidates(scope, new.type)),
            key=lambda pair: pair[0],
            reverse=True,
        )
        best_score, best = ranked[0] if ranked else (0.0, None)
        if best is not None and best_score >= self.reinforce_at:
            return self._reinforce(
                scope, new, best, now, f"restates a memory (cosine {best_score:.2f})", "rule", best_score
            )
        if best is not None and best_score >= self.ambiguous_from and self.llm is not None:
            return self._ask_llm(
                scope, new, [c for s, c in ranked[:3] if s >= self.ambiguous_from], now, best_score, deadline
            )
        return self._add(scope, new, now, "no memory with this key or meaning", "rule", best_score or None)

    # -- decisions -----------------------------------------------------------------------------
    def _ask_llm(
        self,
        scope: Scope,
        new: NewMemory,
        candidates: list[dict[str, Any]],
        now: datetime,
        best: float,
        deadline: float | None = None,
    ) -> Outcome:
        assert self.llm is not None
        listing = [
            {
                "id": c["_id"],
                "key": c["key"],
                "text": c["text"],
                "payload": c["payload"],
                "score": round(cosine(new.vector, c.get("vector") or []), 4),
            }
            for c in candidates
        ]
        prompt = (
            "A new memory was extracted. Decide whether it is new (ADD), a changed version of one "
            "candidate (UPDATE), or the same thing restated (REINFORCE).\n\n"
            f"New memory ({new.type}): {json.dumps(new.payload, ensure_ascii=False)}\n\n"
            f"Candidates:\n{json.dumps(listing, ensure_ascii=False, indent=1)}"
        )
        request = LLMRequest(
            task="reconcile",
            system="You reconcile an agent's long-term memories. Answer with JSON only.",
            prompt=prompt,
            schema=json_schema(ReconcileAnswer),
            schema_name="reconcile",
            context={
                "new": {"type": new.type, "key": new.key, "text": new.text, "payload": new.payload},
                "candidates": listing,
            },
            max_tokens=512,
            deadline=deadline,
        )
        result = self.llm.complete_json(request)
        try:
            answer = ReconcileAnswer.model_validate_json(result.text)
        except ValidationError as exc:
            raise ExtractionFailed(
                f"the reconciliation answer did not match its schema: {exc.error_count()} errors"
            ) from exc
        target = next((c for c in candidates if c["_id"] == answer.target_id), None)
        if answer.decision == "ADD" or target is None:
            return self._add(scope, new, now, f"LLM: {answer.reason}", "llm", best)
        score = cosine(new.vector, target.get("vector") or [])
        if answer.decision == "UPDATE":
            return self._update(scope, new, target, now, f"LLM: {answer.reason}", "llm", score)
        return self._reinforce(scope, new, target, now, f"LLM: {answer.reason}", "llm", score)

    def _decision(
        self,
        decision: str,
        reason: str,
        by: str,
        score: float | None,
        candidate: str | None,
        new: NewMemory,
        now: datetime,
    ) -> dict[str, Any]:
        return {
            "decision": decision,
            "reason": reason,
            "by": by,
            "score": round(score, 4) if score is not None else None,
            "candidate_id": candidate,
            "snapshot_id": new.snapshot_id,
            "at": now,
        }

    def _doc(
        self,
        scope: Scope,
        new: NewMemory,
        lineage_id: str,
        version: int,
        supersedes: str | None,
        decision: dict[str, Any],
        now: datetime,
        payload: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        body = payload or new.payload
        return {
            "_id": self._id(scope, new, lineage_id, version),
            "lineage_id": lineage_id,
            "version": version,
            **scope.filter(),
            "type": new.type,
            "key": new.key,
            "payload": body,
            "text": memory_text(new.type, body),
            "status": "active",
            "supersedes": supersedes,
            "superseded_by": None,
            "reinforcement_count": 1,
            "last_reinforced_at": now,
            "evidence": [new.evidence],
            "decisions": [decision],
            "valid_from": body.get("valid_from") or now.date().isoformat(),
            "valid_to": None,
            "created_at": now,
            "updated_at": now,
            "vector": new.vector,
            "embedding": {"model": new.embedding_model, "dim": len(new.vector)},
            "index_state": "pending",
            "expires_at": new.expires_at,
        }

    @staticmethod
    def _id(scope: Scope, new: NewMemory, lineage_id: str, version: int) -> str:
        if not new.snapshot_id:
            return "mem-" + uuid.uuid4().hex[:24]
        # Extraction ids are derived from their inputs, so a redelivered write collides instead of duplicating.
        raw = f"{scope.tenant}|{scope.user_id}|{new.type}|{new.key}|{new.snapshot_id}|{lineage_id}|{version}"
        return "mem-" + hashlib.sha256(raw.encode()).hexdigest()[:24]

    def _add(
        self, scope: Scope, new: NewMemory, now: datetime, reason: str, by: str, score: float | None = None
    ) -> Outcome:
        lineage = "lin-" + (
            hashlib.sha256(
                f"{scope.tenant}|{scope.user_id}|{new.type}|{new.key}|{new.snapshot_id}".encode()
            ).hexdigest()[:24]
            if new.snapshot_id
            else uuid.uuid4().hex[:24]
        )
        doc = self._doc(
            scope, new, lineage, 1, None, self._decision("ADD", reason, by, score, None, new, now), now
        )
        self.store.insert(doc)
        return Outcome("ADD", reason, doc, by, score, [doc["_id"]])

    def _update(
        self,
        scope: Scope,
        new: NewMemory,
        old: dict[str, Any],
        now: datetime,
        reason: str,
        by: str,
        score: float | None,
    ) -> Outcome:
        payload = new.payload
        if new.type == "taxonomic":
            payload = (
                _merged_payload(
                    "taxonomic", {**new.payload, "aliases": old["payload"].get("aliases", [])}, new.payload
                )
                or new.payload
            )
        decision = self._decision("UPDATE", reason, by, score, old["_id"], new, now)
        doc = self._doc(scope, new, old["lineage_id"], old["version"] + 1, old["_id"], decision, now, payload)
        doc["reinforcement_count"] = 1
        # Insert first, then supersede: a crash in between leaves two actives that the redelivery heals.
        self.store.insert(doc)
        self.store.supersede(scope, old["_id"], doc["_id"], now)
        return Outcome("UPDATE", reason, doc, by, score, [doc["_id"], old["_id"]])

    def _reinforce(
        self,
        scope: Scope,
        new: NewMemory,
        target: dict[str, Any],
        now: datetime,
        reason: str,
        by: str,
        score: float | None,
    ) -> Outcome:
        decision = self._decision("REINFORCE", reason, by, score, target["_id"], new, now)
        merged = _merged_payload(new.type, target["payload"], new.payload)
        merge = {"payload": merged, "text": memory_text(new.type, merged)} if merged else None
        doc = self.store.reinforce(scope, target["_id"], new.evidence, decision, now, merge)
        if doc is None:  # this snapshot was already counted (or the target changed meanwhile)
            current = self.store.get(scope, target["_id"]) or target
            return Outcome("NOOP", "restatement already counted", current, by, score)
        return Outcome("REINFORCE", reason, doc, by, score, [doc["_id"]] if merge else [])
