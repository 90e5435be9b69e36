"""Semantic rules: labelled facts the user states about themselves ("I live in Lisbon", "my wife
Maria", "I'm allergic to peanuts"), one item per (subject, attribute, value)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from mongomem.dates import find_dates, replace_dates, tense
from mongomem.extraction.proposal import TurnView
from mongomem.kinds.meaning import norm
from mongomem.offline.rules import speaker
from mongomem.offline.rules.semantic_facts import RULES, SINGLE_VALUED, Fact, Hit
from mongomem.offline.rules.text import capitalise, clip, hedged, statements, strip_punct
from mongomem.offline.rules.third_person import third_person, who
from mongomem.offline.rules.words import MULTI_VALUED

# A negated self-statement, read as the statement it denies ("I'm not allergic to peanuts" -> "I'm
# allergic to peanuts", retracted). Only forms whose affirmative a rule reads as a fact: "I don't like X"
# is a dislike of its own (a rule of semantic_rules.toml), never a retraction, and "I'm not sure ..." stays hedged.
_NEGATED = [
    re.compile(
        r"(?P<keep>\b(?:I'm|I am|i'm|im|Im|[Ww]e're|[Ww]e\s+are))\s+(?i:not|no\s+longer|never)\s+"
        r"(?:(?i:really|actually|even)\s+)?(?=(?i:allergic|an?\s|vegetarian|vegan|pescatarian|employed|"
        r"working|living|based|from|fluent|on\s+an?\s)\b)"
    ),
    re.compile(
        r"(?P<keep>\b(?:I|i|[Ww]e))\s+(?i:don't|do\s+not|dont|no\s+longer|never|didn't|did\s+not)\s+"
        r"(?:(?i:really|actually|even)\s+)?(?=(?i:live|work|own|drive|speak|follow|"
        r"have\s+an?\s+\w+(?:\s+\w+)?\s+allergy)\b)"
    ),
    re.compile(r"(?P<keep>\b(?i:my)\s+[a-z][a-z\- ]{0,40}?\s+(?i:is))(?:\s+(?i:not|no\s+longer)|n't)\s+"),
]
_NEGATED_HINTS = ("not", "n't", "no longer", "never")
_ANYMORE = re.compile(r"\s*,?\s+(?i:any\s?more|any\s+longer)\b")
_POINT = "\ue000"  # marks, while rewriting, where a negation stood


def affirmed(sentence: str) -> tuple[str, list[int]]:
    """The sentence with its negated self-statements read as statements, and the offsets (in the
    rewritten sentence) where a negation stood: a rule's match spanning one reads a retraction."""
    low = sentence.lower()
    if _POINT in sentence or not any(h in low for h in _NEGATED_HINTS):
        return sentence, []
    for pattern in _NEGATED:
        sentence = pattern.sub(lambda m: m.group("keep") + " " + _POINT, sentence)
    if _POINT not in sentence:
        return sentence, []
    sentence = _ANYMORE.sub("", sentence)
    points: list[int] = []
    out: list[str] = []
    for ch in sentence:
        if ch == _POINT:
            points.append(len(out))
        else:
            out.append(ch)
    return "".join(out), points


# Words a value trails that are not part of it: "green now", "Madrid these days", "vegan, not vegetarian".
_FILLER_TAIL = re.compile(
    r"(?:\s*,)?\s+(?i:now|these\s+days|nowadays|any\s?more|at\s+the\s+moment|currently|lately|for\s+now|"
    r"instead|too|as\s+well|from\s+now\s+on|actually|though|then)\s*$"
)
_CONTRAST_TAIL = re.compile(
    r"(?:\s*,)?\s+(?i:not|instead\s+of|rather\s+than|no\s+longer)\s+(?P<old>[^,;]{1,60}?)\s*$"
)


def tidy_value(value: str) -> tuple[str, str | None]:
    """(the value without trailing filler, the value a trailing contrast names as the old one):
    "green now, not blue" -> ("green", "blue")."""
    original, previous = value, None
    for _ in range(3):
        before = value
        contrast = _CONTRAST_TAIL.search(value)
        if contrast and contrast.start() > 0:
            previous = previous or strip_punct(_FILLER_TAIL.sub("", contrast.group("old"))) or None
            value = value[: contrast.start()]
        value = _FILLER_TAIL.sub("", value)
        if value == before:
            break
    if value == original:
        return original, None
    return strip_punct(value) or original, previous


_REMEMBER = re.compile(
    r"^(?:(?i:please|also|and|oh|btw|by\s+the\s+way|ok|okay)[,!]?\s+)*(?i:remember|note|don't\s+forget|do\s+not\s+forget|"
    r"keep\s+in\s+mind|for\s+future\s+reference)\s*[,:]?\s+(?:(?i:that)\s+)?(?P<rest>.+)$"
)
_MY_X_IS_Y = re.compile(
    r"^(?i:my)\s+(?P<attr>[a-z][a-z\-]*(?:\s+[a-z][a-z\-]*){0,2})\s+(?i:is|are)\s+(?P<rest>.+)$"
)


def _remembered(sentence: str, ref: date, subject: str) -> Fact | None:
    """An explicit "remember that ..." statement, as a self-contained note (or a "my X is Y" fact)."""
    m = _REMEMBER.match(sentence)
    body = strip_punct(m.group("rest")) if m else ""
    if not body or re.match(r"(?i:to|me|when|what|how|why|this|that|it)\b", body):
        return None
    dates = find_dates(body, ref)
    resolved = replace_dates(body, dates)
    valid_from = dates[0].iso if dates else None
    fact = _MY_X_IS_Y.match(resolved)
    if fact and not fact.group("attr").endswith(("is", "are")):
        value = strip_punct(fact.group("rest"))
        if value and len(fact.group("attr").split()) <= 3:
            return Fact(fact.group("attr").lower(), clip(value, 300), valid_from=valid_from)
    text = third_person(resolved, subject) or f'{who(subject)} asked to remember: "{resolved}"'
    return Fact("note", clip(capitalise(text), 1000), valid_from=valid_from)


