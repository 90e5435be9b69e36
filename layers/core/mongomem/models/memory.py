"""Long-term memories: one document per version, lineages, decisions, and the API shapes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mongomem.kindnames import KindName
from mongomem.models.base import Model
from mongomem.models.common import USER_HELP, Identifier, SafeMapping, Scope, UtcDateTime, utcnow

# proposed: a user's conflicting restatement of an org memory, waiting for the support that makes it the
# new version (docs/security.md "Who may write org memory")
Status = Literal["active", "superseded", "deleted", "proposed"]
Decision = Literal["ADD", "UPDATE", "REINFORCE", "RETRACT", "NOOP", "PROPOSE"]
Visibility = Literal["private", "org"]

# The owner (user_id) of a tenant's org memories. It cannot be a caller's user id: `#` is outside the
# Identifier pattern, so no user's scope ever names it and no user's erasure removes it wholesale.
ORG_OWNER = "#org"


class EvidenceRef(BaseModel):
    snapshot_id: str | None = None
    seqs: list[int] = Field(default_factory=list)
    source: Literal["extraction", "api", "import"] = "extraction"
    # who said it (an org memory keeps one entry per user who stated it; erasing a user removes theirs)
    user_id: str | None = None
    # when it was said: the latest of the cited turns' timestamps (an API write: its observed_at, or now)
    observed_at: datetime | None = None
    # an org statement's own words, per field (`stated_words`): erasing its user takes out of the org
    # memory what only they said (an alias, a tag); None for a private memory and older entries
    said: dict[str, list[str]] | None = None
    # whether `said` holds a mapping's texts per key ("qualifiers.note"); entries stored before it was
    # recorded read False: what they said of a mapping is unknown, so erasure takes no mapping entry out of
    # a memory they back. Stored only (exclude: never answered).
    said_keyed: bool = Field(False, exclude=True)
    tenant_wide: bool = Field(
        False,
        description="stated with a tenant-wide key (memory_service, operator) about shared memory: backed "
        "by the tenant, not by the user it names",
    )
    # whether the entry added one to reinforcement_count (a user's additions merged into shared memory
    # they already back do not, nor does a retraction): erasing its user takes back only what it added.
    # Stored only (exclude: never answered); entries stored before it was recorded read as counted.
    counted: bool = Field(True, exclude=True)
    # a statement backing a proposal of shared memory with an expiry of its own (the write's `expires_at`):
    # after it the statement backs nothing, and a proposal no statement backs any more is gone from every
    # read (docs/adr/0072's addendum; issue 33's twenty-sixth probe). None: it stands.
    until: datetime | None = None


def stated_words(payload: dict[str, Any], prefix: str = "") -> dict[str, list[str]]:
    """The texts of a payload, per field: a text field's value, a list field's text items, and a mapping's
    (a fact's qualifiers, a custom type's object) per key, "qualifiers.note"."""
    words: dict[str, list[str]] = {}
    for name, value in payload.items():
        path = f"{prefix}{name}"
        if isinstance(value, str) and value:
            words[path] = [value]
        elif isinstance(value, list):
            texts = [v for v in value if isinstance(v, str)]
            if texts:
                words[path] = texts
        elif isinstance(value, dict):
            words.update(stated_words(value, f"{path}."))
    return words


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
    # documents written before scopes existed have neither field: they read as private, shared by agents
    visibility: Visibility = "private"
    agent_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    # an org memory's metadata: the user who gave it (None: the tenant, or none given); erasing that
    # user clears it on every version that carries it
    metadata_by: str | None = None
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

    def live(self, now: datetime) -> bool:
        """Not expired: its `expires_at` has not passed, and a proposal has a statement behind it whose own
        expiry has not (`EvidenceRef.until`). What `MemoryStore`'s reads filter on, in Python."""
        if self.expires_at is not None and self.expires_at <= now:
            return False
        return self.status != "proposed" or any(e.until is None or e.until > now for e in self.evidence)


class MemoryOut(BaseModel):
    memory_id: str
    lineage_id: str
    version: int
    type: KindName
    status: Status
    payload: dict[str, Any]
    text: str
    visibility: Visibility = Field(
        "private", description="private: the user's own memory; org: shared by every user of the tenant"
    )
    agent_id: str | None = Field(None, description="the agent the memory belongs to (None: all the user's)")
    metadata: dict[str, Any] = Field(default_factory=dict)
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


# How far ahead of the server's clock a caller's observed_at may be (its clock, not its claim).
CLOCK_SKEW = timedelta(minutes=5)


