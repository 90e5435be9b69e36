"""The offline pattern extractor: an LLMProvider that needs no network and no model.

It ignores the prompt and reads `LLMRequest.context` (the snapshot's turns and time), applies
deterministic rule tables (regular expressions plus small word lists) and answers with JSON text
that validates against the answer model of the task (`schemas.ANSWERS`, `ReconcileAnswer`).

Turn content is data, never instructions: the answer only ever contains what the patterns pulled
out of the text, in the fixed shape of the schema. Precision is preferred over recall; what is
covered and what is not is described in docs/offline-extractor.md.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pydantic import BaseModel, ValidationError

from mongomem.extraction import offline_rules as R
from mongomem.extraction.schemas import (
    EpisodicItem,
    ProceduralItem,
    ReconcileAnswer,
    SemanticItem,
    TaxonomicItem,
)
from mongomem.models.memory import MULTI_VALUED, norm
from mongomem.ports import LLMError, LLMRequest, LLMResult

MODEL = "offline-patterns-v1"
MAX_ITEMS = 200
MAX_TURN_CHARS = 20_000  # longer turns are read up to here (keeps the cost linear and bounded)
REINFORCE_SCORE = 0.9

# Single-valued semantic attributes: within one snapshot the latest statement wins.
SINGLE_VALUED = frozenset(
    {
        "name",
        "preferred name",
        "home city",
        "hometown",
        "home airport",
        "employer",
        "occupation",
        "birthday",
        "birth date",
        "birth year",
        "birthplace",
        "diet",
        "car",
    }
    | {attr for attr in (a for _, a in R.RELATIONS.values()) if attr not in MULTI_VALUED}
)


# --- shared plumbing ------------------------------------------------------------------------------


@dataclass
class Turn:
    seq: int
    role: str
    text: str
    ref: date | None
    name: str | None


def _turns(context: dict[str, Any]) -> tuple[list[Turn], date | None]:
    """The context's turns, cleaned and in seq order; malformed entries are skipped."""
    snapshot_ref = R.parse_ref(context.get("snapshot_time"))
    raw = context.get("turns")
    out: list[Turn] = []
    if not isinstance(raw, list):
        return out, snapshot_ref
    for i, t in enumerate(raw):
        if not isinstance(t, dict):
            continue
        content = t.get("content")
        if not isinstance(content, str) or not content.strip():
            continue
        seq = t.get("seq")
        if isinstance(seq, bool) or not isinstance(seq, int):
            try:
                seq = int(str(seq))
            except ValueError:
                seq = i
        name = t.get("name")
        out.append(
            Turn(
                seq=seq,
                role=str(t.get("role") or "").lower(),
                text=R.clean_text(content[:MAX_TURN_CHARS]),
                ref=R.parse_ref(t.get("timestamp")) or snapshot_ref,
                name=name if isinstance(name, str) else None,
            )
        )
    out.sort(key=lambda t: t.seq)
    return out, snapshot_ref


# Schema list limits: evidence keeps the latest seqs, the others their first entries.
_LIST_CAPS = {"evidence_seqs": 200}
_LIST_HEADS = {"participants": 50, "aliases": 50, "steps": 100}


def _items_json(model: type[BaseModel], items: Iterable[dict[str, Any]]) -> str:
    """Validated items as answer JSON; an item that does not validate is dropped, never sent."""
    valid: list[dict[str, Any]] = []
    for item in items:
        if len(valid) >= MAX_ITEMS:
            break
        item = dict(item)
        for k, cap in _LIST_CAPS.items():
            if isinstance(item.get(k), list):
                item[k] = sorted(item[k])[-cap:]
        for k, cap in _LIST_HEADS.items():
            if isinstance(item.get(k), list):
                item[k] = item[k][:cap]
        try:
            valid.append(model.model_validate(item).model_dump(mode="json"))
        except ValidationError:
            continue
    return json.dumps({"items": valid}, ensure_ascii=False)


def _sentences(turn: Turn) -> list[str]:
    return R.split_sentences(turn.text)


# --- semantic -------------------------------------------------------------------------------------


@dataclass
class Fact:
    attribute: str
    value: str
    valid_from: str | None = None
    qualifiers: dict[str, str] = field(default_factory=dict)
    about_user: bool = False  # the fact's subject is always "user" (the name fact itself)


@dataclass
class Hit:
    """What a rule handler sees: the match, the sentence, the turn's reference date."""

    m: re.Match[str]
    sentence: str
    ref: date | None

    @property
    def rest(self) -> str:
        return self.m.groupdict().get("rest") or ""

    def dates(self, text: str | None = None) -> list[R.DateMention]:
        return R.find_dates(text if text is not None else self.rest, self.ref)


Handler = Callable[[Hit], list[Fact]]

_I = r"\b(?:I|i)"
_IM = r"\b(?:I'm|I am|i'm|im|Im)"
_REST = r"(?P<rest>[^.!?;\n]*)"
_ADV = r"(?:(?:really|absolutely|truly|just|also|do|totally|still|genuinely|kinda|kind\s+of|quite)\s+)*"


def _first_date(hit: Hit) -> str | None:
    found = hit.dates()
    return found[0].iso if found else None


def _name(hit: Hit) -> list[Fact]:
    value = R.take_name(hit.rest, max_words=3)
    return [Fact("name", value, about_user=True)] if value else []


def _intro_name(hit: Hit) -> list[Fact]:
    value = R.take_name(hit.rest, max_words=2, strict_end=True)
    return [Fact("name", value, about_user=True)] if value else []


def _preferred_name(hit: Hit) -> list[Fact]:
    value = R.take_name(hit.rest, max_words=2, strict_end=True)
    return [Fact("preferred name", value, about_user=True)] if value else []


def _place(attribute: str, *, dated: bool = False) -> Handler:
    def handle(hit: Hit) -> list[Fact]:
        value = R.take_proper(hit.rest)
        if not value:
            return []
        fact = Fact(attribute, value)
        if dated:
            fact.valid_from = _first_date(hit)
            origin = re.search(r"\bfrom\s+(?P<o>.*)", hit.rest)
            if origin:
                prev = R.take_proper(origin.group("o"))
                if prev and prev != value:
                    fact.qualifiers["previously"] = prev
        return [fact]

    return handle


def _airport(hit: Hit) -> list[Fact]:
    value = R.take_proper(hit.rest, max_tokens=4)
    if not value:
        return []
    code = re.match(rf"\s*{re.escape(value)}\s*\((?P<code>[A-Z]{{3}})\)", hit.rest)
    if code:
        value = f"{value} ({code.group('code')})"
    return [Fact("home airport", value)]


def _employer(hit: Hit) -> list[Fact]:
    value = R.take_proper(hit.rest, allow_org=True)
    if not value or value.lower() in {"home", "myself"}:
        return []
    facts = [Fact("employer", value, valid_from=_first_date(hit))]
    role = re.search(r"\bas\s+an?\s+(?P<r>.*)", hit.rest)
    found = _occupation_from(role.group("r")) if role else None
    if found:
        facts.append(Fact("occupation", found[0]))
    return facts


