"""What an agent's recent search, recall and context calls returned, and why (the console's Requests view)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

RequestKind = Literal["search", "recall", "context"]


class ReturnedItem(BaseModel):
    """One thing a call gave the agent: a memory, a recalled message or a context item."""

    id: str
    text: str = Field(description="its text (shortened)")
    section: str | None = Field(None, description="context: the block's section or source it sits in")
    score: float | None = None
    why: str = Field(description="why it was returned: its ranks and scores, or its context reason")


class RecentRequest(BaseModel):
    kind: RequestKind
    at: datetime
    query: str | None = Field(None, description="the query the call ranked by (context: the one it used)")
    request: dict[str, Any] = Field(
        description="the call's other settings (top_k, mode, budget, sources ...)"
    )
    returned: list[ReturnedItem]
    left_out: dict[str, int] = Field(
        default_factory=dict, description="context: items each section left out to fit the budget"
    )
    block: str | None = Field(None, description="context: the block as the agent got it (shortened)")
    tokens: int | None = None
    took_ms: float | None = None


class RecentRequests(BaseModel):
    user_id: str
    kept: int = Field(description="how many calls are kept per user (the oldest go first)")
    requests: list[RecentRequest] = Field(description="newest first")
