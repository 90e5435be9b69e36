"""When two texts say the same thing: normalisation (`norm`, `exact`, `stated`), the anchors a change of
which changes a statement (`anchors`, `hard_anchors`: numbers, clock times, periods, the table's meanings,
names) and the comparisons every kind uses (`same_value`, `negates_by_prefix`).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from mongomem.kinds.meaning_table import MEANINGS

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
# What a rate is counted in, after the periods above are read: "once per shift", "twice a pallet".
_RATE = re.compile(
    r"\b(?:per|(?:once|twice|thrice|times)\s+(?:a|an|every|each))\s+(?!of\b)(?P<unit>[A-Za-z][A-Za-z'-]*)",
    re.IGNORECASE,
)
# "has to" is an obligation ("must"), "gets to" a permission ("allowed").
_MODAL_PHRASE = re.compile(r"\b(?:(?P<must>has|have|had)|(?P<may>gets?|got))\s+to\b", re.IGNORECASE)
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


def _raised_apart(text: str) -> str:
    """`text` with each superscript or subscript character set apart as the word it is: "Art. 14\u00b9"
    (article 14 superscript 1, inserted after article 14) is never "Art. 141" (issue 33's eighteenth
    probe); "m\u00b2" reads "m 2"."""
    return "".join(
        f" {ch} " if unicodedata.decomposition(ch).startswith(("<super>", "<sub>")) else ch for ch in text
    )


def _casefolded(text: str) -> str:
    """`text` case-folded, its sharp s kept as the letter it is ("Ma\u00dfe", dimensions, is not "Masse",
    mass; "Bu\u00dfe" a fine, "Busse" buses: issue 33's eighteenth probe), a capital sharp s read as it."""
    if "\u00df" not in text and "\u1e9e" not in text:
        return text.casefold()
    return "\u00df".join(part.casefold() for part in text.replace("\u1e9e", "\u00df").split("\u00df"))


def norm(text: str) -> str:
    """Case-, accent- and punctuation-insensitive form used for keys and equality. Every script is kept
    ("北京" is not "上海"); accents on Latin letters, invisible characters, symbols and punctuation go."""
    out: list[str] = []
    latin = False
    if not text.isascii():
        text = _raised_apart(text)
    for ch in unicodedata.normalize("NFKD", _casefolded(text)):
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
    if lower.startswith("n'") and len(lower) > 2:
        return ["not"]  # French "n'est", "n'a": the elided "ne" of a negation
    lower = lower.removesuffix("'s").replace("'", "")
    joined = MEANINGS.get(lower.replace("-", ""))
    if joined is not None:
        return [joined]
    if lower in _UNMARKED_NOT:
        return [m for m in (MEANINGS.get(_UNMARKED_NOT[lower]), "not") if m]  # "dont", "cant": "n't"
    period = _PERIOD_WORD.match(lower.replace("-", ""))
    if period is not None and (period["pre"] or period["ly"]):
        return [f"period>{period.group(0)}"]  # "semimonthly", "triweekly", "midyear": each its own
    if lower.endswith("less") and len(lower) >= 7 and lower not in _NOT_WITHOUT:
        return ["not"]  # "harmless" says "not harmful" (and "careless" "not careful")
    if "-" in lower:
        parts = [m for part in lower.split("-") if part and (m := MEANINGS.get(part))]
        return parts or None
    return None


# Negations written without their apostrophe ("dont", "doesnt", "cant"): the stem's meaning and "not".
_UNMARKED_NOT = {
    "dont": "do",
    "doesnt": "does",
    "didnt": "did",
    "isnt": "is",
    "arent": "are",
    "wasnt": "was",
    "werent": "were",
    "cant": "can",
    "couldnt": "could",
    "wont": "will",
    "wouldnt": "would",
    "shouldnt": "should",
    "mustnt": "must",
    "neednt": "need",
    "hasnt": "has",
    "havent": "have",
    "hadnt": "had",
    "shant": "shall",
}
# A period said in one word the table does not list: a prefix and a period ("semimonthly", "triweekly",
# "midyear", "half-yearly"): each such word is a meaning of its own, never a restatement of another.
_PERIOD_WORD = re.compile(
    r"^(?P<pre>semi|bi|tri|quadri|quad|mid|half|multi|every|per)?"
    r"(?:hour|dai|day|night|week|fortnight|month|quarter|year|annual|season|term|semester|decade)"
    r"(?P<ly>ly)?$"
)
# Words ending in "less" that say no "without": "unless", "regardless" ...
_NOT_WITHOUT = frozenset("nevertheless nonetheless regardless doubtless".split())


def anchors(text: str) -> frozenset[str]:
    """What must be equal for two texts to say the same thing: numbers (phone numbers, times, dates,
    versions, amounts, ids), the meanings of the table's words (how often, how many, when, whether:
    `MEANINGS`; a meaning said twice counts twice) and proper nouns."""
    text = _SIGN_WORD.sub(lambda m: "-" if MEANINGS[m["word"].lower()] == "minus" else "+", _visible(text))
    found: set[str] = set(_number_pairs(text))
    said: list[str] = []
    for m in _NUMBER.finditer(text):
        # "#3" (a number after "#": an id, a ticket, a dock) is the anchor as written
        found.add(_number(m.group("n"), m.group("sign")) if m.group("n") else m.group(0).lower())
        if m.group("cur"):
            said.append(_CURRENCY[m.group("cur")])  # "$500" is 500 dollars, "€500" 500 euros
    for m in _SYMBOL.finditer(text):
        if m.group("dollars"):
            said.append(_DOLLARS[m.group("dollars").lower()])
        elif m.group("cur"):
            said.append(_CURRENCY[m.group("cur")])  # a sign after its number: "50 €"
        else:
            said.append(_SYMBOLS[(m.group("deg") or m.group("sym") or m.group("half")).lower()])
    text = _SYMBOL.sub(" ", text)
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
    for m in _RATE.finditer(text):
        said.append(f"per>{norm(m['unit']).removesuffix('s')}")  # "once per shift" is not "once per pallet"
    for m in _MODAL_PHRASE.finditer(text):
        said.append("must" if m.group("must") else "allowed")
    text = _MODAL_PHRASE.sub(" ", text)
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
    r"(?:(?<![\w.,/:-])(?P<sign>[-\u2212\u2013\u2011\ufe63\uff0d+])|(?P<cur>[$€£¥₹₩₽₺₪₦฿₱₴]))?"
    r"(?P<n>(?<!\d)\.?\d[\w.:,/+-]*)|(?P<hash>#)\d[\w.:,/+-]*"
)
# A sign spelled out before a number (the table's words meaning "minus" or "plus"): "minus 18 degrees" is
# "-18 degrees", "plus 18" is "18". Not after a number: "5 minus 3" is a difference, not "-3".
_SIGN_WORD = re.compile(
    r"(?<![\d.,]\s)(?<![\w.,])(?P<word>"
    + "|".join(sorted((w for w, m in MEANINGS.items() if m in ("minus", "plus")), key=len, reverse=True))
    + r")\s+(?=\.?\d)",
    re.IGNORECASE,
)
_CURRENCY = {
    "$": "dollar",
    "€": "euro",
    "£": "pound",
    "¥": "yen",
    "₹": "rupee",
    "₩": "won",
    "₽": "ruble",
    "₺": "lira",
    "₪": "shekel",
    "₦": "naira",
    "฿": "baht",
    "₱": "peso",
    "₴": "hryvnia",
}
# Minus signs: the hyphen-minus, the minus sign, an en dash, a non-breaking, small or full-width hyphen.
_MINUS = "-\u2212\u2013\u2011\ufe63\uff0d"
# Dollars of other countries: "C$50" is not "A$50".
_DOLLARS = {"c": "cad", "a": "aud", "nz": "nzd", "hk": "hkd", "s": "sgd", "us": "dollar"}
# Symbols that say a unit or a bound, and the meaning each says ("5 °C", "<3", "50 ‰", "7 a.m.").
_SYMBOL = re.compile(
    r"°\s*(?P<deg>[CFK])\b|(?P<sym>[%‰‱<>≤≥])|(?<=\d)\s*(?P<half>[ap])\.?\s?m\b\.?"
    r"|\b(?P<dollars>C|A|NZ|HK|S|US)\$|(?P<cur>[$€£¥₹₩₽₺₪₦฿₱₴])(?!\s?[\d.])",
    re.IGNORECASE,
)
_SYMBOLS = {
    "c": "celsius",
    "f": "fahrenheit",
    "k": "kelvin",
    "%": "percent",
    "‰": "permille",
    "‱": "permyriad",
    "<": "below",
    "≤": "below",
    ">": "above",
    "≥": "above",
    "a": "am",
    "p": "pm",
}
_CLOCK = re.compile(
    r"\b(?:\d{1,2}|five|ten|twenty|twenty-five|quarter|half)\s+(?P<rel>to|till|past|after)\s+"
    r"(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|noon|midnight)\b",
    re.IGNORECASE,
)
# words a number is not said of ("3 of the", "5 per month")
_NOT_COUNTED = frozenset("and the per for of at in on to or a an by with from each every".split())


