"""What a memory kind is: one object that knows its item model, prompt, match key, text and merge rules.

Extraction, reconciliation, search text, the offline rules' validation and the API's direct writes
all go through a kind's methods; nothing else branches on a kind's name. Built-in kinds live one per
module beside this one; a project config can register more (mongomem.kinds.registry).
"""

from __future__ import annotations

import copy
import re
import unicodedata
from functools import cache
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Visibility = Literal["private", "org"]

# What a word means when a change of it changes a statement: ONE table, read by `anchors` (and so by
# `same_value`, `restates`, every kind's comparison and the guard on a model's REINFORCE). Each entry is a
# meaning and the words that say it: words of one meaning are synonyms ("yearly", "annually"), so a swap
# between them is a paraphrase; a swap to a word of another meaning is a new value ("yearly" -> "weekly",
# "all" -> "some", "must" -> "may", "before" -> "after"), however alike the two sentences embed.
# Numbers spelled out mean their digits ("three" = "3"), ordinals theirs ("third" = "3rd").
_MEANING_TABLE: dict[str, str] = {
    # numbers and ordinals
    "0": "zero",
    "1": "one",
    "2": "two",
    "3": "three",
    "4": "four",
    "5": "five",
    "6": "six",
    "7": "seven",
    "8": "eight",
    "9": "nine",
    "10": "ten",
    "11": "eleven",
    "12": "twelve",
    "13": "thirteen",
    "14": "fourteen",
    "15": "fifteen",
    "16": "sixteen",
    "17": "seventeen",
    "18": "eighteen",
    "19": "nineteen",
    "20": "twenty",
    "30": "thirty",
    "40": "forty",
    "50": "fifty",
    "60": "sixty",
    "70": "seventy",
    "80": "eighty",
    "90": "ninety",
    "hundred": "hundred hundreds",
    "thousand": "thousand thousands",
    "million": "million millions",
    "billion": "billion billions",
    "1st": "first",
    "2nd": "second",
    "3rd": "third",
    "4th": "fourth",
    "5th": "fifth",
    "6th": "sixth",
    "7th": "seventh",
    "8th": "eighth",
    "9th": "ninth",
    "10th": "tenth",
    "last": "last final",
    "next": "next",
    # amounts and quantities
    "half": "half halves",
    "quarter": "quarter quarters",
    "double": "double doubled",
    "triple": "triple tripled",
    "once": "once",
    "twice": "twice",
    "thrice": "thrice",
    "dozen": "dozen dozens",
    "couple": "couple",
    "all": "all every each entire whole",
    "some": "some",
    "several": "several",
    "many": "many numerous",
    "few": "few",
    "most": "most",
    "more": "more",
    "less": "less fewer",
    "least": "least",
    "only": "only sole solely exclusively",
    "both": "both",
    "either": "either",
    "single": "single",
    "multiple": "multiple",
    "majority": "majority",
    "minority": "minority",
    "maximum": "maximum max",
    "minimum": "minimum",
    "above": "above over exceed exceeds exceeding exceeded",
    "below": "below under",
    "within": "within",
    "percent": "percent percentage",
    # units (what a number counts)
    "sec": "seconds sec secs",
    "minute": "minute minutes mins",
    "hour": "hour hours hr hrs",
    "day": "day days",
    "week": "week weeks wk wks",
    "fortnight": "fortnight fortnights",
    "month": "month months",
    "year": "year years yr yrs",
    "decade": "decade decades",
    "century": "century centuries",
    "kg": "kg kilo kilos kilogram kilograms",
    "gram": "gram grams",
    "lb": "lb lbs pound pounds",
    "ounce": "ounce ounces oz",
    "ton": "ton tons tonne tonnes",
    "km": "km kilometer kilometers kilometre kilometres",
    "meter": "meter meters metre metres",
    "cm": "cm centimeter centimeters centimetre centimetres",
    "mm": "mm millimeter millimeters millimetre millimetres",
    "mile": "mile miles",
    "foot": "foot feet ft",
    "inch": "inch inches",
    "yard": "yard yards",
    "liter": "liter liters litre litres",
    "ml": "ml milliliter milliliters millilitre millilitres",
    "gallon": "gallon gallons",
    "degree": "degree degrees",
    "celsius": "celsius centigrade",
    "fahrenheit": "fahrenheit",
    "dollar": "dollar dollars usd",
    "euro": "euro euros eur",
    "cent": "cent cents",
    "byte": "byte bytes",
    "kb": "kb kilobyte kilobytes",
    "mb": "mb megabyte megabytes",
    "gb": "gb gigabyte gigabytes",
    "tb": "tb terabyte terabytes",
    # how often: frequencies and periods
    "always": "always constantly",
    "usually": "usually generally normally typically",
    "often": "often frequently",
    "sometimes": "sometimes occasionally",
    "rarely": "rarely seldom",
    "never": "never",
    "hourly": "hourly",
    "daily": "daily everyday",
    "nightly": "nightly",
    "weekly": "weekly",
    "biweekly": "biweekly",
    "semiweekly": "semiweekly",
    "fortnightly": "fortnightly",
    "monthly": "monthly",
    "bimonthly": "bimonthly",
    "quarterly": "quarterly",
    "yearly": "yearly annually annual",
    "biannual": "biannual biannually semiannual semiannually",
    "biennial": "biennial biennially",
    "alternate": "alternate alternately alternating",
    # when: times of day, days, months, seasons, and the order of events
    "am": "am",
    "pm": "pm",
    "morning": "morning mornings",
    "afternoon": "afternoon afternoons",
    "evening": "evening evenings",
    "night": "night nights tonight overnight",
    "noon": "noon midday",
    "midnight": "midnight",
    "weekend": "weekend weekends",
    "weekday": "weekday weekdays workday workdays",
    "monday": "monday mondays",
    "tuesday": "tuesday tuesdays",
    "wednesday": "wednesday wednesdays",
    "thursday": "thursday thursdays",
    "friday": "friday fridays",
    "saturday": "saturday saturdays",
    "sunday": "sunday sundays",
    "january": "january",
    "february": "february",
    "march": "march",
    "april": "april",
    "may": "may",
    "june": "june",
    "july": "july",
    "august": "august",
    "september": "september",
    "october": "october",
    "november": "november",
    "december": "december",
    "spring": "spring",
    "summer": "summer",
    "autumn": "autumn fall",
    "winter": "winter",
    "yesterday": "yesterday",
    "today": "today",
    "tomorrow": "tomorrow",
    "before": "before prior beforehand",
    "after": "after afterwards afterward",
    "until": "until till",
    "since": "since",
    "ago": "ago",
    "early": "early earlier earliest",
    "late": "late later latest",
    "previous": "previous previously former",
    # whether: negation, modality and polarity
    # ... and in the Latin-script languages most often met (German, French, Spanish, Italian, Portuguese)
    "not": "no not none nothing nobody nowhere neither nor without non "
    "nicht kein keine keinen keinem keiner nie niemals ne pas jamais aucun aucune "
    "nunca nada nadie ninguno ninguna ningun nessuno niente mai nao nem",
    "if": "if provided",
    "unless": "unless",
    "except": "except",
    "must": "must required mandatory obligatory",
    "shall": "shall",
    "should": "should ought",
    "can": "can able",
    "could": "could",
    "will": "will",
    "would": "would",
    "might": "might",
    "optional": "optional",
    "forbidden": "forbidden prohibited banned",
    "allowed": "allowed permitted",
    "yes": "yes",
    "true": "true",
    "false": "false",
    "off": "off",
    "enable": "enable enabled enables",
    "disable": "disable disabled disables",
    "allow": "allow allows",
    "deny": "deny denies denied",
    "approve": "approve approves approved",
    "reject": "reject rejects rejected",
    "accept": "accept accepts accepted",
    "include": "include includes included including",
    "exclude": "exclude excludes excluded excluding",
    "increase": "increase increases increased",
    "decrease": "decrease decreases decreased",
    "open": "open opens opened",
    "closed": "closed",
    "start": "start starts started",
    "stop": "stop stops stopped",
    "north": "north northern",
    "south": "south southern",
    "east": "east eastern",
    "west": "west western",
    "left": "left",
    "right": "right",
    "public": "public",
    "private": "private",
    "internal": "internal",
    "external": "external",
}
MEANINGS: dict[str, str] = {
    word: meaning for meaning, words in _MEANING_TABLE.items() for word in words.split()
}
# Contractions: "can't" is "can" + "not" (the rest of "n't" words are their stem + "not").
_CONTRACTED = {"cannot": "can", "can't": "can", "won't": "will", "shan't": "shall", "ain't": ""}
# "every week" is weekly, "every other week" is alternate + weekly, "twice a week" is twice + weekly.
_PERIODS = {
    "hour": "hourly",
    "day": "daily",
    "night": "nightly",
    "week": "weekly",
    "fortnight": "fortnightly",
    "month": "monthly",
    "quarter": "quarterly",
    "year": "yearly",
}
_PERIOD = re.compile(
    r"\b(?:(?P<freq>once|twice|thrice|times)\s+(?:a|an|per|every|each)|every|each|per)\s+"
    r"(?:(?P<nth>other|second|third|fourth)\s+)?(?P<unit>hour|day|night|week|fortnight|month|quarter|year)s?\b",
    re.IGNORECASE,
)
_EVERY_OTHER = re.compile(r"\bevery\s+other\b", re.IGNORECASE)
# A value of at most this many words is compared exactly (after normalisation): "Blue" is not "Blue changed".
SHORT_WORDS = 4


