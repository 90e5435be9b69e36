"""No literal in an extraction prompt is a whole answer a model can copy (issue 31: a small instruct model
told 'answer {"items": []}' when there is nothing answered exactly that on every call)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from mongomem.extraction.answers import items_of
from mongomem.extraction.proposal import TurnView
from mongomem.extraction.proposers import LLMProposer
from mongomem.kinds import builtin_registry
from mongomem.providers.llm_openai import MODES, OpenAICompatibleLLM

KINDS = ["semantic", "episodic", "preference", "taxonomic", "procedural"]
TURNS = [
    TurnView(1, "user", "I moved to Lisbon, my home airport is LIS now.", datetime(2026, 1, 5, tzinfo=UTC))
]


def json_values(text: str) -> list[Any]:
    """Every outermost JSON object or array in `text` (what a model would copy whole)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at] in "{[":
            try:
                value, end = decoder.raw_decode(text, at)
                found.append(value)
                at = end
                continue
            except ValueError:
                pass
        at += 1
    return found


def copyable(value: Any) -> bool:
    """An answer a model could send back as it is and have read as a real answer: an items list that is
    empty, or whose items hold no placeholder (the placeholder screen refuses '<subject>')."""
    items = items_of(value)
    if items is None:
        return False
    return not items or not any("<" in json.dumps(item) for item in items)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
def test_no_prompt_holds_an_answer_a_model_could_copy(kind: str, mode: str) -> None:
    registry = builtin_registry()
    request = LLMProposer(None, registry).request(registry[kind], TURNS, siblings=KINDS)  # type: ignore[arg-type]
    body = OpenAICompatibleLLM("http://127.0.0.1:9/v1", "m", require_key=False)._body(request, mode)
    prompt = "\n".join(m["content"] for m in body["messages"])

    literals = [v for v in json_values(prompt) if copyable(v)]

    assert literals == [], f"the {kind} prompt in {mode} mode holds a copyable answer: {literals[:2]}"
    assert '"items": []' not in prompt


def test_the_answer_schema_asks_for_the_citation_after_the_memory() -> None:
    # a grammar-held model writes the properties in order: the memory, then the turns that state it
    # (cited first, a small model walked the turns by position and wrote beside each what another said)
    registry = builtin_registry()
    for kind in KINDS:
        request = LLMProposer(None, registry).request(registry.get(kind), TURNS)  # type: ignore[arg-type]
        item = request.schema["properties"]["items"]["items"]
        assert list(item["properties"])[-1] == "evidence_seqs"
        assert (
            item["required"][-1] == "evidence_seqs" and item["properties"]["evidence_seqs"]["minItems"] == 1
        )


def test_the_field_list_leaves_the_descriptions_examples_out() -> None:
    registry = builtin_registry()
    request = LLMProposer(None, registry).request(registry.get("semantic"), TURNS)  # type: ignore[arg-type]
    assert "favourite food" not in request.prompt and "Acme" not in request.prompt
    assert "- attribute (string, required): the property" in request.prompt