def _occupation_from(rest: str) -> tuple[str, str] | None:
    """ "senior software engineer at Acme" -> ("senior software engineer", "at Acme")."""
    m = re.match(
        r"\s*(?P<phrase>(?:[a-z][a-z\-]*\s+){0,3}?[a-z][a-z\-]*)(?P<tail>\s+(?:at|for|with)\s+.*|\s*$|\s*,.*)",
        rest,
    )
    if not m:
        return None
    words = m.group("phrase").split()
    if not words or words[-1] not in R.OCCUPATIONS:
        return None
    if any(w in R.NOT_OCCUPATION_MODIFIERS or w in {"of", "a", "an", "the", "and"} for w in words[:-1]):
        return None
    return " ".join(words), m.group("tail")


def _occupation(hit: Hit) -> list[Fact]:
    found = _occupation_from(hit.rest)
    if not found:
        return []
    phrase, tail = found
    facts = [Fact("occupation", phrase, valid_from=_first_date(hit))]
    at = re.match(r"\s+(?:at|for|with)\s+(?P<org>.*)", tail)
    if at:
        org = R.take_proper(at.group("org"), allow_org=True)
        if org:
            facts.append(Fact("employer", org))
    return facts


def _status_occupation(hit: Hit) -> list[Fact]:
    word = hit.m.group("status").lower()
    value = {"freelance": "freelancer"}.get(word, word)
    return [Fact("occupation", value)]


def _preference(attribute: str) -> Handler:
    def handle(hit: Hit) -> list[Fact]:
        rest = hit.rest
        if re.match(r"\s*to\s", rest):
            return []  # "I like to think ...": an infinitive is not a liked thing
        over: str | None = None
        if (hit.m.groupdict().get("verb") or "").lower() == "prefer":
            parts = re.split(r"\s+(?:to|over|rather\s+than|instead\s+of)\s+", rest, maxsplit=1)
            rest = parts[0]
            if len(parts) > 1:
                over = R.take_phrase(parts[1])
        value = R.take_phrase(rest)
        if not value:
            return []
        facts: list[Fact] = []
        for part in R.split_list(value, split_and=False):
            if part.lower() in R.NP_STOP_FIRST or len(part) < 2:
                continue
            facts.append(Fact(attribute, part, qualifiers={"over": over} if over else {}))
        return facts

    return handle


def _favourite(hit: Hit) -> list[Fact]:
    what = R.strip_punct(hit.m.group("what"))
    value = R.take_proper(hit.rest, allow_org=True) or R.take_phrase(hit.rest)
    if not what or not value or len(what.split()) > 3:
        return []
    return [Fact(f"favourite {what.lower()}", value)]


def _favourite_inverted(hit: Hit) -> list[Fact]:
    value = R.strip_punct(hit.m.group("val"))
    what = R.strip_punct(hit.m.group("what"))
    if not value or value.split()[0].lower() in R.NP_STOP_FIRST | {"he", "she", "they", "that", "this", "it"}:
        return []
    if len(value.split()) > 5 or not what or len(what.split()) > 3:
        return []
    return [Fact(f"favourite {what.lower()}", value)]


def _allergy(hit: Hit) -> list[Fact]:
    value = R.take_phrase(hit.rest)
    if not value:
        return []
    return [Fact("allergy", part) for part in R.split_list(value, split_and=True)]


def _allergy_noun(hit: Hit) -> list[Fact]:
    what = R.strip_punct(hit.m.group("what"))
    return [Fact("allergy", what)] if what and what.lower() not in {"an", "a", "severe", "food"} else []


def _diet(hit: Hit) -> list[Fact]:
    raw = re.sub(r"\s+", " ", hit.m.group("diet").lower())
    return [Fact("diet", R.DIETS.get(raw, raw))]


def _relation_fact(rel_word: str, name: str) -> Fact:
    rel, attribute = R.RELATIONS[rel_word.lower()]
    if attribute in MULTI_VALUED:
        return Fact(attribute, name, qualifiers={"relation": rel})
    return Fact(attribute, name)


def _relation(*, strict: bool) -> Handler:
    def handle(hit: Hit) -> list[Fact]:
        name = R.take_name(hit.rest, max_words=2, strict_end=strict)
        if not name:
            return []
        return [_relation_fact(hit.m.group("rel"), name)]

    return handle


def _relation_inverted(hit: Hit) -> list[Fact]:
    name = hit.m.group("name")
    if not all(R.is_name_word(w) for w in name.split()):
        return []
    return [_relation_fact(hit.m.group("rel"), name)]


def _pet_named(hit: Hit) -> list[Fact]:
    name = R.take_name(hit.rest, max_words=2)
    if not name:
        return []
    kind = hit.m.group("kind").lower()
    if kind in R.RELATIONS:
        return [_relation_fact(kind, name)]
    return [Fact("pets", name, qualifiers={"kind": kind})]


def _birthday(hit: Hit) -> list[Fact]:
    for d in hit.dates():
        if d.precision == "day":
            text = R.month_day_text(d.iso)
            return [Fact("birthday", text)] if text else []
    m = re.match(
        r"\s*(?:on\s+)?(?:the\s+)?(?:(?P<d1>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>[A-Z][a-z]+)|(?P<m2>[A-Z][a-z]+)\s+(?P<d2>\d{1,2}))",
        hit.rest,
    )
    if m:
        month = R.MONTHS.get((m.group("m1") or m.group("m2") or "").lower())
        day = int(m.group("d1") or m.group("d2"))
        if month and 1 <= day <= 31:
            return [Fact("birthday", f"{R.MONTH_NAMES[month]} {day}")]
    return []


def _born(hit: Hit) -> list[Fact]:
    for d in hit.dates():
        if d.precision == "day":
            return [Fact("birth date", d.iso)]
        if d.precision == "year" and re.match(r"\s*in\s+\d{4}", hit.rest):
            return [Fact("birth year", d.iso)]
    place = re.match(r"\s*in\s+(?P<p>.*)", hit.rest)
    if place:
        value = R.take_proper(place.group("p"))
        if value:
            return [Fact("birthplace", value)]
    return []


def _languages(hit: Hit) -> list[Fact]:
    value = R.take_phrase(hit.rest, max_words=8)
    if not value:
        return []
    parts = [p for p in R.split_list(value, split_and=True) if p.lower() in R.LANGUAGES and p[:1].isupper()]
    return [Fact("languages", p) for p in parts]


def _car(hit: Hit) -> list[Fact]:
    value = R.take_proper(hit.rest, allow_org=True, max_tokens=4)
    return [Fact("car", value)] if value else []


def _my_attribute(hit: Hit) -> list[Fact]:
    attribute = re.sub(r"\s+", " ", hit.m.group("attr").lower())
    value = R.strip_punct(hit.rest)
    if not value or len(value) > 200:
        return []
    return [Fact(attribute, value)]


