"""What an extractor is: the interface the composition root builds one of per memory type.

mongomem.runtime.Services.extractor(kind) builds the kind's extractor (the LLM-backed one by default);
`Services(extractors={kind: factory})` replaces it (tests, custom kinds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from mongomem.config import MemoryType


@dataclass
class SnapshotInput:
    """What an extractor sees: the whole snapshot, never single turns."""

    snapshot: dict[str, Any]
    turns: list[dict[str, Any]]
    # time.monotonic() by which the extraction must be over (the invocation's remaining time).
    deadline: float | None = None


@dataclass
class ExtractionResult:
    memories: list[dict[str, Any]] = field(default_factory=list)
    decisions: dict[str, int] = field(default_factory=dict)
    note: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0


class Extractor(Protocol):
    memory_type: MemoryType

    def extract(self, item: SnapshotInput) -> ExtractionResult: ...
