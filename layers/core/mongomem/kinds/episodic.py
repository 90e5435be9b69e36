"""Episodes: events that happened (what, when, who took part, where)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from mongomem.kinds.base import Item, MemoryKind, add_unique
from mongomem.kinds.fields import DateText, Long, Short
from mongomem.kinds.meaning import norm


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
    named = ("title",)
    instructions = (
        "Extract EPISODES only: events that happened (title, short summary, participants, when as an ISO date "
        "or datetime resolved against the time of the turn that tells it, place when known, a few short topic tags)."
    )

    def key(self, payload: dict[str, Any]) -> str:
        return f"{norm(payload['title'])}|{(payload.get('occurred_at') or '')[:10]}"

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

    def same_content(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        return True  # the key already holds the title and the day: a retelling adds, never replaces

    def merged(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
        grown = {
            name: added
            for name in ("participants", "tags")
            if (added := add_unique(list(old.get(name) or []), list(new.get(name) or []))) is not None
        }
        return {**old, **grown} if grown else None
