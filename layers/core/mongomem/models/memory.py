"""Long-term memories: one document per version, lineages, decisions, and the API shapes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mongomem.config import KindName
from mongomem.models.common import Identifier, SafeMapping, UtcDateTime

Status = Literal["active", "superseded", "deleted"]
Decision = Literal["ADD", "UPDATE", "REINFORCE", "NOOP"]


class EvidenceRef(BaseModel):
    snapshot_id: str | None = None
    seqs: list[int] = Field(default_factory=list)
    source: Literal["extraction", "api", "import"] = "extraction"
    # when it was said: the latest of the cited turns' timestamps (an API write: its observed_at, or now)
    observed_at: datetime | None = None


class DecisionRecord(BaseModel):
    decision: Decision
    reason: str
    by: Literal["rule", "llm", "api"] = "rule"
    score: float | None = None
    candidate_id: str | None = None
    snapshot_id: str | None = None
    at: datetime


class ProcedureUsage(BaseModel):
    """How using a procedure went, from POST /v1/memories/{id}/feedback (per version: changed steps
    start a fresh record)."""

    successes: int = 0
    failures: int = 0
    last_used_at: datetime | None = None
    last_outcome: Literal["success", "failure"] | None = None


class MemoryRecord(BaseModel):
    """One stored version of a memory, as the memory repository returns it (no storage formats)."""

    model_config = ConfigDict(extra="ignore")

    memory_id: str
    lineage_id: str
    version: int
    tenant: str
    user_id: str
    type: str
    key: str
    payload: dict[str, Any]
    text: str
    status: Status = "active"
    supersedes: str | None = None
    superseded_by: str | None = None
    reinforcement_count: int = 1
    last_reinforced_at: datetime | None = None
    evidence: list[EvidenceRef] = Field(default_factory=list)
    decisions: list[DecisionRecord] = Field(default_factory=list)
    valid_from: str | None = None
    valid_to: str | None = None
    # when this version's knowledge was first stated (its evidence's turn time), not when it was stored
    observed_at: datetime | None = None
    created_at: datetime
    updated_at: datetime | None = None
    vector: list[float] | None = None
    embedding_model: str | None = None
    embedding_dim: int | None = None
    index_state: str | None = None
    expires_at: datetime | None = None
    usage: ProcedureUsage | None = None

    def snapshot_ids(self) -> set[str]:
        return {e.snapshot_id for e in self.evidence if e.snapshot_id}


class MemoryOut(BaseModel):
    memory_id: str
    lineage_id: str
    version: int
    type: KindName
    status: Status
    payload: dict[str, Any]
    text: str
    reinforcement_count: int
    last_reinforced_at: datetime | None = None
    observed_at: datetime | None = Field(
        None, description="when the memory was first stated in a conversation (its evidence's turn time)"
    )
    created_at: datetime
    supersedes: str | None = None
    superseded_by: str | None = None
    evidence: list[EvidenceRef] = Field(default_factory=list)
    decisions: list[DecisionRecord] = Field(default_factory=list)
    embedding_model: str | None = None
    embedding_dim: int | None = None
    index_state: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    expires_at: datetime | None = None
    usage: ProcedureUsage | None = Field(
        None, description="procedures: successes, failures and last use reported through feedback"
    )


class MemoryWithHistory(BaseModel):
    memory: MemoryOut
    history: list[MemoryOut] | None = None


class CreateMemoryRequest(BaseModel):
    """Write a memory directly (any type, also types with automatic extraction switched off)."""

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier | None = None
    type: KindName
    payload: SafeMapping
    reconcile: bool = True
    expires_at: UtcDateTime | None = None
    observed_at: UtcDateTime | None = Field(
        None,
        description="when this was learnt (default: now); an older value than the current one is kept "
        "as history and does not replace it",
    )


class WriteResult(BaseModel):
    decision: Decision
    reason: str
    memory: MemoryOut


class MemoryPage(BaseModel):
    memories: list[MemoryOut]
    next_cursor: str | None = None


class DeleteResult(BaseModel):
    lineage_id: str
    deleted_versions: int


@dataclass(frozen=True)
class PayloadFilter:
    """Exact values and prefixes of payload fields (a semantic fact's subject and attribute) for lists."""

    exact: dict[str, str] = field(default_factory=dict)
    prefix: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ObservedRange:
    """When memories were observed: after <= observed_at < before, either end open."""

    after: datetime | None = None
    before: datetime | None = None

    def __bool__(self) -> bool:
        return self.after is not None or self.before is not None