# (pattern, handler): each pattern is searched in every user sentence; `rest` is the clause after it.
SEMANTIC_RULES: list[tuple[re.Pattern[str], Handler]] = [
    (re.compile(rf"\b(?i:my\s+(?:full\s+|first\s+)?name\s+is|my\s+name's|name's)\s+{_REST}"), _name),
    (
        re.compile(
            rf"^(?:(?i:hi|hello|hey|hiya|greetings|good\s+(?:morning|afternoon|evening))[\s,!.]*(?:(?i:there)[\s,!.]*)?)?"
            rf"(?:I'm|I am)\s+{_REST}"
        ),
        _intro_name,
    ),
    (re.compile(rf"\b(?i:(?:you\s+can\s+|please\s+|just\s+)?call\s+me)\s+{_REST}"), _preferred_name),
    (
        re.compile(
            rf"(?:{_I}|\b[Ww]e)\s+(?i:(?:currently\s+|now\s+|still\s+)?live|(?:am|'m|are|'re)\s+(?:currently\s+|now\s+)?(?:living|based)|"
            rf"(?:have|'ve)\s+(?:been\s+living|lived))\s+(?i:in)\s+{_REST}"
        ),
        _place("home city"),
    ),
    (
        re.compile(
            rf"(?:{_I}|\b[Ww]e)\s+(?i:(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated))\s+(?i:to)\s+{_REST}"
        ),
        _place("home city", dated=True),
    ),
    (
        re.compile(
            rf"(?:{_IM}\s+(?i:originally\s+)?from|{_I}\s+(?i:come|originally\s+come)\s+from)\s+{_REST}"
        ),
        _place("hometown"),
    ),
    (
        re.compile(rf"\b(?i:my\s+(?:home|local|nearest|usual|main)\s+airport\s+is)\s+{_REST}"),
        _airport,
    ),
    (
        re.compile(
            rf"{_I}\s+(?i:(?:usually\s+|always\s+|normally\s+|mostly\s+)?fly\s+(?:out\s+of|from))\s+{_REST}"
        ),
        _airport,
    ),
    (
        re.compile(
            rf"(?:{_I}\s+(?i:(?:currently\s+)?work(?:ed)?|(?:have|'ve)\s+been\s+working)|{_IM}\s+(?i:(?:currently\s+)?working))\s+(?i:at|for)\s+{_REST}"
        ),
        _employer,
    ),
    (
        re.compile(
            rf"{_I}\s+(?i:(?:just\s+)?started\s+(?:working\s+|a\s+new\s+job\s+|my\s+new\s+job\s+)?(?:at|with))\s+{_REST}"
        ),
        _employer,
    ),
    (re.compile(rf"(?:{_IM}|{_I}\s+(?i:work\s+as))\s+(?i:(?:currently\s+)?an?)\s+{_REST}"), _occupation),
    (
        re.compile(
            rf"{_IM}\s+(?P<status>self-employed|freelance|retired|unemployed|a\s+freelancer)\b(?!\s+\w+ing)"
        ),
        _status_occupation,
    ),
    (
        re.compile(rf"{_I}\s+{_ADV}(?P<verb>(?i:like|love|enjoy|adore|prefer))\s+{_REST}"),
        _preference("likes"),
    ),
    (
        re.compile(
            rf"{_I}\s+{_ADV}(?i:(?:don't|do\s+not|dont)\s+(?:really\s+|particularly\s+)?(?:like|enjoy|love)|hate|dislike|detest|"
            rf"can't\s+stand|cannot\s+stand)\s+{_REST}"
        ),
        _preference("dislikes"),
    ),
    (
        re.compile(
            rf"\b(?i:my\s+(?:absolute\s+|all-time\s+|all\s+time\s+)?favou?rite)\s+(?P<what>[a-z][a-z\- ]{{0,30}}?)\s+(?i:is|are|has\s+to\s+be)\s+{_REST}"
        ),
        _favourite,
    ),
    (
        re.compile(
            r"^(?:(?i:actually|honestly|well|oh|ok|okay|and|but|so|now|these\s+days)[,!]?\s+)*(?P<val>[A-Za-z][\w'\- ]{0,40}?)\s+(?i:is|are)\s+(?i:my\s+(?:absolute\s+|all-time\s+)?favou?rite)\s+(?P<what>[a-z][a-z\- ]{0,30}?)\s*(?:[.!]|$)"
        ),
        _favourite_inverted,
    ),
    (
        re.compile(
            rf"{_IM}\s+(?i:(?:very\s+|severely\s+|also\s+|really\s+|quite\s+|highly\s+|mildly\s+|deathly\s+)*allergic\s+to)\s+{_REST}"
        ),
        _allergy,
    ),
    (
        re.compile(
            rf"{_I}\s+(?i:have\s+an?)\s+(?i:(?:severe|mild|serious)\s+)?(?P<what>[a-z][a-z\-]{{1,20}}(?:\s+[a-z][a-z\-]{{1,20}})?)\s+(?i:allergy)\b"
        ),
        _allergy_noun,
    ),
    (re.compile(rf"{_I}\s+(?i:have\s+an?\s+(?:\w+\s+)?allergy\s+to)\s+{_REST}"), _allergy),
    (
        re.compile(
            rf"{_IM}\s+(?i:(?:an?\s+|strictly\s+|fully\s+|also\s+|now\s+)*)(?P<diet>(?i:vegetarian|vegan|pescatarian|pescetarian|gluten[- ]free|lactose[- ]intolerant|keto|kosher|halal|teetotal))\b"
        ),
        _diet,
    ),
    (
        re.compile(rf"\b(?i:my)\s+(?P<rel>(?i:{R.REL_ALT}))(?:'s|s')\s+(?i:name\s+is)\s+{_REST}"),
        _relation(strict=False),
    ),
    (
        re.compile(rf"\b(?i:my)\s+(?P<rel>(?i:{R.REL_ALT}))\s+(?i:is\s+(?:called|named))\s+{_REST}"),
        _relation(strict=False),
    ),
    (re.compile(rf"\b(?i:my)\s+(?P<rel>(?i:{R.REL_ALT}))\s+(?i:is)\s+{_REST}"), _relation(strict=True)),
    (
        re.compile(rf"\b(?i:my)\s+(?P<rel>(?i:{R.REL_ALT})),?\s+(?P<rest>[A-Z][^.!?;\n]*)"),
        _relation(strict=False),
    ),
    (
        re.compile(
            rf"\b(?P<name>[A-Z][\w'\-]+(?:\s+[A-Z][\w'\-]+)?)\s+(?i:is\s+my)\s+(?P<rel>(?i:{R.REL_ALT}))\b"
        ),
        _relation_inverted,
    ),
    (
        re.compile(
            rf"(?:{_I}|\b[Ww]e)\s+(?i:have|'ve\s+got|got|adopted)\s+(?i:an?\s+)?(?:[a-z]+\s+){{0,2}}?(?P<kind>[a-z]+)\s+(?i:called|named)\s+{_REST}"
        ),
        _pet_named,
    ),
    (re.compile(rf"\b(?i:my\s+birthday\s+is)\s+{_REST}"), _birthday),
    (re.compile(rf"{_I}\s+(?i:was\s+born)\s+{_REST}"), _born),
    (re.compile(rf"{_I}\s+(?i:(?:also\s+)?speak)\s+(?i:(?:fluent\s+)?){_REST}"), _languages),
    (re.compile(rf"{_I}\s+(?i:drive)\s+(?i:an?)\s+{_REST}"), _car),
    (
        re.compile(
            rf"\b(?i:my)\s+(?P<attr>(?i:email(?:\s+address)?|phone\s+number|time\s*zone|blood\s+type|shoe\s+size|seat\s+preference|"
            rf"frequent\s+flyer\s+number|pronouns|t-shirt\s+size))\s+(?i:is|are)\s+{_REST}"
        ),
        _my_attribute,
    ),
]