def _visible(text: str) -> str:
    """The text as a reader sees it: compatibility forms folded (full-width letters), invisible
    format characters (zero-width spaces and joiners) and accents on Latin letters dropped ("Zoë" = "Zoe")."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFKD", text):
        cat = unicodedata.category(ch)
        if cat == "Cf" or (cat[0] == "M" and out and out[-1].isascii() and out[-1].isalpha()):
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def norm(text: str) -> str:
    """Case-, accent- and punctuation-insensitive form used for keys and equality. Every script is kept
    ("北京" is not "上海"); accents on Latin letters, invisible characters, symbols and punctuation go."""
    out: list[str] = []
    latin = False
    for ch in unicodedata.normalize("NFKD", text.casefold()):
        cat = unicodedata.category(ch)
        if cat == "Cf":
            continue  # zero-width and other invisible characters
        if cat[0] == "M":
            if not latin:  # an accent on a Latin letter goes (é = e); other scripts' marks are letters
                out.append(ch)
            continue
        if cat == "Nd" and not ch.isascii():
            out.append(str(unicodedata.digit(ch)))  # other scripts' digits: "٣" = "3"
            latin = False
        elif cat[0] in "LN":
            out.append(ch)
            latin = ch.isascii()
        else:
            out.append(" ")
            latin = False
    return " ".join(unicodedata.normalize("NFC", "".join(out)).split())


def _word_meanings(word: str) -> list[str] | None:
    """The meanings a word carries (None: not a word of the table): "isn't" -> [not], "can't" ->
    [can, not], "bi-weekly" -> [biweekly], "non-smoking" -> [not]."""
    lower = word.lower().replace("\u2019", "'")
    if lower in _CONTRACTED:
        stem = _CONTRACTED[lower]
        return [m for m in (MEANINGS.get(stem), "not") if m]
    if lower.endswith("n't"):
        return [m for m in (MEANINGS.get(lower[:-3]), "not") if m]
    lower = lower.removesuffix("'s").replace("'", "")
    joined = MEANINGS.get(lower.replace("-", ""))
    if joined is not None:
        return [joined]
    if "-" in lower:
        parts = [m for part in lower.split("-") if part and (m := MEANINGS.get(part))]
        return parts or None
    return None


def anchors(text: str) -> frozenset[str]:
    """What must be equal for two texts to say the same thing: numbers (phone numbers, times, dates,
    versions, amounts, ids), the meanings of the table's words (how often, how many, when, whether:
    `MEANINGS`; a meaning said twice counts twice) and proper nouns."""
    text = _visible(text)
    found: set[str] = set(_number_pairs(text))
    said: list[str] = []
    for m in _NUMBER.finditer(text):
        found.add(_number(m.group("n"), m.group("sign")))
        if m.group("cur"):
            said.append(_CURRENCY[m.group("cur")])  # "$500" is 500 dollars, "€500" 500 euros
    for m in _CLOCK.finditer(text):
        said.append("past" if m.group("rel").lower() in ("past", "after") else "to")  # "ten to nine"
    for m in _PERIOD.finditer(text):
        said.append(_PERIODS[m.group("unit").lower()])
        freq, nth = (m.group("freq") or "").lower(), (m.group("nth") or "").lower()
        if freq in ("twice", "thrice"):
            said.append(freq)
        if nth:
            said.append("alternate" if nth == "other" else MEANINGS[nth])
    text = _PERIOD.sub(" ", text)
    said.extend("alternate" for _ in _EVERY_OTHER.finditer(text))
    text = _EVERY_OTHER.sub(" ", text)
    words = re.findall(r"[A-Za-z][A-Za-z'\u2019-]*", text)
    for i, word in enumerate(words):
        meanings = _word_meanings(word)
        if meanings is not None:
            said.extend(meanings)
            continue
        plain = norm(word).replace(" ", "")
        if word[0].isupper() and (i > 0 or word.isupper()) and len(plain) > 1:
            found.add(plain)  # a name, place or acronym (a sentence's first word does not count)
        elif len(word) > 2 and word.isupper():
            found.add(plain)
    counted: dict[str, int] = {}
    for meaning in said:
        counted[meaning] = counted.get(meaning, 0) + 1
        # a number's digits are a set like the numbers written as digits; a word said twice counts twice
        is_number = meaning.isdigit()
        found.add(meaning if counted[meaning] == 1 or is_number else f"{meaning}#{counted[meaning]}")
    return frozenset(found)


# A number as written: its sign ("-18" is not "18"), its currency ("$" "€" "£") and its decimal point and
# date or time separators ("1.5" is not "15", "1/12" is not "11/2"); a thousands comma is no separator.
_NUMBER = re.compile(
    r"(?:(?<![\w.,/:-])(?P<sign>[-\u2212+])|(?P<cur>[$€£¥]))?(?P<n>\d[\w.:,/+-]*)|(?P<hash>#)\d[\w.:,/+-]*"
)
_CURRENCY = {"$": "dollar", "€": "euro", "£": "pound", "¥": "yen"}
_CLOCK = re.compile(
    r"\b(?:\d{1,2}|five|ten|twenty|twenty-five|quarter|half)\s+(?P<rel>to|till|past|after)\s+"
    r"(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|noon|midnight)\b",
    re.IGNORECASE,
)
# words a number is not said of ("3 of the", "5 per month")
_NOT_COUNTED = frozenset("and the per for of at in on to or a an by with from each every".split())


def _number(token: str, sign: str | None) -> str:
    plain = re.sub(r",(?=\d{3}(?!\d))", "", token.lower()).rstrip(".,:/+-")
    plain = re.sub(r"[^0-9a-z.:/]", "", plain)
    return f"-{plain}" if sign in ("-", "\u2212") else plain


def _number_pairs(text: str) -> set[str]:
    """With two numbers or more, each number with the word it counts ("3 trucks and 5 vans" is not "5
    trucks and 3 vans"); one number alone needs no pair."""
    tokens = re.findall(r"\d[\w.:,/+-]*|[A-Za-z][A-Za-z'-]*", text)
    values = [t if t[0].isdigit() else MEANINGS.get(t.lower(), "") for t in tokens]
    numbers = {v for v in values if v[:1].isdigit()}
    if len(numbers) < 2:
        return set()
    pairs: set[str] = set()
    for i, value in enumerate(values):
        if not value[:1].isdigit():
            continue
        for token, after in zip(tokens[i + 1 : i + 4], values[i + 1 : i + 4], strict=False):
            if after[:1].isdigit():
                break
            word = token.lower()
            if word not in _NOT_COUNTED and len(word) > 2:
                pairs.add(f"{_number(value, None)}>{word.removesuffix('s')}")
                break
    return pairs


# Prefixes that turn a word into its opposite ("unlocked", "invalid", "disagree", "nonstop").
_NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non", "non-")


def negates_by_prefix(old: str, new: str) -> bool:
    """Whether one text says a word the other says with a negating prefix ("locked" / "unlocked")."""
    a, b = set(norm(old).split()), set(norm(new).split())
    for mine, theirs in ((a - b, b - a), (b - a, a - b)):
        for word in mine:
            for prefix in _NEGATING_PREFIXES:
                rest = word[len(prefix) :]
                if word.startswith(prefix) and len(rest) > 2 and rest in theirs:
                    return True
    return False


_MEANING_NAMES = frozenset(MEANINGS.values())


def hard_anchors(text: str) -> frozenset[str]:
    """The anchors no paraphrase changes: numbers and the table's meanings (names are left out: "NYC"
    may restate "New York City")."""
    return frozenset(a for a in anchors(text) if re.search(r"\d", a) or a.split("#")[0] in _MEANING_NAMES)


def content_words(text: str) -> set[str]:
    return {w for w in norm(text).split() if len(w) > 2}


def _unread(text: str) -> bool:
    """Whether the text holds letters of a script the table does not read (all but Latin)."""
    return any(ch.isalpha() and not ch.isascii() for ch in _visible(text))


def same_value(old: str, new: str) -> bool:
    """The same value after normalisation: exactly, for short values and for text in a script the table
    does not read (a changed word there may be a changed number or negation); for longer text the same
    anchors (numbers, names, how often, how many, when, negations ...) and mostly the same words. Never an
    embedding score alone."""
    a, b = norm(old), norm(new)
    if a == b:
        # what normalisation drops may be the value: a sign ("-18"), a currency ("$500" / "€500")
        return hard_anchors(old) == hard_anchors(new)
    if len(a.split()) <= SHORT_WORDS or len(b.split()) <= SHORT_WORDS or _unread(old) or _unread(new):
        return False
    if anchors(old) != anchors(new) or negates_by_prefix(old, new):
        return False
    wa, wb = content_words(old), content_words(new)
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= 0.6


def restates(old: str, new: str) -> bool:
    """A paraphrase of the same statement: the same anchors and a fair share of the words (the vector
    match that brought the two together says they mean alike)."""
    if same_value(old, new):
        return True
    if anchors(old) != anchors(new) or negates_by_prefix(old, new) or _unread(old) or _unread(new):
        return False
    wa, wb = content_words(old), content_words(new)
    return bool(wa and wb) and len(wa & wb) / min(len(wa), len(wb)) >= 0.5


def exact(text: str) -> str:
    """A text as compared when one user's statement backs another's proposal: every character counts
    (every script, symbols, invisible ones) except letter case, runs of whitespace and a closing full stop."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().split()).rstrip(". ")


def stated(payload: Any, unordered: frozenset[str] = frozenset()) -> Any:
    """A payload as `exact` compares it, field by field: empty fields left out, lists in order (a
    procedure's steps) except the fields in `unordered` (labels: aliases, tags), which are sets."""
    if isinstance(payload, dict):
        return tuple(
            sorted(
                (
                    str(k),
                    frozenset(stated(x) for x in v) if k in unordered and isinstance(v, list) else stated(v),
                )
                for k, v in payload.items()
                if v not in (None, "", [], {})
            )
        )
    if isinstance(payload, list):
        return tuple(stated(x) for x in payload)
    if isinstance(payload, str):
        return exact(payload)
    return payload


# Values that say nothing: an LLM (or a rule) filling a field it had nothing for. Compared normalised.
PLACEHOLDERS = frozenset(
    norm(v)
    for v in (
        "unknown",
        "n/a",
        "na",
        "none",
        "null",
        "nil",
        "nothing",
        "tbd",
        "todo",
        "undefined",
        "unspecified",
        "not specified",
        "not mentioned",
        "not provided",
        "not stated",
        "not given",
        "not known",
        "not available",
        "no information",
        "no info",
        "no data",
        "placeholder",
        "various",
        "something",
        "anything",
        "etc",
        "same",
        "see above",
        "as above",
    )
) | {""}
GREETINGS = frozenset(
    norm(v)
    for v in (
        "hi",
        "hello",
        "hey",
        "hiya",
        "howdy",
        "thanks",
        "thank you",
        "thank you so much",
        "thx",
        "bye",
        "goodbye",
        "good morning",
        "good afternoon",
        "good evening",
        "good night",
        "cheers",
        "welcome",
        "you are welcome",
        "you re welcome",
        "nice to meet you",
        "how are you",
        "see you",
    )
)
_PERSONA = re.compile(
    r"^\s*(you are (a|an|the) |you re (a|an|the) |as an ai\b|i am an ai\b|i m an ai\b|i am a (helpful |large )?"
    r"(language model|assistant)\b|system prompt\b)",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^\s*(what|who|whom|whose|when|where|which|why|how|can|could|would|will|shall|should|do|does|did|is|are|"
    r"am|was|were|may|might)\b.*\?\s*$",
    re.IGNORECASE | re.DOTALL,
)


def junk_reason(text: str, *, value: bool = True) -> str | None:
    """Why a field's text is not worth remembering, or None: a placeholder, a greeting, the assistant's own
    persona (a system prompt), or - for a value - a question (the user's request restated as a fact)."""
    plain = norm(text)
    if plain in PLACEHOLDERS:
        return "placeholder"
    if plain in GREETINGS:
        return "greeting"
    if _PERSONA.search(text.replace("\u2019", "'").replace("'", " ")):
        return "persona"
    if value and _QUESTION_START.search(text):
        return "question"
    return None


# The longest list a model's answer may hold (its items; an item's evidence seqs): more is a runaway
# answer (a model repeating itself to its output limit), refused rather than written.
MAX_ANSWER_LIST = 200


class Item(BaseModel):
    """What a proposer emits for a kind: the payload fields plus the turns they come from."""

    model_config = ConfigDict(extra="ignore")

    evidence_seqs: list[int] = Field(
        default_factory=list,
        description="seq numbers of the turns this item comes from",
        max_length=MAX_ANSWER_LIST,
    )


class KindError(ValueError):
    """A payload is not valid for its kind; `details` names each field. `reason` is what metrics count:
    invalid (malformed) or junk (well-formed but saying nothing: placeholder, greeting, question ...)."""

    def __init__(self, message: str, details: list[dict[str, Any]], reason: str = "invalid") -> None:
        super().__init__(message)
        self.details = details
        self.reason = reason


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON Schema, a copy the caller may change. pydantic builds it anew on every call (about
    0.3 ms) and every extraction call asks for its kind's several times, so it is built once per model."""
    return copy.deepcopy(_built_schema(model))


@cache
def _built_schema(model: type[BaseModel]) -> dict[str, Any]:
    return model.model_json_schema()


class MemoryKind:
    """A memory kind. Subclasses set the class attributes and override the methods that differ."""

    name: ClassVar[str]
    item: ClassVar[type[Item]]
    # What the LLM is asked to extract (one kind per call); the shared instructions come first.
    instructions: ClassVar[str]
    # Who sees a memory of this kind by default: one user, or every user of the tenant.
    visibility: ClassVar[Visibility] = "private"
    # The turns it is extracted from by default (memory.extraction.<kind>.roles overrides): never system
    # turns (a system prompt is not knowledge about the user).
    roles: ClassVar[tuple[str, ...]] = ("user", "assistant")

    # -- the payload -----------------------------------------------------------------------------
    def item_schema(self) -> dict[str, Any]:
        """The JSON Schema of one proposed item (what the LLM is told the fields are)."""
        return json_schema(self.item)

    def payload(self, item: BaseModel) -> dict[str, Any]:
        """The stored payload of a proposed (already validated) item."""
        return item.model_dump(mode="json", exclude={"evidence_seqs"}, exclude_none=True)

    def validate(self, data: Any) -> tuple[dict[str, Any], list[int]]:
        """(payload, evidence seqs) of raw item data; KindError naming every bad field."""
        try:
            item = self.item.model_validate(data)
        except ValidationError as exc:
            details = [
                {"path": ".".join(str(p) for p in e["loc"]) or "(item)", "message": e["msg"]}
                for e in exc.errors(include_url=False, include_input=False)
            ]
            raise KindError(f"not a valid {self.name} memory", details) from exc
        payload = self.payload(item)
        junk = self.junk(payload)
        if junk:
            raise KindError(f"not a {self.name} memory worth keeping", junk, reason="junk")
        return payload, list(getattr(item, "evidence_seqs", []) or [])

    def junk(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        """The fields of a well-formed payload that say nothing worth remembering (empty when none)."""
        return [
            {"path": path, "message": f"says nothing worth remembering ({why})"}
            for path, text, is_value in self.meaningful(payload)
            if (why := junk_reason(text, value=is_value))
        ]

    def meaningful(self, payload: dict[str, Any]) -> list[tuple[str, str, bool]]:
        """(path, text, is a value) of the fields that must say something: by default every required text
        field and every entry of a required text list; a question is junk only in a value."""
        found: list[tuple[str, str, bool]] = []
        for name, spec in self.item.model_fields.items():
            if not spec.is_required():
                continue
            got = payload.get(name)
            if isinstance(got, str):
                found.append((name, got, True))
            elif isinstance(got, list):
                found.extend((f"{name}.{i}", v, True) for i, v in enumerate(got) if isinstance(v, str))
        return found

    # -- identity and meaning --------------------------------------------------------------------
    def key(self, payload: dict[str, Any]) -> str:
        """The exact-match key reconciliation looks up: two memories with one key are one thing."""
        raise NotImplementedError

    def text(self, payload: dict[str, Any]) -> str:
        """The text that is embedded and indexed for search."""
        raise NotImplementedError

    def value(self, payload: dict[str, Any]) -> str:
        """The part of the payload a restatement repeats and an update changes."""
        return self.text(payload)

    def name_of(self, payload: dict[str, Any]) -> str:
        """What the memory's value describes, when the kind names a thing and then says what it is (a
        term and its definition); empty otherwise. A value is grounded by what it adds to the name."""
        return ""

    # -- who a memory is about -------------------------------------------------------------------
    # A kind whose payload names a subject (semantic facts) stores the user's own facts under one canonical
    # subject ("user"), whatever name, pronoun or id the text or the caller used (mongomem.longterm.subjects).
    user_name_keys: ClassVar[tuple[str, ...]] = ()  # match keys of the memories that state the user's name

    def subject(self, payload: dict[str, Any]) -> str | None:
        """Who the memory is about, when the kind has a subject."""
        return None

    def with_subject(self, payload: dict[str, Any], subject: str, alias: str | None = None) -> dict[str, Any]:
        """The payload about `subject` (`alias`: the name the payload used for it, kept where it fits)."""
        return payload

    def user_name(self, payload: dict[str, Any]) -> str | None:
        """The name the user gives themselves, when the payload states it."""
        return None

    def about_user(self, payload: dict[str, Any]) -> bool:
        """Whether the memory is about the user themselves (its subject is the canonical "user")."""
        subject = self.subject(payload)
        return subject is not None and norm(subject) in {"user", "the user"}

    def retraction(self, payload: dict[str, Any]) -> bool:
        """True when the payload says its fact is not, or no longer, true: it ends the memory of its key
        holding the same value instead of being stored (RETRACT)."""
        return False

    def same_content(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """True when `new` says what `old` says (REINFORCE); False when it changes it (UPDATE)."""
        return same_value(self.value(old), self.value(new))

    def restates(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """For memories found by meaning (another key): `new` restates `old` in other words."""
        return restates(self.value(old), self.value(new))

    # -- what a statement says, to the letter -----------------------------------------------------
    # Lists of labels, whose order says nothing (aliases, tags): compared as sets by `stated`.
    unordered: ClassVar[frozenset[str]] = frozenset()
    # Fields that grant power to whoever follows the memory (a procedure's allowed_tools, which a
    # SKILL.md pre-approves): in shared memory only a tenant-wide writer sets them.
    grants: ClassVar[tuple[str, ...]] = ()

    def stated(self, payload: dict[str, Any]) -> Any:
        """The payload as one user's statement must repeat it to back another's proposal: every field,
        every character (`exact`), labels as sets."""
        return stated(payload, self.unordered)

    def without_grants(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload without the fields that grant power (`grants`)."""
        return {k: v for k, v in payload.items() if k not in self.grants}

    # -- merge rules -----------------------------------------------------------------------------
    def merged(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
        """What a restatement adds to the stored payload (aliases, participants), or None."""
        return None

    def updated(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        """The payload of the new version when `new` changes `old` (UPDATE)."""
        return new


def add_unique(have: list[str], extra: list[str]) -> list[str] | None:
    """`have` plus the entries of `extra` it lacks (compared normalised), or None when none is new."""
    seen = {norm(h) for h in have}
    new = [e for e in dict.fromkeys(extra) if norm(e) not in seen]
    return [*have, *new] if new else None
