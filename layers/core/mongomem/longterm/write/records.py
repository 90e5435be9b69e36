"""The versions a write stores: their ids and their fields.

Extraction ids are derived from their inputs, so a redelivered write collides instead of duplicating;
a direct write (no snapshot) gets random ones.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime
from typing import Any

from mongomem.longterm.write.decision import NewMemory, Verdict
from mongomem.models.common import Scope
from mongomem.models.memory import DecisionRecord, MemoryRecord


def _digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def lineage_id(scope: Scope, new: NewMemory) -> str:
    """A new lineage's id."""
    if not new.snapshot_id:
        return "lin-" + uuid.uuid4().hex[:24]
    return "lin-" + _digest(f"{scope.tenant}|{scope.user_id}|{new.kind.name}|{_keyed(new)}|{new.snapshot_id}")


def memory_id(scope: Scope, new: NewMemory, lineage: str, version: int) -> str:
    """A version's id."""
    if not new.snapshot_id:
        return "mem-" + uuid.uuid4().hex[:24]
    return "mem-" + _digest(
        f"{scope.tenant}|{scope.user_id}|{new.kind.name}|{_keyed(new)}|{new.snapshot_id}|{lineage}|{version}"
    )


def _keyed(new: NewMemory) -> str:
    """The key, and the marks that tell two memories of it apart ("C++" / "C#": `apart_marks`), so two
    values one snapshot states are two versions, never one taken for the other's redelivery."""
    marks = new.kind.apart_marks(new.payload)
    return f"{new.key}|{marks}" if marks else new.key


def decision_record(
    verdict: Verdict,
    new: NewMemory,
    now: datetime,
    target: MemoryRecord | None,
    *,
    decision: str | None = None,
    reason: str | None = None,
) -> DecisionRecord:
    """The history entry a verdict leaves on a version; `target`: the version it names (the one updated,
    reinforced, proposed against, or each version a retraction ends; None for a new lineage);
    `decision`, `reason`: a proposal's own note."""
    score = verdict.score
    return DecisionRecord(
        decision=decision or verdict.decision.value,
        reason=reason or verdict.reason,
        by=verdict.by,
        score=round(score, 4) if score is not None else None,
        candidate_id=target.memory_id if target is not None else None,
        snapshot_id=new.snapshot_id,
        at=now,
    )


def new_version(
    scope: Scope,
    new: NewMemory,
    lineage: str,
    version: int,
    decision: DecisionRecord,
    now: datetime,
    *,
    supersedes: str | None = None,
    payload: dict[str, Any] | None = None,
) -> MemoryRecord:
    """An active version of `lineage` holding `new` (or `payload`, what an update makes of it)."""
    body = payload or new.payload
    observed = new.observed(now)
    return MemoryRecord(
        memory_id=memory_id(scope, new, lineage, version),
        lineage_id=lineage,
        version=version,
        tenant=scope.tenant,
        user_id=scope.user_id,
        type=new.kind.name,
        key=new.key,
        payload=body,
        text=new.kind.text(body),
        visibility=new.visibility,
        agent_id=new.agent_id,
        metadata=new.metadata,
        metadata_by=_given_by(new),
        status="active",
        supersedes=supersedes,
        reinforcement_count=1,
        last_reinforced_at=now,
        evidence=[new.evidence],
        decisions=[decision],
        valid_from=body.get("valid_from") or observed.date().isoformat(),
        observed_at=observed,
        created_at=now,
        updated_at=now,
        vector=new.vector,
        embedding_model=new.embedding_model,
        embedding_dim=len(new.vector) if new.vector else None,
        index_state="pending",
        expires_at=new.expires_at,
    )


def _given_by(new: NewMemory) -> str | None:
    """Who gave an org memory's metadata: the user of a one-user statement (None: the tenant's key, or
    no metadata, or a private memory, whose metadata goes with its user anyway)."""
    if new.visibility != "org" or not new.metadata or new.evidence.tenant_wide:
        return None
    return new.evidence.user_id