_REMEMBER = re.compile(
    r"^(?:(?i:please|also|and|oh|btw|by\s+the\s+way|ok|okay)[,!]?\s+)*(?i:remember|note|don't\s+forget|do\s+not\s+forget|"
    r"keep\s+in\s+mind|for\s+future\s+reference)\s*[,:]?\s+(?:(?i:that)\s+)?(?P<rest>.+)$"
)
_MY_X_IS_Y = re.compile(
    r"^(?i:my)\s+(?P<attr>[a-z][a-z\-]*(?:\s+[a-z][a-z\-]*){0,2})\s+(?i:is|are)\s+(?P<rest>.+)$"
)


def _remembered(sentence: str, ref: date | None, subject: str) -> Fact | None:
    """An explicit "remember that ..." statement, as a self-contained note (or a "my X is Y" fact)."""
    m = _REMEMBER.match(sentence)
    if not m:
        return None
    body = R.strip_punct(m.group("rest"))
    if not body or re.match(r"(?i:to|me|when|what|how|why|this|that|it)\b", body):
        return None
    dates = R.find_dates(body, ref)
    resolved = R.replace_dates(body, dates)
    valid_from = dates[0].iso if dates else None
    fact = _MY_X_IS_Y.match(resolved)
    if fact and not fact.group("attr").endswith(("is", "are")):
        value = R.strip_punct(fact.group("rest"))
        if value and len(fact.group("attr").split()) <= 3:
            return Fact(fact.group("attr").lower(), R.clip(value, 300), valid_from=valid_from)
    text = R.third_person(resolved, subject)
    if text is None:
        text = f'{"The user" if subject == "user" else subject} asked to remember: "{resolved}"'
    return Fact("note", R.clip(R.capitalise(text), 1000), valid_from=valid_from)


@dataclass
class _Found:
    fact: Fact
    seq: int
    order: int


def _user_turns(turns: list[Turn]) -> list[Turn]:
    return [t for t in turns if t.role == "user"]


def _subject(context: dict[str, Any], turns: list[Turn], found: list[_Found]) -> str:
    names = context.get("speaker_names")
    if isinstance(names, dict):
        known = names.get("user")
        if isinstance(known, str) and R.take_name(known, max_words=3) == known.strip():
            return known.strip()
    stated = [f for f in found if f.fact.attribute == "name"]
    if stated:
        return max(stated, key=lambda f: (f.seq, f.order)).fact.value
    for t in reversed(_user_turns(turns)):
        if t.name and R.take_name(t.name, max_words=3) == t.name.strip():
            return t.name.strip()
    return "user"


def _semantic(context: dict[str, Any]) -> str:
    turns, _ = _turns(context)
    found: list[_Found] = []
    pending_notes: list[tuple[str, date | None, int, int]] = []
    order = 0
    for turn in _user_turns(turns):
        for sentence in _sentences(turn):
            if R.is_question(sentence):
                continue
            hits = 0
            for pattern, handler in SEMANTIC_RULES:
                for m in pattern.finditer(sentence):
                    if R.hedged(sentence[: m.start()]):
                        continue
                    for fact in handler(Hit(m, sentence, turn.ref)):
                        fact.value = R.clip(fact.value, 300)
                        found.append(_Found(fact, turn.seq, order))
                        order += 1
                        hits += 1
            if not hits:
                pending_notes.append((sentence, turn.ref, turn.seq, order))
                order += 1
    subject = _subject(context, turns, found)
    for sentence, ref, seq, at in pending_notes:
        note = _remembered(sentence, ref, subject)
        if note is not None:
            found.append(_Found(note, seq, at))
    return _items_json(SemanticItem, _merge_facts(found, subject))


def _group(fact: Fact, subject: str) -> tuple[str, str] | None:
    """Facts in one group hold one value at a time: single-valued attributes, and the polarity
    (likes/dislikes) of one liked or disliked thing."""
    if fact.attribute in SINGLE_VALUED or fact.attribute.startswith("favourite "):
        return subject, fact.attribute
    if fact.attribute in {"likes", "dislikes"}:
        return subject, "preference:" + norm(fact.value)
    return None


def _merge_facts(found: list[_Found], subject: str) -> list[dict[str, Any]]:
    """One item per (subject, attribute, value); the latest statement wins single-valued attributes
    (and a value that was both liked and disliked takes its latest polarity)."""
    found = sorted(found, key=lambda f: (f.seq, f.order))
    latest: dict[tuple[str, str], _Found] = {}  # group -> latest statement
    previous: dict[tuple[str, str], str] = {}  # group -> the value the latest one replaced
    for f in found:
        group = _group(f.fact, "user" if f.fact.about_user else subject)
        if group is None:
            continue
        before = latest.get(group)
        same_attribute = before is not None and before.fact.attribute == f.fact.attribute
        if before is not None and same_attribute and norm(before.fact.value) != norm(f.fact.value):
            previous[group] = before.fact.value
        latest[group] = f
    items: dict[tuple[str, str, str], dict[str, Any]] = {}
    for f in found:
        subj = "user" if f.fact.about_user else subject
        attr = f.fact.attribute
        group = _group(f.fact, subj)
        if group is not None:
            winner = latest[group].fact
            if winner.attribute != attr or norm(winner.value) != norm(f.fact.value):
                continue
        key = (norm(subj), attr, norm(f.fact.value) or f.fact.value.lower())
        item = items.get(key)
        if item is None:
            qualifiers = dict(f.fact.qualifiers)
            if group is not None and norm(previous.get(group, "")) not in {"", norm(f.fact.value)}:
                qualifiers.setdefault("previously", previous[group])
            items[key] = {
                "subject": subj,
                "attribute": attr,
                "value": f.fact.value,
                "qualifiers": qualifiers,
                "valid_from": f.fact.valid_from,
                "evidence_seqs": [f.seq],
            }
        else:
            if f.seq not in item["evidence_seqs"]:
                item["evidence_seqs"].append(f.seq)
            if f.fact.valid_from and not item["valid_from"]:
                item["valid_from"] = f.fact.valid_from
    return list(items.values())


# --- episodic -------------------------------------------------------------------------------------

