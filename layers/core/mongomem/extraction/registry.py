"""A pluggable registry of extractors, one per memory type."""

from __future__ import annotations

from collections.abc import Callable
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


ExtractorFactory = Callable[[], Extractor]

_REGISTRY: dict[MemoryType, ExtractorFactory] = {}


def register(memory_type: MemoryType, factory: ExtractorFactory) -> None:
    """Install (or replace) the extractor factory for a memory type."""
    _REGISTRY[memory_type] = factory


def get_extractor(memory_type: MemoryType) -> Extractor | None:
    """The registered extractor for a type, or None when there is none."""
    factory = _REGISTRY.get(memory_type)
    return factory() if factory is not None else None


def registered() -> list[MemoryType]:
    return sorted(_REGISTRY, key=lambda t: t.value)


def clear() -> None:
    _REGISTRY.clear()
