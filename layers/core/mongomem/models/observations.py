"""Observational memory's records: one user's log of dated observations (ADR 0050)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from pydantic import BaseModel, Field

# Snapshot ids a log remembers having observed (a redelivery finds its own among the newest).
KEPT_SNAPSHOT_IDS = 2000


class Observation(BaseModel):
    """One dated line of the log: what a user turn said about the user (or, merged, a day's lines)."""

    at: datetime = Field(description="when the turn it comes from was said")
    session_id: str
    seq: int
    text: str
    merged: int = Field(1, ge=1, description="how many observations the line holds (the reflector's merges)")
    last_seq: int | None = Field(
        None, description="the last turn a merged line holds (None: the line holds only `seq`'s turn)"
    )

    @property
    def seqs(self) -> tuple[int, int]:
        """The first and last turn whose words the line holds."""
        return self.seq, max(self.seq, self.last_seq or self.seq)


class ObservationLog(BaseModel):
    """One user's log."""

    version: int = Field(0, description="goes up when the observations change (the block with them)")
    writes: int = Field(0, description="goes up with every write (a writer's check that none came first)")
    observations: list[Observation] = Field(default_factory=list)
    snapshots: list[str] = Field(default_factory=list, description="the snapshots observed, oldest first")
    updated_at: datetime | None = None


@dataclass(frozen=True)
class ObservedDay:
    """One day of the rendered log: its lines under the day's date."""

    day: date
    text: str
    tokens: int
    turns: tuple[str, ...] = ()  # the turns its lines come from (session_id:seq)


@dataclass(frozen=True)
class ObservationBlock:
    """The log as a context block reads it: its version and its days, oldest first."""

    version: int
    days: list[ObservedDay] = field(default_factory=list)
