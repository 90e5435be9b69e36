"""Episodes: events that happened (what, when, who took part, where)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from pydantic import Field

from mongomem.kinds.base import Item, MemoryKind, add_unique, said_alike
from mongomem.kinds.fields import DateText, Long, Short
from mongomem.kinds.meaning import hard_anchors, negates_by_prefix, norm, only_inserted
from mongomem.models.common import ascii_digits

_EXTENDED_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_WEEK = re.compile(r"(\d{4})-?W(\d{2})")


def day_of(when: str) -> str:
    """The part of an episode's key that says when: the calendar day in the extended form, whatever
    ISO 8601 form names it ("20260302" and "2026-W10-1" are "2026-03-02"), so the day a retelling spells
    otherwise is the same episode; a week alone as "2026-W10"; a year or a month as written, its digits
    of any script read by value (an episode stored before dates were read so)."""
    text = ascii_digits(when.strip())
    if _EXTENDED_DAY.match(text):
        return text[:10]  # the key stored episodes already hold: the day as written, never moved to UTC
    week = _WEEK.fullmatch(text)
    if week:  # Python reads a week alone as its Monday: a week is no day
        return f"{week.group(1)}-W{week.group(2)}"
    try:
        return datetime.fromisoformat(text).date().isoformat()  # the day of the writer's clock, as above
    except ValueError:
        return text[:10]  # no ISO 8601 day (a year, a month): keyed as before


def _time_of(when: Any) -> datetime | None:
    """The moment an episode's `occurred_at` names when it gives a time of day (None for a day alone)."""
    text = ascii_digits(str(when or "").strip())
    if len(text) <= 10:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is None else moment.astimezone(UTC).replace(tzinfo=None)


class EpisodicItem(Item):
    """An event: what happened, when, who took part, where."""

    title: Short
    summary: Long
    participants: list[Short] = Field(default_factory=list, max_length=50)
    occurred_at: DateText | None = Field(
        None, description="ISO date or datetime, resolved against the time of the turn that tells it"
    )
    place: Short | None = None
    tags: list[Short] = Field(default_factory=list, max_length=20, description="short topic labels")


class Episodic(MemoryKind):
    name = "episodic"
    item = EpisodicItem
    unordered = frozenset({"participants", "tags"})
    replaced = frozenset({"participants"})
    named = ("title",)
    instructions = (
        "Extract EPISODES only: events that happened (title, short summary, participants, when as an ISO date "
        "or datetime resolved against the time of the turn that tells it, place when known, a few short topic tags)."
    )

    def key(self, payload: dict[str, Any]) -> str:
        return f"{norm(payload['title'])}|{day_of(payload.get('occurred_at') or '')}"

    def text(self, payload: dict[str, Any]) -> str:
        extras = [
            p
            for p in (
                payload.get("occurred_at"),
                payload.get("place"),
                ", ".join(payload.get("participants") or []),
            )
            if p
        ]
        text = f"{payload['title']}. {payload['summary']}"
        return f"{text} ({'; '.join(extras)})" if extras else text

    def keyed_apart(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """Two episodes of one title on one day at two times of day both give are two episodes (a client
        call at 9:00 and another at 15:00: issue 33's sixteenth probe), never one taken for the other's
        correction; a time said wrong and said again is a second episode at worst, never a loss."""
        times = _time_of(old.get("occurred_at")), _time_of(new.get("occurred_at"))
        return None not in times and times[0] != times[1]

    def same_name(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        return super().same_name(old, new) and not self.keyed_apart(old, new)

    def same_content(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """A retelling of the episode (the key holds its title and day): it adds, never replaces, unless
        it changes what the summary says (a number, a negation: `hard_anchors`, a word inserted that no
        anchor reads), the time of day both give, or the place both give."""
        held, said = str(old.get("summary") or ""), str(new.get("summary") or "")
        if (
            hard_anchors(held) != hard_anchors(said)
            or negates_by_prefix(held, said)
            or only_inserted(held, said)
        ):
            return False
        times = _time_of(old.get("occurred_at")), _time_of(new.get("occurred_at"))
        if None not in times and times[0] != times[1]:
            return False
        return said_alike(old.get("place"), new.get("place"))

    def merged(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
        grown = {
            name: added
            for name in ("participants", "tags")
            if (added := add_unique(list(old.get(name) or []), list(new.get(name) or []))) is not None
        }
        out = self.capped({**old, **grown}, old)
        return out if grown and out != old else None
