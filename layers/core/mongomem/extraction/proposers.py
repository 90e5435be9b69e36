"""The two proposers: an LLM asked for one kind of knowledge, and the offline rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mongomem.errors import ExtractionFailed
from mongomem.extraction import prompts
from mongomem.extraction.offline import OfflineProposer
from mongomem.extraction.proposal import Proposal, TurnView
from mongomem.kinds import MemoryKind
from mongomem.observability import logger
from mongomem.ports import LLMProvider, LLMRequest

# One tool schema for every kind: the kinds' calls then share their prompt prefix (a changed tool would
# break the provider's prompt cache); the kind's fields are listed in its part and its item model
# validates every answer.
ANSWER_TOOL = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "object"}}},
    "required": ["items"],
}


class LLMProposer:
    def __init__(self, llm: LLMProvider) -> None:
        self.llm = llm
        self.name = str(getattr(llm, "name", "llm"))

    def propose(
        self,
        kind: MemoryKind,
        turns: Sequence[TurnView],
        user_id: str,
        deadline: float | None = None,
        *,
        instructions: str | None = None,
    ) -> Proposal:
        request = LLMRequest(
            task=kind.name,
            system=prompts.COMMON,
            shared=prompts.shared(turns),
            prompt=prompts.kind_part(kind.name, instructions or kind.instructions, kind.item_schema()),
            schema=ANSWER_TOOL,
            schema_name="memories",
            deadline=deadline,
        )
        result = self.llm.complete_json(request)
        items = answer_items(kind.name, result.text)
        # Each item is validated by its kind when it is committed: one bad item is refused and counted,
        # the others are kept (a retry would ask again for all of them).
        return Proposal(items, result.input_tokens, result.output_tokens, result.model)


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    items: list[Any] = Field(max_length=200)


def answer_items(kind: str, text: str) -> list[Any]:
    """The items of an LLM answer {"items": [...]}; ExtractionFailed when the answer is not that shape."""
    try:
        return _Answer.model_validate_json(text).items
    except ValidationError as exc:
        logger.warning(
            "LLM answer rejected: not an {items: [...]} object; the message will be retried",
            extra={"memory_type": kind, "errors": exc.error_count(), "answer_chars": len(text)},
        )
        raise ExtractionFailed(
            f"the {kind} answer is not an items list ({exc.error_count()} errors)"
        ) from exc


class RulesProposer:
    """The offline rules (mongomem.extraction.offline) as a proposer: no model, no network, no cost."""

    name = "offline"

    def __init__(self, rules: OfflineProposer | None = None) -> None:
        self.rules = rules or OfflineProposer()

    def propose(
        self,
        kind: MemoryKind,
        turns: Sequence[TurnView],
        user_id: str,
        deadline: float | None = None,
        *,
        instructions: str | None = None,
    ) -> Proposal:
        return Proposal(self.rules.propose(kind.name, turns, user_id), model=self.rules.name)
