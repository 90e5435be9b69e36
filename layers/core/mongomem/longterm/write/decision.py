"""What a long-term write decides on, and what it decides: plain values, no storage, no model.

`NewMemory` is one validated item about to be written; `Candidates` is what the store and the vector
index hold for it (read by the writer); `decide` (mongomem.longterm.write.decide) turns the two into a
`Verdict`: a `Decision` - the string every stored `DecisionRecord` and every API answer carries - and the
`Step` the writer takes to apply it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, Protocol

from mongomem.kinds import MemoryKind
from mongomem.models.memory import EvidenceRef, MemoryRecord, Visibility
from mongomem.ports import EmbeddingProvider

# Cosine similarity above which a memory found by meaning may restate the new one, and below which it
# is unrelated. These suit embedders whose unrelated texts score low (Titan, Voyage, OpenAI, hashing); an
# embedder with another similarity profile declares its own `similarity_thresholds` (e.g. the local e5).
REINFORCE_AT = 0.93
AMBIGUOUS_FROM = 0.80

By = Literal["rule", "llm", "api"]


class Decision(StrEnum):
    """What a write did with a new memory; the value is what history and the API show."""

    ADD = "ADD"  # a new lineage
    UPDATE = "UPDATE"  # a new version of the lineage (or an older value kept as its history)
    REINFORCE = "REINFORCE"  # restated: counted once per snapshot, evidence merged
    RETRACT = "RETRACT"  # the user said the value is not, or no longer, true: the version ended
    NOOP = "NOOP"  # nothing to write (a redelivery, a retraction of nothing, a refused retraction)
    PROPOSE = "PROPOSE"  # a user's other value for an org memory: a proposal until enough users state it


class Step(StrEnum):
    """How the writer applies a verdict (one decision can be written several ways)."""

    NOTHING = "nothing"
    HEAL = "heal"  # NOOP of a redelivery: supersede older actives a crash left behind
    NEW_LINEAGE = "new_lineage"  # ADD
    NEW_VERSION = "new_version"  # UPDATE: insert the next version, supersede the target and `settles`
    HISTORY = "history"  # UPDATE: insert an older value as a superseded version of the lineage
    REINFORCE = "reinforce"
    RETRACT = "retract"  # end each of `settles`
    PROPOSE = "propose"  # insert a proposal (or back `proposal`), then promote it when the verdict is UPDATE


@dataclass
class Thresholds:
    """The cosine scores that decide a match by meaning (an embedder's similarity profile)."""

    reinforce_at: float = REINFORCE_AT
    ambiguous_from: float = AMBIGUOUS_FROM

    @classmethod
    def for_embedder(cls, embedder: EmbeddingProvider) -> Thresholds:
        declared = embedder.similarity_thresholds
        return cls(float(declared[0]), float(declared[1])) if declared else cls()


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
    # False: the caller asked to write it as it is (an API write with reconcile=false)
    reconcile: bool = True

    @property
    def key(self) -> str:
        return self.kind.key(self.payload)

    @property
    def text(self) -> str:
        return self.kind.text(self.payload)

    @property
    def snapshot_id(self) -> str | None:
        return self.evidence.snapshot_id

    @property
    def retraction(self) -> bool:
        return self.kind.retraction(self.payload)

    @property
    def proposes_only(self) -> bool:
        """One user's statement about shared memory (their extraction, their one-user key): it changes
        no field of an org memory except through the proposal rule (docs/security.md, trust model)."""
        return self.visibility == "org" and not self.authoritative

    def observed(self, now: datetime) -> datetime:
        return self.evidence.observed_at or now


@dataclass(frozen=True)
class Judgement:
    """A model's call on an ambiguous match (mongomem.extraction.judge asks it)."""

    decision: Literal["ADD", "UPDATE", "REINFORCE"]
    target_id: str | None
    reason: str


class Judge(Protocol):
    def judge(
        self, new: NewMemory, candidates: Sequence[tuple[float, MemoryRecord]], deadline: float | None
    ) -> Judgement:
        """ADD, or REINFORCE/UPDATE of one of `candidates` (score, version), best first."""
        ...


@dataclass
class Candidates:
    """What the store holds for a new memory, read in the order of evidence (the writer stops reading
    where `decide` needs no more)."""

    # a version of the key that already holds this snapshot's evidence (an SQS redelivery)
    prior: MemoryRecord | None = None
    # the key's active versions in the memory's agent part of its scope, newest first
    by_key: list[MemoryRecord] = field(default_factory=list)
    # every version of by_key[0]'s lineage, read when the new memory gives the key another value
    lineage: list[MemoryRecord] = field(default_factory=list)
    # the kind's nearest active memories of the scope and embedding model, (cosine, version), best first
    by_meaning: list[tuple[float, MemoryRecord]] = field(default_factory=list)
    # a model's call on the ambiguous ones (None: no model; the rules decide)
    judgement: Judgement | None = None


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    reason: str
    step: Step
    by: By = "rule"
    score: float | None = None
    # the version decided on: reinforced, updated, proposed against, kept, ended first
    target: MemoryRecord | None = None
    # the version number a NEW_VERSION, HISTORY or new proposal writes
    version: int | None = None
    # NEW_VERSION, PROPOSE promoted (UPDATE): the payload of the version that becomes active
    payload: dict[str, Any] | None = None
    # REINFORCE: what the restatement merges into its target (or None); PROPOSE: the payload of a new
    # proposal (None when the statement backs a pending one, which stays exactly as its backers stated it)
    merged: dict[str, Any] | None = None
    # NEW_VERSION: other active versions of the key it supersedes too; RETRACT: the versions it ends
    settles: tuple[MemoryRecord, ...] = ()
    # PROPOSE: the pending proposal this statement backs (None: a new proposal)
    proposal: MemoryRecord | None = None
    # PROPOSE: the reason stored on the proposal; and the answer when its promotion loses a race
    note: str | None = None
    otherwise: str | None = None


def contributors(record: MemoryRecord) -> set[str]:
    """The users whose statements a version's evidence holds."""
    return {e.user_id for e in record.evidence if e.user_id}
