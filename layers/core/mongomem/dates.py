"""Date expressions in a sentence, resolved against the day the sentence was said.

Regular expressions find the phrases ("yesterday", "last Friday", "in two weeks", "next month",
"on the 3rd", "May 3", "in 2022"); python-dateutil does the calendar arithmetic (`relativedelta`)
and knows the month and weekday names. A phrase resolves to an ISO date, or to a shorter ISO form
(`2026-10`, `2022`) when that is all it says; nothing is invented.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from dateutil.parser import parserinfo
from dateutil.relativedelta import SA, relativedelta, weekdays

_CALENDAR = parserinfo()
MONTH_WORDS = frozenset(name.lower() for names in _CALENDAR.MONTHS for name in names)  # "sept", "may"
WEEKDAY_WORDS = frozenset(names[-1].lower() for names in _CALENDAR.WEEKDAYS)  # full names only

NUMBER_WORDS = {
    **{
        w: n
        for n, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), 1)
    },
    **{"a": 1, "an": 1, "a couple of": 2, "couple of": 2},
}


@dataclass(frozen=True)
class DateMention:
    start: int
    end: int
    iso: str
    precision: str  # "day" | "approx" (a day, give or take) | "month" | "year"
    text: str
    month_guessed: bool = False  # "on the 3rd": the month is the nearest one with that day

    def phrase(self, preceded_by_preposition: bool) -> str:
        if self.precision == "approx":
            return f"around {self.iso}"
        if preceded_by_preposition:
            return self.iso
        return f"on {self.iso}" if self.precision == "day" else f"in {self.iso}"


Resolution = tuple[date, str] | None  # (the day, or the first day of the month or year; precision)
_Resolver = Callable[[re.Match[str], date, bool | None], Resolution]


def _iso(d: date, precision: str) -> str:
    if precision == "year":
        return f"{d.year:04d}"
    return f"{d.year:04d}-{d.month:02d}" if precision == "month" else d.isoformat()


def _shift(precision: str, **delta: int) -> _Resolver:
    """A fixed distance from the reference day ("yesterday", "next month", "last year")."""
    return lambda m, ref, past: (ref + relativedelta(**delta), precision)


def _weekday(direction: int) -> _Resolver:
    """'last Friday' (-1) and 'next Friday' (+1) exclude today; 'on/this Friday' (0) includes it
    and looks back or ahead as the sentence's tense says."""

    def resolve(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
        wd = weekdays[int(_CALENDAR.weekday(m.group("wd")))]
        if direction:
            return ref + relativedelta(days=direction, weekday=wd(direction)), "day"
        return ref + relativedelta(weekday=wd(-1 if past else 1)), "day"

    return resolve


def _weekend(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
    # "last weekend" said during a weekend means the one before; its Saturday stands for it
    last = "last" in m.group(0).lower() and ref.weekday() >= 5
    return ref + relativedelta(weekday=SA(-2 if last else -1)), "day"


_UNIT_PRECISION = {"day": "day", "week": "approx", "month": "month", "year": "year"}


def _count(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
    """'3 days ago', 'in two weeks', 'a couple of months ago'."""
    word = re.sub(r"\s+", " ", m.group("n")).lower()
    n = int(word) if word.isdigit() else NUMBER_WORDS.get(word, 0)
    if not 0 < n < 1000:
        return None
    unit = m.group("unit").lower().rstrip("s")
    sign = -1 if m.group(0).lower().rstrip().endswith("ago") else 1
    return ref + relativedelta(**{f"{unit}s": sign * n}), _UNIT_PRECISION[unit]


def _rolled_year(ref: date, month: int, day: int, past: bool | None) -> int:
    """The year of a month and day said without one: the nearest in the tense's direction."""
    if past is True and (month, day) > (ref.month, ref.day):
        return ref.year - 1
    if past is False and (month, day) < (ref.month, ref.day):
        return ref.year + 1
    return ref.year


def _month_day(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
    """'May 3', '3rd of May 2024'."""
    month, day = int(_CALENDAR.month(m.group("mon"))), int(m.group("d"))
    if m.group("y"):
        return date(int(m.group("y")), month, day), "day"
    year = _rolled_year(ref, month, day, past)
    while (month, day) == (2, 29) and not calendar.isleap(year):  # the nearest year that has one
        year += -1 if past else 1
    return date(year, month, day), "day"


def _day_of_month(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
    """'on the 3rd': that day of this month, or of the month before (past) or after (otherwise)."""
    day = int(m.group("d"))
    d = ref + relativedelta(day=day)
    if (d > ref) if past else (d < ref):
        d = ref + relativedelta(months=-1 if past else 1, day=day)
    return (d, "day") if d.day == day else None  # "the 31st" of a 30-day month is not a date


def _in_month(m: re.Match[str], ref: date, past: bool | None) -> Resolution:
    """'in March', 'since March 2021'; 'last March' is the latest March before this month."""
    month, year = int(_CALENDAR.month(m.group("mon"))), m.groupdict().get("y")
    if year:
        return date(int(year), month, 1), "month"
    if m.group(0).lower().startswith("last"):
        return date(ref.year if month < ref.month else ref.year - 1, month, 1), "month"
    return date(_rolled_year(ref, month, ref.day, past), month, 1), "month"


_WD = "|".join(sorted(WEEKDAY_WORDS))
_MON = "(?P<mon>" + "|".join(sorted((w.capitalize() for w in MONTH_WORDS), key=len, reverse=True)) + ")"
_NUM = r"(?P<n>\d{1,3}|" + "|".join(w.replace(" ", r"\s+") for w in sorted(NUMBER_WORDS, key=len)[::-1]) + ")"
_PART = r"(?:\s+(?:morning|afternoon|evening|night))?"

# Order matters: longer, more specific phrases first; overlapping later matches are dropped.
_RULES: list[tuple[str, _Resolver]] = [
    (r"\b(?i:the\s+day\s+before\s+yesterday)\b", _shift("day", days=-2)),
    (r"\b(?i:the\s+day\s+after\s+tomorrow)\b", _shift("day", days=2)),
    (rf"\b(?i:yesterday{_PART}|last\s+night)\b", _shift("day", days=-1)),
    (rf"\b(?i:tomorrow{_PART})\b", _shift("day", days=1)),
    (r"\b(?i:(?:earlier\s+|later\s+)?today|this\s+(?:morning|afternoon|evening)|tonight)\b", _shift("day")),
    (rf"\b(?i:last\s+(?P<wd>{_WD}){_PART})\b", _weekday(-1)),
    (rf"\b(?i:next\s+(?P<wd>{_WD}){_PART})\b", _weekday(1)),
    (rf"\b(?i:(?:on\s+|this\s+|this\s+past\s+)(?P<wd>{_WD}){_PART})\b", _weekday(0)),
    (r"\b(?i:last\s+weekend|over\s+the\s+weekend|this\s+past\s+weekend)\b", _weekend),
    (r"\b(?i:last\s+week)\b", _shift("approx", weeks=-1)),
    (r"\b(?i:next\s+week)\b", _shift("approx", weeks=1)),
    (r"\b(?i:last\s+month)\b", _shift("month", months=-1)),
    (r"\b(?i:next\s+month)\b", _shift("month", months=1)),
    (r"\b(?i:last\s+year)\b", _shift("year", years=-1)),
    (r"\b(?i:next\s+year)\b", _shift("year", years=1)),
    (rf"\b(?i:{_NUM}\s+(?P<unit>days?|weeks?|months?|years?)\s+ago)\b", _count),
    (rf"\b(?i:in\s+{_NUM}\s+(?P<unit>days?|weeks?|months?|years?))\b", _count),
    (r"\b\d{4}-\d{2}-\d{2}\b", lambda m, ref, past: (date.fromisoformat(m.group(0)), "day")),
    (rf"\b(?:(?i:on)\s+)?{_MON}\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>\d{{4}}))?", _month_day),
    (
        rf"\b(?:(?i:on)\s+)?(?:(?i:the)\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:(?i:of)\s+)?{_MON}\b"
        r"(?:,?\s+(?P<y>\d{4}))?",
        _month_day,
    ),
    # "on the 3rd", but not "on the 3rd floor"
    (
        r"\b(?i:on\s+the)\s+(?P<d>[1-9]|[12]\d|3[01])(?i:st|nd|rd|th)\b"
        r"(?!\s+(?!(?i:at|and|or|when|with|for|because|so|but|in|to|we|I)\b)[A-Za-z])",
        _day_of_month,
    ),
    (rf"\b(?i:last)\s+{_MON}\b", _in_month),
    (rf"\b(?i:in|since|during)\s+(?:(?i:early|late|mid)\s+)?{_MON}\b(?:\s+(?P<y>\d{{4}}))?", _in_month),
    (
        r"\b(?i:in|since|during|back\s+in)\s+(?P<y>(?:19|20)\d{2})\b",
        lambda m, r, p: (date(int(m["y"]), 1, 1), "year"),
    ),
]
DATE_RULES = [(re.compile(pattern), resolve) for pattern, resolve in _RULES]

_PAST_HINT = re.compile(
    r"\b(?:was|were|went|had|did|got|made|took|saw|met|flew|drove|ran|spent|ago|last|yesterday|[a-z]{2,}ed)\b",
    re.IGNORECASE,
)


def tense(sentence: str) -> bool | None:
    """True when the sentence speaks of the past; None when it does not say."""
    return True if _PAST_HINT.search(sentence) else None


def find_dates(text: str, ref: date, past: bool | None = None) -> list[DateMention]:
    """Date phrases in `text` resolved against the day `ref`, in order, without overlaps.
    `past` is the tense of the sentence (True: past events); None guesses it from `text`."""
    past = tense(text) if past is None else past
    found: list[DateMention] = []
    # the characters a found date holds: a match over any of them is skipped, in time linear in the text
    # (comparing each match with every date found was quadratic: 12,000 "yesterday"s took 6 s, issue 33's
    # twenty-seventh probe)
    taken = bytearray(len(text))
    for pattern, resolve in DATE_RULES:
        for m in pattern.finditer(text):
            if taken.find(1, m.start(), m.end()) >= 0:
                continue
            try:
                res = resolve(m, ref, past)
            except (ValueError, OverflowError):
                res = None  # no such day ("February 30"), or beyond the calendar
            if res is not None:
                iso, guessed = _iso(*res), resolve is _day_of_month
                found.append(DateMention(m.start(), m.end(), iso, res[1], m.group(0), guessed))
                taken[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
    return sorted(found, key=lambda d: d.start)


_PREP_BEFORE = re.compile(r"\b(?i:on|in|since|until|till|by|from|before|after|at|during|around)\s*$")


def replace_dates(text: str, mentions: list[DateMention]) -> str:
    """`text` with each date phrase replaced by its resolved ISO form."""
    out: list[str] = []
    pos = 0
    for d in mentions:
        before, lead = text[pos : d.start], d.text.split()[0]
        own_prep = lead.lower() in {"on", "in", "since", "during"}
        if own_prep and d.precision != "approx":
            phrase = f"{lead} {d.iso}"
        else:
            phrase = d.phrase(own_prep or bool(_PREP_BEFORE.search(before)))
        out += [before, phrase]
        pos = d.end
    return "".join([*out, text[pos:]])


def month_day_text(iso_day: str) -> str:
    """'2026-11-30' -> 'November 30' (a birthday has no year)."""
    d = date.fromisoformat(iso_day)
    return f"{_CALENDAR.MONTHS[d.month - 1][-1]} {d.day}"
