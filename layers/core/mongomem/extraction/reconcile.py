"""Reconcile a new memory with what is known: ADD, UPDATE (new version) or REINFORCE (counted once).

Order of evidence, strongest first:
1. the same snapshot already wrote it (an SQS redelivery): NOOP;
2. the same match key (the kind's `key`): the kind's normalised comparison decides - the same value is a
   REINFORCE, another value an UPDATE of exactly that lineage (numbers, times, names and short values are
   compared exactly, never by an embedding score);
3. the nearest memories of the kind by meaning, asked of the vector index (same scope, kind, embedding
   model, active): a restatement in other words is a REINFORCE; an ambiguous match goes to the LLM when
   there is one, which may ADD or REINFORCE but never UPDATE a memory of another key;
4. otherwise ADD.
Every decision is stored with its reason and whether a rule or the LLM made it. History is never
destroyed: UPDATE writes a new version and marks the old one superseded.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from mongomem.errors import ExtractionFailed
from mongomem.extraction.answers import NoJSON, first_json
from mongomem.extraction.schemas import ReconcileAnswer, json_schema
from mongomem.kinds import MemoryKind
from mongomem.kinds.base import hard_anchors
from mongomem.longterm.ports import MemoryRepository
from mongomem.models.common import Scope, utcnow
from mongomem.models.memory import DecisionRecord, EvidenceRef, MemoryRecord, Visibility
from mongomem.observability import logger
from mongomem.ports import LLMProvider, LLMRequest
from mongomem.vectors.port import DimensionMismatch, IndexUnavailable, SearchQuery, VectorIndex

# Cosine similarity above which a memory found by meaning may restate the new one, and below which it
# is unrelated. These suit embedders whose unrelated texts score low (Titan, Voyage, OpenAI, hashing); an
# embedder with another similarity profile declares its own `similarity_thresholds` (e.g. the local e5).
REINFORCE_AT = 0.93
AMBIGUOUS_FROM = 0.80
# How many memories of the kind the vector index is asked for.
CANDIDATES = 5


def contributors(record: MemoryRecord) -> set[str]:
    """The users whose statements a version's evidence holds."""
    return {e.user_id for e in record.evidence if e.user_id}


def thresholds_for(embedder: object) -> tuple[float, float]:
    """(reinforce_at, ambiguous_from) for an embedder's similarity profile."""
    declared = getattr(embedder, "similarity_thresholds", None)
    return (float(declared[0]), float(declared[1])) if declared else (REINFORCE_AT, AMBIGUOUS_FROM)


@dataclass
class NewMemory:
    kind: MemoryKind
    payload: dict[str, Any]
    vector: list[float] | None
    evidence: EvidenceRef
    embedding_model: str
    expires_at: datetime | None = None
    visibility: Visibility = "private"
    # the agent whose private memory it is (None: shared by the user's agents); reconciled within it
    agent_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    # a tenant-wide caller's direct write (memory_service key, operator): it changes an org memory at
    # once; a user's statement (their extraction, their service account) may only propose a change
    authoritative: bool = False

    @property
    def key(self) -> str:
        return self.kind.key(self.payload)

    @property
    def text(self) -> str:
        return self.kind.text(self.payload)

    @property
    def snapshot_id(self) -> str | None:
        return self.evidence.snapshot_id

    def observed(self, now: datetime) -> datetime:
        return self.evidence.observed_at or now


@dataclass
class Outcome:
    decision: str
    reason: str
    record: MemoryRecord | None  # None: a retraction that found nothing to end
    by: str = "rule"
    score: float | None = None
    touched: list[str] = field(default_factory=list)  # ids whose index entry must be (re)written


@dataclass
class KnownKeys:
    """What one read found for a commit's match keys: their active versions and the versions already
    holding the snapshot's evidence. A key written during the commit is `stale` and read again from the
    store, so two items of one commit with the same key see each other's write."""

    snapshot_id: str | None
    records: list[MemoryRecord]
    keys: set[str]
    stale: set[str] = field(default_factory=set)

    def knows(self, key: str) -> bool:
        return key in self.keys and key not in self.stale

    def with_evidence(self, key: str) -> MemoryRecord | None:
        held = [
            r
            for r in self.records
            if r.key == key and any(e.snapshot_id == self.snapshot_id for e in r.evidence)
        ]
        return max(held, key=lambda r: r.version) if held else None

    def active(self, key: str, agent_id: str | None) -> list[MemoryRecord]:
        found = [r for r in self.records if r.key == key and r.status == "active" and r.agent_id == agent_id]
        return sorted(found, key=lambda r: -r.version)


