"""Who the user is: the name they state ("my name is Ana", "Hi, I'm Ana"), else the name their
turns were recorded with, else "user". Facts and events are told about that subject."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from mongomem.extraction.offline.phrases import is_full_name, take_name
from mongomem.extraction.offline.text import hedged, statements
from mongomem.extraction.proposal import TurnView

REST = r"(?P<rest>[^.!?;\n]*)"

# (pattern, how the name is read from the clause after it)
NAME_RULES: list[tuple[re.Pattern[str], Callable[[str], str | None]]] = [
    (
        re.compile(rf"\b(?i:my\s+(?:full\s+|first\s+)?name\s+is|my\s+name's|name's)\s+{REST}"),
        lambda rest: take_name(rest, max_words=3),
    ),
    (
        re.compile(
            r"^(?:(?i:hi|hello|hey|hiya|greetings|good\s+(?:morning|afternoon|evening))[\s,!.]*"
            rf"(?:(?i:there)[\s,!.]*)?)?(?:I'm|I am)\s+{REST}"
        ),
        lambda rest: take_name(rest, max_words=2, strict_end=True),
    ),
]


_MAY_NAME = re.compile(r"(?i:name)|I'm|I am")


def user_turns(turns: Sequence[TurnView]) -> list[TurnView]:
    return [t for t in turns if t.role == "user"]


def names_in(sentence: str) -> list[str]:
    """The names the user gives themselves in one sentence, in order."""
    out: list[str] = []
    for pattern, read in NAME_RULES:
        for m in pattern.finditer(sentence):
            name = read(m.group("rest")) if not hedged(sentence[: m.start()]) else None
            if name:
                out.append(name)
    return out


def subject(turns: Sequence[TurnView]) -> str:
    """The latest name the user stated, else their turns' recorded name, else "user"."""
    for turn in reversed(user_turns(turns)):
        if not _MAY_NAME.search(turn.content):
            continue  # neither rule can match: spare splitting the turn
        for sentence in reversed(statements(turn.content)):
            stated = names_in(sentence)
            if stated:
                return stated[-1]
    for turn in reversed(user_turns(turns)):
        if turn.name and is_full_name(turn.name):
            return turn.name.strip()
    return "user"
