"""What a memory kind is: one object that knows its item model, prompt, match key, text and merge rules.

Extraction, reconciliation, search text, the offline rules' validation and the API's direct writes
all go through a kind's methods; nothing else branches on a kind's name. Built-in kinds live one per
module beside this one; a project config can register more (mongomem.kinds.registry).
"""

from __future__ import annotations

import copy
import re
import unicodedata
from collections.abc import Collection, Iterator
from functools import cache
from typing import Any, ClassVar, Literal

from annotated_types import MaxLen
from pydantic import BaseModel, ConfigDict, Field, ValidationError

# The comparisons live in mongomem.kinds.meaning; `norm`, `same_value` and `hard_anchors` are named here
# too, where the kinds and their callers have always found them.
from mongomem.kinds.labels import subject_form
from mongomem.kinds.meaning import hard_anchors, name_marks, norm, same_value, stated, worded
from mongomem.markers import drawn_text, skeleton, unseen

# Two or more single letters or digits, each after the first set off by anything that is neither (dots,
# spaces, dashes of any kind, low lines, commas, bullets ...: what `norm` reads as a space): a name
# spelled out letter by letter ("P.7.A.B.C.D.", "P 7 A B C D", "U-S-A", "U_S_A").
_SPELLED = re.compile(r"(?<![^\W_])[^\W_](?:[\W_]+[^\W_])+(?![^\W_])\.?")


_SEPARATED = re.compile(r"([^\W_])([\W_]*)")


def _joined(match: re.Match[str]) -> str:
    # A code spelled letter by letter with one separator throughout ("P-9-9-7-F", "U.S.A.") is read as the
    # word. Digits alone set off by dots or dashes are numbers ("Tier 1.5" is not "Tier 15", "Node 1.2.3"
    # not "Node 123"), and so are two digits set apart where the separators differ ("Section 4.1(b)" is
    # not "Section 41(b)", "1-2 B" not "12 B": issue 33's seventeenth probe), and so are the digits of a
    # short code (three characters: a section's numbering) that neither opens and closes with a letter nor
    # holds more letters than digits ("4.1.b" is not "41b", "A-1-2" not "A-12", "B.1.4" not "B14": its
    # eighteenth; "P-9-9-7-F", "P-9-9-1-4-5-5-7" and "P-9-B-E-A-B-2-0" are one word: its ninth).
    units: list[tuple[str, str]] = _SEPARATED.findall(match.group(0).rstrip("."))
    chars = [c for c, _ in units]
    seps = {sep for _, sep in units[:-1]}
    if not any(c.isalpha() for c in chars):
        return " ".join(chars)
    letters = sum(c.isalpha() for c in chars)
    if len(seps) == 1 and (
        (chars[0].isalpha() and chars[-1].isalpha()) or letters > len(chars) - letters or len(chars) > 3
    ):
        return "".join(chars)
    out: str = chars[0]
    for (before, _), ch in zip(units, chars[1:], strict=False):
        out += f" {ch}" if before.isdigit() and ch.isdigit() else ch
    return out


