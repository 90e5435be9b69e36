"""Propose, then commit: what an extractor proposes from, and what it proposes.

A proposer (an LLM, or the offline rules) turns a snapshot's turns into items of one memory kind; one
writer (mongomem.longterm.write) embeds, reconciles, stores and indexes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mongomem.kinds import MemoryKind


@dataclass(frozen=True)
class TurnView:
    """One turn of a snapshot; relative dates in it resolve against its own `timestamp`."""

    seq: int
    role: str  # user | assistant | system | tool
    content: str
    timestamp: datetime  # when the turn was said (aware, UTC)
    name: str | None = None


@dataclass
class Proposal:
    """What a proposer found: raw items (validated by the kind before they are committed) and its cost."""

    items: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""
    from_rules: int = 0  # of `items`, the last ones the offline rules proposed beside a model's


class Proposer(Protocol):
    name: str

    def propose(
        self,
        kind: MemoryKind,
        turns: Sequence[TurnView],
        user_id: str,
        deadline: float | None = None,
        *,
        instructions: str | None = None,
        siblings: Sequence[str] = (),
    ) -> Proposal:
        """Items of one memory kind, each with evidence_seqs; `deadline` bounds any model call;
        `instructions` replaces the kind's own (the project's prompt override); `siblings` names every kind
        extracted from the same snapshot (their calls share a prompt prefix)."""
        ...
