"""One memory kind's extraction: propose items from a snapshot's turns, then commit them."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Protocol

from mongomem import markers
from mongomem.extraction.commit import Committer
from mongomem.extraction.proposal import Proposer, TurnView
from mongomem.kinds import MemoryKind
from mongomem.models.common import Scope, as_utc
from mongomem.models.memory import EvidenceRef
from mongomem.models.sessions import StoredSnapshot
from mongomem.models.turns import Turn


@dataclass
class SnapshotInput:
    """What an extractor sees: the whole snapshot, never single turns (as the repositories return them)."""

    snapshot: StoredSnapshot
    turns: list[Turn]
    # time.monotonic() by which the extraction must be over (the invocation's remaining time).
    deadline: float | None = None


@dataclass
class ExtractionResult:
    memories: list[dict[str, Any]] = field(default_factory=list)
    decisions: dict[str, int] = field(default_factory=dict)
    note: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    refused: dict[str, int] = field(default_factory=dict)  # proposed items refused, by reason


class Extractor(Protocol):
    def extract(self, item: SnapshotInput) -> ExtractionResult: ...


DEFAULT_ROLES = ("user", "assistant")


def turn_views(turns: list[Turn], roles: Collection[str] = DEFAULT_ROLES) -> list[TurnView]:
    """The turns a kind is extracted from: only `roles`, and without any span mongomem handed the agent
    (mongomem.markers: an echo of a context block or recalled message is never learnt again). Tool calls
    are spelled out when tool turns are read (procedures learn which tools a task uses)."""
    views = []
    own_calls = {c.get("id") for t in turns for c in t.tool_calls or [] if c.get("name") in markers.OWN_TOOLS}
    for t in turns:
        if t.role not in roles:
            continue
        if t.role == "tool" and (t.name in markers.OWN_TOOLS or t.tool_call_id in own_calls):
            continue  # the result of one of mongomem's own tools: what memory already holds
        content, _ = markers.strip(t.content or "")
        if "tool" in roles and t.tool_calls:
            calls = "; ".join(_call(c) for c in t.tool_calls)
            content = f"{content}\n[calls {calls}]".strip()
        if content.strip():
            views.append(TurnView(t.seq, t.role, content, as_utc(t.timestamp), t.name))
    return views


def shared_metadata(turns: list[Turn], keys: Collection[str]) -> dict[str, Any]:
    """The partition keys' values every turn of the snapshot agrees on: what its memories inherit."""
    out: dict[str, Any] = {}
    for key in keys:
        values = {json.dumps((t.metadata or {}).get(key), sort_keys=True) for t in turns}
        if len(values) == 1 and turns:
            value = (turns[0].metadata or {}).get(key)
            if isinstance(value, str | int | float | bool):
                out[key] = value
    return out


def _call(call: dict[str, Any]) -> str:
    arguments, _ = markers.strip(json.dumps(call.get("arguments") or {}, ensure_ascii=False, sort_keys=True))
    return f"{call.get('name')}({arguments[:2000]})"


class KindExtractor:
    def __init__(
        self,
        kind: MemoryKind,
        proposer: Proposer,
        committer: Committer,
        roles: Collection[str] | None = None,
        instructions: str | None = None,
        partition_keys: Collection[str] = (),
    ) -> None:
        self.kind = kind
        self.proposer = proposer
        self.committer = committer
        self.roles = tuple(roles or kind.roles)
        self.instructions = instructions
        self.partition_keys = tuple(partition_keys)

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        snap = item.snapshot
        turns = turn_views(item.turns, self.roles)
        if not turns:
            return ExtractionResult(note=f"the snapshot holds no {'/'.join(self.roles)} turns to read")
        proposal = self.proposer.propose(
            self.kind, turns, snap.user_id, item.deadline, instructions=self.instructions
        )
        usage = ExtractionResult(input_tokens=proposal.input_tokens, output_tokens=proposal.output_tokens)
        if not proposal.items:
            usage.note = "nothing of this kind in the snapshot"
            return usage
        # The snapshot's owner scopes every write, never anything a proposer returned.
        scope = Scope(tenant=snap.tenant, user_id=snap.user_id)
        evidence = EvidenceRef(snapshot_id=snap.snapshot_id, source="extraction")
        committed = self.committer.commit(
            scope,
            self.kind,
            proposal.items,
            evidence,
            {t.seq: t.timestamp for t in turns},
            deadline=item.deadline,
            agent_id=snap.agent_id,
            metadata=shared_metadata(item.turns, self.partition_keys),
            user_names={t.name for t in item.turns if t.role == "user" and t.name},
        )
        usage.memories = [{"memory_id": o.record.memory_id} for o in committed.outcomes if o.record]
        usage.decisions = committed.decisions
        usage.refused = dict(committed.refused)
        return usage
