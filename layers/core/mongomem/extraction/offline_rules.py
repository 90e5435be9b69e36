"""Word lists, date resolution and text helpers for the offline pattern extractor.

Pure stdlib and deterministic: every function here depends only on its arguments. The extractor
itself (`offline.py`) holds the per-task rule tables; this module holds what they share.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

# --- word lists -----------------------------------------------------------------------------------

WEEKDAYS = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
}
MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
MONTH_NAMES = [
    "",
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "couple of": 2,
}

DEMONYMS = frozenset(
    """american british english scottish welsh irish canadian australian german french italian spanish
    portuguese brazilian mexican argentinian argentine chilean colombian peruvian cuban dutch belgian
    swiss austrian swedish norwegian danish finnish icelandic polish czech slovak hungarian romanian
    bulgarian greek turkish russian ukrainian chinese japanese korean vietnamese thai indian pakistani
    bangladeshi nepali filipino indonesian malaysian singaporean egyptian moroccan nigerian kenyan
    ethiopian ghanaian african european asian latino latina hispanic israeli iranian iraqi lebanese
    syrian saudi emirati jewish muslim christian catholic protestant hindu buddhist sikh atheist
    agnostic vegan vegetarian""".split()
)

# Capitalised words that are never a person's name (sentence starters, adjectives, time words).
NOT_NAMES = (
    frozenset(
        """i i'm me my the a an and or but so not no yes sure sorry fine good great ok okay just here there
    back glad happy sad tired ready afraid still also really very excited interested looking going trying
    thinking done hungry new currently actually always never well busy free available home sick late
    early curious confused worried planning working moving living staying travelling traveling
    today tomorrow yesterday tonight now then later soon this that these those it he she they we you
    his her their our your who what when where why how which hi hello hey thanks thank please dear
    mr mrs ms dr sir madam asap maybe probably definitely totally kind sort bit lot little pretty
    quite more most less least all any some every each both either neither one two three first last
    next other another same such only even again already almost about around over under into onto
    from with without within of in on at to for by as if unless because since until while after
    before during between among through across ai assistant bot user human team everyone nobody
    somebody someone anyone name names married single divorced retired unemployed pregnant allergic
    vegan vegetarian gluten lactose""".split()
    )
    | frozenset(WEEKDAYS)
    | frozenset(MONTHS)
    | DEMONYMS
)

OCCUPATIONS = frozenset(
    """engineer developer programmer designer teacher nurse doctor physician surgeon dentist lawyer attorney
    accountant architect scientist researcher professor lecturer student manager consultant analyst writer
    author journalist editor photographer artist musician chef cook baker pilot driver mechanic electrician
    plumber carpenter farmer pharmacist therapist psychologist psychiatrist veterinarian vet firefighter
    paramedic officer soldier librarian translator interpreter salesperson entrepreneur founder ceo cto cfo
    coo director economist statistician mathematician physicist chemist biologist technician administrator
    intern freelancer contractor recruiter marketer banker trader investor realtor waiter waitress bartender
    barista cashier clerk secretary tutor coach trainer instructor principal judge nanny caregiver
    midwife optometrist paralegal surveyor geologist astronomer actor actress dancer singer composer
    producer filmmaker animator illustrator copywriter blogger youtuber streamer podcaster strategist
    planner scheduler dispatcher courier miner welder machinist butcher tailor hairdresser barber
    florist gardener landscaper janitor housekeeper receptionist auditor underwriter actuary
    epidemiologist nutritionist dietitian physiotherapist counselor counsellor pastor priest rabbi imam
    sailor fisherman policeman policewoman detective guard steward stewardess attendant postdoc
    lead architect specialist associate partner owner operator""".split()
)
NOT_OCCUPATION_MODIFIERS = frozenset(
    "former ex retired aspiring wannabe future would-be failed huge big great terrible bad good fan".split()
)

DIETS = {
    "vegetarian": "vegetarian",
    "vegan": "vegan",
    "pescatarian": "pescatarian",
    "pescetarian": "pescatarian",
    "gluten-free": "gluten-free",
    "gluten free": "gluten-free",
    "lactose intolerant": "lactose intolerant",
    "lactose-intolerant": "lactose intolerant",
    "keto": "keto",
    "kosher": "kosher",
    "halal": "halal",
    "teetotal": "teetotal",
}

LANGUAGES = frozenset(
    """english portuguese spanish french german italian dutch swedish norwegian danish finnish polish czech
    russian ukrainian greek turkish arabic hebrew hindi urdu bengali punjabi tamil telugu mandarin cantonese
    chinese japanese korean vietnamese thai indonesian malay tagalog swahili romanian hungarian catalan
    basque galician irish welsh latin persian farsi""".split()
)

# Relations: the word a user says -> (normalised relation, memory attribute, single-valued?).
# Spouse-like relations are single-valued "<relation> name" facts; children, pets and friends can be
# many at once, so they use the multi-valued attributes the memory keys know ("children", "pets", ...).
RELATIONS: dict[str, tuple[str, str]] = {
    "wife": ("wife", "wife name"),
    "husband": ("husband", "husband name"),
    "partner": ("partner", "partner name"),
    "spouse": ("spouse", "spouse name"),
    "boyfriend": ("boyfriend", "boyfriend name"),
    "girlfriend": ("girlfriend", "girlfriend name"),
    "fiance": ("fiancé", "fiancé name"),
    "fiancé": ("fiancé", "fiancé name"),
    "fiancee": ("fiancée", "fiancée name"),
    "fiancée": ("fiancée", "fiancée name"),
    "mother": ("mother", "mother name"),
    "mom": ("mother", "mother name"),
    "mum": ("mother", "mother name"),
    "father": ("father", "father name"),
    "dad": ("father", "father name"),
    "boss": ("boss", "boss name"),
    "manager": ("manager", "manager name"),
    "brother": ("brother", "brother name"),
    "sister": ("sister", "sister name"),
    "best friend": ("best friend", "best friend name"),
    "son": ("son", "children"),
    "daughter": ("daughter", "children"),
    "kid": ("child", "children"),
    "child": ("child", "children"),
    "dog": ("dog", "pets"),
    "puppy": ("dog", "pets"),
    "cat": ("cat", "pets"),
    "kitten": ("cat", "pets"),
    "rabbit": ("rabbit", "pets"),
    "parrot": ("parrot", "pets"),
    "hamster": ("hamster", "pets"),
    "pet": ("pet", "pets"),
    "friend": ("friend", "friends"),
}
RELATION_WORDS = sorted(RELATIONS, key=len, reverse=True)
REL_ALT = "|".join(re.escape(w) for w in RELATION_WORDS)

# Imperative verbs that open a procedure step ("Preheat the oven", "Click Save").
IMPERATIVES = frozenset(
    """add adjust apply arrange arrive ask attach bake beat blend boil book bring brown brush buy calculate
    call cancel check chill chop choose clean clear click close combine compare complete configure confirm
    connect contact cook cool copy cover crack create crush cut decide delete deploy dice dip disable
    disconnect discard dissolve divide download drain drink drizzle drop dry edit email enable enter
    export fill find fix flip fold follow fry garnish get give go grab grate grease grill heat hold
    import install keep knead label lay leave let line list load lock log look lower make marinate
    mash measure melt merge mince mix move navigate note open order pack paste pay peel pick pin place
    plug pour prepare press print pull push put rinse read reboot record reduce refresh register reload
    remove rename repeat replace request reset restart return review roast roll rub run salt save scan
    schedule scroll season select send serve set shake share shut sift simmer slice soak sort spread
    sprinkle squeeze start steam stir stop store strain submit swap switch take taste test tighten toast
    toss transfer trim turn type unlock unplug update upload use verify visit wait warm wash watch weigh
    whisk wipe wrap write""".split()
)
STEP_PREFIX_RE = re.compile(
    r"^(?i:(?:step\s*\d+\s*[:.)-]\s*)?(?:(?:first(?:ly)?|then|next|after\s+that|afterwards|finally|lastly|now|"
    r"and|also|carefully|gently|slowly|quickly|simply|just|you|we)\b[,:]?\s*)*)"
)

# Abbreviations that end in a dot without ending the sentence.
ABBREVIATIONS = frozenset(
    "e.g. i.e. dr. mr. mrs. ms. st. vs. approx. a.k.a. jr. sr. no. fig. mt. prof.".split()
)

# --- text helpers ---------------------------------------------------------------------------------

_QUOTES = str.maketrans(
    {
        "\u2019": "'",
        "\u2018": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u00a0": " ",
        "\u2013": "-",
        "\u2014": " - ",
    }
)


def clean_text(text: str) -> str:
    """NFC, straight quotes, no markdown emphasis, no control characters (tabs/newlines kept)."""
    text = unicodedata.normalize("NFC", text).translate(_QUOTES)
    text = text.replace("**", "").replace("__", "")
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")


_SENT_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")


def split_sentences(text: str) -> list[str]:
    """Sentences (and lines), with abbreviation dots not treated as sentence ends."""
    out: list[str] = []
    for piece in _SENT_SPLIT.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if out and out[-1].rsplit(" ", 1)[-1].lower() in ABBREVIATIONS and not text_is_line_start(piece):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def text_is_line_start(piece: str) -> bool:
    return bool(re.match(r"^(?:\d{1,2}[.)]|[-*\u2022])\s", piece))


def is_question(sentence: str) -> bool:
    s = sentence.strip()
    return s.endswith("?") or bool(
        re.match(
            r"^(?i:do|does|did|can|could|would|should|will|shall|is|are|am|was|were|have|has|what|where|"
            r"when|why|how|who|which|whose)\b",
            s,
        )
    )


HEDGES = re.compile(
    r"\b(?i:if|unless|whether|would|wish|hope|maybe|perhaps|might|suppose|supposing|imagine|pretend|"
    r"said|says|asked|told|think|thinks|thought|wonder|doubt|not sure|pretending|what if|"
    r"assume|assuming|hypothetically|example)\b"
)


def hedged(prefix: str) -> bool:
    """Whether the words before a match make it hypothetical, reported or uncertain."""
    prefix = _OWN_WORDS.sub(" ", prefix)  # "as I said, ..." repeats the user's own statement
    return bool(HEDGES.search(prefix))


_OWN_WORDS = re.compile(r"\b(?i:as|like)\s+I\s+(?i:said|told\s+you|mentioned|wrote)\b")


def clip(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return (cut or text[: limit - 1]).rstrip() + "\u2026"


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def strip_punct(text: str) -> str:
    return text.strip().strip(" ,;:.!?-\"'`()[]").strip()


_NAME_WORD = r"[A-Z\u00c0-\u00d6\u00d8-\u00de][A-Za-z\u00c0-\u00ff'\-]*"
NAME_RE = re.compile(rf"\s*(?P<name>{_NAME_WORD}(?:\s+{_NAME_WORD}){{0,2}})")


def is_name_word(word: str) -> bool:
    bare = word.strip("'-").lower()
    return bool(bare) and word[:1].isupper() and bare not in NOT_NAMES and not bare.endswith("'s")


def take_name(rest: str, *, max_words: int = 3, strict_end: bool = False) -> str | None:
    """A capitalised personal name at the start of `rest` (e.g. "Ana Costa, and ...")."""
    m = NAME_RE.match(rest)
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
    if strict_end and not re.match(r"^\s*(?:$|[,.!;:)]|-\s|(?i:and|from|here|by the way|btw)\b)", tail):
        return None
    if len(words) == 1 and words[0].isupper() and len(words[0]) > 3:
        return None  # SHOUTED words are not names
    return " ".join(words)


_CONNECTORS = frozenset("of de da do dos das del della di du la le upon am sur y on-the".split())
_PLACE_STOP = frozenset(WEEKDAYS) | frozenset(MONTHS) | {"i", "i'm", "my", "me", "we", "the", "a", "an"}


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
    text = rest.strip()
    m = re.match(r"^[^\s.!?;:]+(?:\s+[^\s.!?;:]+)*", text)
    if not m:
        return None
    tokens = re.sub(r"[()]", " ", m.group(0)).split() if allow_org else m.group(0).split()
    lead = 0
    if tokens and tokens[0].lower() == "the" and len(tokens) > 1 and tokens[1][:1].isupper():
        lead = 1
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
NP_STOP_FIRST = frozenset(
    """to it that this these those them you your yours him her how what when where which who the idea
    the sound the way the plan the suggestion the option the first the second the third the last the other
    option both all none either neither one a lot lots so very too much more most it's that's being
    having doing getting if about whether just really there here""".split()
)


def take_phrase(rest: str, *, max_words: int = 6) -> str | None:
    """A short noun phrase at the start of `rest`, cut at clause boundaries."""
    cut = _BOUNDARY.split(rest, maxsplit=1)[0]
    value = strip_punct(cut)
    if not value:
        return None
    words = value.split()
    first = words[0].lower()
    two = " ".join(words[:2]).lower()
    if first in NP_STOP_FIRST or two in NP_STOP_FIRST or len(words) > max_words:
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


# --- third person ---------------------------------------------------------------------------------

_ADVERBS = "always|usually|never|often|also|really|still|only|sometimes|normally|generally|just|now|currently"
_PRONOUNS = re.compile(
    rf"\b(?:(?P<iam>I'm|I am)|(?P<ive>I've)|(?P<ill>I'll)|(?P<i>I)(?:\s+(?P<adv>(?:{_ADVERBS})\s+)?"
    r"(?P<verb>[a-z']+))?|(?P<my>[Mm]y)|(?P<me>[Mm]e)|(?P<mine>[Mm]ine)|(?P<myself>[Mm]yself))\b"
)
_NO_CONJ = frozenset(
    """was had did could would should will can may might must shall used went saw met took got made ran
    flew drove ate drank bought brought thought found gave left lost came became began won wrote spent sent
    kept felt told sold paid heard knew swam sang sat stood slept woke wore chose broke spoke rode put cut
    hit let set read""".split()
)
_CONJ = {"have": "has", "do": "does", "don't": "doesn't", "go": "goes", "am": "is", "haven't": "hasn't"}


def _conjugate(verb: str) -> str:
    if verb in _CONJ:
        return _CONJ[verb]
    if verb in _NO_CONJ or verb.endswith(("ed", "n't", "'d")) or "'" in verb:
        return verb
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(verb) > 2 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def third_person(text: str, subject: str) -> str | None:
    """Rewrite a first-person statement about `subject`; None when that is not straightforward."""
    if re.search(r"\b(?i:we|us|our|ours|you|your|yours|I'd)\b", text):
        return None
    low = "the user" if subject == "user" else subject
    named = [False]  # whether the subject was already named (then "my" -> "their", "me" -> "them")

    def who(m: re.Match[str]) -> str:
        return capitalise(low) if m.start() == 0 else low

    def repl(m: re.Match[str]) -> str:
        s = who(m)
        if named[0] and not (m.group("iam") or m.group("ive") or m.group("ill") or m.group("i")):
            return (
                "their"
                if (m.group("my") or m.group("mine"))
                else "themselves"
                if m.group("myself")
                else "them"
            )
        named[0] = True
        if m.group("iam"):
            return f"{s} is"
        if m.group("ive"):
            return f"{s} has"
        if m.group("ill"):
            return f"{s} will"
        if m.group("i"):
            verb = m.group("verb")
            if verb is None:
                return s
            return f"{s} {m.group('adv') or ''}{_conjugate(verb)}"
        if m.group("my") or m.group("mine"):
            return f"{s}'s"
        return s  # me / myself

    return _PRONOUNS.sub(repl, text)


# --- dates ----------------------------------------------------------------------------------------


def parse_ref(value: Any) -> date | None:
    """The calendar date of an ISO timestamp (in its own offset), or None."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if not isinstance(value, str):
        return None
    s = value.strip()
    try:
        return datetime.fromisoformat(s).date()
    except ValueError:
        pass
    try:
        return date.fromisoformat(s[:10])
    except ValueError:
        return None