# Past-tense event verbs -> whether the verb alone is a clear event ("went") or needs a time phrase ("had").
EVENT_VERBS: dict[str, bool] = {
    **dict.fromkeys(
        """went visited attended met moved flew travelled traveled drove hiked celebrated completed graduated
        joined won returned arrived quit launched adopted married hosted organized organised explored toured
        camped cycled biked swam skied surfed volunteered presented performed climbed finished ran""".split(),
        True,
    ),
    **dict.fromkeys(
        "had started saw watched bought took got cooked baked spent played tried left passed lost sold gave made did".split(),
        False,
    ),
}
# Objects that turn a verb into an idiom rather than an event ("went ahead", "had no idea").
EVENT_OBJECT_STOP = re.compile(
    r"^\s*(?i:ahead|through|over|wrong|no\b|a\s+question|a\s+look|a\s+feeling|an\s+idea|a\s+chance|"
    r"the\s+impression|the\s+feeling|it\b|that\b|this\b|what\b|how\b|been\b|used\b|confused|lost\b|"
    r"you\b|your\b|back\s+to\s+you|the\s+(?:idea|point|message|memo|hint))"
)
_EVENT_RE = re.compile(
    r"(?:^|(?<=[\s,;:(\"]))(?P<subj>I|i|[Ww]e|(?:[Mm]y\s+(?P<rel>"
    + R.REL_ALT
    + r")|(?P<pname>[A-Z][\w'\-]+))\s+and\s+I)\s+(?:(?:just|finally|also|actually|then|even|recently|eventually|"
    r"both|all|really|once|first|already|spontaneously)\s+)*(?P<verb>"
    + "|".join(sorted(EVENT_VERBS, key=len, reverse=True))
    + r")\b(?P<rest>[^.!?;\n]*)"
)
_TITLE_BOUNDARY = re.compile(
    r"\s+(?:with|because|but|so|and\s+then|and\s+(?:I|we|it|she|he|they)|which|where|who|after|before|while|when|"
    r"since|until|for\s+(?:the\s+first|a\s+while)|-)\b|[,(]"
)
_FILLER = re.compile(
    r"^(?:(?i:oh|ah|also|and|well|so|then|anyway|btw|plus|great|ok|okay|yes|yeah)\b[,!.]?\s*)+"
)
_CLAUSE_END = re.compile(r",\s*(?:and|but|so|then)\b|\s+(?:and|but|so)\s+(?:I|we|then)\b|;")
_PLACE_CUE = re.compile(r"\b(?:in|at|to|near|around)\s+(?P<rest>(?:the\s+)?[A-Z][^.!?;\n]*)")
_WITH = re.compile(r"\bwith\s+(?P<rest>[^.!?;\n]*)")


def _participants(m: re.Match[str], sentence: str, subject: str, place: str | None) -> list[str]:
    people = [subject]

    def add(name: str | None) -> None:
        if name and name not in people and (place is None or name not in place):
            people.append(name)

    if m.group("rel"):
        add(f"{subject}'s {R.RELATIONS[m.group('rel').lower()][0]}")
    if m.group("pname") and R.is_name_word(m.group("pname")):
        add(m.group("pname"))
    for w in _WITH.finditer(sentence):
        for part in re.split(r",\s*|\s+and\s+", w.group("rest"))[:6]:
            part = part.strip()
            rel = re.match(rf"(?i:my)\s+(?P<rel>(?i:{R.REL_ALT}))\b(?:\s*,?\s+(?P<n>[A-Z][\w'\-]+))?", part)
            if rel:
                n = rel.group("n")
                add(
                    n
                    if n and R.is_name_word(n)
                    else f"{subject}'s {R.RELATIONS[rel.group('rel').lower()][0]}"
                )
                continue
            add(R.take_name(part, max_words=2))
    if m.group("verb") in {"met", "saw", "visited"}:
        add(R.take_name(m.group("rest"), max_words=2, strict_end=False) if place is None else None)
    return people[:50]


def _event_from(m: re.Match[str], sentence: str, turn: Turn, subject: str) -> dict[str, Any] | None:
    verb = m.group("verb")
    rest = m.group("rest")
    if EVENT_OBJECT_STOP.match(rest) or (
        not EVENT_VERBS[verb] and re.match(r"^\s*(?:to\b|[a-z]+ed\b)", rest)
    ):
        return None
    # the event's own clause: "I met Sarah 3 days ago, and in 2022 I moved ..." ends at ", and"
    clause = _CLAUSE_END.split(rest, maxsplit=1)[0]
    dates = R.find_dates(sentence, turn.ref, past=True)
    own = [d for d in dates if d.start < m.start("rest") + len(clause)]
    dates = own or dates
    just = re.search(r"\b(?i:just)\s+" + verb, sentence)
    if not EVENT_VERBS[verb] and not dates and not just:
        return None
    # title: the verb and its object, without time phrases, cut at the first clause boundary
    obj = rest
    for d in sorted(R.find_dates(rest, turn.ref, past=True), key=lambda d: -d.start):
        obj = obj[: d.start] + obj[d.end :]
    obj = _TITLE_BOUNDARY.split(obj, maxsplit=1)[0]
    obj = re.sub(r"\s+", " ", obj).strip(" ,;:-")
    words = [w for w in obj.split() if w.lower() not in {"my", "our"}][:7]
    title = R.clip(" ".join([verb.capitalize(), *words]).strip(), 120)
    place = None
    if verb in {"visited", "explored", "toured"}:
        place = R.take_proper(clause)
    if place is None:
        cue = _PLACE_CUE.search(clause)
        place = R.take_proper(cue.group("rest")) if cue else None
    if place and (place.lower() in R.NOT_NAMES or place.lower() in R.MONTHS):
        place = None
    occurred = (
        own[0].iso
        if own
        else dates[0].iso
        if dates
        else (turn.ref.isoformat() if just and turn.ref else None)
    )
    resolved = _FILLER.sub("", R.replace_dates(sentence, dates)) or sentence
    third = R.third_person(resolved, subject) if m.group("subj") not in {"we", "We"} else None
    if third is None:
        who = "The user" if subject == "user" else subject
        summary = f'{who} said: "{R.capitalise(resolved)}"'
    else:
        summary = R.capitalise(third)
    return {
        "title": title,
        "summary": R.clip(summary, 2000),
        "participants": _participants(m, sentence[: m.start("rest") + len(clause)], subject, place),
        "occurred_at": occurred,
        "place": place,
        "evidence_seqs": [turn.seq],
    }


def _episodic(context: dict[str, Any]) -> str:
    turns, _ = _turns(context)
    subject = _subject(context, turns, _names_in(turns))
    events: dict[tuple[str, str], dict[str, Any]] = {}
    for turn in _user_turns(turns):
        for sentence in _sentences(turn):
            if R.is_question(sentence):
                continue
            m = next((e for e in _EVENT_RE.finditer(sentence) if not R.hedged(sentence[: e.start()])), None)
            event = _event_from(m, sentence, turn, subject) if m is not None else None
            if event is None:
                continue
            key = (norm(event["title"]), event["occurred_at"] or "")
            if key in events:
                if turn.seq not in events[key]["evidence_seqs"]:
                    events[key]["evidence_seqs"].append(turn.seq)
                continue
            events[key] = event
    return _items_json(EpisodicItem, events.values())


def _names_in(turns: list[Turn]) -> list[_Found]:
    """Stated names only (for the subject of other task types)."""
    out: list[_Found] = []
    for turn in _user_turns(turns):
        for sentence in _sentences(turn):
            if R.is_question(sentence):
                continue
            for pattern, handler in SEMANTIC_RULES[:2]:
                for m in pattern.finditer(sentence):
                    for fact in handler(Hit(m, sentence, turn.ref)):
                        out.append(_Found(fact, turn.seq, len(out)))
    return out


# --- procedural -----------------------------------------------------------------------------------

