"""Preferences: what the user likes, wants, and how they want to be answered."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from mongomem.kinds.base import Item, MemoryKind
from mongomem.kinds.fields import Short
from mongomem.kinds.meaning import norm, worded

Polarity = Literal["positive", "negative"]
Strength = Literal["mild", "moderate", "strong"]


class PreferenceItem(Item):
    """A preference of the user: about what, of which kind, what they prefer, how strongly, for or against."""

    subject: Short = Field("user", description="whose preference it is, usually 'user'")
    category: Short = Field(
        description="what it is about, e.g. 'travel', 'food', 'communication', 'answer language', 'format'"
    )
    preference: Short = Field(description="what is liked or disliked, e.g. 'window seats', 'Portuguese'")
    polarity: Polarity = Field("positive", description="positive: likes or wants it; negative: dislikes it")
    strength: Strength = Field("moderate", description="mild (like), moderate (prefer), strong (love, hate)")


class Preference(MemoryKind):
    name = "preference"
    # the key's fields: who, what about, and the preference itself (a look-alike of them names the same)
    named = ("subject", "category", "preference")
    aspects = ("category",)
    item = PreferenceItem
    instructions = (
        "Extract PREFERENCES only: what the user likes, dislikes or wants, and how they want to be answered "
        "(subject 'user', a category such as travel, food, communication or answer language, the preference "
        "itself, polarity positive or negative, strength mild, moderate or strong). Skip facts that are not "
        "preferences and one-off requests for this conversation."
    )

    def meaningful(self, payload: dict[str, Any]) -> list[tuple[str, str, bool]]:
        return [("category", payload["category"], False), ("preference", payload["preference"], True)]

    def subject(self, payload: dict[str, Any]) -> str | None:
        return str(payload.get("subject") or "user")

    def with_subject(self, payload: dict[str, Any], subject: str, alias: str | None = None) -> dict[str, Any]:
        return {**payload, "subject": subject}

    def key(self, payload: dict[str, Any]) -> str:
        subject = payload.get("subject") or "user"  # the item's default, for a payload not validated yet
        return f"{norm(subject)}|{norm(payload['category'])}|{norm(payload['preference'])}"

    def text(self, payload: dict[str, Any]) -> str:
        verb = {
            ("positive", "mild"): "likes",
            ("positive", "moderate"): "prefers",
            ("positive", "strong"): "loves",
            ("negative", "mild"): "is not keen on",
            ("negative", "moderate"): "dislikes",
            ("negative", "strong"): "hates",
        }[(payload.get("polarity", "positive"), payload.get("strength", "moderate"))]
        return f"{payload.get('subject') or 'user'} {verb} {payload['preference']} ({payload['category']})"

    def value(self, payload: dict[str, Any]) -> str:
        return f"{payload.get('polarity', 'positive')} {payload.get('strength', 'moderate')}"

    def same_content(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        # the key holds what is preferred: a turn of polarity or strength is a change, anything else a restatement
        return self.value(old) == self.value(new)

    def restates(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        # what is preferred is part of the name (the key): found by meaning, it is restated to the letter
        return super().restates(old, new) and worded(old["preference"]) == worded(new["preference"])
