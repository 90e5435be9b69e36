"""What every stage of the context pipeline shares: the candidate, the constants of its value, how a turn
and a memory read in the block, and the one token estimate.

A candidate is one item a source offers (a recalled turn, a neighbour of one, a memory, a recent turn,
the working memory) with its rendered line, its value, its token cost and the reason it is offered. The
value says how likely the item holds what the query needs, on one scale for every source: a source's
best item is worth 1, its item at rank r worth k / (k + r - 1) (the reciprocal-rank weighting recall
fuses its rankings with); a neighbour is worth a share of its match; the session's newest turn is worth
1 and each older one a little less. The priority comes first: a request without `sources` gives the
working memory priority 0 and every other item 1 (so items compete by value); a request with `sources`
gives each source its place in the list.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mongomem import markers
from mongomem.models.common import as_utc
from mongomem.models.recall import RecalledTurn
from mongomem.models.turns import Turn
from mongomem.retrieval.when import day_text, resolve_relative, stamp
from mongomem.tokens import CHARS_PER_TOKEN
from mongomem.tokens import estimate_tokens as estimate_tokens  # the block's modules take it from here

# Cosine similarity under which a memory or a recalled turn that shares no word with the query is not
# relevant to it, for embedders that declare no `relevance_floor` of their own (unrelated texts score
# near 0 with Titan, OpenAI, Voyage and the hashing embedder; the local e5 declares its own).
DEFAULT_RELEVANCE_FLOOR = 0.3


# What the marker around the block costs of the budget.
MARKER_TOKENS = estimate_tokens(markers.wrap(".", "context")) - estimate_tokens(".")


def relevance_floor(embedder: Any) -> float:
    return DEFAULT_RELEVANCE_FLOOR if embedder.relevance_floor is None else float(embedder.relevance_floor)


@dataclass(frozen=True)
class Tuning:
    """The pipeline's constants (bench/studies/context/RESULTS.md: what each was measured to give)."""

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
    # a source named in `sources` with a filter or min_score asks for this many times its top_k
    filter_overfetch: int = 4

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
    section: str  # the section's name (working_memory, recent_turns, memories, recalled, or the source's)
    ids: list[str]
    text: str  # the rendered line(s)
    value: float
    reason: str
    turns: frozenset[str] = frozenset()  # the turns (public ids) its text holds: none is in a block twice
    thread: str | None = None  # recalled turns render under their thread
    order: tuple[Any, ...] = ()  # reading order within its section
    priority: int = 1  # taken in priority order first, then by value
    truncatable: bool = False  # cut to what is left rather than left out (working memory)
    indent: bool = False  # a recalled match's neighbour
    slot: int = 0  # which source of the plan offered it (its section)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


def line_tokens(turn: Turn | RecalledTurn) -> int:
    """About what `turn_line` costs, without rendering it (its stamp and speaker: about 8 tokens)."""
    return (len(turn.content) + len(turn.name or turn.role)) // CHARS_PER_TOKEN + 8


def turn_line(
    turn: Turn | RecalledTurn, tuning: Tuning, time_of_day: bool = True, as_of: datetime | None = None
) -> str:
    """ "[8 May 2023 13:56] Caroline: ..." with relative dates resolved against the turn's date (and,
    as of a date, how long before it: "[8 May 2023 13:56, 22 days before]")."""
    content = turn.content
    said = as_utc(turn.timestamp)
    if tuning.resolve_dates:
        content = resolve_relative(content, said.date())
    when = stamp(said) if time_of_day else day_text(said.date())
    return f"[{when}{before(said, as_of)}] {turn.name or turn.role}: {content}"


def memory_line(when: datetime, label: str, text: str, as_of: datetime | None = None) -> str:
    """ "- [8 May 2023] (semantic) ..." (when it was first stated)."""
    said = as_utc(when)
    return f"- [{day_text(said.date())}{before(said, as_of)}] ({label}) {text}"


def before(said: datetime, as_of: datetime | None) -> str:
    """How many days `said` is before the question's date (nothing without one, or on the day)."""
    if as_of is None:
        return ""
    days = (as_utc(as_of).date() - said.date()).days
    return f", {days} day{'s' if days != 1 else ''} before" if days > 0 else ""