class CreateMemoryRequest(BaseModel):
    """Write a memory directly (any type, also types with automatic extraction switched off)."""

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier | None = Field(None, description=USER_HELP)
    type: KindName = Field(
        description="the memory kind: semantic, episodic, procedural, taxonomic, preference or a custom type"
    )
    payload: SafeMapping = Field(
        description="the kind's fields, e.g. semantic {subject, attribute, value} (docs/memory-types.md)"
    )
    reconcile: bool = Field(
        True, description="compare with what is known: ADD, UPDATE (new version) or REINFORCE (counted once)"
    )
    expires_at: UtcDateTime | None = Field(None, description="when the memory stops being returned")
    visibility: Visibility | None = Field(
        None,
        description="private or org (default: the kind's, memory.extraction.<kind>.visibility; from a one-user "
        "key, private for a fact, episode or preference, and for a memory in the first person or naming the "
        "user)",
    )
    agent_id: Identifier | None = Field(
        None, description="a private memory of one agent of the user (default: shared by the user's agents)"
    )
    metadata: SafeMapping | None = Field(
        None, description="free-form; the keys in memory.metadata.partition_keys are search filters"
    )
    observed_at: UtcDateTime | None = Field(
        None,
        description="when this was learnt (default: now; not later than now, 5 minutes of clock skew "
        "allowed); an older value than the current one is kept as history and does not replace it",
    )

    @field_validator("observed_at")
    @classmethod
    def _not_in_the_future(cls, value: datetime | None) -> datetime | None:
        # a statement dated ahead would outrank every later one of its key (and lock an org term)
        if value is not None and value > utcnow() + CLOCK_SKEW:
            raise ValueError(
                "observed_at is later than now: when was this learnt? (5 minutes of clock skew allowed)"
            )
        return value


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
class MemoryFilter:
    """Filters on enriched payloads and metadata, for lists and search: tags (any of), a taxonomic
    domain, metadata values (exact)."""

    tags: tuple[str, ...] = ()
    domain: str | None = None
    metadata: dict[str, str | int | float | bool] = field(default_factory=dict)
    # lists only: memories with evidence from this snapshot (what a snapshot's extraction produced)
    snapshot_id: str | None = None

    def __bool__(self) -> bool:
        return bool(self.tags or self.domain is not None or self.metadata or self.snapshot_id)


@dataclass(frozen=True)
class MemoryView:
    """Whose memories a read sees: the user's private ones and the tenant's org ones, in one query.

    With `agent_id`, the user's private memories are those of that agent plus those shared by all the
    user's agents; without, all of them. `visibility` narrows the read to one of the two."""

    scope: Scope
    agent_id: str | None = None
    visibility: Visibility | None = None

    @property
    def tenant(self) -> str:
        return self.scope.tenant

    @property
    def user_id(self) -> str:
        return self.scope.user_id

    def owners(self) -> list[str]:
        """The user_ids whose memories the view reads: the user's and/or the org's."""
        return [
            o
            for o, v in ((self.scope.user_id, "private"), (ORG_OWNER, "org"))
            if self.visibility in (None, v)
        ]

    def home(self, visibility: Visibility) -> Scope:
        """Where a memory of that visibility is written: the user's scope or the tenant's org scope."""
        return self.scope if visibility == "private" else Scope(tenant=self.scope.tenant, user_id=ORG_OWNER)


@dataclass(frozen=True)
class ObservedRange:
    """When memories were observed: after <= observed_at < before, either end open."""

    after: datetime | None = None
    before: datetime | None = None

    def __bool__(self) -> bool:
        return self.after is not None or self.before is not None


class ConflictingMemory(BaseModel):
    memory_id: str
    text: str
    value: str
    observed_at: datetime | None = None
    created_at: datetime


class Conflict(BaseModel):
    """Active memories of one key that say different things; settled when one is deleted or a later
    statement of the key supersedes them."""

    user_id: str
    type: str
    key: str
    agent_id: str | None = None
    memories: list[ConflictingMemory]


class ConflictList(BaseModel):
    conflicts: list[Conflict]
    complete: bool = Field(
        True,
        description="false when the time a request may spend comparing values ran out before every key "
        "was compared: the list holds what was found, and more may exist",
    )


class Domain(Model):
    domain: str
    terms: int = Field(description="the taxonomic terms of the domain the user sees")


class DomainList(Model):
    """The domains of the taxonomic terms a user sees (theirs and the org's): GET /v1/domains."""

    domains: list[Domain]
