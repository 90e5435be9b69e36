"""Semantic rules: labelled facts the user states about themselves ("I live in Lisbon", "my wife
Maria", "I'm allergic to peanuts"), one item per (subject, attribute, value)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from string import Template
from typing import Any

from mongomem.dates import DateMention, find_dates, month_day_text, replace_dates, tense
from mongomem.extraction.proposal import TurnView
from mongomem.kinds.meaning import norm
from mongomem.offline.rules import speaker
from mongomem.offline.rules.phrases import is_name_word, split_list, take_name, take_phrase, take_proper
from mongomem.offline.rules.text import capitalise, clip, hedged, squash, statements, strip_punct
from mongomem.offline.rules.third_person import third_person, who
from mongomem.offline.rules.words import (
    CAR_MAKES,
    DIETS,
    LANGUAGES,
    MULTI_VALUED,
    NOT_NAMES,
    NOT_OCCUPATION_MODIFIERS,
    NP_STOP_FIRST,
    OCCUPATIONS,
    RELATION_ALT,
    RELATIONS,
)

# Single-valued attributes: within one snapshot the latest statement wins.
_ONE_AT_A_TIME = "name|preferred name|home city|hometown|home airport|employer|occupation|birthday|birth date"
SINGLE_VALUED = frozenset(f"{_ONE_AT_A_TIME}|birth year|birthplace|diet|car".split("|")) | {
    attribute for _, attribute in RELATIONS.values() if attribute not in MULTI_VALUED
}


@dataclass
class Fact:
    attribute: str
    value: str
    valid_from: str | None = None
    qualifiers: dict[str, str] = field(default_factory=dict)
    about_user: bool = False  # the fact's subject is always "user" (the name fact itself)
    retracted: bool = False  # the user says it is not (or no longer) true: it ends the stored fact


@dataclass
class Hit:
    """What a rule handler sees: the match, the day the sentence was said and its tense."""

    m: re.Match[str]
    ref: date
    past: bool | None

    @property
    def rest(self) -> str:
        return self.m.groupdict().get("rest") or ""

    def dates(self) -> list[DateMention]:
        """The date phrases of the clause after the match ("I moved to Porto last month")."""
        return find_dates(self.rest, self.ref, self.past)

    def first_date(self) -> str | None:
        found = self.dates()
        return found[0].iso if found else None


Handler = Callable[[Hit], list[Fact]]

Reader = Callable[[Hit], str | None]


def _one(attribute: str, read: Reader, *, about_user: bool = False, dated: bool = False) -> Handler:
    """A fact whose value is what `read` takes from the match (None: no fact)."""

    def handle(hit: Hit) -> list[Fact]:
        value = read(hit)
        since = hit.first_date() if dated else None
        return [Fact(attribute, value, valid_from=since, about_user=about_user)] if value else []

    return handle


def _each(attribute: str, read: Callable[[Hit], list[str]]) -> Handler:
    """One fact per value of a list ("I'm allergic to peanuts and shellfish")."""
    return lambda hit: [Fact(attribute, value) for value in read(hit)]


def _rest(read: Callable[[str], str | None]) -> Reader:
    """A reader of the clause after the match."""
    return lambda hit: read(hit.rest)


def _moved(hit: Hit) -> list[Fact]:
    """ "I moved to Porto last month from Lisbon": the new home city, since when, and the old one."""
    facts = _one("home city", _rest(take_proper), dated=True)(hit)
    origin = re.search(r"\bfrom\s+(?P<o>.*)", hit.rest)
    prev = take_proper(origin.group("o")) if origin else None
    for fact in facts:
        fact.qualifiers |= {"previously": prev} if prev and prev != fact.value else {}
    return facts


def _airport(hit: Hit) -> str | None:
    value = take_proper(hit.rest, max_tokens=4)
    code = re.match(rf"\s*{re.escape(value)}\s*\((?P<code>[A-Z]{{3}})\)", hit.rest) if value else None
    return f"{value} ({code.group('code')})" if code else value


def _occupation_in(rest: str) -> tuple[str, str] | None:
    """ "senior software engineer at Acme" -> ("senior software engineer", " at Acme")."""
    m = re.match(
        r"\s*(?P<phrase>(?:[a-z][a-z\-]*\s+){0,3}?[a-z][a-z\-]*)(?P<tail>\s+(?:at|for|with)\s+.*|\s*$|\s*,.*)",
        rest,
    )
    words = m.group("phrase").split() if m else []
    if not m or not words or words[-1] not in OCCUPATIONS:
        return None
    if any(w in NOT_OCCUPATION_MODIFIERS or w in {"of", "a", "an", "the", "and"} for w in words[:-1]):
        return None
    return " ".join(words), m.group("tail")


def _employer(hit: Hit) -> list[Fact]:
    """ "I work at Acme Corp [as a product designer]"."""
    value = take_proper(hit.rest, allow_org=True)
    if not value or value.lower() in {"home", "myself"}:
        return []
    role = re.search(r"\bas\s+an?\s+(?P<r>.*)", hit.rest)
    found = _occupation_in(role.group("r")) if role else None
    return [
        Fact("employer", value, valid_from=hit.first_date()),
        *([Fact("occupation", found[0])] if found else []),
    ]


def _occupation(hit: Hit) -> list[Fact]:
    """ "I'm a nurse [at St Thomas Hospital]"."""
    found = _occupation_in(hit.rest)
    if not found:
        return []
    at = re.match(r"\s+(?:at|for|with)\s+(?P<org>.*)", found[1])
    org = take_proper(at.group("org"), allow_org=True) if at else None
    return [
        Fact("occupation", found[0], valid_from=hit.first_date()),
        *([Fact("employer", org)] if org else []),
    ]


def _preference(attribute: str) -> Handler:
    def handle(hit: Hit) -> list[Fact]:
        rest, over = hit.rest, None
        if re.match(r"\s*to\s", rest):
            return []  # "I like to think ...": an infinitive is not a liked thing
        if (hit.m.groupdict().get("verb") or "").lower() == "prefer":
            rest, *other = re.split(r"\s+(?:to|over|rather\s+than|instead\s+of)\s+", rest, maxsplit=1)
            over = take_phrase(other[0]) if other else None
        return [
            Fact(attribute, part, qualifiers={"over": over} if over else {})
            for part in split_list(take_phrase(rest) or "", split_and=False)
            if part.lower() not in NP_STOP_FIRST and len(part) >= 2
        ]

    return handle


def _favourite(hit: Hit) -> list[Fact]:
    """ "My favourite X is Y" and "Y is my favourite X"."""
    what = strip_punct(hit.m.group("what"))
    if "val" in hit.m.groupdict():
        value = strip_punct(hit.m.group("val"))
        words = value.split() or [""]
        if words[0].lower() in NP_STOP_FIRST | {"he", "she", "they", "that", "this", "it"} or len(words) > 5:
            return []
    else:
        value = take_proper(hit.rest, allow_org=True) or take_phrase(hit.rest) or ""
    if not what or not value or len(what.split()) > 3:
        return []
    return [Fact(f"favourite {what.lower()}", value)]


# Capitalised only because they open the sentence: "Work is where I live", "Home is my hometown".
_COMMON_OPENERS = NOT_NAMES | {"work", "home", "school", "college", "office", "everything", "nothing"}


def _val(read: Callable[[str], str | None]) -> Reader:
    """A reader of the proper name before the match ("Porto is where I live")."""

    def reader(hit: Hit) -> str | None:
        value = read(hit.m.group("val"))
        return value if value and value.split()[0].lower() not in _COMMON_OPENERS else None

    return reader


# "my X is Y" / "Y is my X" for attributes the rules know by name -> the attribute stored
_NAMED_ATTRIBUTES = {
    "home city": "home city",
    "home town": "hometown",
    "hometown": "hometown",
    "home airport": "home airport",
    "local airport": "home airport",
    "employer": "employer",
    "car": "car",
}
_NAMED_ALT = "|".join(a.replace(" ", r"\s+") for a in sorted(_NAMED_ATTRIBUTES, key=len, reverse=True))


def _named(hit: Hit, value: str) -> list[Fact]:
    attribute = _NAMED_ATTRIBUTES[squash(hit.m.group("attr").lower())]
    if attribute == "car":
        found = take_proper(re.sub(r"^\s*(?i:an?)\s+", "", value), allow_org=True, max_tokens=4)
    elif attribute == "home airport":
        found = _airport(Hit(re.match(r"(?P<rest>.*)", value) or hit.m, hit.ref, hit.past))
    else:
        found = take_proper(value, allow_org=attribute == "employer")
    return [Fact(attribute, found)] if found else []


def _my_named(hit: Hit) -> list[Fact]:
    """ "My hometown is Braga", "My employer is Acme Corp", "My car is a Kia Niro"."""
    return _named(hit, hit.rest)


def _named_mine(hit: Hit) -> list[Fact]:
    """ "Braga is my hometown", "LIS is my home airport"."""
    value = hit.m.group("val")
    return _named(hit, value) if value.split()[0].lower() not in _COMMON_OPENERS else []


def _job(hit: Hit) -> list[Fact]:
    """ "My job title is nurse", "My job is a nurse", "My profession is civil engineer"."""
    found = _occupation_in(re.sub(r"^\s*(?i:an?)\s+", " ", hit.rest))
    return [Fact("occupation", found[0])] if found else []


def _own_car(hit: Hit) -> str | None:
    """ "I own a Kia Niro": a car only when its first word is a car make."""
    value = take_proper(hit.rest, allow_org=True, max_tokens=4)
    return value if value and value.split()[0].lower() in CAR_MAKES else None


def _language_named(hit: Hit) -> list[Fact]:
    value = strip_punct(hit.m.group("val"))
    return [Fact("languages", value)] if value.lower() in LANGUAGES else []


def _liked_thing(hit: Hit) -> list[Fact]:
    """ "Hiking is something I love": the thing named before the verb."""
    value = take_phrase(hit.m.group("val")) or ""
    if not value or value.split()[0].lower() in NP_STOP_FIRST | {"he", "she", "they", "it", "this", "that"}:
        return []
    return [Fact("likes", value)]


def _allergy_noun(hit: Hit) -> str | None:
    what = strip_punct(hit.m.group("what"))
    return what if what.lower() not in {"", "an", "a", "severe", "food"} else None


def _relation_fact(rel_word: str, name: str) -> Fact:
    rel, attribute = RELATIONS[rel_word.lower()]
    return Fact(attribute, name, qualifiers={"relation": rel} if attribute in MULTI_VALUED else {})


def _relation(*, strict: bool) -> Handler:
    def handle(hit: Hit) -> list[Fact]:
        name = hit.m.groupdict().get("name") or take_name(hit.rest, max_words=2, strict_end=strict)
        if not name or not all(is_name_word(w) for w in name.split()):
            return []
        return [_relation_fact(hit.m.group("rel"), name)]

    return handle


def _pet_named(hit: Hit) -> list[Fact]:
    name, kind = take_name(hit.rest, max_words=2), hit.m.group("kind").lower()
    if not name:
        return []
    return [
        _relation_fact(kind, name) if kind in RELATIONS else Fact("pets", name, qualifiers={"kind": kind})
    ]


def _birthday(hit: Hit) -> str | None:
    day = next((d for d in hit.dates() if d.precision == "day" and not d.month_guessed), None)
    return month_day_text(day.iso) if day else None


def _born(hit: Hit) -> list[Fact]:
    """ "I was born on 14 February 1990 / in 1990 / in Coimbra"."""
    for d in hit.dates():
        if d.precision == "day" and re.search(r"\d{4}", d.text):  # a birth date states its year
            return [Fact("birth date", d.iso)]
        if d.precision == "year" and re.match(r"\s*in\s+\d{4}", hit.rest):
            return [Fact("birth year", d.iso)]
    place = re.match(r"\s*in\s+(?P<p>.*)", hit.rest)
    value = take_proper(place.group("p")) if place else None
    return [Fact("birthplace", value)] if value else []


def _languages(hit: Hit) -> list[str]:
    parts = split_list(take_phrase(hit.rest, max_words=8) or "", split_and=True)
    return [p for p in parts if p.lower() in LANGUAGES and p[:1].isupper()]


def _my_attribute(hit: Hit) -> list[Fact]:
    value = strip_punct(hit.rest)
    return [Fact(squash(hit.m.group("attr").lower()), value)] if value and len(value) <= 200 else []


_DIET_ALT = "|".join(re.escape(d).replace(r"\ ", " ") for d in sorted(DIETS, key=len, reverse=True))

# What each rule of semantic_rules.toml makes of its match (its `fact`).
_HANDLERS: dict[str, Handler] = {
    "preferred name": _one(
        "preferred name", _rest(lambda r: take_name(r, max_words=2, strict_end=True)), about_user=True
    ),
    "home city": _one("home city", _rest(take_proper)),
    "home city, named first": _one("home city", _val(take_proper)),
    "hometown": _one("hometown", _rest(take_proper)),
    "my <attribute> is <value>": _my_named,
    "<value> is my <attribute>": _named_mine,
    "employer, named first": _one("employer", _val(lambda v: take_proper(v, allow_org=True))),
    "employer": _employer,
    "job": _job,
    "car owned": _one("car", _own_car),
    "moved": _moved,
    "home airport": _one("home airport", _airport),
    "occupation": _occupation,
    "occupation status": _one(
        "occupation",
        lambda h: {"freelance": "freelancer"}.get(h.m["status"].lower(), h.m["status"].lower()),
    ),
    "likes": _preference("likes"),
    "liked thing": _liked_thing,
    "dislikes": _preference("dislikes"),
    "favourite": _favourite,
    "allergies": _each("allergy", lambda h: split_list(take_phrase(h.rest) or "", split_and=True)),
    "allergy, as a noun": _one("allergy", _allergy_noun),
    "diet": _one("diet", lambda h: DIETS[squash(h.m["diet"].lower())]),
    "relation": _relation(strict=False),
    "relation, strict": _relation(strict=True),
    "pet named": _pet_named,
    "birthday": _one("birthday", _birthday),
    "born": _born,
    "languages": _each("languages", _languages),
    "language named": _language_named,
    "car driven": _one("car", _rest(lambda r: take_proper(r, allow_org=True, max_tokens=4))),
    "my attribute": _my_attribute,
}


def _load_rules() -> list[tuple[re.Pattern[str], Handler, tuple[str, ...]]]:
    """The rule table (semantic_rules.toml), its fragments filled in, after the name rules of `speaker`:
    (compiled pattern, handler, hints)."""
    table = tomllib.loads(Path(__file__).with_name("semantic_rules.toml").read_text(encoding="utf-8"))
    fragments = {
        "REST": speaker.REST,
        "NAMED_ALT": _NAMED_ALT,
        "DIET_ALT": _DIET_ALT,
        "RELATION_ALT": RELATION_ALT,
    }
    for name, text in table["fragments"].items():
        fragments[name] = Template(text).safe_substitute(fragments)
    rules = [(p.pattern, _one("name", _rest(read), about_user=True), ()) for p, read in speaker.NAME_RULES]
    for rule in table["rule"]:
        pattern = Template(rule["pattern"]).safe_substitute(fragments)
        if "${" in pattern:
            raise ValueError(f"semantic_rules.toml: an unknown fragment in {rule['pattern']!r}")
        rules.append((pattern, _HANDLERS[rule["fact"]], tuple(rule.get("hints", ()))))
    return [(re.compile(pattern), handle, hints) for pattern, handle, hints in rules]


RULES = _load_rules()

# A negated self-statement, read as the statement it denies ("I'm not allergic to peanuts" -> "I'm
# allergic to peanuts", retracted). Only forms whose affirmative a rule reads as a fact: "I don't like X"
# is a dislike of its own (a rule above), never a retraction, and "I'm not sure ..." stays hedged.
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
