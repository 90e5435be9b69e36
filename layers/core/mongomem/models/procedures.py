"""Procedures as skills: the exported Agent Skill, feedback on using a procedure, and discovering one."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mongomem.models.common import USER_HELP, Identifier, UtcDateTime, ValidText
from mongomem.models.memory import ProcedureUsage
from mongomem.models.search import MAX_QUERY_CHARS, SearchMode

Outcome = Literal["success", "failure"]


class SkillExport(BaseModel):
    """A procedural memory as an Agent Skill: write `content` to `path` (the skill's folder + SKILL.md)."""

    memory_id: str
    lineage_id: str
    name: str = Field(description="the skill's name (lowercase letters, digits, hyphens; its folder's name)")
    path: str = Field(description="<name>/SKILL.md")
    content: str = Field(
        description="SKILL.md: YAML front matter (name, description, allowed-tools) and the steps"
    )


class FeedbackRequest(BaseModel):
    """Whether using a procedure worked: counted on the procedure, it ranks `discover` results."""

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier | None = Field(None, description=USER_HELP)
    outcome: Outcome = Field(description="success or failure of following the procedure")
    used_at: UtcDateTime | None = Field(None, description="when it was used (default: now)")


class FeedbackResult(BaseModel):
    memory_id: str
    lineage_id: str
    usage: ProcedureUsage
    success_rate: float = Field(description="(successes + 1) / (uses + 2): 0.5 for an untried procedure")
    counted: bool = Field(
        True,
        description="whether this report changed the counts: a user's feedback on a version counts once a "
        "day (a later report that day replaces the earlier one)",
    )


class DiscoverRequest(BaseModel):
    """Find the procedures that fit a task: ranked by relevance and by how often they worked."""

    model_config = ConfigDict(extra="forbid")

    user_id: Identifier | None = Field(None, description=USER_HELP)
    query: Annotated[str, ValidText] = Field(
        min_length=1, max_length=MAX_QUERY_CHARS, description="the task to find a procedure for"
    )
    top_k: int = Field(5, ge=1, le=50, description="how many procedures to return")
    mode: SearchMode = Field(
        "hybrid", description="hybrid: meaning (k-NN) and keywords (BM25) fused; knn or bm25 alone"
    )
    min_score: float | None = Field(
        None, ge=-1.0, allow_inf_nan=False, description="procedures scoring below are left out"
    )
    observed_after: UtcDateTime | None = Field(
        None, description="only procedures first stated at or after this time"
    )
    observed_before: UtcDateTime | None = Field(
        None, description="only procedures first stated before this time"
    )

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must contain a non-space character")
        return value

    @model_validator(mode="after")
    def _range(self) -> DiscoverRequest:
        if self.observed_after and self.observed_before and self.observed_after >= self.observed_before:
            raise ValueError("observed_after must be earlier than observed_before")
        return self


class ProcedureHit(BaseModel):
    memory_id: str
    lineage_id: str
    name: str
    skill_name: str
    description: str | None = None
    when_to_use: str | None = None
    score: float = Field(description="relevance x (0.5 + success_rate): what the results are ordered by")
    relevance: float = Field(description="the search score (meaning and keywords, reinforcement boost)")
    success_rate: float
    usage: ProcedureUsage
    reinforcement_count: int
    created_at: datetime
    payload: dict[str, Any]


class DiscoverResponse(BaseModel):
    results: list[ProcedureHit]
    took_ms: float
