"""Who the user is: the name they state ("my name is Ana", "Hi, I'm Ana"), else the name their
turns were recorded with, else "user". Facts and events are told about that subject."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from mongomem.extraction.proposal import TurnView
from mongomem.offline.rules.phrases import is_full_name, take_name
from mongomem.offline.rules.text import hedged, statements

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
    """The user's own turns, plus what the assistant said that the user's next turn confirmed ("Your home
    airport is LIS now, right?" - "Yes") in the user's words, cited by the confirming turn. An assistant's
    suggestion the user did not confirm is never theirs."""
    out: list[TurnView] = []
    for i, turn in enumerate(turns):
        if turn.role != "user":
            continue
        before = turns[i - 1] if i else None
        if before is not None and before.role == "assistant" and _CONFIRM.match(turn.content):
            restated = first_person(before.content)
            if restated:
                out.append(TurnView(turn.seq, "user", restated, turn.timestamp, turn.name))
        out.append(turn)
    return out


# A reply that only confirms what was just said: "yes", "yes please", "correct", "that's right" ...
_CONFIRM = re.compile(
    r"^\s*(yes|yep|yeah|yup|correct|exactly|right|indeed|absolutely|affirmative|sure|of course|"
    r"that'?s (right|correct|it)|that is (right|correct)|you'?re right|you are right|confirmed|"
    r"sounds (good|right)|please do|go ahead)\b[\s,.!]*((please|thanks|thank you|that'?s (right|correct)|"
    r"it is|i do|i am|exactly)[\s,.!]*)*$",
    re.IGNORECASE,
)
# The assistant's words for the user, turned into the user's own ("your" -> "my", "you are" -> "I am").
_PERSON = [
    (r"\byou are\b", "I am"),
    (r"\byou'?re\b", "I'm"),
    (r"\byou'?d\b", "I'd"),
    (r"\byou'?ve\b", "I've"),
    (r"\byou'?ll\b", "I'll"),
    (r"\byourself\b", "myself"),
    (r"\byours\b", "mine"),
    (r"\byour\b", "my"),
    (r"\byou\b", "I"),
]
_LEAD = re.compile(
    r"^\s*(so|ok(ay)?|alright|great|got it|noted|just to (confirm|check|be sure)|to confirm|"
    r"let me (confirm|check)|if i understand( correctly)?|i understand)\b[\s,:;-]*",
    re.IGNORECASE,
)
_TAG = re.compile(
    r"[\s,]*(right|correct|is that (right|correct)|isn'?t it|don'?t you|yes)?\s*\?\s*$", re.IGNORECASE
)


def first_person(text: str) -> str:
    """The statements of an assistant turn about the user as the user would say them; questions asking
    for something new ("What is your seat preference?") give nothing."""
    out = []
    for sentence in re.split(r"(?<=[.!?])\s+", text.strip()):
        body = _LEAD.sub("", sentence)
        if re.match(
            r"^\s*(what|which|who|when|where|why|how|shall|should|can|could|would|will|do|does)\b", body, re.I
        ):
            continue  # a question for information, not a statement to confirm
        body = _TAG.sub("", body).strip().rstrip(".!")
        if not body or not re.search(r"\byou", body, re.IGNORECASE):
            continue
        for pattern, repl in _PERSON:
            body = re.sub(pattern, repl, body, flags=re.IGNORECASE)
        out.append(body[0].upper() + body[1:] + ".")
    return " ".join(out)


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