def _number(token: str, sign: str | None) -> str:
    plain = re.sub(r",(?=\d{3}(?!\d))", "", token.lower()).rstrip(".,:/+-")
    plain = re.sub(r",(?=\d{1,2}(?!\d))", ".", plain)  # a decimal comma: "2,5" is 2.5, not 25
    plain = re.sub(r"[^0-9a-z.:/]", "", plain)
    return f"-{plain}" if sign is not None and sign in _MINUS else plain


_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)


def _number_pairs(text: str) -> set[str]:
    """With two numbers or more, each number with the word it counts ("3 trucks and 5 vans" is not "5
    trucks and 3 vans"); one number alone needs no pair."""
    tokens = re.findall(r"\d[\w.:,/+-]*|[A-Za-z][A-Za-z'-]*", text)
    values = [t if t[0].isdigit() else MEANINGS.get(t.lower(), "") for t in tokens]
    numbers = {v for v in values if v[:1].isdigit()}
    if len(numbers) < 2:
        return _units(tokens, values)
    pairs: set[str] = set()
    for i, value in enumerate(values):
        if not value[:1].isdigit():
            continue
        if i and values[i - 1] in _MONTHS:  # "March 4 and May 3" is not "May 4 and March 3"
            pairs.add(f"{values[i - 1]} {_number(value, None)}")
        for token, after in zip(tokens[i + 1 : i + 4], values[i + 1 : i + 4], strict=False):
            if after[:1].isdigit():
                break
            word = token.lower()
            if word not in _NOT_COUNTED and len(word) > 2:
                pairs.add(f"{_number(value, None)}>{word.removesuffix('s')}")
                break
    return pairs


