"""Semantic facts: a labelled fact about the user or the world (subject, attribute, value)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from mongomem.kinds.base import Item, MemoryKind, norm
from mongomem.kinds.fields import DateText, Long, SafeKey, Short


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
        "Skip small talk and the assistant's own suggestions unless the user confirmed them."
    )

    def payload(self, item: Any) -> dict[str, Any]:
        data = super().payload(item)
        if data.get("cardinality") == "one":
            data.pop("cardinality")  # the default: stored payloads stay as they were
        return data

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
