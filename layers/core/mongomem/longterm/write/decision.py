"""What a long-term write decides on, and what it decides: plain values, no storage, no model.

`NewMemory` is one validated item about to be written; `Candidates` is what the store and the vector
index hold for it (read by the writer); `decide` (mongomem.longterm.write.decide) turns the two into a
`Verdict`: one frozen type per way the writer applies it (`NewLineage`, `NewVersion`, `Reinforce`, ...),
each carrying its `Decision` - the string every stored `DecisionRecord` and every API answer carries -
and only the versions and values that step needs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar, Literal, Protocol, TypeAlias

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
    # the fields a tenant-wide caller sent empty (`[]`, null): it clears them in an org memory (every
    # tool grant revoked, every alias dropped, the description cleared); an omitted field keeps its value
    cleared: frozenset[str] = frozenset()

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
        """When it was stated, never later than now: a turn or a write dated in the future (a clock
        ahead, or a caller's year 9999) would otherwise outrank every later statement of its key."""
        return min(self.evidence.observed_at or now, now)


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


@dataclass(frozen=True, kw_only=True)
class _Ruling:
    """What every verdict says: why, who decided (a rule, the model, the caller) and the cosine score of
    a match by meaning. `decision` is a class constant where a step makes only one decision."""

    reason: str
    by: By = "rule"
    score: float | None = None


@dataclass(frozen=True, kw_only=True)
class Unchanged(_Ruling):
    """NOOP, nothing written: a redelivery of a version kept as history, a retraction of nothing, a
    retraction refused. `target`: the version decided on, when there is one."""

    decision: ClassVar[Decision] = Decision.NOOP
    target: MemoryRecord | None = None


@dataclass(frozen=True, kw_only=True)
class RepairLineage(_Ruling):
    """NOOP of a redelivery whose version is active: a crash between inserting a lineage's next version
    and superseding the one before may have left two actives; repairing the lineage supersedes the older
    ones. ("Repair": the lineage is brought back to its invariant, one active version; nothing new.)"""

    decision: ClassVar[Decision] = Decision.NOOP
    target: MemoryRecord  # the version this snapshot already wrote


@dataclass(frozen=True, kw_only=True)
class NewLineage(_Ruling):
    """ADD: the first version of a new lineage."""

    decision: ClassVar[Decision] = Decision.ADD


@dataclass(frozen=True, kw_only=True)
class NewVersion(_Ruling):
    """UPDATE: insert `version` (holding `payload`) as the lineage's active one, then supersede `target`
    and every version of `also_supersedes` with it."""

    decision: ClassVar[Decision] = Decision.UPDATE
    target: MemoryRecord
    version: int
    payload: dict[str, Any]
    # other active versions of the key (a conflict: written with reconcile off, or by an older release
    # that spelled the subject another way); "supersede" is the store's own word for ending a version
    # with a successor, which is what happens to them
    also_supersedes: tuple[MemoryRecord, ...] = ()


@dataclass(frozen=True, kw_only=True)
class PastVersion(_Ruling):
    """UPDATE by an older statement than `target`: its value is inserted as `version` of the lineage,
    superseded by `target` at once (history, never what is read as current)."""

    decision: ClassVar[Decision] = Decision.UPDATE
    target: MemoryRecord
    version: int


@dataclass(frozen=True, kw_only=True)
class Reinforce(_Ruling):
    """REINFORCE: `target` restated, counted once per snapshot, evidence merged; `merged`: what the
    restatement adds to its payload (None: nothing); `left_out`: what a full list of it did not take
    (`MemoryKind.left_out`), which the answer names."""

    decision: ClassVar[Decision] = Decision.REINFORCE
    target: MemoryRecord
    merged: dict[str, Any] | None = None
    left_out: str = ""


@dataclass(frozen=True, kw_only=True)
class Retract(_Ruling):
    """RETRACT: the user said a value is not, or no longer, true: every version of `ends` is ended
    (superseded with no successor); the first is the one the answer names."""

    decision: ClassVar[Decision] = Decision.RETRACT
    ends: tuple[MemoryRecord, *tuple[MemoryRecord, ...]]  # never empty


@dataclass(frozen=True, kw_only=True)
class StatedAgain(_Ruling):
    """NOOP of a retraction older than a restatement of the value: `kept` (the restated version) stays,
    the versions listed before it (`ends`, possibly none) are ended as a RETRACT would."""

    decision: ClassVar[Decision] = Decision.NOOP
    kept: MemoryRecord
    ends: tuple[MemoryRecord, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Propose(_Ruling):
    """PROPOSE: one user's other value for (or additions to) the org version `target`: a new proposal,
    `version` of the lineage holding `proposed`; `note`: the reason stored on the proposal itself."""

    decision: ClassVar[Decision] = Decision.PROPOSE
    target: MemoryRecord
    note: str
    version: int
    proposed: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class BackProposal(_Ruling):
    """PROPOSE: another statement of the pending `proposal` against the org version `target`; it backs
    the proposal as it stands (nothing merges into a proposal, so what may become active is exactly what
    each backer stated); `note`: the reason stored on the proposal."""

    decision: ClassVar[Decision] = Decision.PROPOSE
    target: MemoryRecord
    note: str
    proposal: MemoryRecord


@dataclass(frozen=True, kw_only=True)
class Promote(_Ruling):
    """UPDATE by a proposal enough users stand behind: store `proposal` as its PROPOSE would, then make
    it the active version holding `payload`; when another writer changed the lineage meanwhile, the
    answer is the proposal's own (PROPOSE, `proposal.reason`)."""

    decision: ClassVar[Decision] = Decision.UPDATE
    proposal: Propose | BackProposal
    payload: dict[str, Any]


# The verdict of `decide`: one type per way of writing it, so the writer's `match` is checked for every
# case by mypy (`assert_never`) and each case carries only what it needs.
Verdict: TypeAlias = (
    Unchanged
    | RepairLineage
    | NewLineage
    | NewVersion
    | PastVersion
    | Reinforce
    | Retract
    | StatedAgain
    | Propose
    | BackProposal
    | Promote
)


# The tenant as a version's backer: a tenant-wide key stated it. Never a user id (ids take no parentheses),
# so no user's statement includes it: the user such a write names cannot undo or extend it alone.
TENANT = "(tenant)"


def contributors(record: MemoryRecord, now: datetime | None = None) -> set[str]:
    """Who stands behind a version: the users whose statements its evidence holds, and `TENANT` for a
    tenant-wide key's statement (in place of the user that write names). With `now`: only statements that
    still stand (a proposal's backer whose own expiry passed backs nothing: `EvidenceRef.until`)."""
    return {
        TENANT if e.tenant_wide else e.user_id or ""
        for e in record.evidence
        if (e.user_id or e.tenant_wide) and (now is None or e.until is None or e.until > now)
    }
