"""What a user's answers may not show yet: turns recorded but not yet extracted into memories or
indexed for recall (search and context say it, so an agent or a test can wait instead of concluding
that nothing is known)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class PendingWork(BaseModel):
    turns_not_extracted: int = Field(
        description="the user's turns whose memories are not extracted yet: not yet in a snapshot, or in "
        "one still queued or running"
    )
    snapshots_extracting: int = Field(description="the user's snapshots with a kind still queued or running")
    turns_not_indexed: int = Field(description="the user's turns not yet embedded for recall")
    oldest_pending_at: datetime | None = Field(
        None, description="when the oldest of that work was recorded or cut"
    )
    oldest_pending_age_s: float | None = Field(None, description="its age in seconds")

    @property
    def settled(self) -> bool:
        return not (self.turns_not_extracted or self.snapshots_extracting or self.turns_not_indexed)