_NUM_LINE = re.compile(r"^(?P<indent>\s*)(?i:step\s*)?(?P<n>\d{1,2})\s*[.):]\s+(?P<text>.*\S)")
_BULLET_LINE = re.compile(r"^(?P<indent>\s*)(?P<mark>[-*\u2022\u2023\u25e6])\s+(?P<text>.*\S)")
_INLINE_NUM = re.compile(r"(?:^|(?<=[\s:]))(?P<n>\d{1,2})[.)]\s+")
_HEADER_WORDS = re.compile(
    r"\b(?i:steps?|instructions?|process|procedure|recipe|method|here's\s+how|here\s+is\s+how|how\s+to|how\s+do|"
    r"how\s+can|how\s+should|directions|checklist|routine)\b"
)
_NAME_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            r"\b(?i:how\s+(?:to|do\s+(?:I|you|we|i)|can\s+(?:I|you|we|i)|should\s+(?:I|we|i)|would\s+(?:I|you|i)))\s+(?P<x>[^.?!:\n]+)"
        ),
        "verb",
    ),
    (re.compile(r"\b(?i:steps?\s+(?:to|for))\s+(?P<x>[^.?!:\n]+)"), "verb"),
    (
        re.compile(
            r"\b(?i:the\s+)?(?P<kind>(?i:process|procedure|recipe|instructions|method|routine|checklist))\s+(?i:for|to)\s+(?P<x>[^.?!:\n]+)"
        ),
        "noun",
    ),
    (re.compile(r"(?:^|(?<=[.!?\n]))\s*(?i:to)\s+(?P<x>[a-z][^,.:\n]{2,80})\s*[:,]"), "verb"),
]
_PROSE_MARKER = re.compile(
    r"(?<![Aa]t )(?<![Tt]he )(?<![Mm]y )(?<![Bb]ack )(?<![Ss]ince )(?<![Uu]ntil )(?<![Bb]y )\b"
    r"(?P<mk>(?i:first(?:ly)?(?:\s+of\s+all)?|then|next|after\s+that|afterwards|finally|lastly))\b(?!\s+(?:time|thing|one|place|step|few|day|week)\b)[,:]?\s*"
)


@dataclass
class _Block:
    steps: list[str]
    start: int  # character offset of the list in the turn text
    headed: bool = False


def _list_blocks(text: str) -> list[_Block]:
    """Numbered (1..n in order) and bulleted runs of lines; indented lines continue the last step."""
    blocks: list[_Block] = []
    lines = text.split("\n")
    offsets = []
    pos = 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    cur: list[str] = []
    kind: str | None = None
    expect = 1
    start = 0
    blanks = 0

    def flush() -> None:
        nonlocal cur, kind, expect
        if len(cur) >= 2:
            blocks.append(_Block(cur, start))
        cur, kind, expect = [], None, 1

    for i, line in enumerate(lines):
        if not line.strip():
            blanks += 1
            if blanks > 1:
                flush()
            continue
        blanks = 0
        num = _NUM_LINE.match(line)
        bullet = _BULLET_LINE.match(line)
        if num and not (kind == "num" and num.group("indent") and cur):
            n = int(num.group("n"))
            if kind == "num" and n == expect:
                cur.append(num.group("text"))
                expect += 1
                continue
            flush()
            if n == 1:
                kind, cur, expect, start = "num", [num.group("text")], 2, offsets[i]
            continue
        if bullet and kind in {None, "bullet"} and not bullet.group("indent"):
            if kind is None:
                kind, cur, start = "bullet", [], offsets[i]
            cur.append(bullet.group("text"))
            continue
        if cur and (line[:1].isspace() or bullet):
            cur[-1] = f"{cur[-1]}; {(bullet.group('text') if bullet else line).strip()}"
            continue
        flush()
        inline = list(_INLINE_NUM.finditer(line))
        if len(inline) >= 2 and [int(x.group("n")) for x in inline] == list(range(1, len(inline) + 1)):
            parts = [line[a.end() : b.start()] for a, b in itertools.pairwise(inline)]
            parts.append(line[inline[-1].end() :])
            blocks.append(_Block([p.strip() for p in parts], offsets[i] + inline[0].start()))
    flush()
    return blocks


def _prose_blocks(text: str) -> list[_Block]:
    """ "First ..., then ..., and finally ..." written as prose."""
    blocks: list[_Block] = []
    flat = re.sub(r"\s*\n\s*", " ", text)
    for first in re.finditer(
        r"(?<![Aa]t )(?<![Tt]he )\b(?i:first(?:ly)?)\b(?!\s+(?:time|thing|one|place|step|few|day|week)\b)",
        flat,
    ):
        segment = flat[first.start() :]
        markers = list(_PROSE_MARKER.finditer(segment))
        if len(markers) < 2 or not re.match(r"(?i:first)", markers[0].group("mk")):
            continue
        steps: list[str] = []
        final = False
        for a, b in zip(markers, [*markers[1:], None], strict=False):
            piece = segment[a.end() : b.start() if b is not None else len(segment)]
            sentence_end = re.search(r"[.!?](?:\s|$)", piece)
            if sentence_end:
                piece = piece[: sentence_end.start()]
                stop = (
                    b is None
                    or final
                    or not re.match(r"\s*$", segment[a.end() + sentence_end.end() : b.start()])
                )
            else:
                stop = False
            piece = re.sub(r"[\s,;]*(?:\b(?i:and))?\s*$", "", piece).strip(" ,;")
            if piece:
                steps.append(piece)
            if re.match(r"(?i:finally|lastly)", a.group("mk")):
                final = True
            if stop or final:
                break
        if len(steps) >= 2:
            blocks.append(_Block(steps, first.start()))
        break  # one prose procedure per turn
    return blocks


def _clean_step(step: str) -> str:
    step = R.STEP_PREFIX_RE.sub("", step.strip())
    return R.capitalise(R.clip(R.strip_punct(step) if step.endswith((".", ";", ",")) else step.strip(), 1000))


def _imperative(step: str) -> bool:
    first = re.match(r"[A-Za-z']+", R.STEP_PREFIX_RE.sub("", step.strip()))
    return first is not None and first.group(0).lower() in R.IMPERATIVES


def _procedure_name(texts: list[str]) -> tuple[str, str] | None:
    """(name, when_to_use) from the nearest "how to X" / "To X:" / "the process for X" phrase."""
    for text in texts:
        best: tuple[int, str, str] | None = None
        for pattern, kind in _NAME_PATTERNS:
            for m in pattern.finditer(text):
                x = R.strip_punct(re.split(r"\s+(?i:is|are|as\s+follows|below|goes)\b", m.group("x"))[0])
                x = re.sub(r"\b(?:my)\b", "your", x)
                x = re.sub(r"\b(?:I|i)\b", "you", x)
                words = x.split()
                if not words or len(words) > 10:
                    continue
                x = " ".join(words)
                if kind == "noun":
                    name = f"{m.group('kind').capitalize()} for {x}"
                    when = f"When you need the {m.group('kind').lower()} for {x}"
                else:
                    name, when = R.capitalise(x), f"When you need to {x}"
                if best is None or m.start() >= best[0]:
                    best = (m.start(), name, when)
        if best is not None:
            return best[1], best[2]
    return None


