"""The users of a tenant, as the user directory lists them."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class UserSummary(BaseModel):
    user_id: str
    sessions: int = Field(description="sessions recorded for the user")
    memories: int = Field(description="active long-term memories (current versions)")
    last_activity_at: datetime | None = Field(None, description="the latest turn or memory write of the user")


class UserPage(BaseModel):
    tenant: str = Field(description="the caller's tenant: every user listed belongs to it")
    users: list[UserSummary] = Field(description="ordered by user_id")
    next_cursor: str | None = Field(None, description="pass as `cursor` for the next page")