# First-person singular words ("i.e.", "I/O" and "I-5" are not "I"), in English and in the languages the
# meaning table reads (issue 33's twenty-ninth probe: "mi médico", "meine Bank", "ma banque", "ich", "я",
# "我的医生" were published from one-user writes while their English forms stayed private). Words that are
# also an English word or abbreviation ("min", "mit", "Ben", "Meg", "ja") are left out; those read only
# in lower case or capitalised ("ma", "mon", "mes", "mi", "io", "eu": not "MA", "EU", "IO").
_FIRST_PERSON = re.compile(
    r"(?<![\w.])(?:i(?![./-]\w)|i'm|i've|i'd|i'll|me|my|mine|myself"
    r"|ich|mich|mir|mein|meine|meinen|meinem|meiner|meines"  # German
    r"|je|j'|moi|mienne|miens"  # French
    r"|yo|mis|m[ií]o|m[ií]a|m[ií]os|m[ií]as|conmigo"  # Spanish
    r"|mio|miei|mie"  # Italian
    r"|meu|minha|meus|minhas|comigo"  # Portuguese
    r"|ik|mij|mijn"  # Dutch
    r"|jag|jeg|mitt|mina"  # Swedish, Norwegian, Danish
    r"|benim|bana|beni"  # Turkish
    r"|já|můj|mně|môj|moja|moje|mnie|mojego|mojej|mojemu|moim|moją|moich|moimi"  # Czech, Slovak, Polish
    r"|я|мой|моя|моё|мое|мои|мне|меня|мной|моего|моему|моим|моём|моей|мою|моих|моими"  # Russian
    r"|мій|мене|мені|мого|моєму|моїм|моєї|моїх|мої|моє|моїми"  # Ukrainian
    r"|मैं|मैंने|मेरा|मेरी|मेरे|मुझे|मुझको|मुझसे|मुझमें|أنا"  # Hindi, Arabic
    r")(?![\w'])"
    r"|(?<![\w.])(?<!\d\s)(?-i:[Mm]a|[Mm]on|[Mm]es|[Mm]i|[Ii]o|[Ee]u|[Mm]ig|meg)(?![\w.'/-])"
    r"|我(?![们們])|私|僕|俺|わたし|あたし|ぼく|나는|내가|나의|저는|제가|저의"  # Chinese, Japanese, Korean
    r"|(?<!\w)[내제](?=\s)",  # Korean "my" before a noun ("내 비밀번호"; "제1조" is no "my")
    re.IGNORECASE,
)
# "user" in the languages the table reads: "el usuario", "der Benutzer" (issue 33's twenty-ninth probe)
_USER_WORD = re.compile(
    r"(?<!\w)(?:usuari[oa]|usu[aá]ri[oa]|utilisat(?:eur|rice)|(?:be)?nutzer(?:in)?|utente|gebruiker"
    r"|anv[aä]ndare(?:n)?|bruger(?:en)?|bruker(?:en)?|kullan[\u0131i]c[\u0131i]|u[zž]ivatel|u[zż]ytkownik"
    r"|пользовател[ьяюе]|користувач|utilizador(?:a)?|(?:ال)?مستخدم|उपयोगकर्ता)(?!\w)"
    r"|用户|用戶|使用者|ユーザー|사용자",
    re.IGNORECASE,
)


