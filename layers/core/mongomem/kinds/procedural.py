"""Procedures: reusable ways of doing something the conversation demonstrated or agreed on."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from mongomem.kinds.base import Item, MemoryKind, add_unique, said_alike
from mongomem.kinds.fields import Long, Short
from mongomem.kinds.meaning import norm, same_value


class ProcedureStep(BaseModel):
    """One step with the output it should give (a step may also be plain text: older procedures)."""

    model_config = ConfigDict(extra="forbid")

    action: Long
    expected_output: Long | None = None


class ProceduralItem(Item):
    """A reusable procedure the conversation demonstrated."""

    name: Short
    when_to_use: Long
    steps: list[Long | ProcedureStep] = Field(min_length=1, max_length=100)
    description: Long | None = Field(None, description="what the procedure achieves, in a sentence")
    trigger_conditions: list[Long] = Field(
        default_factory=list, max_length=20, description="situations that call for it"
    )
    allowed_tools: list[Short] = Field(default_factory=list, max_length=50, description="tools it may use")
    tags: list[Short] = Field(default_factory=list, max_length=20)


def step_text(step: Any) -> str:
    """A step as text: plain text, or the action with its expected output."""
    if isinstance(step, dict):
        expected = step.get("expected_output")
        return f"{step['action']} (expect: {expected})" if expected else str(step["action"])
    return str(step)


def step_action(step: Any) -> str:
    return str(step["action"]) if isinstance(step, dict) else str(step)


def _expected(step: Any) -> Any:
    return step.get("expected_output") if isinstance(step, dict) else None


class Procedural(MemoryKind):
    name = "procedural"
    item = ProceduralItem
    visibility = "org"
    roles = ("user", "assistant", "tool")  # tool calls and results show how a task is done
    unordered = frozenset({"trigger_conditions", "allowed_tools", "tags"})
    # a tool grant is given whole: another set is the next version, never one more label (the owner takes
    # back what they granted: issue 33's twentieth probe)
    whole = frozenset({"trigger_conditions", "allowed_tools"})
    named = ("name",)
    grants = ("allowed_tools",)  # a SKILL.md's allowed-tools pre-approves them
    instructions = (
        "Extract PROCEDURES only: reusable procedures the conversation demonstrated or agreed on (name, when to "
        "use it, a one-sentence description, trigger conditions, ordered steps - each step as text or as "
        "{action, expected_output} -, the tools it uses, a few tags). Skip one-off answers that are not reusable."
    )

    def meaningful(self, payload: dict[str, Any]) -> list[tuple[str, str, bool]]:
        found = [("name", payload["name"], True), ("when_to_use", payload["when_to_use"], True)]
        return found + [(f"steps.{i}", step_action(s), True) for i, s in enumerate(payload["steps"])]

    def key(self, payload: dict[str, Any]) -> str:
        return norm(payload["name"])

    def text(self, payload: dict[str, Any]) -> str:
        steps = " ".join(f"{i}. {step_text(s)}" for i, s in enumerate(payload["steps"], 1))
        head = f"{payload['name']}: {payload['when_to_use']}"
        if payload.get("description"):
            head = f"{head} {payload['description']}"
        return f"{head} Steps: {steps}"

    def value(self, payload: dict[str, Any]) -> str:
        return " | ".join(step_action(s) for s in payload["steps"])

    def same_content(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        """The same steps in the same order, each saying the same thing and expecting the same output
        where both say one, for the same situation (`when_to_use`: "when the pump is not flooded" is
        another procedure's situation), described alike where both describe it."""
        a, b = [step_action(s) for s in old["steps"]], [step_action(s) for s in new["steps"]]
        if len(a) != len(b) or not all(same_value(x, y) for x, y in zip(a, b, strict=True)):
            return False
        outputs = zip(map(_expected, old["steps"]), map(_expected, new["steps"]), strict=True)
        return all(said_alike(old.get(f), new.get(f)) for f in ("when_to_use", "description")) and all(
            said_alike(x, y) for x, y in outputs
        )

    def merged(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any] | None:
        out = dict(old)
        for name in ("trigger_conditions", "allowed_tools", "tags"):
            grown = add_unique(list(old.get(name) or []), list(new.get(name) or []))
            if grown is not None:
                out[name] = grown
        if not old.get("description") and new.get("description"):
            out["description"] = new["description"]
        out = self.capped(out, old)
        return out if out != old else None
