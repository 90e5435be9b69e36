"""What an extractor proposes from: a snapshot's turns as every proposer sees them.

A proposer (an LLM, or the offline rules) turns the turns into items of one memory kind; one
shared commit step embeds, reconciles, stores and indexes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True)
class TurnView:
    """One turn of a snapshot; relative dates in it resolve against its own `timestamp`."""

    seq: int
    role: str  # user | assistant | system | tool
    content: str
    timestamp: datetime  # when the turn was said (aware, UTC)
    name: str | None = None


class Proposer(Protocol):
    name: str

    def propose(self, kind: str, turns: Sequence[TurnView], user_id: str) -> list[dict[str, Any]]:
        """Items of one memory kind, each valid for that kind's item model and carrying evidence_seqs."""
        ...