@dataclass(frozen=True)
class DateMention:
    start: int
    end: int
    iso: str
    precision: str  # "day" | "approx" | "month" | "year"
    text: str

    def phrase(self, preceded_by_preposition: bool) -> str:
        if self.precision == "approx":
            return f"around {self.iso}"
        if preceded_by_preposition:
            return self.iso
        return f"on {self.iso}" if self.precision == "day" else f"in {self.iso}"


def _weekday(ref: date, wd: int, direction: int, inclusive: bool) -> date:
    if direction < 0:
        delta = (ref.weekday() - wd) % 7
        if delta == 0 and not inclusive:
            delta = 7
        return ref - timedelta(days=delta)
    delta = (wd - ref.weekday()) % 7
    if delta == 0 and not inclusive:
        delta = 7
    return ref + timedelta(days=delta)


def _add_months(year: int, month: int, n: int) -> tuple[int, int]:
    idx = year * 12 + (month - 1) + n
    return idx // 12, idx % 12 + 1


def _num(word: str) -> int | None:
    word = word.lower().strip()
    if word.isdigit():
        return int(word) if 0 < int(word) < 1000 else None
    return NUMBER_WORDS.get(word)


def _month_day(ref: date, month: int, day: int, year: int | None, past: bool | None) -> date | None:
    try:
        if year is not None:
            return date(year, month, day)
        d = date(ref.year, month, day)
        if past is True and d > ref:
            d = date(ref.year - 1, month, day)
        elif past is False and d < ref:
            d = date(ref.year + 1, month, day)
        return d
    except ValueError:
        return None


