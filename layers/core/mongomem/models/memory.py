"""Long-term memories: one document per version, lineages, decisions, and the API shapes."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mongomem.config import MemoryType
from mongomem.models.common import Identifier, SafeMapping, UtcDateTime

Status = Literal["active", "superseded", "deleted"]
Decision = Literal["ADD", "UPDATE", "REINFORCE", "NOOP"]

# Semantic attributes that hold many values at once: each value is its own memory, never an update.
MULTI_VALUED = frozenset(
    {
        "likes",
        "dislikes",
        "interests",
        "hobbies",
        "hobby",
        "allergy",
        "allergies",
        "skills",
        "languages",
        "pets",
        "friends",
        "children",
        "visited",
        "goals",
        "plans",
        "note",
        "notes",
    }
)


def norm(text: str) -> str:
    """Case-, accent- and punctuation-insensitive form used for keys and equality."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", " ", folded).strip()


def memory_key(memory_type: str, payload: dict[str, Any]) -> str:
    """The exact-match key that reconciliation looks up (fact subject+attribute, term, name, ...)."""
    if memory_type == "semantic":
        attribute = norm(payload["attribute"])
        key = f"{norm(payload['subject'])}|{attribute}"
        return f"{key}|{norm(payload['value'])}" if attribute in MULTI_VALUED else key
    if memory_type == "episodic":
        return f"{norm(payload['title'])}|{(payload.get('occurred_at') or '')[:10]}"
    if memory_type == "procedural":
        return norm(payload["name"])
    return norm(payload["term"])


def memory_text(memory_type: str, payload: dict[str, Any]) -> str:
    """The text that is embedded and indexed for search."""
    if memory_type == "semantic":
        quals = "; ".join(f"{k}: {v}" for k, v in (payload.get("qualifiers") or {}).items())
        text = f"{payload['subject']} {payload['attribute']}: {payload['value']}"
        return f"{text} ({quals})" if quals else text
    if memory_type == "episodic":
        extras = [
            p
            for p in (
                payload.get("occurred_at"),
                payload.get("place"),
                ", ".join(payload.get("participants") or []),
            )
            if p
        ]
        text = f"{payload['title']}. {payload['summary']}"
        return f"{text} ({'; '.join(extras)})" if extras else text
    if memory_type == "procedural":
        steps = " ".join(f"{i}. {s}" for i, s in enumerate(payload["steps"], 1))
        return f"{payload['name']}: {payload['when_to_use']} Steps: {steps}"
    aliases = ", ".join(payload.get("aliases") or [])
    head = f"{payload['term']} ({aliases})" if aliases else payload["term"]
    return f"{head}: {payload['definition']}"


class EvidenceRef(BaseModel):
    snapshot_id: str | None = None
    seqs: list[int] = Field(default_factory=list)
    source: Literal["extraction", "api"] = "extraction"


class DecisionRecord(BaseModel):
    decision: Decision
    reason: str
    by: Literal["rule", "llm", "api"] = "rule"
    score: float | None = None
    candidate_id: str | None = None
    snapshot_id: str | None = None
    at: datetime


class MemoryOut(BaseModel):
    memory_id: str
    lineage_id: str
    version: int
    type: MemoryType
    status: Status
    payload: dict[str, Any]
    text: str
    reinforcement_count: int
    last_reinforced_at: datetime | None = None
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


class MemoryWithHistory(BaseModel):
    memory: MemoryOut
    history: list[MemoryOut] | None = None


class CreateMemoryRequest(BaseModel):
    """Write a memory directly (any type, also types with automatic extraction switched off)."""

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier | None = None
    type: MemoryType
    payload: SafeMapping
    reconcile: bool = True
    expires_at: UtcDateTime | None = None


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