class Reconciler:
    def __init__(
        self,
        store: MemoryRepository,
        index: VectorIndex | None,
        llm: LLMProvider | None,
        reinforce_at: float = REINFORCE_AT,
        ambiguous_from: float = AMBIGUOUS_FROM,
    ) -> None:
        self.store = store
        self.index = index
        self.llm = llm
        self.reinforce_at = reinforce_at
        self.ambiguous_from = ambiguous_from

    def known_keys(
        self, scope: Scope, kind: MemoryKind, keys: list[str], snapshot_id: str | None
    ) -> KnownKeys:
        """Read a commit's keys at once (one round trip instead of two per item)."""
        return KnownKeys(snapshot_id, self.store.by_keys(scope, kind.name, keys, snapshot_id), set(keys))

    def apply(
        self,
        scope: Scope,
        new: NewMemory,
        reconcile: bool = True,
        deadline: float | None = None,
        known: KnownKeys | None = None,
    ) -> Outcome:
        """Decide and write; safe to repeat for the same snapshot (a redelivery changes nothing).
        `known` is the commit's read of its keys (`known_keys`); without it the key is read here."""
        now = utcnow()
        cached = known is not None and known.snapshot_id == new.snapshot_id and known.knows(new.key)
        if known is not None:
            known.stale.add(new.key)  # whatever happens next may write this key
        if new.snapshot_id:
            prior = (
                known.with_evidence(new.key)
                if cached and known is not None
                else self.store.with_evidence(scope, new.kind.name, new.key, new.snapshot_id)
            )
            if prior is not None:
                if prior.status == "active":  # a version kept as history never supersedes anything
                    self.store.heal_lineage(scope, prior.lineage_id, prior.version, prior.memory_id, now)
                return Outcome("NOOP", "already applied from this snapshot", prior)
        retraction = new.kind.retraction(new.payload)
        if not reconcile and not retraction:
            return self._add(scope, new, now, "reconciliation switched off by the caller", "api")
        by_key = (
            known.active(new.key, new.agent_id)
            if cached and known is not None
            else self.store.active_by_key(scope, new.kind.name, new.key, new.agent_id)
        )
        if retraction:
            return self._retract(scope, new, by_key, now)
        if by_key:
            target = by_key[0]
            if new.kind.same_content(target.payload, new.payload):
                return self._reinforce(scope, new, target, now, "same key and the same value", "rule", None)
            if target.observed_at is not None and new.observed(now) < target.observed_at:
                # an older statement arriving late (history imported, snapshots extracted out of order)
                return self._history(scope, new, target, now)
            if new.visibility == "org" and not new.authoritative:
                return self._propose(scope, new, target, now)
            outcome = self._update(scope, new, target, now, "same key, another value", "rule", None)
            assert outcome.record is not None
            for other in by_key[1:]:
                # a second active value of the key (written with reconcile off, or by an older release
                # that spelled the subject another way) is a conflict this statement settles
                self.store.supersede(scope, other.memory_id, outcome.record.memory_id, now)
                outcome.touched.append(other.memory_id)
            return outcome
        ranked = self._by_meaning(scope, new)
        if not ranked:
            return self._add(scope, new, now, "no memory with this key or meaning", "rule")
        best_score, best = ranked[0]
        if best_score >= self.reinforce_at and new.kind.restates(best.payload, new.payload):
            reason = f"restates a memory in other words (cosine {best_score:.2f})"
            return self._reinforce(scope, new, best, now, reason, "rule", best_score)
        ambiguous = [(s, c) for s, c in ranked if s >= self.ambiguous_from]
        if not ambiguous:
            return self._add(scope, new, now, "no memory with this key or meaning", "rule", best_score)
        if self.llm is None:
            for score, candidate in ambiguous:
                if new.kind.restates(candidate.payload, new.payload):
                    reason = f"restates a memory in other words (cosine {score:.2f}, same anchors)"
                    return self._reinforce(scope, new, candidate, now, reason, "rule", score)
            return self._add(scope, new, now, "close in meaning, but says something else", "rule", best_score)
        return self._ask_llm(scope, new, ambiguous[:3], now, deadline)

    def _by_meaning(self, scope: Scope, new: NewMemory) -> list[tuple[float, MemoryRecord]]:
        """The kind's nearest active memories of this scope and embedding model, best first."""
        if self.index is None or not new.vector:
            return []
        query = SearchQuery(
            tenant=scope.tenant,
            user_id=scope.user_id,
            kind="memory",
            text=new.text,
            vector=new.vector,
            top_k=CANDIDATES,
            filters={
                "type": new.kind.name,
                "status": "active",
                "model": new.embedding_model,
                # one agent's memories, or (None) the user's shared ones: never another agent's
                "agent_id": [new.agent_id],
            },
            mode="knn",
        )
        try:
            hits = self.index.search(query)
        except (IndexUnavailable, DimensionMismatch) as exc:
            # without the index (or with another model's index) reconciliation falls back to keys only
            logger.info(
                "reconciling by key only: the vector index cannot be asked", extra={"reason": str(exc)}
            )
            return []
        scores = {h.id: h.score for h in hits}
        found = [
            r
            for r in self.store.get_many(scope, list(scores))
            if r.status == "active"
            and r.type == new.kind.name
            and r.embedding_model == new.embedding_model
            and r.agent_id == new.agent_id
        ]
        return sorted(((scores[r.memory_id], r) for r in found), key=lambda p: (-p[0], p[1].memory_id))

    # -- decisions -----------------------------------------------------------------------------
    def _ask_llm(
        self,
        scope: Scope,
        new: NewMemory,
        candidates: list[tuple[float, MemoryRecord]],
        now: datetime,
        deadline: float | None,
    ) -> Outcome:
        assert self.llm is not None
        listing = [
            {"id": c.memory_id, "key": c.key, "text": c.text, "payload": c.payload, "score": round(s, 4)}
            for s, c in candidates
        ]
        prompt = (
            "A new memory was extracted. Decide whether it is new (ADD) or the same thing as one candidate "
            "restated (REINFORCE). A candidate with another value (another number, date, name or time) is not "
            "the same thing.\n\n"
            f"New memory ({new.kind.name}): {json.dumps(new.payload, ensure_ascii=False)}\n\n"
            f"Candidates:\n{json.dumps(listing, ensure_ascii=False, indent=1)}"
        )
        result = self.llm.complete_json(
            LLMRequest(
                task="reconcile",
                system="You reconcile an agent's long-term memories. Answer with JSON only.",
                prompt=prompt,
                schema=json_schema(ReconcileAnswer),
                schema_name="reconcile",
                max_tokens=512,
                deadline=deadline,
                example='{"decision": "ADD", "target_id": null, "reason": "<why>"}',
            )
        )
        try:
            answer = ReconcileAnswer.model_validate(first_json(result.text))
        except (ValidationError, NoJSON) as exc:
            raise ExtractionFailed(
                f"the reconciliation answer did not match its schema: {exc}", reason="not_json"
            ) from exc
        best = candidates[0][0]
        scored = {c.memory_id: (s, c) for s, c in candidates}
        if answer.decision == "ADD" or answer.target_id not in scored:
            return self._add(scope, new, now, f"LLM: {answer.reason}", "llm", best)
        score, target = scored[answer.target_id]
        if answer.decision == "UPDATE":
            # An update supersedes only a memory of the same key (those were decided above by rule): an
            # LLM's UPDATE of another key would supersede an unrelated memory, so it is refused.
            reason = (
                f"LLM proposed to update {target.memory_id} (key {target.key!r}, not {new.key!r}): refused"
            )
            return self._add(scope, new, now, reason, "llm", score)
        if hard_anchors(new.kind.value(target.payload)) != hard_anchors(new.kind.value(new.payload)):
            # another number, time, date or a negation is a correction, whatever the model says: keeping
            # only the old memory would drop it
            reason = (
                f"LLM proposed to reinforce {target.memory_id}, but the numbers or negations differ: refused"
            )
            return self._add(scope, new, now, reason, "llm", score)
        return self._reinforce(scope, new, target, now, f"LLM: {answer.reason}", "llm", score)

    @staticmethod
    def _decision(
        decision: str,
        reason: str,
        by: str,
        score: float | None,
        candidate: str | None,
        new: NewMemory,
        now: datetime,
    ) -> DecisionRecord:
        return DecisionRecord(
            decision=decision,
            reason=reason,
            by=by,
            score=round(score, 4) if score is not None else None,
            candidate_id=candidate,
            snapshot_id=new.snapshot_id,
            at=now,
        )

    def _record(
        self,
        scope: Scope,
        new: NewMemory,
        lineage_id: str,
        version: int,
        supersedes: str | None,
        decision: DecisionRecord,
        now: datetime,
        payload: dict[str, Any] | None = None,
    ) -> MemoryRecord:
        body = payload or new.payload
        key = new.key
        return MemoryRecord(
            memory_id=self._id(scope, new, lineage_id, version),
            lineage_id=lineage_id,
            version=version,
            tenant=scope.tenant,
            user_id=scope.user_id,
            type=new.kind.name,
            key=key,
            payload=body,
            text=new.kind.text(body),
            visibility=new.visibility,
            agent_id=new.agent_id,
            metadata=new.metadata,
            status="active",
            supersedes=supersedes,
            reinforcement_count=1,
            last_reinforced_at=now,
            evidence=[new.evidence],
            decisions=[decision],
            valid_from=body.get("valid_from") or new.observed(now).date().isoformat(),
            observed_at=new.observed(now),
            created_at=now,
            updated_at=now,
            vector=new.vector,
            embedding_model=new.embedding_model,
            embedding_dim=len(new.vector) if new.vector else None,
            index_state="pending",
            expires_at=new.expires_at,
        )

    @staticmethod
    def _id(scope: Scope, new: NewMemory, lineage_id: str, version: int) -> str:
        if not new.snapshot_id:
            return "mem-" + uuid.uuid4().hex[:24]
        # Extraction ids are derived from their inputs, so a redelivered write collides instead of duplicating.
        raw = f"{scope.tenant}|{scope.user_id}|{new.kind.name}|{new.key}|{new.snapshot_id}|{lineage_id}|{version}"
        return "mem-" + hashlib.sha256(raw.encode()).hexdigest()[:24]

    def _add(
        self, scope: Scope, new: NewMemory, now: datetime, reason: str, by: str, score: float | None = None
    ) -> Outcome:
        lineage = "lin-" + (
            hashlib.sha256(
                f"{scope.tenant}|{scope.user_id}|{new.kind.name}|{new.key}|{new.snapshot_id}".encode()
            ).hexdigest()[:24]
            if new.snapshot_id
            else uuid.uuid4().hex[:24]
        )
        record = self._record(
            scope, new, lineage, 1, None, self._decision("ADD", reason, by, score, None, new, now), now
        )
        self.store.insert(record)
        return Outcome("ADD", reason, record, by, score, [record.memory_id])

    def _update(
        self,
        scope: Scope,
        new: NewMemory,
        old: MemoryRecord,
        now: datetime,
        reason: str,
        by: str,
        score: float | None,
    ) -> Outcome:
        payload = new.kind.updated(old.payload, new.payload)
        decision = self._decision("UPDATE", reason, by, score, old.memory_id, new, now)
        # the next version number (a value kept as history may hold old.version + 1 already)
        version = max([old.version, *(r.version for r in self.store.lineage(scope, old.lineage_id))]) + 1
        record = self._record(scope, new, old.lineage_id, version, old.memory_id, decision, now, payload)
        # Insert first, then supersede: a crash in between leaves two actives that the redelivery heals.
        self.store.insert(record)
        self.store.supersede(scope, old.memory_id, record.memory_id, now)
        return Outcome("UPDATE", reason, record, by, score, [record.memory_id, old.memory_id])

    def _propose(self, scope: Scope, new: NewMemory, current: MemoryRecord, now: datetime) -> Outcome:
        """A user's statement that conflicts with an org memory: a proposal, which becomes the new version
        once the users behind it include every user behind the current version (a correction of one's
        own statement) or outnumber them; until then the current version stays what everyone reads."""
        lineage = self.store.lineage(scope, current.lineage_id)
        pending = [
            r for r in lineage if r.status == "proposed" and new.kind.same_content(r.payload, new.payload)
        ]
        backers = contributors(current)
        if pending:
            held = max(pending, key=lambda r: r.version)
            merged = new.kind.merged(held.payload, new.payload)
            note = self._decision(
                "PROPOSE",
                "another statement of a pending proposal",
                "rule",
                None,
                current.memory_id,
                new,
                now,
            )
            proposal = self.store.reinforce(
                scope,
                held.memory_id,
                new.evidence,
                note,
                now,
                merged_payload=merged,
                merged_text=new.kind.text(merged) if merged else None,
                status="proposed",
            )
            if proposal is None:  # this snapshot already backs it
                return Outcome("NOOP", "restatement already counted", held)
        else:
            version = max(r.version for r in lineage) + 1
            note = self._decision(
                "PROPOSE",
                f"conflicts with org memory {current.memory_id}: proposed as its next version",
                "rule",
                None,
                current.memory_id,
                new,
                now,
            )
            proposal = self._record(scope, new, current.lineage_id, version, None, note, now).model_copy(
                update={"status": "proposed"}
            )
            self.store.insert(proposal)
        proposers = contributors(proposal)
        if backers <= proposers or len(proposers) > len(backers):
            reason = (
                f"same key, another value, stated by {len(proposers)} user(s) against {len(backers)} "
                "behind the current version"
            )
            decision = self._decision("UPDATE", reason, "rule", None, current.memory_id, new, now)
            payload = new.kind.updated(current.payload, proposal.payload)
            promoted = self.store.activate(
                scope, proposal.memory_id, current.memory_id, decision, now, payload, new.kind.text(payload)
            )
            if promoted is not None:
                self.store.supersede(scope, current.memory_id, promoted.memory_id, now)
                return Outcome("UPDATE", reason, promoted, touched=[promoted.memory_id, current.memory_id])
        needed = len(backers) + 1 - len(proposers)
        reason = (
            f"conflicts with the org memory {current.memory_id} stated by {len(backers)} user(s): kept as a "
            f"proposal backed by {len(proposers)}; it replaces the current version when every user behind "
            f"that restates it or {needed} more user(s) state it"
        )
        return Outcome("PROPOSE", reason, proposal, touched=[proposal.memory_id])

    def _history(self, scope: Scope, new: NewMemory, current: MemoryRecord, now: datetime) -> Outcome:
        """Keep an older value than the current one in the lineage's history; the current one stays."""
        when = new.observed(now).date().isoformat()
        assert current.observed_at is not None
        reason = (
            f"same key, another value, but stated earlier ({when}) than the current one "
            f"({current.observed_at.date().isoformat()}): kept as history"
        )
        decision = self._decision("UPDATE", reason, "rule", None, current.memory_id, new, now)
        version = max(r.version for r in self.store.lineage(scope, current.lineage_id)) + 1
        record = self._record(scope, new, current.lineage_id, version, None, decision, now).model_copy(
            update={"status": "superseded", "superseded_by": current.memory_id}
        )
        self.store.insert(record)
        return Outcome("UPDATE", reason, record, "rule", None, [record.memory_id])

    def _retract(self, scope: Scope, new: NewMemory, by_key: list[MemoryRecord], now: datetime) -> Outcome:
        """End the active memories of the key that hold the retracted value ("I'm not allergic to peanuts,
        that was wrong"); nothing is written when none does, or when the retraction predates them."""
        said = new.kind.value(new.payload)
        if new.visibility == "org" and not new.authoritative:
            # one user cannot end what every user of the tenant reads (docs/security.md, trust model)
            return Outcome("NOOP", f"retracts {said!r} in shared memory: only a tenant-wide writer can", None)
        held = [r for r in by_key if new.kind.same_content(r.payload, new.payload)]
        if not held:
            current = f" (it holds {new.kind.value(by_key[0].payload)!r})" if by_key else ""
            return Outcome("NOOP", f"retracts {said!r}, which no active memory states{current}", None)
        ended: MemoryRecord | None = None
        for target in held:
            if target.observed_at is not None and new.observed(now) < target.observed_at:
                reason = f"retracts {said!r}, but it was stated again after the retraction: kept"
                return Outcome("NOOP", reason, target)
            reason = f"the user said {said!r} is not, or no longer, true: ended"
            decision = self._decision("RETRACT", reason, "rule", None, target.memory_id, new, now)
            ended = self.store.retract(scope, target.memory_id, new.evidence, decision, now) or ended
        if ended is None:  # ended meanwhile by another writer
            return Outcome("NOOP", "already ended", held[0])
        reason = f"the user said {said!r} is not, or no longer, true: ended"
        return Outcome("RETRACT", reason, ended, "rule", None, [r.memory_id for r in held])

    def _reinforce(
        self,
        scope: Scope,
        new: NewMemory,
        target: MemoryRecord,
        now: datetime,
        reason: str,
        by: str,
        score: float | None,
    ) -> Outcome:
        decision = self._decision("REINFORCE", reason, by, score, target.memory_id, new, now)
        merged = new.kind.merged(target.payload, new.payload)
        record = self.store.reinforce(
            scope,
            target.memory_id,
            new.evidence,
            decision,
            now,
            merged_payload=merged,
            merged_text=new.kind.text(merged) if merged else None,
        )
        if record is None:  # this snapshot was already counted (or the target changed meanwhile)
            current = self.store.get(scope, target.memory_id) or target
            return Outcome("NOOP", "restatement already counted", current, by, score)
        # re-indexed even when nothing was merged: search ranks by the index's reinforcement_count
        return Outcome("REINFORCE", reason, record, by, score, [record.memory_id])
