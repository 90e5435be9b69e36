"""What each extractor asks the LLM for: one pydantic model per memory type, plus reconciliation.

The JSON Schemas sent to the LLM are generated from these models, and every answer is validated
against them; an answer that does not validate is a retryable failure, never an empty result.
Extra fields are ignored (never stored), so injected instructions cannot widen what is written.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from mongomem.models.common import DateText, SafeKey, ValidText

Short = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300), ValidText]
Long = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4000), ValidText]


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    evidence_seqs: list[int] = Field(
        default_factory=list, description="seq numbers of the turns this item comes from", max_length=200
    )


class SemanticItem(_Item):
    """A labelled fact about the user or the world, self-contained."""

    subject: Short = Field(description="who or what the fact is about, e.g. 'user' or 'Acme Corp'")
    attribute: Short = Field(description="the property, e.g. 'home airport', 'favourite food'")
    value: Long = Field(description="the value, with relative dates resolved to absolute ones")
    qualifiers: dict[SafeKey, Short] = Field(
        default_factory=dict, max_length=32, description="optional context, e.g. since"
    )
    valid_from: DateText | None = Field(None, description="ISO date from which the fact holds, if stated")


class EpisodicItem(_Item):
    """An event: what happened, when, who took part, where."""

    title: Short
    summary: Long
    participants: list[Short] = Field(default_factory=list, max_length=50)
    occurred_at: DateText | None = Field(
        None, description="ISO date or datetime, resolved against the snapshot time"
    )
    place: Short | None = None


class ProceduralItem(_Item):
    """A reusable procedure the conversation demonstrated."""

    name: Short
    when_to_use: Long
    steps: list[Long] = Field(min_length=1, max_length=100)


class TaxonomicItem(_Item):
    """A domain term with its definition and aliases."""

    term: Short
    definition: Long
    aliases: list[Short] = Field(default_factory=list, max_length=50)


PAYLOADS: dict[str, type[_Item]] = {
    "semantic": SemanticItem,
    "episodic": EpisodicItem,
    "procedural": ProceduralItem,
    "taxonomic": TaxonomicItem,
}


class SemanticAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    items: list[SemanticItem] = Field(max_length=200)


class EpisodicAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    items: list[EpisodicItem] = Field(max_length=200)


class ProceduralAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    items: list[ProceduralItem] = Field(max_length=200)


class TaxonomicAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    items: list[TaxonomicItem] = Field(max_length=200)


ANSWERS: dict[str, type[BaseModel]] = {
    "semantic": SemanticAnswer,
    "episodic": EpisodicAnswer,
    "procedural": ProceduralAnswer,
    "taxonomic": TaxonomicAnswer,
}


class ReconcileAnswer(BaseModel):
    """The LLM's call on an ambiguous match between a new memory and existing candidates."""

    model_config = ConfigDict(extra="ignore")

    decision: Literal["ADD", "UPDATE", "REINFORCE"]
    target_id: str | None = Field(None, description="the candidate updated or reinforced")
    reason: Long


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema sent to the LLM for structured output."""
    return model.model_json_schema()
