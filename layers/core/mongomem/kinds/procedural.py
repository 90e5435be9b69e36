"""Procedures: reusable ways of doing something the conversation demonstrated or agreed on."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from mongomem.kinds.base import Item, MemoryKind, norm, same_value
from mongomem.kinds.fields import Long, Short


class ProceduralItem(Item):
    """A reusable procedure the conversation demonstrated."""

    name: Short
    when_to_use: Long
    steps: list[Long] = Field(min_length=1, max_length=100)


class Procedural(MemoryKind):
    name = "procedural"
    item = ProceduralItem
    visibility = "org"
    roles = ("user", "assistant", "tool")  # tool calls and results show how a task is done
    instructions = (
        "Extract PROCEDURES only: reusable procedures the conversation demonstrated or agreed on (name, when to "
        "use it, ordered steps). Skip one-off answers that are not reusable."
    )

    def key(self, payload: dict[str, Any]) -> str:
        return norm(payload["name"])

    def text(self, payload: dict[str, Any]) -> str:
        steps = " ".join(f"{i}. {s}" for i, s in enumerate(payload["steps"], 1))
        return f"{payload['name']}: {payload['when_to_use']} Steps: {steps}"

    def value(self, payload: dict[str, Any]) -> str:
        return " | ".join(payload["steps"])

    def same_content(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        # the same steps in the same order, each saying the same thing
        a, b = list(old["steps"]), list(new["steps"])
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