@dataclass
class _Found:
    fact: Fact
    seq: int
    order: int  # position in the snapshot: among facts of one turn, the later statement wins


def propose(turns: Sequence[TurnView]) -> list[dict[str, Any]]:
    """Facts from the user's own statements (never the assistant's, a system's or a tool's)."""
    subject = speaker.subject(turns)
    found: list[_Found] = []
    for turn in speaker.user_turns(turns):
        ref = turn.timestamp.date()
        for said in statements(turn.content):
            sentence, negations = affirmed(said)
            before, past = len(found), tense(sentence)
            low = sentence.lower()
            for pattern, handler, hints in RULES:
                if hints and not any(h in low for h in hints):
                    continue
                for m in pattern.finditer(sentence):
                    if hedged(sentence[: m.start()]):
                        continue
                    retracted = any(m.start() <= p <= m.end() for p in negations)
                    for fact in handler(Hit(m, ref, past)):
                        value, previous = tidy_value(fact.value)
                        fact.value = clip(value, 300)
                        if previous and norm(previous) != norm(value) and not retracted:
                            fact.qualifiers.setdefault("previously", clip(previous, 100))
                        fact.retracted = retracted
                        found.append(_Found(fact, turn.seq, len(found)))
            note = _remembered(said, ref, subject) if len(found) == before and not negations else None
            if note is not None:
                found.append(_Found(note, turn.seq, len(found)))
    return _merged(found, subject)


def _group(fact: Fact, subject: str) -> tuple[str, str] | None:
    """Facts in one group hold one value at a time: single-valued attributes, and the polarity
    (likes/dislikes) of one liked or disliked thing."""
    if fact.attribute in SINGLE_VALUED or fact.attribute.startswith("favourite "):
        return subject, fact.attribute
    if fact.attribute in {"likes", "dislikes"}:
        return subject, "preference:" + norm(fact.value)
    return None


def _subject(fact: Fact, subject: str) -> str:
    return "user" if fact.about_user else subject


def _retractions(found: list[_Found], subject: str) -> tuple[list[_Found], list[dict[str, Any]]]:
    """The statements a later retraction ends are dropped, and a retraction a later statement undoes;
    returns the statements left and one retraction item per (subject, attribute, value) still standing."""
    said = sorted(found, key=lambda f: (f.seq, f.order))
    value_of = {id(f): (norm(_subject(f.fact, subject)), f.fact.attribute, norm(f.fact.value)) for f in said}
    last: dict[tuple[str, str, str], _Found] = {}
    for f in said:
        last[value_of[id(f)]] = f
    kept = [f for f in said if not f.fact.retracted and not last[value_of[id(f)]].fact.retracted]
    items: dict[tuple[str, str, str], dict[str, Any]] = {}
    for f in said:
        key = value_of[id(f)]
        if not f.fact.retracted or not last[key].fact.retracted:
            continue
        item = items.setdefault(
            key,
            {
                "subject": _subject(f.fact, subject),
                "attribute": f.fact.attribute,
                "value": f.fact.value,
                "cardinality": "many" if f.fact.attribute in MULTI_VALUED else "one",
                "retracted": True,
                "evidence_seqs": [],
            },
        )
        if f.seq not in item["evidence_seqs"]:
            item["evidence_seqs"].append(f.seq)
    return kept, list(items.values())


def _merged(found: list[_Found], subject: str) -> list[dict[str, Any]]:
    """One item per (subject, attribute, value); the latest statement wins single-valued attributes
    (and a value that was both liked and disliked takes its latest polarity); a retraction ("I'm not
    allergic to peanuts") is an item of its own that ends the stored fact, unless restated later."""
    found, retractions = _retractions(found, subject)
    found = sorted(found, key=lambda f: (f.seq, f.order))
    latest: dict[tuple[str, str], Fact] = {}  # group -> latest statement
    previous: dict[tuple[str, str], str] = {}  # group -> the value the latest one replaced
    for f in found:
        group = _group(f.fact, _subject(f.fact, subject))
        if group is None:
            continue
        before = latest.get(group)
        if (
            before is not None
            and before.attribute == f.fact.attribute
            and norm(before.value) != norm(f.fact.value)
        ):
            previous[group] = before.value
        latest[group] = f.fact
    items: dict[tuple[str, str, str], dict[str, Any]] = {}
    for f in found:
        subj = _subject(f.fact, subject)
        attr, value = f.fact.attribute, f.fact.value
        group = _group(f.fact, subj)
        if group is not None and (
            latest[group].attribute != attr or norm(latest[group].value) != norm(value)
        ):
            continue
        key = (norm(subj), attr, norm(value) or value.lower())
        item = items.get(key)
        if item is None:
            qualifiers = dict(f.fact.qualifiers)
            if group is not None and norm(previous.get(group, "")) not in {"", norm(value)}:
                qualifiers.setdefault("previously", previous[group])
            items[key] = {
                "subject": subj,
                "attribute": attr,
                "value": value,
                "cardinality": "many" if attr in MULTI_VALUED else "one",
                "qualifiers": qualifiers,
                "valid_from": f.fact.valid_from,
                "evidence_seqs": [f.seq],
            }
            continue
        if f.seq not in item["evidence_seqs"]:
            item["evidence_seqs"].append(f.seq)
        item["valid_from"] = item["valid_from"] or f.fact.valid_from
    return [*items.values(), *retractions]
