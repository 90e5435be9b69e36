"""A kind's item schema (what every extraction call tells the LLM the fields are) is built once per item
model. pydantic builds a JSON Schema anew on each call (about 0.3 ms), and each extraction call asked
for its kind's four times (its answer schema, its own answer tool, its field list, the guards' prompt
examples): about 1 ms per snapshot added since 7ebff4a (bench/extraction.py, docs/house.md). Each
caller still gets a copy of its own."""

from __future__ import annotations

from typing import Any

from pydantic import Field, create_model

from mongomem.config import parse_project_config
from mongomem.extraction.guards import prompt_examples
from mongomem.extraction.proposers import LLMProposer, answer_schema
from mongomem.kinds import KindRegistry, MemoryKind, project_registry
from mongomem.kinds.base import Item

TICKET: dict[str, Any] = {
    "name": "ticket",
    "schema": {
        "type": "object",
        "properties": {"ticket_id": {"type": "string"}, "status": {"type": "string"}},
        "required": ["ticket_id", "status"],
    },
    "match_key": ["ticket_id"],
    "prompt": "Extract TICKETS only: work items the user mentions.",
}


def counted_kind() -> tuple[MemoryKind, list[str]]:
    """A kind of its own item model (so no other test has built its schema yet), and the list its schema
    builds are counted in."""
    builds: list[str] = []

    class Counted(Item):
        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            builds.append(cls.__name__)
            return super().model_json_schema(*args, **kwargs)

    dish = (str, Field(description="a dish the user likes, e.g. 'ramen'"))
    model = create_model("DishItem", __base__=Counted, dish=dish)

    class Dishes(MemoryKind):
        name = "dishes"
        item = model
        instructions = "Extract DISHES the user likes."

    return Dishes(), builds


def test_an_extraction_call_builds_its_kinds_schema_once() -> None:
    # Given a kind whose item model counts its schema builds, offered as its own answer tool
    kind, builds = counted_kind()
    proposer = LLMProposer(llm=None, kinds=KindRegistry([kind]))  # type: ignore[arg-type]

    # When three extraction calls are prepared and their answers screened
    requests = [proposer.request(kind, [], siblings=["dishes"]) for _ in range(3)]
    examples = prompt_examples(kind)

    # Then the schema was built once, and every call still carries the kind's fields
    assert builds == ["DishItem"]
    assert all(
        r.schema["properties"]["items"]["items"]["required"] == ["dish", "evidence_seqs"] for r in requests
    )
    assert all("dish" in r.prompt for r in requests)
    assert "ramen" in examples


def test_a_caller_changing_its_schema_leaves_the_next_calls_intact() -> None:
    kind, _ = counted_kind()
    first = kind.item_schema()
    first["properties"].clear()
    first["required"] = ["nothing"]

    assert kind.item_schema() == kind.item.model_json_schema()
    assert answer_schema(kind)["properties"]["items"]["items"]["required"] == ["dish", "evidence_seqs"]


def test_a_custom_types_schema_keeps_its_declared_and_shared_fields() -> None:
    # Given a custom type declared in the project config
    cfg = parse_project_config({"memory": {"custom_types": [TICKET]}})
    kind = project_registry(cfg.memory.custom_types)["ticket"]

    # When a caller changes the schema it was given
    kind.item_schema()["properties"].clear()

    # Then the next call still has the declared fields and the ones every item shares
    assert {"ticket_id", "status", "evidence_seqs"} <= set(kind.item_schema()["properties"])
