"""One memory kind's extraction: propose items from a snapshot's turns, then hand them to the writer."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mongomem import markers
from mongomem.extraction import guards
from mongomem.extraction.proposal import Proposer, TurnView
from mongomem.kinds import MemoryKind
from mongomem.longterm.write.writer import MemoryWriter, Written
from mongomem.models.common import Scope, as_utc
from mongomem.models.memory import EvidenceRef, Visibility
from mongomem.models.sessions import ExtractionOutcome, StoredSnapshot
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
    """What one kind's extraction of a snapshot did: the kind's status figures and the handler's metrics."""

    memory_ids: list[str] = field(default_factory=list)  # the memories written (added or changed)
    decisions: Counter[str] = field(default_factory=Counter)  # the writer's decisions (ADD, UPDATE ...)
    note: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    refused: Counter[str] = field(default_factory=Counter)  # proposed items refused, by reason
    # stored | refused | empty_answer | nothing_found (models.sessions.TypeStatus.outcome)
    outcome: ExtractionOutcome | None = None
    rules_found: int | None = None  # what the offline rules found where the model answered nothing
    kept_private: Counter[str] = field(default_factory=Counter)  # org-kind items kept private, by reason

    def add(self, written: Written) -> None:
        """Count in one batch the writer wrote."""
        self.memory_ids += [o.record.memory_id for o in written.outcomes if o.record]
        self.decisions.update(written.decisions)
        self.refused.update(written.refused)


# The offline rules' count of items of a kind in some turns (None: no rules for the kind): the cheap
# second opinion on an empty answer (built by providers.factory.empty_answer_check).
EmptyCheck = Callable[[MemoryKind, Sequence[TurnView]], int | None]


class Extractor(Protocol):
    def extract(self, item: SnapshotInput) -> ExtractionResult: ...


class NoTimeLeft(Exception):
    """Too little of the invocation is left to extract this record: it is sent again, not failed."""


# Kept back from the LLM call for the commit after it: embeddings, reconciliation, MongoDB, OpenSearch.
COMMIT_SECONDS = 20.0
# A model call is not started with less than this left for it (it could not finish).
MIN_CALL_SECONDS = 5.0


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


def _llm_deadline(deadline: float | None) -> float | None:
    """The model's call must leave the commit its time: the budget covers both (docs/operations.md)."""
    if deadline is None:
        return None
    llm_deadline = deadline - COMMIT_SECONDS
    if llm_deadline - time.monotonic() < MIN_CALL_SECONDS:
        raise NoTimeLeft(f"{deadline - time.monotonic():.1f}s left: too little to extract and commit")
    return llm_deadline


class KindExtractor:
    def __init__(
        self,
        kind: MemoryKind,
        proposer: Proposer,
        writer: MemoryWriter,
        roles: Collection[str] | None = None,
        instructions: str | None = None,
        partition_keys: Collection[str] = (),
        check: EmptyCheck | None = None,
    ) -> None:
        self.kind = kind
        self.check = check  # asked only when the proposer answers no item
        self.proposer = proposer
        self.writer = writer
        self.roles = tuple(roles or kind.roles)
        self.instructions = instructions
        self.partition_keys = tuple(partition_keys)

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        snap = item.snapshot
        turns = turn_views(item.turns, self.roles)
        if not turns:
            return ExtractionResult(
                note=f"the snapshot holds no {'/'.join(self.roles)} turns to read", outcome="nothing_found"
            )
        proposal = self.proposer.propose(
            self.kind,
            turns,
            snap.user_id,
            _llm_deadline(item.deadline),
            instructions=self.instructions,
            siblings=list(snap.extraction),
        )
        usage = ExtractionResult(input_tokens=proposal.input_tokens, output_tokens=proposal.output_tokens)
        if not proposal.items:
            return self._empty(usage, turns)
        model_answered = len(proposal.items) > proposal.from_rules
        org = self.writer.visibility_of(self.kind) == "org"
        screened = guards.screen(
            self.kind, proposal.items, turns, snap.user_id, org=org, instructions=self.instructions
        )
        usage.refused = Counter(screened.refused)
        usage.kept_private = Counter(screened.kept_private)
        batches: list[tuple[list[Any], Visibility | None]] = [
            (screened.items, None),
            (screened.personal, "private"),  # an org kind's item naming the user stays with the user
        ]
        for items, visibility in batches:
            if items:
                usage.add(self._write(item, turns, items, visibility))
        usage.outcome = "stored"
        if not model_answered:
            # only the offline rules' items, proposed beside an empty model answer: still an empty answer
            usage.outcome, usage.rules_found = "empty_answer", proposal.from_rules
            usage.note = (
                f"the model proposed nothing; the offline rules found {proposal.from_rules} item(s) "
                "in the same turns (proposed beside it)"
            )
        elif not usage.memory_ids and not usage.decisions and usage.refused:
            usage.note = f"every proposed item was refused ({', '.join(sorted(usage.refused))})"
            usage.outcome = "refused"
        return usage

    def _write(
        self, item: SnapshotInput, turns: Sequence[TurnView], items: list[Any], visibility: Visibility | None
    ) -> Written:
        snap = item.snapshot
        # The snapshot's owner scopes every write, never anything a proposer returned.
        return self.writer.write(
            Scope(tenant=snap.tenant, user_id=snap.user_id),
            self.kind,
            items,
            EvidenceRef(snapshot_id=snap.snapshot_id, source="extraction"),
            {t.seq: t.timestamp for t in turns},
            deadline=item.deadline,
            agent_id=snap.agent_id,
            metadata=shared_metadata(item.turns, self.partition_keys),
            visibility=visibility,
            user_names={t.name for t in item.turns if t.role == "user" and t.name},
        )

    def _empty(self, usage: ExtractionResult, turns: Sequence[TurnView]) -> ExtractionResult:
        """An answer without items: `nothing_found` when the offline rules find nothing in the same turns
        either (or they are the proposer), `empty_answer` when they find items or cannot tell."""
        found = self.check(self.kind, turns) if self.check is not None else 0
        usage.rules_found = found if self.check is not None else None
        if found == 0:
            usage.outcome, usage.note = "nothing_found", "nothing of this kind in the snapshot"
        else:
            usage.outcome = "empty_answer"
            usage.note = (
                "the model proposed nothing"
                if found is None
                else f"the model proposed nothing; the offline rules find {found} item(s) in the same turns"
            )
        return usage
