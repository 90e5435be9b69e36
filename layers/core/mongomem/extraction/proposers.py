"""The LLM proposer: an LLM asked for one kind of knowledge (the offline rules' proposer is
mongomem.offline.rules.RulesProposer)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

from mongomem.errors import ExtractionFailed
from mongomem.extraction import prompts
from mongomem.extraction.answers import NoJSON, first_json, items_of
from mongomem.extraction.proposal import Proposal, TurnView
from mongomem.kinds import KindRegistry, MemoryKind
from mongomem.kinds.base import MAX_ANSWER_LIST
from mongomem.ports import LLMAnswerError, LLMProvider, LLMRequest

# Items one answer may hold. A grammar-held small model that starts repeating itself ("the same fact, the
# next turn's seq") fills any budget; a bounded list ends the loop within the output budget. A snapshot
# rarely holds more distinct memories of one kind (a longer one is cut into several snapshots).
MAX_ANSWER_ITEMS = 20
# Turns one item may cite: a small model asked for its evidence lists every seq of the snapshot unless the
# grammar stops it; an item is stated by a turn and at most the two before it (extraction.grounding).
MAX_CITED = 3
# Output budget of one extraction call, and the larger one a cut-off answer is asked again with.
MAX_TOKENS = 2048
MAX_TOKENS_RETRY = 8192


def answer_schema(kind: MemoryKind) -> dict[str, Any]:
    """The JSON Schema of a kind's answer: {"items": [<the kind's item>, ...]} (what a grammar-capable
    server holds the model to, and what a tool's input schema says). The item's `$defs` (a nested model:
    a procedure's steps) move to the root, where its `#/$defs/...` references resolve."""
    item = cited_last(compact(kind.item_schema()))
    defs = item.pop("$defs", None)
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": item, "maxItems": MAX_ANSWER_ITEMS}},
        "required": ["items"],
    }
    if defs:
        schema["$defs"] = defs
    return schema


def cited_last(item: dict[str, Any]) -> dict[str, Any]:
    """An item schema whose evidence_seqs is required, 1 to MAX_CITED seqs, and last: a model held to the
    schema by a grammar writes the properties in order, so it says the memory, then names the turns that
    state it. (First, as until issue 31's second measurement, made a small model walk the turns by
    position, [1, 2], [3], [4] ..., and write beside each citation an item another turn states, which
    grounding then refused: docs/providers.md "How small a model is worth running".)"""
    props = dict(item.get("properties") or {})
    cite = dict(props.pop("evidence_seqs", {"type": "array", "items": {"type": "integer"}}))
    cite["minItems"] = 1
    cite["maxItems"] = MAX_CITED  # the turns that state it, not every turn of the snapshot
    required = [r for r in item.get("required") or [] if r != "evidence_seqs"]
    return {**item, "properties": {**props, "evidence_seqs": cite}, "required": [*required, "evidence_seqs"]}


# What a tool's schema leaves out: a tool's input is not decoded against a grammar (Bedrock, OpenAI with
# strict off), so lengths and defaults only cost tokens, and the descriptions are in the kind's own part.
_TOOL_NOISE = frozenset(
    {"maxLength", "minLength", "maxItems", "minItems", "maxProperties", "default", "description"}
)


def tool_schema(schema: Any) -> Any:
    """An answer schema as a tool offered beside the other kinds' tools: field names, types, enums and
    what is required (every kind's tool is sent with every call, so each token counts five times)."""
    if isinstance(schema, dict):
        return {
            k: tool_schema(v)
            if k not in ("properties", "$defs")
            else {n: tool_schema(p) for n, p in v.items()}
            for k, v in schema.items()
            if k not in _TOOL_NOISE
        }
    if isinstance(schema, list):
        return [tool_schema(v) for v in schema]
    return schema


def tool_name(kind: str) -> str:
    return f"{kind}_memories"


def compact(schema: Any) -> Any:
    """A JSON Schema without pydantic's titles (tokens that tell the model nothing)."""
    if isinstance(schema, dict):
        return {
            k: compact(v) if k not in ("properties", "$defs") else {n: compact(p) for n, p in v.items()}
            for k, v in schema.items()
            if k != "title"
        }
    if isinstance(schema, list):
        return [compact(v) for v in schema]
    return schema


def example_answer(schema: dict[str, Any]) -> str:
    """One example answer for plain JSON mode: every field of an item, its value a placeholder naming it
    (never a plausible value: a weak model copies an example as if it were a fact)."""
    item = schema.get("properties", {}).get("items", {}).get("items", {})
    example: dict[str, Any] = {}
    for name, spec in (item.get("properties") or {}).items():
        example[name] = _placeholder(name, spec)
    return json.dumps({"items": [example]}, ensure_ascii=False)


def _placeholder(name: str, spec: dict[str, Any]) -> Any:
    if "enum" in spec:
        return spec["enum"][0]
    options = [s for s in spec.get("anyOf") or [] if s.get("type") != "null"]
    if options:
        return _placeholder(name, options[0])
    kind = spec.get("type")
    if kind == "array":
        inner = spec.get("items") or {}
        return [1] if inner.get("type") == "integer" else [f"<{name}>"]
    if kind == "object":
        return {}
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    return f"<{name}>"


class AnswerInvalid(ValueError):
    """An answer that is not an items list (no JSON in it, or JSON of another shape)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class RuleItems(Protocol):
    """The offline rules' items of one kind (mongomem.offline.rules.OfflineProposer)."""

    def propose(self, kind: str, turns: Sequence[TurnView], user_id: str) -> list[dict[str, Any]]: ...


class LLMProposer:
    def __init__(
        self, llm: LLMProvider, kinds: KindRegistry | None = None, rules: RuleItems | None = None
    ) -> None:
        self.llm = llm
        self.name = str(getattr(llm, "name", "llm"))
        self.kinds = kinds  # the registry siblings are looked up in (the answer tools a call offers)
        self.rules = rules  # memory.extraction.with_rules: their items proposed beside the model's

    def request(
        self,
        kind: MemoryKind,
        turns: Sequence[TurnView],
        deadline: float | None = None,
        *,
        instructions: str | None = None,
        siblings: Sequence[str] = (),
    ) -> LLMRequest:
        """The kind's call: the shared instructions and transcript, then its own part and answer schema."""
        schema = answer_schema(kind)
        tools = {}
        for name in siblings:
            other = kind if name == kind.name else self.kinds.get(name) if self.kinds else None
            if other is not None:
                tools[tool_name(name)] = tool_schema(answer_schema(other))
        return LLMRequest(
            task=kind.name,
            system=prompts.COMMON,
            shared=prompts.shared(turns),
            prompt=prompts.kind_part(kind.name, instructions or kind.instructions, kind.item_schema()),
            schema=schema,
            schema_name=tool_name(kind.name),
            siblings=tools if kind.name in siblings else {},
            example=example_answer(schema),
            max_tokens=MAX_TOKENS,
            deadline=deadline,
        )

    def propose(
        self,
        kind: MemoryKind,
        turns: Sequence[TurnView],
        user_id: str,
        deadline: float | None = None,
        *,
        instructions: str | None = None,
        siblings: Sequence[str] = (),
    ) -> Proposal:
        """The kind's items. An unusable answer is asked for once more, changed (a cut-off one with a larger
        budget, any other with a note saying what was wrong); failing the same way twice is final."""
        request = self.request(kind, turns, deadline, instructions=instructions, siblings=siblings)
        failures: list[tuple[str, str]] = []
        spent = [0, 0]
        while True:
            try:
                result = self.llm.complete_json(request)
                spent[0] += result.input_tokens
                spent[1] += result.output_tokens
                items = answer_items(kind.name, result.text)
                # Each item is validated by its kind when it is committed: one bad item is refused and
                # counted, the others are kept (a retry would ask again for all of them).
                extra = self._rule_items(kind, turns, user_id, instructions)
                return Proposal(items + extra, spent[0], spent[1], result.model, from_rules=len(extra))
            except (LLMAnswerError, AnswerInvalid) as exc:
                failures.append((exc.reason, str(exc)))
                cut_text = getattr(exc, "text", "")
            if len(failures) == 2:
                break
            reason, message = failures[-1]
            if reason == "cut_off" and looping(cut_text):
                # a model repeating itself fills any budget: ask it to stop instead of giving it more room
                request = replace(
                    request,
                    prompt=f"{request.prompt}\n\nA previous answer repeated itself until it was cut off. "
                    'Answer with the JSON object {"items": [...]} only, each item once.',
                )
            elif reason == "cut_off":
                request = replace(request, max_tokens=max(request.max_tokens * 2, MAX_TOKENS_RETRY))
            else:
                request = replace(
                    request,
                    prompt=f"{request.prompt}\n\nA previous answer could not be used ({message[:200]}). "
                    'Answer with the JSON object {"items": [...]} only.',
                )
        (first, _), (second, message) = failures
        same = first == second
        raise ExtractionFailed(
            f"the {kind.name} answer failed twice ({first}, then {second}): {message[:300]}",
            reason=second,
            final=same,
        )

    def _rule_items(
        self, kind: MemoryKind, turns: Sequence[TurnView], user_id: str, instructions: str | None
    ) -> list[dict[str, Any]]:
        """The offline rules' items beside the model's; none where the project asks the kind for something
        else (its own instructions: the rules do not know what they ask)."""
        if self.rules is None or instructions is not None:
            return []
        return list(self.rules.propose(kind.name, turns, user_id))


def looping(text: str, window: int = 60) -> bool:
    """Whether a cut-off answer ends in a loop: its last `window` characters occur at least twice before."""
    tail = text[-window:]
    return len(text) > 4 * window and text[:-window].count(tail) >= 2


def answer_items(kind: str, text: str) -> list[Any]:
    """The items of an LLM answer: the first JSON value in it, {"items": [...]} or a bare list."""
    try:
        value = first_json(text)
    except NoJSON:
        raise AnswerInvalid(f"the {kind} answer holds no JSON ({len(text)} characters)", "not_json") from None
    items = items_of(value)
    if items is None:
        raise AnswerInvalid(f"the {kind} answer is JSON but not an items list", "not_items")
    if len(items) > MAX_ANSWER_LIST:
        raise AnswerInvalid(
            f"the {kind} answer has {len(items)} items (at most {MAX_ANSWER_LIST})", "too_many"
        )
    return items
