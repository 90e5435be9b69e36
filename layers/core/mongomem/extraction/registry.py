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


@dataclass
class ExtractionResult:
    memories: list[dict[str, Any]] = field(default_factory=list)
    decisions: dict[str, int] = field(default_factory=dict)
    note: str | None = None


class Extractor(Protocol):
    memory_type: MemoryType

    def extract(self, item: SnapshotInput) -> ExtractionResult: ...


ExtractorFactory = Callable[[], Extractor]

_REGISTRY: dict[MemoryType, ExtractorFactory] = {}


def register(memory_type: MemoryType, factory: ExtractorFactory) -> None:
    """Install (or replace) the extractor factory for a memory type."""
    _REGISTRY[memory_type] = factory


def get_extractor(memory_type: MemoryType) -> Extractor:
    factory = _REGISTRY.get(memory_type)
    if factory is None:
        raise LookupError(f"no extractor registered for memory type {memory_type.value!r}")
    return factory()


def registered() -> list[MemoryType]:
    return sorted(_REGISTRY, key=lambda t: t.value)


def clear() -> None:
    _REGISTRY.clear()
