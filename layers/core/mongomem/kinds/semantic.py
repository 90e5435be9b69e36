"""Semantic facts: a labelled fact about the user or the world (subject, attribute, value)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from mongomem.kinds.base import Item, MemoryKind, norm
from mongomem.kinds.fields import DateText, Long, SafeKey, Short

# Attributes that record what the user asked, not what is true of them.
QUESTION_ATTRIBUTES = frozenset(
    norm(a)
    for a in (
        "question",
        "questions",
        "asked",
        "asks",
        "asked about",
        "asking about",
        "query",
        "request",
        "wants to know",
        "wanted to know",
        "inquiry",
        "enquiry",
        "current question",
        "last question",
    )
)


class SemanticItem(Item):
    """A labelled fact about the user or the world, self-contained."""

    subject: Short = Field(description="who or what the fact is about, e.g. 'user' or 'Acme Corp'")
    attribute: Short = Field(description="the property, e.g. 'home airport', 'favourite food'")
    value: Long = Field(description="the value, with relative dates resolved to absolute ones")
    cardinality: Literal["one", "many"] = Field(
        "one",
        description="'one' when the attribute holds one value at a time (a new value replaces the old, e.g. "
        "home airport), 'many' when it holds several at once (each value is its own fact, e.g. likes, "
        "languages, children)",
    )
    qualifiers: dict[SafeKey, Short] = Field(
        default_factory=dict, max_length=32, description="optional context, e.g. since"
    )
    valid_from: DateText | None = Field(None, description="ISO date from which the fact holds, if stated")


class Semantic(MemoryKind):
    name = "semantic"
    item = SemanticItem
    instructions = (
        "Extract FACTS only: labelled, self-contained facts about the user or the world (subject, attribute, "
        "value, optional qualifiers). Use subject 'user' for the user. Say for each fact whether the attribute "
        "holds one value at a time (cardinality 'one') or several (cardinality 'many'). Resolve relative dates "
        "('last Saturday', 'yesterday') to absolute ISO dates using the time of the turn that says them. "
        "Skip small talk."
    )

    def payload(self, item: Any) -> dict[str, Any]:
        data = super().payload(item)
        if data.get("cardinality") == "one":
            data.pop("cardinality")  # the default: stored payloads stay as they were
        return data

    def junk(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        found = super().junk(payload)
        if norm(payload["attribute"]) in QUESTION_ATTRIBUTES:
            found.append({"path": "attribute", "message": "the user's question is not a fact about them"})
        return found

    def meaningful(self, payload: dict[str, Any]) -> list[tuple[str, str, bool]]:
        # a subject or attribute may be a question word ("what to cook"); the value may not be a question
        return [
            ("subject", payload["subject"], False),
            ("attribute", payload["attribute"], False),
            ("value", payload["value"], True),
        ]

    def key(self, payload: dict[str, Any]) -> str:
        key = f"{norm(payload['subject'])}|{norm(payload['attribute'])}"
        # an attribute of many values: each value is its own memory, never an update of another
        return f"{key}|{norm(payload['value'])}" if payload.get("cardinality") == "many" else key

    def text(self, payload: dict[str, Any]) -> str:
        quals = "; ".join(f"{k}: {v}" for k, v in (payload.get("qualifiers") or {}).items())
        text = f"{payload['subject']} {payload['attribute']}: {payload['value']}"
        return f"{text} ({quals})" if quals else text

    def value(self, payload: dict[str, Any]) -> str:
        return str(payload["value"])
