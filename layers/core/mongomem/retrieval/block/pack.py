"""Pack: fill the budget with the candidates, in priority order, then best value (per token) first.

A candidate that does not fit what is left is skipped and the next one tried, so a small budget keeps
what matters most and a larger one adds the next-best items; a truncatable one (working memory) is cut
to what is left instead. No turn is in the block twice, nor two memories with the same text. The
running count is in characters of the block as render.py writes it; the rendered block decides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mongomem.kinds.base import norm
from mongomem.retrieval.block.items import Candidate, Tuning
from mongomem.tokens import CHARS_PER_TOKEN, tokens_in


@dataclass
class Section:
    name: str
    title: str  # its heading ("## ...")
    layout: str  # pinned, ranked (best first), timeline (time order), threads (by thread, time order)
    items: list[Candidate] = field(default_factory=list)
    truncated: bool = False
    dropped: int = 0  # items left out for the budget

    def ordered(self) -> list[Candidate]:
        if self.layout == "ranked":
            return sorted(self.items, key=lambda c: (-c.value, c.order))
        if self.layout == "threads":
            first: dict[str, tuple[Any, ...]] = {}
            for c in sorted(self.items, key=lambda c: c.order):
                first.setdefault(c.thread or "", c.order)
            return sorted(self.items, key=lambda c: (first[c.thread or ""], c.order))
        return sorted(self.items, key=lambda c: c.order)

    def ids(self) -> list[str]:
        return [i for c in self.ordered() for i in c.ids]


@dataclass
class Packed:
    sections: list[Section]
    chosen: list[Candidate]  # in the order they were chosen
    left_out: dict[str, int]  # budget, duplicate (below_floor is the sources')


def key(c: Candidate, index: int, tuning: Tuning) -> tuple[float, ...]:
    return (c.priority, -c.value / max(c.tokens, 1) ** tuning.token_exponent, -c.value, index)


def pack(
    candidates: Iterable[Candidate],
    budget: int,
    sections: Sequence[Section],
    tuning: Tuning,
    measure: Callable[[Sequence[Section]], int],
    bullet: int = 0,
) -> Packed:
    """`sections` by the candidates' slot; `measure` counts the tokens of the rendered sections;
    `bullet`: characters the format adds to each line."""
    ranked = [c for _, c in sorted(((key(c, i, tuning), c) for i, c in enumerate(candidates)))]
    chosen: list[Candidate] = []
    left_out = {"budget": 0, "duplicate": 0}
    held: set[str] = set()
    texts: set[str] = set()
    threads: set[tuple[int, str]] = set()
    used = 0  # characters of the rendered block

    def cost(c: Candidate) -> int:
        section = sections[c.slot]
        extra = len(c.text) + 1 + (2 if c.indent else 0) + (bullet if section.layout != "pinned" else 0)
        if not section.items:
            extra += len(section.title) + 2 + (2 if used else 0)
        if section.layout == "threads" and (c.slot, c.thread or "") not in threads:
            extra += len(f"### thread {c.thread or ''}") + 1
        return extra

    def take(c: Candidate) -> None:
        nonlocal used
        used += cost(c)
        sections[c.slot].items.append(c)
        chosen.append(c)
        held.update(c.turns)
        texts.add(norm(c.text))
        threads.add((c.slot, c.thread or ""))

    def leave(c: Candidate) -> None:
        left_out["budget"] += 1
        sections[c.slot].dropped += 1

    for c in ranked:
        if (c.turns and c.turns & held) or (not c.turns and norm(c.text) in texts):
            left_out["duplicate"] += 1
            continue
        if tokens_in(used + cost(c)) <= budget:
            take(c)
            continue
        room = budget * CHARS_PER_TOKEN - 8 - used - (cost(c) - len(c.text))
        if c.truncatable and room > 8:
            c.text = c.text[: room - 2].rstrip() + " …"
            sections[c.slot].truncated = True
            take(c)
            continue
        leave(c)
    # the running count above may miss a separator; the rendered block decides (the last taken goes)
    while measure(sections) > budget:
        worst = next((c for c in reversed(chosen) if not c.truncatable), None)
        if worst is None:
            break
        chosen.remove(worst)
        sections[worst.slot].items.remove(worst)
        leave(worst)
    return Packed(list(sections), chosen, left_out)