Resolution = tuple[str, str] | None
_Resolver = Callable[[re.Match[str], date, bool | None], Resolution]

_WD = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MON_CAP = (
    r"(?P<mon>January|February|March|April|May|June|July|August|September|October|November|December|"
    r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)"
)
_NUMW = (
    r"(?P<n>\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|an?|(?:a\s+)?couple\s+of)"
)


def _days(n: int, precision: str = "day") -> _Resolver:
    return lambda m, ref, past: ((ref + timedelta(days=n)).isoformat(), precision)


def _rel_weekday(direction: int, inclusive: bool | None) -> _Resolver:
    def resolve(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
        wd = WEEKDAYS[m.group("wd").lower()]
        d = direction
        if d == 0:  # "on Saturday" / "this Saturday": the tense decides
            d = -1 if past else 1
        return _weekday(ref, wd, d, inclusive if inclusive is not None else True).isoformat(), "day"

    return resolve


def _weekend(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
    sat = _weekday(ref, 5, -1, True)
    if "last" in m.group(0).lower() and sat + timedelta(days=1) >= ref:
        sat -= timedelta(days=7)
    return sat.isoformat(), "day"


def _ago(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
    n = _num(re.sub(r"\s+", " ", m.group("n")))
    if n is None:
        return None
    unit = m.group("unit").lower()
    sign = -1 if m.group(0).lower().rstrip().endswith("ago") else 1
    if unit.startswith("day"):
        return (ref + timedelta(days=sign * n)).isoformat(), "day"
    if unit.startswith("week"):
        return (ref + timedelta(days=sign * 7 * n)).isoformat(), "approx"
    if unit.startswith("month"):
        y, mo = _add_months(ref.year, ref.month, sign * n)
        return f"{y:04d}-{mo:02d}", "month"
    y = ref.year + sign * n
    return (f"{y:04d}", "year") if 0 < y < 10000 else None


def _month_rel(direction: int) -> _Resolver:
    def resolve(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
        y, mo = _add_months(ref.year, ref.month, direction)
        return f"{y:04d}-{mo:02d}", "month"

    return resolve


def _year_rel(direction: int) -> _Resolver:
    return lambda m, ref, past: (f"{ref.year + direction:04d}", "year")


def _abs_md(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
    month = MONTHS[m.group("mon").lower()]
    year = int(m.group("y")) if m.group("y") else None
    d = _month_day(ref, month, int(m.group("d")), year, past)
    return (d.isoformat(), "day") if d else None


def _iso(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
    try:
        return date.fromisoformat(m.group(0)).isoformat(), "day"
    except ValueError:
        return None


def _in_month(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
    month = MONTHS[m.group("mon").lower()]
    if m.group("y"):
        return f"{int(m.group('y')):04d}-{month:02d}", "month"
    year = ref.year
    if past is True and month > ref.month:
        year -= 1
    elif past is False and month < ref.month:
        year += 1
    return f"{year:04d}-{month:02d}", "month"


def _last_month_name(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
    month = MONTHS[m.group("mon").lower()]
    year = ref.year if month < ref.month else ref.year - 1
    return f"{year:04d}-{month:02d}", "month"


def _in_year(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
    return m.group("y"), "year"


# Order matters: longer, more specific phrases first; overlapping later matches are dropped.
DATE_RULES: list[tuple[re.Pattern[str], _Resolver]] = [
    (re.compile(r"\b(?i:the\s+day\s+before\s+yesterday)\b"), _days(-2)),
    (re.compile(r"\b(?i:the\s+day\s+after\s+tomorrow)\b"), _days(2)),
    (re.compile(r"\b(?i:yesterday(?:\s+(?:morning|afternoon|evening|night))?|last\s+night)\b"), _days(-1)),
    (re.compile(r"\b(?i:tomorrow(?:\s+(?:morning|afternoon|evening|night))?)\b"), _days(1)),
    (
        re.compile(r"\b(?i:(?:earlier\s+|later\s+)?today|this\s+(?:morning|afternoon|evening)|tonight)\b"),
        _days(0),
    ),
    (
        re.compile(rf"\b(?i:last\s+(?P<wd>{_WD})(?:\s+(?:morning|afternoon|evening|night))?)\b"),
        _rel_weekday(-1, False),
    ),
    (
        re.compile(rf"\b(?i:next\s+(?P<wd>{_WD})(?:\s+(?:morning|afternoon|evening|night))?)\b"),
        _rel_weekday(1, False),
    ),
    (
        re.compile(
            rf"\b(?i:(?:on\s+|this\s+|this\s+past\s+)(?P<wd>{_WD})(?:\s+(?:morning|afternoon|evening|night))?)\b"
        ),
        _rel_weekday(0, None),
    ),
    (re.compile(r"\b(?i:last\s+weekend|over\s+the\s+weekend|this\s+past\s+weekend)\b"), _weekend),
    (re.compile(r"\b(?i:last\s+week)\b"), _days(-7, "approx")),
    (re.compile(r"\b(?i:next\s+week)\b"), _days(7, "approx")),
    (re.compile(r"\b(?i:last\s+month)\b"), _month_rel(-1)),
    (re.compile(r"\b(?i:next\s+month)\b"), _month_rel(1)),
    (re.compile(r"\b(?i:last\s+year)\b"), _year_rel(-1)),
    (re.compile(r"\b(?i:next\s+year)\b"), _year_rel(1)),
    (re.compile(rf"\b(?i:{_NUMW}\s+(?P<unit>days?|weeks?|months?|years?)\s+ago)\b"), _ago),
    (re.compile(rf"\b(?i:in\s+{_NUMW}\s+(?P<unit>days?|weeks?|months?|years?))\b"), _ago),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), _iso),
    (
        re.compile(
            rf"\b(?:(?i:on)\s+)?{_MON_CAP}\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>\d{{4}}))?"
        ),
        _abs_md,
    ),
    (
        re.compile(
            rf"\b(?:(?i:on)\s+)?(?:(?i:the)\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:(?i:of)\s+)?{_MON_CAP}\b"
            r"(?:,?\s+(?P<y>\d{4}))?"
        ),
        _abs_md,
    ),
    (re.compile(rf"\b(?i:last)\s+{_MON_CAP}\b"), _last_month_name),
    (
        re.compile(
            rf"\b(?i:in|since|during)\s+(?:(?i:early|late|mid)\s+)?{_MON_CAP}\b(?:\s+(?P<y>\d{{4}}))?"
        ),
        _in_month,
    ),
    (re.compile(r"\b(?i:in|since|during|back\s+in)\s+(?P<y>(?:19|20)\d{2})\b"), _in_year),
]

PAST_HINT = re.compile(
    r"\b(?:was|were|went|had|did|got|made|took|saw|met|flew|drove|ran|spent|ago|last|yesterday|"
    r"[a-z]{2,}ed)\b",
    re.IGNORECASE,
)


def find_dates(text: str, ref: date | None, past: bool | None = None) -> list[DateMention]:
    """Date phrases in `text` resolved against `ref`, in order, without overlaps."""
    if ref is None:
        return []
    if past is None and PAST_HINT.search(text):
        past = True
    found: list[DateMention] = []
    taken: list[tuple[int, int]] = []
    for pattern, resolve in DATE_RULES:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            try:
                res = resolve(m, ref, past)
            except (ValueError, OverflowError, KeyError):
                res = None
            if res is None:
                continue
            taken.append((m.start(), m.end()))
            found.append(DateMention(m.start(), m.end(), res[0], res[1], m.group(0)))
    return sorted(found, key=lambda d: d.start)


_PREP_BEFORE = re.compile(r"\b(?i:on|in|since|until|till|by|from|before|after|at|during|around)\s*$")


def replace_dates(text: str, mentions: list[DateMention]) -> str:
    """`text` with each relative date phrase replaced by its resolved ISO form."""
    out: list[str] = []
    pos = 0
    for d in mentions:
        if d.start < pos:
            continue
        before = text[pos : d.start]
        lead = d.text.lower().split()[0] if d.text.split() else ""
        has_prep = bool(_PREP_BEFORE.search(before)) or lead in {"on", "in", "since", "during"}
        phrase = d.phrase(has_prep)
        if lead in {"on", "in", "since", "during"} and d.precision != "approx":
            phrase = f"{d.text.split()[0]} {d.iso}"
        out.append(before)
        out.append(phrase)
        pos = d.end
    out.append(text[pos:])
    return "".join(out)


def month_day_text(iso_day: str) -> str | None:
    try:
        d = date.fromisoformat(iso_day)
    except ValueError:
        return None
    return f"{MONTH_NAMES[d.month]} {d.day}"
