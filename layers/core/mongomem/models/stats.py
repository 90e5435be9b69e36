"""Figures about memory: reconciliation decisions per day, and the extraction pipeline's health."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, Field


class DecisionDay(BaseModel):
    """Reconciliation decisions recorded on one UTC day."""

    day: date
    added: int = 0
    updated: int = 0
    reinforced: int = 0


class MemoryActivity(BaseModel):
    tenant: str
    user_id: str | None = Field(None, description="the user the figures are about; null: the whole tenant")
    since: date
    days: list[DecisionDay] = Field(description="every day from `since` to today (UTC), oldest first")
    totals: DecisionDay = Field(description="the sums over all days (`day` is the last one)")


class ProviderHealth(BaseModel):
    name: str
    ready: bool
    reason: str | None = None
    offline: bool = False


class IndexHealth(BaseModel):
    kind: str | None = Field(description="the vector index in use (None: no index configured)")
    reachable: bool
    pending: int = Field(description="memory versions waiting to be written to the index")
    lag_seconds: float | None = Field(description="how long the oldest of them has waited")


class ConfigVersion(BaseModel):
    sha256: str | None = Field(description="SHA-256 of the project config text this function runs with")
    source: Literal["deployed", "file", "defaults"]


class PromotionBacklog(BaseModel):
    sessions_waiting: int = Field(description="sessions with turns not yet promoted to a snapshot")


class KindBacklog(BaseModel):
    queued: int = 0
    running: int = 0
    failed: int = Field(0, description="snapshots whose last attempt failed (SQS retries, then the DLQ)")
    oldest_waiting_at: datetime | None = Field(
        None, description="when the oldest queued or running snapshot of this kind was cut"
    )


class LastError(BaseModel):
    at: datetime | None = None
    snapshot_id: str
    reason: str | None = Field(None, description="cut_off, not_json, not_items, provider, config ...")
    final: bool = Field(False, description="failed the same way twice: not retried until asked to")
    error: str | None = None


class KindHealth(BaseModel):
    """One kind's extraction over a recent window (the last hour on /v1/status)."""

    done: int = Field(0, description="snapshots extracted")
    failures: int = Field(0, description="snapshots whose extraction failed")
    refused: dict[str, int] = Field(
        default_factory=dict, description="proposed items refused, by reason (invalid, junk, example_copy)"
    )
    outcomes: dict[str, int] = Field(
        default_factory=dict,
        description="snapshots extracted, by what was found: stored, refused (every proposed item refused), "
        "empty_answer (the model proposed nothing), nothing_found (nor did the offline rules)",
    )
    suspect_empty: int = Field(
        0, description="empty answers where the offline rules found items in the same turns"
    )
    kept_private: dict[str, int] = Field(
        default_factory=dict,
        description="items of an org kind kept in their user's private scope, by reason (names_user, personal)",
    )
    last_error: LastError | None = None


class ExtractionBacklog(BaseModel):
    enabled: list[str]
    kinds: dict[str, KindBacklog] = Field(description="per memory kind, from the snapshots' statuses")


class RecallBacklog(BaseModel):
    enabled: bool
    pending_turns: int = Field(description="recorded turns not yet embedded for recall")


class PipelineHealth(BaseModel):
    """The memory pipeline as one tenant (or one user) sees it: every figure counts its own data only."""

    tenant: str
    user_id: str | None = None
    ready: bool = Field(description="an LLM and an embedding provider are usable and MongoDB answers")
    reasons: list[str]
    llm: ProviderHealth
    embeddings: ProviderHealth
    index: IndexHealth
    config: ConfigVersion
    promotion: PromotionBacklog
    extraction: ExtractionBacklog
    recall: RecallBacklog