def _procedural(context: dict[str, Any]) -> str:
    turns, _ = _turns(context)
    procedures: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}
    previous: Turn | None = None
    for turn in turns:
        if turn.role not in {"user", "assistant"}:
            continue
        blocks = _list_blocks(turn.text) or _prose_blocks(turn.text)
        for block in blocks:
            preamble = turn.text[: block.start]
            named = _procedure_name([preamble[-600:]])
            named_by_previous = False
            if named is None and previous is not None and previous.role != turn.role:
                named = _procedure_name([previous.text[-600:]])
                named_by_previous = named is not None
            headed = named is not None or bool(_HEADER_WORDS.search(preamble[-300:]))
            steps = [_clean_step(s) for s in block.steps]
            steps = [s for s in steps if s]
            if len(steps) < 2 or sum(s.endswith("?") for s in steps) * 2 >= len(steps):
                continue
            imperative = sum(_imperative(s) for s in block.steps)
            if not (headed and imperative >= 1) and imperative * 5 < len(steps) * 3:
                continue
            evidence = [previous.seq, turn.seq] if named_by_previous and previous is not None else [turn.seq]
            if named is None:
                lead = R.strip_punct(
                    re.sub(r"\s+", " ", R.STEP_PREFIX_RE.sub("", (preamble.strip() or steps[0])))
                )
                words = lead.split()[:6]
                name = R.capitalise(" ".join(words)) or steps[0][:60]
                named = (name, f'When a task like "{name}" comes up')
            key = (norm(named[0]), tuple(norm(s) for s in steps))
            if key in procedures:
                if turn.seq not in procedures[key]["evidence_seqs"]:
                    procedures[key]["evidence_seqs"].append(turn.seq)
                continue
            procedures[key] = {
                "name": R.clip(named[0], 200),
                "when_to_use": R.clip(named[1], 1000),
                "steps": steps[:100],
                "evidence_seqs": evidence,
            }
        previous = turn
    return _items_json(ProceduralItem, procedures.values())


# --- taxonomic ------------------------------------------------------------------------------------

_LEADIN = r"(?:(?i:here|in\s+\w+(?:\s+\w+)?|for\s+us|at\s+\w+|basically|so|ok|okay|fyi|note)\s*,\s*)?"
_TERM = r"(?:\"(?P<q1>[^\"]{1,60})\"|'(?P<q2>[^']{1,60})'|`(?P<q3>[^`]{1,60})`|(?P<w>[A-Za-z][\w\-/&.+#]*(?:\s+[\w\-/&.+#]+){0,3}?))"
_DEF = r"(?P<def>[^\n]{2,})"
_DEF_STARTERS = re.compile(
    r"^(?i:a|an|the|that|any|something|someone|somebody|when|whenever|where|to|one|each|every|our|"
    r"a\s+kind|a\s+type|using|having|being|doing)\b"
)
_TERM_STOP = frozenset(
    """this that it which what who he she they there here all everything nothing i we you my your our
    his her their its one which-means so and but then also just well now today tomorrow yesterday
    note tip warning update edit answer question example total time ps ingredients result""".split()
)


@dataclass
class _Term:
    term: str
    definition: str
    aliases: list[str] = field(default_factory=list)
    abbreviation: bool = False


def _term_text(m: re.Match[str]) -> tuple[str, bool]:
    quoted = m.group("q1") or m.group("q2") or m.group("q3")
    if quoted:
        return quoted.strip(), True
    term = re.sub(r"^(?i:an?|the)\s+", "", m.group("w").strip())
    return term, False


def _good_term(term: str) -> bool:
    words = term.split()
    if not words or len(words) > 4 or len(term) > 60:
        return False
    if words[0].lower() in _TERM_STOP or any(w.lower() in {"i", "we", "you", "my", "me"} for w in words):
        return False
    return bool(re.match(r"[A-Za-z0-9]", term))


def _clean_def(text: str) -> str:
    text = re.sub(r"^(?i:that)\s+", "", text.strip())
    return R.strip_punct(text)


def _means(m: re.Match[str]) -> _Term | None:
    term, quoted = _term_text(m)
    definition = _clean_def(m.group("def"))
    if not _good_term(term) or not definition:
        return None
    strong = quoted or R.is_acronym(term) or R.acronym_of(definition)[: len(term)] == term.upper()
    if not strong and not _DEF_STARTERS.match(m.group("def").strip()):
        return None
    return _Term(term, definition)


def _stands_for(m: re.Match[str]) -> _Term | None:
    term, _ = _term_text(m)
    definition = _clean_def(m.group("def"))
    if not _good_term(term) or not definition:
        return None
    expansion = re.split(r"\s*[,(;]|\s+-\s", definition, maxsplit=1)[0].strip()
    extra = definition[len(expansion) :].strip(" ,;-()")
    text = f"Short for {expansion}" + (f": {extra}" if extra else "")
    return _Term(
        term, text, aliases=[expansion] if len(expansion.split()) <= 8 else [], abbreviation=not extra
    )


def _aka_paren(m: re.Match[str]) -> _Term | None:
    term, _ = _term_text(m)
    alias = R.strip_punct(m.group("alias"))
    definition = _clean_def(m.group("def"))
    if not _good_term(term) or not alias or not definition:
        return None
    return _Term(term, definition, aliases=[alias])


def _aka_comma(m: re.Match[str]) -> _Term | None:
    term, _ = _term_text(m)
    alias = R.strip_punct(m.group("alias"))
    rest = m.group("def").strip()
    if not _good_term(term) or not alias:
        return None
    verb = re.match(r"(?i:is|are|refers\s+to|means)\s+(?P<d>.+)", rest)
    definition = _clean_def(verb.group("d")) if verb else ""
    return _Term(term, definition or f"Also known as {alias}", aliases=[alias])


def _generic_is(m: re.Match[str]) -> _Term | None:
    term, _ = _term_text(m)
    definition = _clean_def(m.group("def"))
    if not _good_term(term) or not definition or len(term.split()) > 3:
        return None
    return _Term(term, definition)


def _glossary_line(m: re.Match[str]) -> _Term | None:
    term = R.strip_punct(m.group("term"))
    if not m.group("bullet") and not R.is_acronym(term):
        return None  # "Got it: thanks" in a glossary turn is not an entry
    definition = _clean_def(m.group("def"))
    if not _good_term(term) or not definition or len(term.split()) > 3:
        return None
    return _Term(term, definition)


