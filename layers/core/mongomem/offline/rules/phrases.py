"""Picking the phrase a rule wants at the start of a clause: a person's name, a place or
organisation, a short noun phrase, a list of values, an acronym."""

from __future__ import annotations

import re

from mongomem.offline.rules.text import strip_punct
from mongomem.offline.rules.words import MONTH_WORDS, NOT_NAMES, NP_STOP_FIRST, WEEKDAY_WORDS

_NAME_WORD = r"[A-Z\u00c0-\u00d6\u00d8-\u00de][A-Za-z\u00c0-\u00ff'\-]*"
_NAME = re.compile(rf"\s*(?P<name>{_NAME_WORD}(?:\s+{_NAME_WORD}){{0,2}})")
_NAME_END = re.compile(r"^\s*(?:$|[,.!;:)]|-\s|(?i:and|from|here|by the way|btw)\b)")


def is_name_word(word: str) -> bool:
    bare = word.strip("'-").lower()
    return bool(bare) and word[:1].isupper() and bare not in NOT_NAMES and not bare.endswith("'s")


def take_name(rest: str, *, max_words: int = 3, strict_end: bool = False) -> str | None:
    """A capitalised personal name at the start of `rest` (e.g. "Ana Costa, and ...")."""
    m = _NAME.match(rest)
    if not m:
        return None
    words: list[str] = []
    for word in m.group("name").split():
        if not is_name_word(word) or len(words) >= max_words:
            break
        words.append(word)
    if not words:
        return None
    tail = rest[rest.index(words[-1], m.start("name")) + len(words[-1]) :]
    if strict_end and not _NAME_END.match(tail):
        return None
    if len(words) == 1 and words[0].isupper() and len(words[0]) > 3:
        return None  # SHOUTED words are not names
    return " ".join(words)


def is_full_name(text: str) -> bool:
    """Whether `text` as a whole reads as a personal name (e.g. a turn's speaker name)."""
    return take_name(text, max_words=3) == text.strip()


_CONNECTORS = frozenset("of de da do dos das del della di du la le upon am sur y on-the".split())
_PLACE_STOP = WEEKDAY_WORDS | MONTH_WORDS | {"i", "i'm", "my", "me", "we", "the", "a", "an"}


def _cap_run(tokens: list[str], start: int, max_tokens: int, allow_org: bool) -> int:
    """Index after a run of capitalised tokens (with inner connectors) beginning at `start`."""
    i = start
    taken = 0
    while i < len(tokens) and taken < max_tokens:
        tok = tokens[i]
        bare = tok.rstrip(",")
        low = bare.lower()
        if bare and (bare[0].isupper() or (allow_org and bare[0].isdigit())) and low not in _PLACE_STOP:
            i += 1
            taken += 1
            if bare != tok:  # a comma ends the run
                break
            continue
        if (
            taken
            and (low in _CONNECTORS or (allow_org and low in {"&", "and", "for"}))
            and i + 1 < len(tokens)
            and tokens[i + 1][:1].isupper()
        ):
            i += 1
            continue
        break
    return i


def take_proper(rest: str, *, allow_org: bool = False, max_tokens: int = 5) -> str | None:
    """A place or organisation name at the start of `rest`: "the University of Porto", "Lisbon, Portugal"."""
    m = re.match(r"^[^\s.!?;:]+(?:\s+[^\s.!?;:]+)*", rest.strip())
    if not m:
        return None
    tokens = re.sub(r"[()]", " ", m.group(0)).split() if allow_org else m.group(0).split()
    lead = 1 if len(tokens) > 1 and tokens[0].lower() == "the" and tokens[1][:1].isupper() else 0
    end = _cap_run(tokens, lead, max_tokens, allow_org)
    if end == lead:
        return None
    words = tokens[:end]
    # "Lisbon, Portugal" - a second run after a comma when the clause ends right after it.
    if words[-1].endswith(",") and end < len(tokens):
        end2 = _cap_run(tokens, end, 3, allow_org)
        if end2 > end and (end2 == len(tokens) or not tokens[end2][:1].islower() or tokens[end2] == "and"):
            words = tokens[:end2]
    value = strip_punct(" ".join(words))
    if not value or value.lower() in _PLACE_STOP:
        return None
    return value


_BOUNDARY = re.compile(
    r"\s+(?:but|because|since|although|though|when|whenever|while|if|unless|so|as|which|who|where|whereas|"
    r"especially|except|like|than|and\s+(?:I|i|we|my|it|that|they|he|she|you|also)|and\s+then|or\s+(?:I|so))\b"
    r"|\s+-\s|[.;:!?()\[\]\"\n]"
)


def take_phrase(rest: str, *, max_words: int = 6) -> str | None:
    """A short noun phrase at the start of `rest`, cut at clause boundaries."""
    value = strip_punct(_BOUNDARY.split(rest, maxsplit=1)[0])
    if not value:
        return None
    words = value.split()
    if words[0].lower() in NP_STOP_FIRST or len(words) > max_words:
        return None
    if re.search(r"\b(?:I|I'm|I've|me)\b", value):
        return None
    return value


def split_list(value: str, *, split_and: bool) -> list[str]:
    """ "hiking, cycling and chess" -> three values; "fish and chips" stays whole unless split_and."""
    if "," in value and re.search(r",[^,]*\b(?:and|or)\b", value):
        parts = re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", value)
    elif "," in value:
        parts = [value.split(",", 1)[0]]
    elif split_and:
        parts = re.split(r"\s+(?:and|or|&)\s+", value)
    else:
        parts = [value]
    return [p for p in (strip_punct(x) for x in parts) if p]


def acronym_of(words: str) -> str:
    parts = [
        w for w in re.split(r"[\s\-/]+", words) if w and w.lower() not in {"of", "and", "the", "for", "a"}
    ]
    return "".join(w[0] for w in parts).upper()


def is_acronym(word: str) -> bool:
    return bool(re.fullmatch(r"[A-Z][A-Z0-9&]{1,7}s?", word)) and sum(c.isupper() for c in word) >= 2
