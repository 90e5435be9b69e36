"""The reconciliation answer an LLM gives on an ambiguous match, and the JSON Schema helper.

Each kind's item and answer models live with the kind (mongomem.kinds); every answer is validated
against them, and an answer that does not validate is a retryable failure, never an empty result.
Extra fields are ignored (never stored), so injected instructions cannot widen what is written.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mongomem.kinds.episodic import EpisodicItem
from mongomem.kinds.fields import Long
from mongomem.kinds.preference import PreferenceItem
from mongomem.kinds.procedural import ProceduralItem
from mongomem.kinds.semantic import SemanticItem
from mongomem.kinds.taxonomic import TaxonomicItem

__all__ = [
    "EpisodicItem",
    "PreferenceItem",
    "ProceduralItem",
    "ReconcileAnswer",
    "SemanticItem",
    "TaxonomicItem",
    "json_schema",
]


class ReconcileAnswer(BaseModel):
    """The LLM's call on an ambiguous match between a new memory and existing candidates."""

    model_config = ConfigDict(extra="ignore")

    decision: Literal["ADD", "UPDATE", "REINFORCE"]
    target_id: str | None = Field(None, description="the candidate updated or reinforced")
    reason: Long


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema sent to the LLM for structured output."""
    return model.model_json_schema()
