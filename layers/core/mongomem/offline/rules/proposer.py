"""The offline proposer: deterministic rules per memory kind, no network, no model.

Turn content is data, never instructions: every item holds only what a rule pulled out of the
text, in the shape of the kind's item model, and is validated by that model before it leaves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from mongomem.extraction.proposal import Proposal, TurnView
from mongomem.extraction.schemas import (
    EpisodicItem,
    PreferenceItem,
    ProceduralItem,
    SemanticItem,
    TaxonomicItem,
)
from mongomem.kinds import MemoryKind
from mongomem.offline.rules import episodic, preference, procedural, semantic, taxonomic
from mongomem.offline.rules.text import clean_text

MAX_ITEMS = 200
MAX_TURN_CHARS = 20_000  # longer turns are read up to here (keeps the cost linear and bounded)
# Schema list limits: evidence keeps the latest seqs, the other lists their first entries.
_EVIDENCE_CAP = 200
_LIST_HEADS = {"participants": 50, "aliases": 50, "steps": 100}


@dataclass(frozen=True)
class KindRules:
    item: type[BaseModel]  # what every proposed item must validate as
    propose: Callable[[Sequence[TurnView]], list[dict[str, Any]]]  # over cleaned turns in seq order


# One entry per memory kind that has offline rules; a kind without an entry gets no items.
KINDS: dict[str, KindRules] = {
    "semantic": KindRules(SemanticItem, semantic.propose),
    "episodic": KindRules(EpisodicItem, episodic.propose),
    "procedural": KindRules(ProceduralItem, procedural.propose),
    "taxonomic": KindRules(TaxonomicItem, taxonomic.propose),
    "preference": KindRules(PreferenceItem, preference.propose),
}


class OfflineProposer:
    name = "offline-patterns-v2"

    def __init__(self, kinds: dict[str, KindRules] | None = None) -> None:
        self.kinds = KINDS if kinds is None else kinds

    def propose(self, kind: str, turns: Sequence[TurnView], user_id: str) -> list[dict[str, Any]]:
        """Items of one memory kind, valid for its item model, with evidence_seqs; [] for a kind
        without rules. `user_id` never reaches an item: the caller scopes every write."""
        rules = self.kinds.get(kind)
        if rules is None:
            return []
        return _validated(rules.item, rules.propose(_readable(turns)))


def _readable(turns: Sequence[TurnView]) -> list[TurnView]:
    """Non-empty turns in seq order, cleaned and cut to MAX_TURN_CHARS, roles in lower case."""
    kept = [
        TurnView(t.seq, t.role.lower(), clean_text(t.content[:MAX_TURN_CHARS]), t.timestamp, t.name)
        for t in turns
        if t.content.strip()
    ]
    return sorted(kept, key=lambda t: t.seq)


def _validated(model: type[BaseModel], items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Items within the schema's limits; one that does not validate is dropped, never sent."""
    valid: list[dict[str, Any]] = []
    for item in items:
        if len(valid) >= MAX_ITEMS:
            break
        item = dict(item)
        if isinstance(item.get("evidence_seqs"), list):
            item["evidence_seqs"] = sorted(item["evidence_seqs"])[-_EVIDENCE_CAP:]
        for key, cap in _LIST_HEADS.items():
            if isinstance(item.get(key), list):
                item[key] = item[key][:cap]
        try:
            valid.append(model.model_validate(item).model_dump(mode="json", exclude_unset=True))
        except ValidationError:
            continue
    return valid


class RulesProposer:
    """The offline rules as extraction's proposer: no model, no network, no cost."""

    name = "offline"

    def __init__(self, rules: OfflineProposer | None = None) -> None:
        self.rules = rules or OfflineProposer()

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
        return Proposal(self.rules.propose(kind.name, turns, user_id), model=self.rules.name)
