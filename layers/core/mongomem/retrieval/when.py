"""Dates an agent can read: every item of a context block says when it was said or stated, and a
relative date inside a turn ("yesterday", "last week", "in two weeks") is followed by the day it meant,
resolved against the turn's own date (the resolution rules of mongomem.dates)."""

from __future__ import annotations

import re
from datetime import date, datetime

from mongomem.contentcache import content_cache
from mongomem.dates import find_dates
from mongomem.models.common import as_utc

_MONTHS = "January February March April May June July August September October November December".split()
# Only a text holding one of these is searched for date phrases (most turns hold none).
_RELATIVE = re.compile(
    r"\b(?:yesterday|today|tomorrow|tonight|last|next|ago|weekend|this\s+(?:morning|afternoon|evening|past)|"
    r"in\s+(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+couple\s+of|a\s+few)\s+"
    r"(?:days?|weeks?|months?|years?))\b",
    re.IGNORECASE,
)


def day_text(when: date) -> str:
    """'8 May 2023'."""
    return f"{when.day} {_MONTHS[when.month - 1]} {when.year}"


def stamp(when: datetime) -> str:
    """'8 May 2023 13:56' (UTC)."""
    at = as_utc(when)
    return f"{day_text(at.date())} {at:%H:%M}"


def _iso_text(iso: str, precision: str) -> str:
    if precision == "year":
        return iso
    if precision == "month":
        year, month = iso.split("-")
        return f"{_MONTHS[int(month) - 1]} {year}"
    text = day_text(date.fromisoformat(iso))
    return f"around {text}" if precision == "approx" else text


RESOLVED_CHARS = 16_000


@content_cache(maxsize=8192)
def resolve_relative(text: str, said: date) -> str:
    """`text` with each relative date phrase followed by the date it means: "I went there yesterday
    [7 May 2023]". Phrases that name their year already are left as they are. Remembered for the
    texts seen last (a turn is rendered again in every block that recalls it), at most ten minutes and
    never past an erasure (`contentcache`). Phrases past the first `RESOLVED_CHARS` characters are left
    as they are: no block shows that much of one turn, and resolving is linear in the phrases (issue 33's
    twenty-seventh probe: a turn of 27,000 "3 days ago" held a context call)."""
    if len(text) > RESOLVED_CHARS:
        return resolve_relative(text[:RESOLVED_CHARS], said) + text[RESOLVED_CHARS:]
    if not _RELATIVE.search(text):
        return text
    out: list[str] = []
    pos = 0
    for mention in find_dates(text, said):
        if any(ch.isdigit() for ch in mention.text) and len(mention.iso) == 4 and mention.iso in mention.text:
            continue  # "in 2022" says it already
        if mention.iso[:4] in mention.text:
            continue
        out += [text[pos : mention.end], f" [{_iso_text(mention.iso, mention.precision)}]"]
        pos = mention.end
    return "".join([*out, text[pos:]]) if out else text
