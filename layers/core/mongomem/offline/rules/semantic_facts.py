"""The semantic rules' table read: what each rule of semantic_rules.toml makes of its match (`Fact`s
from a `Hit`, by the handler its `fact` names) and `RULES`, the compiled table `semantic.propose` runs."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from string import Template

from mongomem.dates import DateMention, find_dates, month_day_text
from mongomem.offline.rules import speaker
from mongomem.offline.rules.phrases import is_name_word, split_list, take_name, take_phrase, take_proper
from mongomem.offline.rules.text import squash, strip_punct
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
