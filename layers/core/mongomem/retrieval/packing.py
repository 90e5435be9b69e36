"""The context block's candidates, their values, and how the budget is filled with them.

A candidate is one item a source offers (a recalled turn, a neighbour of one, a memory, a recent turn,
the working memory) with its rendered line, its value, its token cost and the reason it is offered. The
value says how likely the item holds what the query needs, on one scale for every source: a source's
best item is worth 1, its item at rank r worth k / (k + r - 1) (the reciprocal-rank weighting recall
fuses its rankings with); a neighbour is worth a share of its match; the session's newest turn is worth
1 and each older one a little less. `pack` takes candidates best value per token first while they fit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mongomem import markers
from mongomem.kinds.base import norm
from mongomem.models.common import as_utc
from mongomem.models.recall import RecalledTurn, RecallResponse
from mongomem.models.search import SearchResult
from mongomem.models.turns import Turn
from mongomem.retrieval.when import day_text, resolve_relative, stamp

TITLES = {
    "working_memory": "## Working memory",
    "recent_turns": "## Recent messages in this session",
    "memories": "## What is known about the user",
    "recalled": "## Earlier messages that may be relevant",
}
ORDER = tuple(TITLES)

# Cosine similarity under which a memory or a recalled turn that shares no word with the query is not
# relevant to it, for embedders that declare no `relevance_floor` of their own (unrelated texts score
# near 0 with Titan, OpenAI, Voyage and the hashing embedder; the local e5 declares its own).
DEFAULT_RELEVANCE_FLOOR = 0.3


def estimate_tokens(text: str) -> int:
    """About 4 characters a token, the rule shortterm.record.estimate_tokens uses."""
    return len(text) // 4 + 1


# What the marker around the block costs of the budget.
MARKER_TOKENS = estimate_tokens(markers.wrap(".", "context")) - estimate_tokens(".")


def relevance_floor(embedder: Any) -> float:
    return float(getattr(embedder, "relevance_floor", DEFAULT_RELEVANCE_FLOOR))


@dataclass(frozen=True)
class Tuning:
    """The packing's constants (bench/studies/context/RESULTS.md: what each was measured to give)."""

    rank_k: float = 10.0  # value of rank r: k / (k + r - 1)
    neighbour_share: float = 0.35  # a recalled turn's neighbour is worth this share of its match
    memory_weight: float = 0.5  # a memory at rank r against a recalled turn at rank r
    recent_decay: float = 0.85  # each older recent turn is worth this share of the next newer one
    # candidates are taken in the order of value / tokens ** exponent (0: by value, a longer item is not
    # worth less for being long: the dev split's evidence turns are the long ones)
    token_exponent: float = 0.0
    tokens_per_recalled: int = 25  # matches asked of recall at most: one per this many tokens of budget
    # ... read from MongoDB this many tokens of budget at a time (a LoCoMo turn's line is about 45),
    # until the matches read could fill the budget on their own (each turn read costs the request time)
    tokens_per_read: int = 45
    recall_min: int = 8
    recall_max: int = 100
    tokens_per_memory: int = 200  # memories asked of search: one per this many tokens of budget
    memory_min: int = 5
    memory_max: int = 30
    neighbours_of: int = 6  # the neighbours of this many best matches are candidates (one read)
    resolve_dates: bool = True  # "yesterday" in a turn is followed by the day it meant
    recalled_time: bool = True  # a recalled turn's stamp has the time of day (recent turns always do)

    def recall_pool(self, budget: int, asked: int | None) -> int:
        """How many matches recall is asked for: what the caller asked, else as many as the budget holds."""
        if asked is not None:
            return asked
        return max(self.recall_min, min(self.recall_max, budget // self.tokens_per_recalled))

    def recall_read(self, budget: int) -> int:
        """How many matches recall reads at a time (the first read is usually the last)."""
        return max(self.recall_min, budget // self.tokens_per_read)

    def memory_pool(self, budget: int, asked: int | None) -> int:
        if asked is not None:
            return asked
        return max(self.memory_min, min(self.memory_max, budget // self.tokens_per_memory))

    def rank_value(self, rank: int) -> float:
        return self.rank_k / (self.rank_k + rank - 1)


@dataclass
class Candidate:
    section: str
    ids: list[str]
    text: str  # the rendered line(s)
    value: float
    reason: str
    turns: frozenset[str] = frozenset()  # the turns (public ids) its text holds: none is in a block twice
    thread: str | None = None  # recalled turns render under their thread
    order: tuple[Any, ...] = ()  # reading order within its section
    pinned: bool = False  # taken first whatever its value (working memory)
    indent: bool = False  # a recalled match's neighbour

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    @classmethod
    def first(cls, section: str, ref: str, text: str, reason: str) -> Candidate:
        """A candidate taken before any other (truncated when it alone overflows the budget)."""
        return cls(section, [ref], text, 1.0, reason, pinned=True)


@dataclass
class Section:
    name: str
    items: list[Candidate] = field(default_factory=list)
    truncated: bool = False

    def ordered(self) -> list[Candidate]:
        """The items in reading order: memories best first, turns in time order (recalled ones by thread)."""
        if self.name == "memories":
            return sorted(self.items, key=lambda c: (-c.value, c.order))
        if self.name == "recalled":
            first: dict[str, tuple[Any, ...]] = {}
            for c in sorted(self.items, key=lambda c: c.order):
                first.setdefault(c.thread or "", c.order)
            return sorted(self.items, key=lambda c: (first[c.thread or ""], c.order))
        return sorted(self.items, key=lambda c: c.order)

    def ids(self) -> list[str]:
        return [i for c in self.ordered() for i in c.ids]

    def text(self) -> str:
        if self.name == "recalled":
            return _recalled_text(self.ordered())
        return "\n".join(c.text for c in self.ordered())


@dataclass
class Packed:
    sections: list[Section]
    chosen: list[Candidate]  # in the order they were chosen (best value per token first)
    left_out: dict[str, int]  # budget, duplicate, below_floor (counted by the candidates' makers)
    dropped: dict[str, int]  # per section: items left out for the budget


def render(sections: Sequence[Section]) -> str:
    return "\n\n".join(f"{TITLES[s.name]}\n{s.text()}" for s in sections if s.items)


def _recalled_text(items: list[Candidate]) -> str:
    """The recalled turns grouped by thread, threads in time order, turns in seq order; neighbours are
    indented under their match."""
    threads: dict[str, list[Candidate]] = {}
    for c in items:
        threads.setdefault(c.thread or "", []).append(c)
    lines: list[str] = []
    for thread, group in threads.items():
        lines.append(f"### thread {thread}")
        lines.extend(("  " if c.indent else "") + c.text for c in group)
    return "\n".join(lines)


def pack(candidates: Iterable[Candidate], budget: int, tuning: Tuning, below_floor: int = 0) -> Packed:
    """Pinned candidates first, then the rest best value per token first while they fit the budget."""
    pool = list(candidates)
    sections = {name: Section(name) for name in ORDER}
    chosen: list[Candidate] = []
    left_out = {"budget": 0, "duplicate": 0, "below_floor": below_floor}
    dropped: dict[str, int] = {}
    held: set[str] = set()
    texts: set[str] = set()
    threads: set[str] = set()
    used = 0  # characters of the rendered block

    def cost(c: Candidate) -> int:
        section = sections[c.section]
        extra = len(c.text) + 1 + (2 if c.indent else 0)
        if not section.items:
            extra += len(TITLES[c.section]) + 2 + (2 if used else 0)
        if c.section == "recalled" and (c.thread or "") not in threads:
            extra += len(f"### thread {c.thread or ''}") + 1
        return extra

    def take(c: Candidate) -> None:
        nonlocal used
        used += cost(c)
        sections[c.section].items.append(c)
        chosen.append(c)
        held.update(c.turns)
        texts.add(norm(c.text))
        if c.section == "recalled":
            threads.add(c.thread or "")

    def leave(c: Candidate) -> None:
        left_out["budget"] += 1
        dropped[c.section] = dropped.get(c.section, 0) + 1

    for c in [c for c in pool if c.pinned]:
        room = budget * 4 - 8 - used - (cost(c) - len(c.text))
        if len(c.text) > room:
            if room <= 8:
                leave(c)
                continue
            c.text = c.text[: room - 2].rstrip() + " …"
            sections[c.section].truncated = True
        take(c)
    rest = sorted(
        ((i, c) for i, c in enumerate(pool) if not c.pinned),
        key=lambda ic: (-ic[1].value / max(ic[1].tokens, 1) ** tuning.token_exponent, -ic[1].value, ic[0]),
    )
    for _, c in rest:
        if (c.turns and c.turns & held) or (not c.turns and norm(c.text) in texts):
            left_out["duplicate"] += 1
            continue
        if (used + cost(c)) // 4 + 1 > budget:
            leave(c)
            continue
        take(c)
    ordered = [sections[name] for name in ORDER]
    # the running count above over-counts separators a little; the rendered block decides
    while estimate_tokens(render(ordered)) > budget:
        worst = min((c for c in chosen if not c.pinned), key=lambda c: c.value, default=None)
        if worst is None:
            break
        chosen.remove(worst)
        sections[worst.section].items.remove(worst)
        leave(worst)
    return Packed(ordered, chosen, left_out, dropped)


# -- the candidates of each source ---------------------------------------------------------------
def line_tokens(turn: Turn | RecalledTurn) -> int:
    """About what `turn_line` costs, without rendering it (its stamp and speaker: about 8 tokens)."""
    return (len(turn.content) + len(turn.name or turn.role)) // 4 + 8


def turn_line(turn: Turn | RecalledTurn, tuning: Tuning, time_of_day: bool = True) -> str:
    """ "[8 May 2023 13:56] Caroline: ..." with relative dates resolved against the turn's date."""
    content = turn.content
    said = as_utc(turn.timestamp)
    if tuning.resolve_dates:
        content = resolve_relative(content, said.date())
    when = stamp(said) if time_of_day else day_text(said.date())
    return f"[{when}] {turn.name or turn.role}: {content}"


def recent_candidates(turns: Sequence[Turn], tuning: Tuning) -> list[Candidate]:
    """The session's newest turns: the newest worth 1, each older one `recent_decay` of the next."""
    out = []
    for age, turn in enumerate(reversed(turns)):
        out.append(
            Candidate(
                "recent_turns",
                [turn.public_id],
                turn_line(turn, tuning),
                tuning.recent_decay**age,
                "one of the session's latest turns" if age else "the session's latest turn",
                frozenset({turn.public_id}),
                order=(turn.seq,),
            )
        )
    return out


def _relevant(similarity: float | None, lexical: bool, floor: float) -> bool:
    return lexical or (similarity is not None and similarity >= floor)


def recalled_candidates(
    found: RecallResponse,
    span: tuple[int, int],
    floor: float,
    tuning: Tuning,
    neighbours: Sequence[RecalledTurn] = (),
) -> tuple[list[Candidate], int]:
    """Each relevant match, worth its rank's value, and its neighbours (within `span` = (before, after)
    of it, among the turns recall returned and `neighbours`), worth a share of it; and how many matches
    were below the relevance floor."""
    by_thread: dict[str, list[RecalledTurn]] = {}
    for group in found.threads:
        by_thread.setdefault(group.thread, []).extend(group.turns)
    for turn in neighbours:
        by_thread.setdefault(turn.thread, []).append(turn)
    turns = {t.turn_id: t for group in found.threads for t in group.turns}
    best: dict[str, Candidate] = {}
    below = rank = 0
    for match_id in found.matched:
        match = turns[match_id]
        signals = match.signals or {}
        lexical = "bm25" in signals or "bm25_context" in signals
        if not _relevant(match.similarity, lexical, floor):
            below += 1
            continue
        rank += 1
        value = tuning.rank_value(rank)
        ranked_by = ", ".join(f"{name} #{r}" for name, r in sorted(signals.items(), key=lambda kv: kv[1]))
        cosine = f", cosine {match.similarity:.2f}" if match.similarity is not None else ""
        _offer(best, match, value, f"recalled: #{rank} for the query ({ranked_by}{cosine})", False, tuning)
        for other in by_thread.get(match.thread, []):
            if other.matched or not -span[0] <= other.seq - match.seq <= span[1]:
                continue
            reason = f"next to recalled turn {match_id} (#{rank})"
            _offer(best, other, value * tuning.neighbour_share, reason, True, tuning)
    return list(best.values()), below


def _offer(
    best: dict[str, Candidate], turn: RecalledTurn, value: float, reason: str, indent: bool, tuning: Tuning
) -> None:
    held = best.get(turn.turn_id)
    if held is not None and held.value >= value:
        return
    best[turn.turn_id] = Candidate(
        "recalled",
        [turn.turn_id],
        turn_line(turn, tuning, tuning.recalled_time),
        value,
        reason,
        frozenset({turn.turn_id}),
        thread=turn.thread,
        order=(as_utc(turn.timestamp), turn.thread, turn.seq),
        indent=indent,
    )


def memory_candidates(
    results: Sequence[SearchResult],
    floor: float,
    tuning: Tuning,
    about_user: Callable[[SearchResult], bool] = lambda _: False,
) -> tuple[list[Candidate], int]:
    """Each relevant memory, worth its rank's value ("- [8 May 2023] (semantic) ..."), and how many
    were below the relevance floor. A memory about the user is relevant to a query about the user
    (`about_user`: the query names them or speaks in the first person)."""
    out: list[Candidate] = []
    below = rank = 0
    for r in results:
        sig = r.signals
        if not (_relevant(sig.knn_score, sig.bm25_rank is not None, floor) or about_user(r)):
            below += 1
            continue
        rank += 1
        org = r.visibility == "org"
        label = f"{r.type}, shared by the organisation" if org else r.type
        when = r.observed_at or r.created_at
        parts = [
            f"knn #{sig.knn_rank}, cosine {sig.knn_score:.2f}"
            if sig.knn_rank and sig.knn_score is not None
            else "",
            f"bm25 #{sig.bm25_rank}" if sig.bm25_rank else "",
        ]
        why = "; ".join(p for p in parts if p)
        out.append(
            Candidate(
                "memories",
                [r.memory_id],
                f"- [{day_text(as_utc(when).date())}] ({label}) {r.text}",
                tuning.memory_weight * tuning.rank_value(rank),
                f"{r.type} memory{' of the organisation' if org else ''}: #{rank} for the query ({why})",
                order=(rank,),
            )
        )
    return out, below
