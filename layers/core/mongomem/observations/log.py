"""The log's two pure functions: `render` (the same log gives the same bytes: no clock, no scores) and
`reflect` (past the budget, the oldest days merged into one line per day and session, then dropped)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import date
from itertools import groupby

from mongomem.models.common import as_utc
from mongomem.models.observations import Observation, ObservedDay
from mongomem.retrieval.when import day_text
from mongomem.tokens import estimate_tokens

# A merged line keeps this much of each observation it holds (its first clause).
MERGED_PART_CHARS = 90
_CLAUSE = re.compile(r"(?<=[.!?;])\s+")


def ordered(observations: Iterable[Observation]) -> list[Observation]:
    """The log's reading order: by time, then session, then turn."""
    return sorted(observations, key=lambda o: (as_utc(o.at), o.session_id, o.seq))


def day_of(o: Observation) -> date:
    return as_utc(o.at).date()


def days(observations: Iterable[Observation]) -> list[ObservedDay]:
    """The log's days, oldest first: "8 May 2023:" then one "- ..." line per observation."""
    out = []
    for day, group in groupby(ordered(observations), key=day_of):
        lines = list(group)
        text = "\n".join([f"{day_text(day)}:", *(f"- {o.text}" for o in lines)])
        refs = tuple(dict.fromkeys(f"{o.session_id}:{o.seq}" for o in lines))
        out.append(ObservedDay(day, text, estimate_tokens(text), refs))
    return out


def render(observations: Iterable[Observation]) -> str:
    """The whole log as the block reads it."""
    return "\n".join(d.text for d in days(observations))


def reflect(observations: Sequence[Observation], max_tokens: int) -> list[Observation]:
    """The log within `max_tokens`: the oldest days merged first (one line per day and session), then
    the oldest days dropped, then the oldest lines of the one day left; the newest day stays verbatim
    while anything older is left to merge or drop."""
    log = ordered(observations)

    def fits(obs: list[Observation]) -> bool:
        return estimate_tokens(render(obs)) <= max_tokens

    if fits(log):
        return log
    dates = sorted({day_of(o) for o in log})
    for day in dates[:-1]:
        log = _merge_day(log, day)
        if fits(log):
            return log
    while len({day_of(o) for o in log}) > 1 and not fits(log):
        oldest = day_of(log[0])
        log = [o for o in log if day_of(o) != oldest]
    while len(log) > 1 and not fits(log):
        log = log[1:]
    return log


def _merge_day(log: list[Observation], day: date) -> list[Observation]:
    """`day`'s observations merged into one line per session, each part cut to its first clause."""
    kept = [o for o in log if day_of(o) != day]
    merged = []
    of_day = [o for o in log if day_of(o) == day]
    for session, group in groupby(sorted(of_day, key=lambda o: o.session_id), key=lambda o: o.session_id):
        lines = ordered(group)
        if len(lines) == 1 and lines[0].merged > 1:
            merged.append(lines[0])
            continue
        parts = [_first_clause(o.text) for o in lines]
        first = lines[0]
        merged.append(
            Observation(
                at=first.at,
                session_id=session,
                seq=first.seq,
                text="; ".join(parts),
                merged=sum(o.merged for o in lines),
                # the line holds every merged line's words: a delete from any of their turns takes it
                last_seq=max(o.seqs[1] for o in lines),
            )
        )
    return ordered([*kept, *merged])


def _first_clause(text: str) -> str:
    clause = _CLAUSE.split(text.strip(), maxsplit=1)[0]
    return clause if len(clause) <= MERGED_PART_CHARS else clause[: MERGED_PART_CHARS - 1].rstrip() + "…"