# (pattern, builder, glossary-only): patterns are matched against whole sentences.
TAXONOMIC_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], _Term | None], bool]] = [
    (
        re.compile(
            rf"^{_LEADIN}{_TERM}\s+(?i:stands\s+for|is\s+short\s+for|is\s+an?\s+(?:abbreviation|acronym)\s+(?:for|of))\s+{_DEF}"
        ),
        _stands_for,
        False,
    ),
    (
        re.compile(
            rf"^{_LEADIN}{_TERM}\s*\((?i:also\s+called|also\s+known\s+as|aka|a\.k\.a\.|or|i\.e\.)\s+(?P<alias>[^)]{{1,60}})\)\s*,?\s+(?i:is|are|refers\s+to|means)\s+{_DEF}"
        ),
        _aka_paren,
        False,
    ),
    (
        re.compile(
            rf"^{_LEADIN}{_TERM}\s*\((?P<alias>[A-Z][A-Za-z0-9&]{{1,9}})\)\s*,?\s+(?i:is|are|refers\s+to|means)\s+{_DEF}"
        ),
        _aka_paren,
        False,
    ),
    (
        re.compile(
            rf"^{_LEADIN}{_TERM},\s+(?i:also\s+known\s+as|aka|a\.k\.a\.|also\s+called|otherwise\s+known\s+as)\s+(?P<alias>[^,]{{1,60}}),\s*{_DEF}"
        ),
        _aka_comma,
        False,
    ),
    (
        re.compile(
            rf"^{_LEADIN}{_TERM}\s+(?i:means|refers\s+to|is\s+defined\s+as|is\s+jargon\s+for)\s+{_DEF}"
        ),
        _means,
        False,
    ),
    (
        re.compile(rf"\b(?i:by|when\s+I\s+say)\s+{_TERM}\s*,?\s+(?i:I|we)\s+(?i:mean)\s+{_DEF}"),
        _means,
        False,
    ),
    (
        re.compile(rf"^(?:An?|an?)\s+{_TERM}\s+(?i:is)\s+(?P<def>(?i:a|an|the|when|where|any|what)\s[^\n]+)"),
        _generic_is,
        False,
    ),
    (
        re.compile(
            r"^(?P<bullet>[-*\u2022]\s+)?(?P<term>[A-Za-z][\w\-/&.+# ]{0,40}?)\s*(?::|\s-\s)\s*(?P<def>[^\n]{3,})"
        ),
        _glossary_line,
        True,
    ),
]
_GLOSSARY_CUE = re.compile(
    r"\b(?i:glossary|terminology|definitions?|jargon|acronyms?|abbreviations?|terms)\b"
)


def _aliases_for(item: _Term, turn_text: str) -> list[str]:
    """Acronym expansions both ways, where the letters line up."""
    out = list(item.aliases)
    term = item.term
    if R.is_acronym(term) and not out:
        words = item.definition.split()
        n = len(term.rstrip("s"))
        for width in range(n, min(len(words), n + 3) + 1):
            lead = " ".join(words[:width])
            if R.acronym_of(lead) == term.rstrip("s").upper():
                out.append(R.strip_punct(lead))
                break
    elif len(term.split()) >= 2:
        acronym = R.acronym_of(term)
        if len(acronym) >= 2 and re.search(rf"\b{re.escape(acronym)}s?\b", turn_text):
            out.append(acronym)
    return [a for a in dict.fromkeys(out) if a and norm(a) != norm(term)]


def _taxonomic(context: dict[str, Any]) -> str:
    turns, _ = _turns(context)
    items: list[dict[str, Any]] = []
    index: dict[str, dict[str, Any]] = {}  # normalised term or alias -> item
    for turn in turns:
        if turn.role not in {"user", "assistant"}:
            continue
        glossary = bool(_GLOSSARY_CUE.search(turn.text))
        for sentence in _sentences(turn):
            if R.is_question(sentence):
                continue
            for pattern, build, glossary_only in TAXONOMIC_RULES:
                if glossary_only and not glossary:
                    continue
                m = pattern.search(sentence)
                if not m:
                    continue
                found = build(m)
                if found is None:
                    continue
                found.definition = R.clip(found.definition, 1000)
                aliases = _aliases_for(found, turn.text)
                keys = [norm(found.term), *(norm(a) for a in aliases)]
                existing = next((index[k] for k in keys if k in index), None)
                if existing is None:
                    existing = {
                        "term": found.term,
                        "definition": found.definition,
                        "aliases": [],
                        "evidence_seqs": [],
                        "_abbrev": found.abbreviation,
                    }
                    items.append(existing)
                elif not found.abbreviation or existing["_abbrev"]:
                    existing["definition"], existing["_abbrev"] = found.definition, found.abbreviation
                for alias in [found.term, *aliases]:
                    if norm(alias) != norm(existing["term"]) and alias not in existing["aliases"]:
                        existing["aliases"].append(R.clip(alias, 120))
                if turn.seq not in existing["evidence_seqs"]:
                    existing["evidence_seqs"].append(turn.seq)
                for k in [norm(existing["term"]), *(norm(a) for a in existing["aliases"])]:
                    index.setdefault(k, existing)
                break  # one definition per sentence
    for item in items:
        item.pop("_abbrev", None)
    return _items_json(TaxonomicItem, items)


# --- reconcile ------------------------------------------------------------------------------------


def _value_of(memory: dict[str, Any]) -> str:
    payload = memory.get("payload")
    if isinstance(payload, dict):
        for field_name in ("value", "definition", "summary"):
            value = payload.get(field_name)
            if isinstance(value, str) and value.strip():
                return norm(value)
        steps = payload.get("steps")
        if isinstance(steps, list) and steps:
            return norm(" ".join(str(s) for s in steps))
    text = memory.get("text")
    return norm(text) if isinstance(text, str) else ""


def _score(candidate: dict[str, Any]) -> float:
    score = candidate.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        return 0.0
    return float(score) if score == score else 0.0  # NaN -> 0


def _reconcile(context: dict[str, Any]) -> str:
    new = context.get("new") if isinstance(context.get("new"), dict) else {}
    assert isinstance(new, dict)
    raw = context.get("candidates")
    candidates = [
        c
        for c in (raw if isinstance(raw, list) else [])
        if isinstance(c, dict) and c.get("id") not in (None, "")
    ]
    new_key = norm(str(new.get("key") or ""))
    new_value = _value_of(new)
    ranked = sorted(enumerate(candidates), key=lambda ic: (-_score(ic[1]), ic[0]))
    same_key = [c for _, c in ranked if new_key and norm(str(c.get("key") or "")) == new_key]
    answer: dict[str, Any]
    if same_key:
        equal = [c for c in same_key if _value_of(c) == new_value and new_value]
        if equal:
            answer = {
                "decision": "REINFORCE",
                "target_id": str(equal[0]["id"]),
                "reason": "same key and same value",
            }
        else:
            answer = {
                "decision": "UPDATE",
                "target_id": str(same_key[0]["id"]),
                "reason": "same key with a different value: the new statement replaces it",
            }
    elif ranked and _score(ranked[0][1]) >= REINFORCE_SCORE:
        best = ranked[0][1]
        answer = {
            "decision": "REINFORCE",
            "target_id": str(best["id"]),
            "reason": f"near-identical meaning (cosine {_score(best):.2f})",
        }
    else:
        answer = {"decision": "ADD", "target_id": None, "reason": "no candidate with this key or meaning"}
    return ReconcileAnswer.model_validate(answer).model_dump_json()


# --- the provider ---------------------------------------------------------------------------------

TASKS: dict[str, Callable[[dict[str, Any]], str]] = {
    "semantic": _semantic,
    "episodic": _episodic,
    "procedural": _procedural,
    "taxonomic": _taxonomic,
    "reconcile": _reconcile,
}


class OfflineExtractor:
    """LLMProvider without a model: deterministic patterns over `request.context`."""

    name = "offline"
    offline = True

    def ready(self) -> tuple[bool, str]:
        return True, "offline pattern extractor: no network, deterministic"

    def complete_json(self, request: LLMRequest) -> LLMResult:
        run = TASKS.get(request.task)
        if run is None:
            raise LLMError(f"the offline extractor has no rules for task {request.task!r}")
        started = time.perf_counter()
        context = request.context if isinstance(request.context, dict) else {}
        text = run(context)
        return LLMResult(
            text=text,
            model=MODEL,
            input_tokens=0,
            output_tokens=0,
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
        )