def _units(tokens: list[str], values: list[str]) -> set[str]:
    """One number with the word right after it, what it counts: "15 mph" is not "15 kph", "ten grand"
    not "ten m", "40 ppm" not "40 ppb" (issue 33's twenty-ninth probe: the table lists no unit a trade
    may use). A word of the table is an anchor of its own already ("500 dollars" is "$500")."""
    found: set[str] = set()
    for i, value in enumerate(values[:-1]):
        if not value[:1].isdigit():
            continue
        word = tokens[i + 1].lower().replace("\u2019", "'")
        if word[:1].isalpha() and word not in _NOT_COUNTED and not values[i + 1]:
            unit = word.removesuffix("'s").removesuffix("s") or word  # "3 trucks" counts trucks as "3 truck"
            found.add(f"{_number(value, None)}>{unit}")
    return found


# Prefixes that turn a word into its opposite ("unlocked", "invalid", "disagree", "nonstop").
_NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non", "non-", "ne")  # "ne": Czech, Slovak


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
    return frozenset(
        a for a in anchors(text) if re.search(r"\d", a) or ">" in a or a.split("#")[0] in _MEANING_NAMES
    )


def signs_and_money(text: str) -> frozenset[str]:
    """The negative numbers and the currencies a text says: what a canonical form that keeps only the
    digits ("-18" -> "18", "$50" -> "50") must not lose."""
    money = {*_CURRENCY.values(), *_DOLLARS.values()}
    return frozenset(a for a in anchors(text) if a.startswith("-") or a.split("#")[0] in money)


def content_words(text: str) -> set[str]:
    return {w for w in norm(text).split() if len(w) > 2}


def _unread(text: str) -> bool:
    """Whether the text holds letters of a script the table does not read (all but Latin)."""
    return any(ch.isalpha() and not ch.isascii() for ch in _visible(text))


_TIME_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december morning afternoon evening night".split()
)
# Words whose two sides say which is which: "the backup runs before the deploy" is not the reverse.
_SIDED = frozenset("before after than until instead rather above below".split())
# Words joining the items of a list, whose order says nothing.
_LISTED = frozenset("and or nor plus und oder et ou y o e".split())


