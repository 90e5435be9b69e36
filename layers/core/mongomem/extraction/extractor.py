"""One memory kind's extraction: propose items from a snapshot's turns, then commit them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from mongomem.extraction.commit import Committer
from mongomem.extraction.proposal import Proposer, TurnView
from mongomem.kinds import MemoryKind
from mongomem.models.common import Scope, as_utc
from mongomem.models.memory import EvidenceRef


@dataclass
class SnapshotInput:
    """What an extractor sees: the whole snapshot, never single turns."""

    snapshot: dict[str, Any]
    turns: list[dict[str, Any]]
    # time.monotonic() by which the extraction must be over (the invocation's remaining time).
    deadline: float | None = None


@dataclass
class ExtractionResult:
    memories: list[dict[str, Any]] = field(default_factory=list)
    decisions: dict[str, int] = field(default_factory=dict)
    note: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    refused: int = 0


class Extractor(Protocol):
    def extract(self, item: SnapshotInput) -> ExtractionResult: ...


def turn_views(turns: list[dict[str, Any]]) -> list[TurnView]:
    return [
        TurnView(t["seq"], t["role"], t.get("content") or "", as_utc(t["timestamp"]), t.get("name"))
        for t in turns
        if (t.get("content") or "").strip()
    ]


class KindExtractor:
    def __init__(self, kind: MemoryKind, proposer: Proposer, committer: Committer) -> None:
        self.kind = kind
        self.proposer = proposer
        self.committer = committer

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        snap = item.snapshot
        turns = turn_views(item.turns)
        if not turns:
            return ExtractionResult(note="the snapshot holds no turns")
        proposal = self.proposer.propose(self.kind, turns, snap["user_id"], item.deadline)
        usage = ExtractionResult(input_tokens=proposal.input_tokens, output_tokens=proposal.output_tokens)
        if not proposal.items:
            usage.note = "nothing of this kind in the snapshot"
            return usage
        # The snapshot's owner scopes every write, never anything a proposer returned.
        scope = Scope(tenant=snap["tenant"], user_id=snap["user_id"])
        evidence = EvidenceRef(snapshot_id=snap["_id"], source="extraction")
        committed = self.committer.commit(
            scope, self.kind, proposal.items, evidence, {t.seq for t in turns}, deadline=item.deadline
        )
        usage.memories = [{"memory_id": o.record.memory_id} for o in committed.outcomes]
        usage.decisions = committed.decisions
        usage.refused = committed.refused
        return usage