def texts_of(value: Any) -> Iterator[str]:
    """Every text in a payload or an item, at any depth: its fields, list entries and object values (a
    procedure's steps are objects in a list)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from texts_of(v)
    elif isinstance(value, list):
        for v in value:
            yield from texts_of(v)


def first_person(text: str) -> bool:
    """Whether a text, as drawn, speaks in the first person singular ("my", "I'm"; not "i.e.", "I/O")."""
    return bool(_FIRST_PERSON.search(drawn_text(text)))


def in_first_person(payload: Any) -> bool:
    """Whether any text of a payload (at any depth: a procedure's steps) speaks in the first person: "my
    badge code", "log in with my password": one user's own, never the organisation's unless they say so
    (issue 33's twenty-seventh probe)."""
    return any(first_person(t) for t in texts_of(payload))


def names_the_user(names: list[str], user_id: str | None = None, stated: Collection[str] = ()) -> bool:
    """Whether a memory's names (its naming fields: a term, a procedure's name, a fact's subject and
    attribute) name the user: the word "user" ("user's daily dose", "User pharmacy"; not "users") or the
    user's own id ("bob's badge code"), as drawn. One user's such statement is theirs unless they say
    otherwise (issue 33's twenty-eighth probe); so is a name the user `stated` they go by ("Dana
    Whitfield's doctor": the thirtieth). Which texts are read is the kind's (`names_its_user`)."""
    own = [*_own_names(user_id), *(w for n in stated if (w := _subject_words(n)))]
    for text in names:
        words = _subject_words(text)
        if "user" in words or any(_has(words, name) for name in own) or _USER_WORD.search(drawn_text(text)):
            return True
    return False


def _own_names(user_id: str | None) -> list[tuple[str, ...]]:
    """The words a user's id names them by: the whole id, and an e-mail address's local part ("bob.smith"
    of "bob.smith@acme.com": how others name them; issue 33's twenty-ninth probe)."""
    if not user_id:
        return []
    names = [_subject_words(user_id)]
    if "@" in user_id:
        names.append(_subject_words(user_id.split("@", 1)[0]))
    return [n for n in names if n]


def about_the_user(payload: Any, user_id: str | None = None) -> bool:
    """Whether a memory is about its user or theirs: its subject, as drawn (a zero-width space inside is
    nothing), holds "user" (not "users": everyone), a first-person word ("my wife", "me and my wife") or
    the user's own id ("bob's wife"), is "self" or "yours truly", or a `name` qualifier names the user's
    id. Such a memory is the user's own, never the organisation's, whatever the kind's
    visibility (issue 33's twenty-fifth and twenty-sixth probes: "user name", "user home city" and
    "my blood type" were published to every user of the tenant)."""
    if not isinstance(payload, dict):
        return False
    own = _own_names(user_id)
    qualifiers = payload.get("qualifiers")
    named = qualifiers.get("name") if isinstance(qualifiers, dict) else None
    if isinstance(named, str) and named.strip():
        # "user" qualified by the name it shows is about that name (a dock, a team), unless it is theirs
        return _subject_words(named) in own
    subject = payload.get("subject")
    if not isinstance(subject, str):
        return False
    if first_person(subject) or _USER_WORD.search(drawn_text(subject)):
        return True  # "mi médico", "meine Bank", "我的医生", "el usuario"
    words = _subject_words(subject)
    if words and all(len(w) == 1 for w in words):
        words = ("".join(words),)  # "u s e r": letters spaced out read as the word they spell
    if not words:
        return False
    if (
        words in _SELF_WORDS
        or any(w in _FIRST_PERSON_WORDS for w in words)
        or _has(words, ("yours", "truly"))
    ):
        return True  # "my wife", "me and my wife", "myself and I": the user and theirs
    if "user" in words:
        return True  # "the user himself", "this user", "the user's doctor" ("users" is everyone)
    return any(_has(words, name) for name in own)  # "bob (me)", "bob's wife" from bob


_SELF_WORDS = frozenset({("me",), ("my",), ("mine",), ("myself",), ("i",), ("self",)})
# A subject holding any of these is the user's own or about theirs (issue 33's twenty-seventh probe: "my
# wife", "me and my wife", "the user himself" were published to every user of the tenant).
_FIRST_PERSON_WORDS = frozenset({"i", "me", "my", "mine", "myself"})


def _has(words: tuple[str, ...], run: tuple[str, ...]) -> bool:
    """Whether `run` is a run of consecutive words of `words`."""
    n = len(run)
    return n > 0 and any(words[i : i + n] == run for i in range(len(words) - n + 1))


def _subject_words(text: str) -> tuple[str, ...]:
    """A subject's words as drawn and read: unseen characters dropped, look-alikes folded, a possessive's
    "'s" and every other mark a separator."""
    read = skeleton(drawn_text(text)).casefold()
    return tuple(re.findall(r"[a-z0-9]+", re.sub(r"['\u2019]s\b", "", read)))


def accents_of(name: str) -> str:
    """A name's accents, in order, as the key (which folds them) loses them: "avó" and "avô"
    (grandmother, grandfather), "bà" and "ba" are two names (issue 33's seventeenth probe). A variation
    selector, a combining grapheme joiner or another default-ignorable mark is no accent: it changes nothing
    a reader sees of the name (issue 33's nineteenth and twentieth probes)."""
    return "".join(
        ch
        for ch in unicodedata.normalize("NFD", drawn_text(name).casefold())
        if unicodedata.category(ch) == "Mn" and not unseen(ch)
    )


def run_together(words: str) -> str:
    """A name's words run together as a reader takes them ("Wi Fi" / "WiFi", "PLTZ 7" / "PLTZ7"), but
    never two numbers: "section 12 3" and "section 1 23" stay two names (issue 33's sixteenth probe)."""
    out = ""
    for word in words.split():
        out += f" {word}" if out and out[-1].isdigit() and word[0].isdigit() else word
    return out


def unarticled(words: str) -> str:
    """A name's words without "the" and a lower-case "a" / "an" opening it (as `_name_words` reads names):
    "Rotate the north gate keys" names what "Rotate north gate keys" names, "a gate key" what "gate key"
    names. An "a" after a word of the name is its letter ("hepatitis a", "vitamin a dose", "zone a
    temperature": issue 33's eighteenth and twenty-second probes)."""
    said = words.split()
    kept = " ".join(w for i, w in enumerate(said) if w.lower() != "the" and not _opening_article(said, i))
    return kept or words  # a name that is only an article ("The", "a") is that word


def _opening_article(words: list[str], i: int) -> bool:
    """Whether the word at `i` is a lower-case "a" / "an" opening a name of more words."""
    return i == 0 and len(words) > 1 and words[0] in ("a", "an")


def cased_apart(held: str, said: str) -> bool:
    """Whether two names of one key differ by a word of capitals said in the other as a word with one
    capital ("CO", carbon monoxide, is not "Co", cobalt; issue 33's eighteenth probe). A word said all in
    lower case is the name typed in lower case ("ops-12" is "OPS-12"), and other case is folded ("Polish"
    and "polish" stay one name: a duplicate of every name typed in lower case would be the price)."""
    one, other = re.findall(r"[^\W\d_]+", held), re.findall(r"[^\W\d_]+", said)
    if len(one) != len(other):
        return False
    return any(
        len(x) > 1 and ((x.isupper() and y.istitle()) or (y.isupper() and x.istitle()))
        for x, y in zip(one, other, strict=True)
    )


def symbols_of(name: str) -> str:
    """The marks of a name a reader takes for part of it, in order, each as the character it is drawn like
    (`markers.skeleton`: "C\u266f" is "C#", an en dash a hyphen): symbols ("+", "$", "\u20ac", an emoji),
    "#", "&", "@", "%", "/", "*" and dashes, and inside a word any punctuation ("ci.build.net" is not
    "ci-build.net", "a.lopez" not "a_lopez", "Q&A" not "QA"; issue 33's eighteenth and nineteenth probes).
    Read as no mark: punctuation that closes or wraps a name ("PLTZ.", "PLTZ!", brackets, quotes), a
    hyphen joining a letter to a letter or a digit ("Wi-Fi" is "WiFi", "PLTZ-7" "PLTZ7"), the separators
    of a code spelled out ("P-9-9-7-F", "K.P.I.": `_SPELLED`), an apostrophe as any apostrophe, and what
    a reader does not see (format characters, variation selectors, controls: `markers.unseen`)."""
    said = _without_unseen(unicodedata.normalize("NFKC", drawn_text(name)).strip())
    spelled = {i for m in _SPELLED.finditer(said) for i in range(m.start(), m.end())}
    kept = []
    for i, ch in enumerate(said):
        if ch.isalnum() or ch.isspace():
            continue
        before, after = said[i - 1 : i], said[i + 1 : i + 2]
        inside = bool(before) and bool(after) and before.isalnum() and after.isalnum()
        if ch in _APOSTROPHES:
            kept.append("'")
            continue
        if inside and i in spelled and ch not in _MEANT_IN_NAMES:
            continue  # a code spelled out: "K.P.I.", "P-9-9-7-F"
        if inside and ch in _DASHES and (before.isalpha() or after.isalpha()):
            continue  # "Wi-Fi", "PLTZ-7"
        if not inside and unicodedata.category(ch).startswith("P") and ch not in _READ_MARKS:
            continue  # "PLTZ.", "(PLTZ)"
        kept.append("-" if ch in _DASHES else _DRAWN_AS.get(ch, skeleton(ch)))
    return "".join(kept)


def _without_unseen(text: str) -> str:
    return "".join(ch for ch in text if not unseen(ch))


_DASHES = frozenset("-\u2010\u2011\u2012\u2013\u2014\u2212")
_READ_MARKS = frozenset("#&@%/\\*") | _DASHES
_MEANT_IN_NAMES = frozenset("#&@%/\\*+")
# Symbols drawn like an ASCII mark that TR39's table leaves apart: the music sharp sign is read as "#".
_DRAWN_AS = {"\u266f": "#"}
_APOSTROPHES = frozenset("'\u2019\u02bc\u2018")


def as_read(text: str) -> str:
    """A name as a reader takes it: each character outside ASCII read as the Latin letter or digit it is
    drawn like (`markers.skeleton`: Cyrillic ER U+0420 as "p", a full-width letter as the letter, a
    combining mark dropped), ASCII kept as written (a digit 0 stays a 0 and "P6A0" is found as itself),
    and a name spelled letter by letter read as the word: "P.7.A.B.C.D." and "P 7 A B C D" as "P7ABCD"."""
    return _SPELLED.sub(_joined, "".join(_read_char(ch) for ch in drawn_text(text)))


def _read_char(ch: str) -> str:
    """One character of a name as read: ASCII as written, a digit of another script as its value (a
    Bengali seven is 7, never the "9" it is drawn like, an Arabic-Indic seven never a "V": issue 33's
    eighteenth probe), a letter as the Latin letter it looks like or as itself (never as a digit),
    anything else as the Latin letter or digit it looks like."""
    if ch.isascii():
        return ch
    if unicodedata.category(ch) == "Nd":
        return str(unicodedata.digit(ch))
    if unicodedata.decomposition(ch).startswith(("<super>", "<sub>")):
        return f" {ch} "  # a superscript digit is a word of its own: "Art. 14\u00b9" is not "Art. 141"
    read = skeleton(ch)
    if ch.isalpha() and any(c.isdigit() for c in read):
        return ch  # a letter is never read as a digit: Cyrillic "\u0431" is no "6" ("1\u0431" is not "16")
    return read


__all__ = [
    "GREETINGS",
    "MAX_ANSWER_LIST",
    "PLACEHOLDERS",
    "Item",
    "KindError",
    "MemoryKind",
    "Visibility",
    "add_unique",
    "hard_anchors",
    "json_schema",
    "junk_reason",
    "norm",
    "said_alike",
    "same_value",
]

Visibility = Literal["private", "org"]


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

    def as_named(self, payload: dict[str, Any]) -> dict[str, Any]:
        """The payload about the name it reads as: shared memory keys who it is about as it shows them
        (a fact about "user" that shows the user's name shows, and is keyed by, that name)."""
        return payload

    def names_its_user(
        self, payload: dict[str, Any], user_id: str | None, stated: Collection[str] = ()
    ) -> bool:
        """Whether one user's statement of this kind names its user where a reader takes it to be about
        them (`names_the_user`): for a kind the organisation shares by nature (terms, procedures), in its
        names only (a definition saying what "the user" does is how anyone's term reads); for a kind about
        users by nature that a project shares (facts, episodes, preferences), in any text ("the vault
        password: the user set it to ..."; issue 33's twenty-eighth probe)."""
        named = self.as_named(payload)  # "user" qualified by the name it shows is about that name
        if self.visibility == "private":
            return names_the_user(list(texts_of(named)), user_id, stated)
        names = [str(named[f]) for f in self.named if isinstance(named.get(f), str)]
        return names_the_user(names, user_id, stated)

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

    # The fields that name the memory (its key is made of them): compared by `norm` and `name_marks`.
    named: ClassVar[tuple[str, ...]] = ()

    def same_name(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """Whether two payloads of one key name the same thing: the key folds symbols, punctuation and case
        away, so "Q++" and "Q#", ".NET" and "NET", "CO" and "Co" share one; their marks and words of
        capitals tell them apart (`name_marks`, `cased_apart`)."""
        return all(
            name_marks(str(old.get(f) or "")) == name_marks(str(new.get(f) or ""))
            and accents_of(str(old.get(f) or "")) == accents_of(str(new.get(f) or ""))
            and not cased_apart(str(old.get(f) or ""), str(new.get(f) or ""))
            for f in self.named
        )

    def apart_marks(self, payload: dict[str, Any]) -> str:
        """The marks the key folds away that still tell this memory from another of its key ("++" of
        "C++" where a many-valued fact's key holds its value); "" for most kinds and values."""
        return ""

    def keyed_apart(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """Whether two payloads of one key are two memories whoever states them: a key that holds a value
        folds its marks away too ("C++" and "C#" of a many-valued fact), and a value is never a restatement
        or an update of another value."""
        return self.apart_marks(old) != self.apart_marks(new)

    def read_key(self, payload: dict[str, Any]) -> str:
        """The key of the name as a reader takes it: every naming field's look-alike letters read as the
        Latin letters and digits they are drawn like (`markers.skeleton`, Unicode TR39 confusables), so
        "\u0420LTZ" with a Cyrillic ER reads as "PLTZ"; the key already folds case, accents and marks."""
        return self.key(
            {**payload, **{f: unarticled(as_read(str(payload[f]))) for f in self.named if payload.get(f)}}
        )

    def held_forms(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        """Other forms of the payload that a stored memory may hold it under, where the caller's choice
        changes the key (a fact said to be many-valued is keyed with its value): one user's statement
        about shared memory takes the form the org memory has, never a key of its own beside it."""
        return []

    # List fields holding other names of the one named thing (a term's aliases): a name said as one of
    # them names that thing (`names_read`).
    alias_fields: ClassVar[frozenset[str]] = frozenset()

    def names_read(self, payload: dict[str, Any]) -> set[str]:
        """Every name the payload goes by, as a reader takes it: the read key of its name and of each of
        its aliases (a kind with one naming field). "pallet zone K" names the term whose alias it is."""
        names = {self.name_read(payload)} if all(payload.get(f) for f in self.named) else set()
        if len(self.named) == 1:
            for field in self.alias_fields:
                for alias in payload.get(field) or []:
                    if isinstance(alias, str) and norm(alias):
                        names.add(self.name_read({**payload, self.named[0]: alias}))
        return names

    def name_read(self, payload: dict[str, Any]) -> str:
        """The read key with each part's words run together: "Wi-Fi" and "WiFi", "PLTZ 7" and "PLTZ7"
        read as one name (a hyphen or a space inside a word is no other name)."""
        read = "|".join(run_together(part) for part in self.read_key(payload).split("|"))
        # accents are letters of a name (the key folds them): "Résumé" names no "Resume"; symbols are
        # part of it: "Grade A+" names no "Grade A-"
        marks = "".join(
            accents_of(str(payload.get(f) or "")) + symbols_of(str(payload.get(f) or "")) for f in self.named
        )
        return f"{read}~{marks}" if marks else read

    def reads_as(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """Whether a reader takes the two payloads' names for one name: "PLTZ", "PLTZ.", "PLTZ!" and
        "\u0420LTZ" (Cyrillic ER) read alike, though `same_name` tells them apart; a name's symbols are
        part of it ("C++ team" is not "C# team", "Grade A+" not "Grade A-": `symbols_of`)."""
        return all(
            norm(unarticled(as_read(str(old.get(f) or ""))))
            == norm(unarticled(as_read(str(new.get(f) or ""))))
            and accents_of(str(old.get(f) or "")) == accents_of(str(new.get(f) or ""))
            and symbols_of(str(old.get(f) or "")) == symbols_of(str(new.get(f) or ""))
            for f in self.named
        )

    def states_exactly(self, old: dict[str, Any], new: dict[str, Any], *, whole_lists: bool = False) -> bool:
        """True when every field `new` gives repeats `old`'s to the letter (`worded`): how a restatement of
        one key is recognised, in private and shared memory alike. The naming fields are the key's
        (compared already). A field or a qualifier only `new` gives is news (a new version, or from one
        user a proposal), never dropped; labels (`unordered`: aliases, tool grants) only add unless
        `whole_lists` (a tenant-wide writer, who may also remove a label or a grant): the proposal rule
        decides additions (`decide.additions`)."""
        for field, said in new.items():
            held = old.get(field)
            if field in self.named or _empty(said):
                continue
            if field in self.unordered and isinstance(said, list) and isinstance(held or [], list):
                # labels only add (merged on a REINFORCE), unless the tenant gives the whole list anew, or
                # a list of who (`replaced`) leaves out one the memory holds: "Tim Baker" for "Tom Baker"
                # beside "Ann Lee" on a call is a correction of who was there, not one more (issue 33's
                # seventeenth and nineteenth probes)
                told, kept = {worded(str(x)) for x in said}, {worded(str(x)) for x in held or []}
                if held and (
                    ((whole_lists or field in self.whole) and told != kept)
                    or (field in self.replaced and not kept <= told)
                ):
                    return False
                continue
            if _letter(held) != _letter(said):
                return False  # another value, or news (a field or a qualifier only `new` gives)
        return True

    def adds_only(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """Whether `new` repeats every field `old` holds that it gives, to the letter, and gives fields
        `old` leaves empty (a note, a qualifier, a description): news that the next version adds to what
        the memory holds (`with_additions`), keeping its other fields (a tool grant among them)."""
        added = False
        for field, said in new.items():
            held = old.get(field)
            if (
                field in self.whole
                and isinstance(said, list)
                and not _empty(held)
                and not _empty(said)
                and {worded(str(x)) for x in said} != {worded(str(x)) for x in held or []}
            ):
                return False  # another set of conditions (or grants) is another value, not one more
            if field in self.named or field in self.unordered or _empty(said):
                continue
            if _empty(held):
                added = True
            elif _letter(held) != _letter(said):
                return False
        return added

    def with_additions(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        """`old` with the fields `new` gives (an `adds_only` statement's next version), labels merged."""
        grown = {**old, **{k: v for k, v in new.items() if not _empty(v) and k not in self.unordered}}
        merged = self.merged(grown, new)
        return merged if merged is not None else grown

    def restates(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """For memories found by meaning (another key, its names read by `about_same` / `same_aspect`):
        `new` restates `old` when every other field it gives says the same to the letter (`states_exactly`).
        No table of value words reads every order, role, rate or tense (issue 33's sixteenth probe); the
        rules deciding alone keep a value said in other words as a memory of its own (a duplicate at
        worst, never a loss), and a judging model, where one is asked, reads the words itself."""
        return self.states_exactly(old, new)

    # Fields besides the subject that say what of the subject a memory holds (a fact's attribute, a
    # preference's category): said in other words they are one ("job" / "occupation"), but with a word of
    # them replaced or added they are another ("main gate" / "side gate", "travel" / "work travel").
    aspects: ClassVar[tuple[str, ...]] = ()

    def about_same(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """Whether two memories found by meaning are about one thing (as a reader takes it): a value said
        of another subject ("south dock", "son") restates nothing said of the first, however close in
        meaning (its aspect: `same_aspect`). A kind without a subject is about what
        its name names, field by field and word by word in order: "Rotate south gate keys", "Onboard a new
        doctor", "Restart server B", a route back (origin and destination swapped) restate nothing of the
        first; only a name said without "the" ("Rotate the north gate keys" for "Rotate north gate keys")
        or in look-alike letters is the same name."""
        held, said = self.subject(old), self.subject(new)
        if held is not None and said is not None:
            return _whose(held) == _whose(said)
        if held is not None or said is not None or not self.named:
            return True
        return all(_name_alike(str(old.get(f) or ""), str(new.get(f) or "")) for f in self.named)

    def same_aspect(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """Whether two memories of one subject hold the same aspect of it (`aspects`), as the rules read
        words: one name, or no word shared. A judging model reads the words themselves ("favourite dish"
        for "favourite food"); the rules, deciding alone, take a word replaced or added for another aspect
        ("side gate" / "main gate")."""
        return all(_aspect_alike(str(old.get(f) or ""), str(new.get(f) or "")) for f in self.aspects)

    # -- what a statement says, to the letter -----------------------------------------------------
    # Lists of labels, whose order says nothing (aliases, tags): compared as sets by `stated`.
    unordered: ClassVar[frozenset[str]] = frozenset()
    # Of those, lists a statement corrects by naming others (an episode's participants): one that leaves
    # out an item the memory's holds is another value, not an addition.
    replaced: ClassVar[frozenset[str]] = frozenset()
    # Of those, lists whose items are conditions rather than names (a procedure's trigger_conditions):
    # another set of them is another value, never one more label ("above 80%" after "above 90%" is a
    # correction: issue 33's eighteenth probe).
    whole: ClassVar[frozenset[str]] = frozenset()
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

    def capped(self, payload: dict[str, Any], held: dict[str, Any]) -> dict[str, Any]:
        """A merged payload whose lists take in no more than one statement of the kind may give (the
        item's `max_length`: 50 aliases): every entry the memory `held` stays (one that grew past the
        limit before the limit held keeps what it has), the others fill what room is left, in order.
        Restatements never grow a memory past a valid item (issue 33's tenth probe; docs/adr/0077)."""
        limits = _list_limits(self.item)
        out = dict(payload)
        for name, value in payload.items():
            if name not in limits or not isinstance(value, list):
                continue
            kept = {norm(str(h)) for h in held.get(name) or []}
            room = max(0, limits[name] - len(kept))
            fresh = [v for v in value if norm(str(v)) not in kept][:room]
            allowed = {id(v) for v in fresh}
            out[name] = [v for v in value if norm(str(v)) in kept or id(v) in allowed]
        return out

    def left_out(self, merged: dict[str, Any], new: dict[str, Any]) -> list[str]:
        """What of a restatement's lists a merge into `merged` left out, the list being full:
        "3 aliases (it holds at most 50)"."""
        out: list[str] = []
        for name, limit in _list_limits(self.item).items():
            held = merged.get(name)
            if not isinstance(held, list) or len(held) < limit:
                continue
            have = {norm(str(h)) for h in held}
            missing = [v for v in new.get(name) or [] if isinstance(v, str) and norm(v) not in have]
            if missing:
                out.append(f"{len(missing)} {name} (it holds at most {limit})")
        return out

    def updated(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        """The payload of the new version when `new` changes `old` (UPDATE)."""
        return new


def said_alike(held: Any, said: Any) -> bool:
    """Whether a field of two statements of one memory says the same in both: texts by `same_value`
    (short ones exactly), a mapping (a fact's qualifiers) key by key. "kg" / "lb", "since 2024" / "since
    2025" are not alike; a field (or a qualifier) only the new statement gives is news, never dropped as a
    restatement; one only the held statement gives is said less, not otherwise."""
    if _empty(said):
        return True
    if _empty(held):
        return False  # news the held statement lacks ("except in August"): an update keeps it
    if isinstance(held, dict) and isinstance(said, dict):
        # keys read as names ("Unit" / "unit"); a key only the new statement names is news or a field
        # said under another name ("unit" / "measured in"): either way not a restatement
        held_by = {" ".join(_name_words(str(k))): v for k, v in held.items()}
        said_by = {" ".join(_name_words(str(k))): v for k, v in said.items()}
        if said_by.keys() - held_by.keys():
            return False  # a qualifier the held statement lacks ("until 2025") is news: never dropped
        return all(said_alike(held_by[k], said_by[k]) for k in held_by.keys() & said_by.keys())
    return same_value(str(held), str(said))


@cache
def _list_limits(model: type[BaseModel]) -> dict[str, int]:
    """The most entries each list field of an item model takes (its `max_length`)."""
    return {
        name: int(m.max_length)
        for name, spec in model.model_fields.items()
        if name != "evidence_seqs"
        for m in spec.metadata
        if isinstance(m, MaxLen)
    }


def _name_words(text: str) -> list[str]:
    """A name's words as `about_same` compares them, in order: read as drawn (`as_read`), folded as the key
    folds them (`norm`), "the" and a lower-case "a" / "an" opening the name left out (`unarticled`). No
    ending is taken off: "care" is not "car", "parking" not "park", "news" not "new" (a name said with other
    endings is a second memory at worst, never a lost one)."""
    words = re.findall(r"\w+", as_read(text))
    return [norm(w) for i, w in enumerate(words) if w.lower() != "the" and not _opening_article(words, i)]


def _name_alike(held: str, said: str) -> bool:
    return norm(as_read(held)) == norm(as_read(said)) or _name_words(held) == _name_words(said)


def _aspect_alike(held: str, said: str) -> bool:
    """The same aspect as the rules read it alone: one name (`_name_alike`; the key folds the synonyms
    labels.py lists, "job" / "occupation", before a match by meaning is looked for). Two names sharing no
    word may be other words for one aspect ("birthday" / "date of birth") or two aspects ("birthday" /
    "anniversary", "doctor" / "dentist": issue 33's sixteenth probe): only a judging model tells them
    apart, so the rules keep both (a duplicate at worst)."""
    return not held or not said or _name_alike(held, said)


def _whose(subject: str) -> str:
    """A subject as `about_same` compares it: its form as read, a leading "my" aside ("my wife" / "wife":
    in the user's own memory, one person)."""
    words = subject_form(as_read(subject)).split()
    return " ".join(words[1:] if len(words) > 1 and words[0] == "my" else words)


def add_unique(have: list[str], extra: list[str]) -> list[str] | None:
    """`have` plus the entries of `extra` it lacks (compared normalised), or None when none is new."""
    seen = {norm(h) for h in have}
    new = [e for e in dict.fromkeys(extra) if norm(e) not in seen]
    return [*have, *new] if new else None


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _letter(value: Any) -> Any:
    """A field's value as `worded` compares it, lists in order, mappings by key."""
    if isinstance(value, str):
        return worded(value)
    if isinstance(value, list):
        return tuple(_letter(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _letter(v)) for k, v in value.items() if not _empty(v)))
    return value