def order_changed(old: str, new: str) -> bool:
    """Whether two texts say the same words in an order that changes what they say: two days, months or
    times of day or more in another order ("parents in May, in-laws in June" / "parents in June, in-laws
    in May"), the words around a sided word ("before", "than") swapped, or two or three words moved
    among their places with the rest in place (who hands what to whom, which amount goes with what)."""
    wa, wb = norm(old).split(), norm(new).split()
    ta = [MEANINGS.get(w) for w in wa if MEANINGS.get(w) in _TIME_WORDS]
    tb = [MEANINGS.get(w) for w in wb if MEANINGS.get(w) in _TIME_WORDS]
    if len(ta) >= 2 and sorted(map(str, ta)) == sorted(map(str, tb)) and ta != tb:
        return True
    ca, cb = [w for w in wa if len(w) > 2], [w for w in wb if len(w) > 2]
    if _SIDED & set(wa) and _SIDED & set(wb):
        return sorted(ca) == sorted(cb) and ca != cb
    # two or three words moved among their places, the rest in place: who does what to whom ("the
    # warehouse pays the carrier" / "the carrier pays the warehouse", "from gate A to gate B", "20 euros
    # per pallet and 50 per truck" / "50 ... and 20 ..."), every word read, however short; not the two
    # items of a list ("apples and pears" / "pears and apples")
    apart = [i for i, (x, y) in enumerate(zip(wa, wb, strict=False)) if x != y]
    if len(wa) != len(wb) or not 2 <= len(apart) <= 3 or sorted(wa) != sorted(wb):
        return False
    return not (len(apart) == 2 and apart[1] == apart[0] + 2 and wa[apart[0] + 1] in _LISTED)


# Words whose insertion changes no value: articles and words that stress or place in time what is said.
_FILLERS = frozenset("a an the also really very indeed actually now currently still".split())


def only_inserted(old: str, new: str) -> bool:
    """Whether one text is the other with words inserted (no word replaced, none moved) and one of them is
    not a filler: "not counted" for "counted" in a language the table does not read ("tidak", "nu") is
    the shape of most negations, and a word added to a statement is a qualifier ("the north dock")."""
    a, b = norm(old).split(), norm(new).split()
    short, long = (a, b) if len(a) < len(b) else (b, a)
    if len(short) == len(long):
        return False
    rest = iter(long)
    if not all(word in rest for word in short):  # `short` is a subsequence of `long`
        return False
    extra = list(long)
    for word in short:
        extra.remove(word)
    return any(not _read_by_anchors(word) for word in extra)


def _read_by_anchors(word: str) -> bool:
    """Whether inserting `word` changes nothing the anchors do not compare: a filler, a word of the table
    (its meaning is an anchor) or a currency's name ("$500" / "500 dollars")."""
    money = {*_CURRENCY.values(), *_DOLLARS.values()}
    return word in _FILLERS or _word_meanings(word) is not None or word.removesuffix("s") in money


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
    if anchors(old) != anchors(new) or negates_by_prefix(old, new) or order_changed(old, new):
        return False
    if only_inserted(old, new):
        return False
    wa, wb = content_words(old), content_words(new)
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= 0.6


def worded(text: str) -> str:
    """A text to the letter, as a restatement of shared memory must repeat it: every character of every
    script, its punctuation and its letter case count (a unit is said by case: "5 MW" is not "5 mW"; a
    host, an address, a file name or a range by its dots, dashes, underscores and commas: "pkg-acme.io"
    is not "pkg.acme.io", "Monday-Friday" is not "Monday, Friday"), and so do its line breaks and each
    line's indentation (a script or YAML corrected by its indentation is another value: issue 33's
    eighteenth probe), its tabs and its hyphens ("correct-horse-battery-staple" is not "correct horse
    battery staple", "Anne-Marie" not "Anne Marie": its nineteenth), except runs of spaces between words
    of a line, a closing full stop of a sentence (more than one word: "Bluebird7." is not "Bluebird7")
    and the capital of an opening word of three letters or more ("Post" / "post", but "Mm" is not "mm",
    nor "Mbar" "mbar": `_first_word_folded`)."""
    return _first_word_folded(_without_closing_stop(_spaced(text), sentence=True))


# Runs of spaces between two words of a line (a tab is said: a column of a table).
_SPACES = re.compile(r"[^\S\t\n]+")


def _spaced(text: str) -> str:
    """`text` (NFC) with each run of spaces between two words of a line read as one space (a tab is
    kept) and the spaces closing a line dropped; its lines (any line break reads as one), each line's indentation
    and the blank lines between lines kept as said. A text of one line loses its indentation, a text
    its blank opening and closing lines."""
    lines = unicodedata.normalize("NFC", text).splitlines()
    kept = []
    for line in lines:
        body = _SPACES.sub(" ", line.strip()).strip(" ")
        indent = line[: len(line) - len(line.lstrip())]
        kept.append(indent + body if body else "")
    while kept and not kept[0]:
        kept.pop(0)
    while kept and not kept[-1]:
        kept.pop()
    if len(kept) == 1:
        return kept[0].lstrip()
    return "\n".join(kept)


