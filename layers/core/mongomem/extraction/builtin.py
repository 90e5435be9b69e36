"""Register the LLM-backed extractor for every memory type (the default registry content)."""

from __future__ import annotations

from mongomem.config import MemoryType
from mongomem.extraction import registry
from mongomem.runtime import services


def install() -> None:
    """Extractors are built from the process's services on first use of each type."""
    for memory_type in MemoryType:
        if memory_type not in registry.registered():
            registry.register(memory_type, _factory(memory_type))


def _factory(memory_type: MemoryType) -> registry.ExtractorFactory:
    def build() -> registry.Extractor:
        from mongomem.extraction.llm_extractor import LLMExtractor

        svc = services()
        return LLMExtractor(memory_type, svc.llm, svc.embedder, svc.memory_store, svc.reconciler, svc.indexer)

    return build