# What joins two letters of one word without making another name: a hyphen ("post-incident") and an
# apostrophe ("O'Brien"). A dot, a low line or a slash between letters is part of the name: "api.acme.com"
# and "api-acme.com" are two hosts, "j.smith" and "j_smith" two logins (issue 33's eighteenth probe).
_JOINING = frozenset("-\u2010\u2011'\u2019")


def name_marks(text: str) -> str:
    """What a name is spelled with besides its letters, digits and spaces, in order: symbols and
    punctuation ("C++" -> "++", ".NET" -> ".", "X!" -> "!", "api.acme" -> "."), except a hyphen or an
    apostrophe joining two letters of one word ("post-incident", "O'Brien"), and a closing full stop (it ends the sentence a name closes:
    "Dock fire drill." is "Dock fire drill"; "Acme Inc." is "Acme Inc"). The key (`norm`) folds them all
    away; two names of one key with other marks are two names."""
    said = _without_closing_stop(unicodedata.normalize("NFKC", text).strip())
    marks = []
    for i, ch in enumerate(said):
        if ch.isalnum() or ch.isspace():
            continue
        joins = 0 < i < len(said) - 1 and said[i - 1].isalpha() and said[i + 1].isalpha()
        if ch in _JOINING and joins:
            continue
        marks.append(ch)
    return "".join(marks)


def exact(text: str) -> str:
    """A text as compared when one user's statement backs another's proposal: every character counts
    (every script, symbols, invisible ones, letter case: "5 MW" is not "5 mW", line breaks and
    indentation) except runs of spaces between words, a closing full stop of a sentence and the case of
    an opening word as `worded` folds them ("Counted" / "counted", but "Mm" is not "mm")."""
    return _first_word_folded(_without_closing_stop(_spaced(text), sentence=True))


def _without_closing_stop(said: str, sentence: bool = False) -> str:
    """`said` without the full stop that closes its sentence: one ".", right after a letter, a digit, a
    closing bracket or quote, or the "#" / "+" / "%" closing a word ("C#.", "C++.", "40%."). "rm -rf .."
    keeps both dots and "rm -rf ." its one (a path, not a stop). With `sentence`, only a text of more than
    one word has a sentence to close: a value of one word keeps its dot (a password "Bluebird7.")."""
    if sentence and len(said.split()) < 2:
        return said
    if len(said) > 1 and said[-1] == "." and (said[-2].isalnum() or said[-2] in ")]}\"'\u2019\u201d#+%"):
        return said[:-1]
    return said


# An opening word whose capital is one of these SI prefixes is a unit said by case when a unit symbol
# follows it: M mega / m milli, P peta / p pico, Z zetta / z zepto, Y yotta / y yocto, R ronna / r ronto,
# Q quetta / q quecto ("Mbar" is 10^9 "mbar"). No other prefix letter has a prefix of the other case
# (k kilo: K is the kelvin; G giga: g is no prefix). The symbols are those written in lower case (a word
# whose symbol holds a capital, MHz or MWh, is never folded), a unit's name said in the plural too.
_CASED_PREFIX = re.compile(
    r"[MPZYRQ](?:(?:bar|rad|mol|kat|bit|cal|ohm)s?|bps|var|cd|lm|lx|sr|m|g|s|l|t|b)(?![^\W\d_])"
)
# Units whose capital says another unit: "Cal" (the food calorie) is 1000 "cal".
_CASED_UNITS = frozenset({"Cal"})


def _first_word_folded(said: str) -> str:
    """`said` with its opening word lower-cased when that word is a sentence's capital (a word of three
    letters or more, letters only, the rest lower case, and more words after it), never when case is
    what it says: a unit ("Mm", "MW", "Mbar", "Mg/l", "Cal"), an acronym ("LIS"), or a value of one word
    ("Sunflower42", "Settings.json", "Jsmith": a password, a file name, a login; issue 33's seventeenth
    probe)."""
    words = said.split()
    first = words[0] if words else ""
    letters = first.replace("-", "")  # a compound's hyphen: "Post-incident review"
    if len(first) < 3 or not letters.isalpha() or not letters[1:].islower() or len(words) < 2:
        return said
    if _CASED_PREFIX.match(first) or first.rstrip(".,;:") in _CASED_UNITS:
        return said
    return said[:1].lower() + said[1:]


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
