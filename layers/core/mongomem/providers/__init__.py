"""LLM and embedding providers (adapters for mongomem.ports) and the factory that picks one from config.

Importing this package is cheap: no boto3, no HTTP client, no model. Each provider imports its SDK
inside the methods that call it. The helpers here are shared by the providers. The demo providers (the
offline rules, the scripted LLM, the hashing embedder) live fenced in `mongomem.offline`: only the
factory reaches them.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mongomem.ports import EmbeddingError

if TYPE_CHECKING:
    from mongomem.ports import LLMResult

__all__ = [
    "BedrockLLM",
    "BedrockTitanEmbedder",
    "LocalEmbedderProvider",
    "OpenAICompatibleEmbedder",
    "OpenAICompatibleLLM",
    "VoyageEmbedder",
    "embedder_from_config",
    "llm_from_config",
    "readiness",
]

_LAZY = {
    "BedrockLLM": "llm_bedrock",
    "OpenAICompatibleLLM": "llm_openai",
    "BedrockTitanEmbedder": "embed_bedrock",
    "VoyageEmbedder": "embed_voyage",
    "OpenAICompatibleEmbedder": "embed_openai",
    "LocalEmbedderProvider": "embed_local",
    "llm_from_config": "factory",
    "embedder_from_config": "factory",
    "readiness": "factory",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib  # lazy: 0.2 ms

        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --- shared helpers -----------------------------------------------------------------------------


def check_texts(texts: Sequence[str]) -> list[str]:
    """The texts as a list; EmbeddingError on a non-string or blank text (it has no meaning to embed)."""
    if isinstance(texts, str):
        raise EmbeddingError("embed() takes a list of texts, not a single string")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str) or not text.strip():
            raise EmbeddingError(f"text #{i} is empty or not a string; nothing to embed")
    return out


def l2_normalize(vector: Sequence[float]) -> list[float]:
    """The unit vector in the direction of `vector`; EmbeddingError for a zero or non-finite vector."""
    values = [float(v) for v in vector]
    norm = math.sqrt(math.fsum(v * v for v in values))
    if not math.isfinite(norm) or norm == 0.0:
        raise EmbeddingError("the provider returned a zero or non-finite vector")
    return [v / norm for v in values]


def checked_vectors(model: str, dim: int, vectors: Sequence[Any], expected: int) -> list[list[float]]:
    """Validate count and dimension of a provider's vectors and L2-normalise them."""
    if len(vectors) != expected:
        raise EmbeddingError(f"{model}: expected {expected} vectors, got {len(vectors)}")
    out = []
    for i, vec in enumerate(vectors):
        if not isinstance(vec, list | tuple) or not all(isinstance(v, int | float) for v in vec):
            raise EmbeddingError(f"{model}: vector #{i} is not a list of numbers")
        if len(vec) != dim:
            raise EmbeddingError(
                f"{model}: vector #{i} has dimension {len(vec)} but the configured dim is {dim}"
            )
        out.append(l2_normalize(vec))
    return out


def record_llm_metrics(result: LLMResult) -> None:
    """Token usage and latency as Powertools metrics. A metrics problem never fails the call it measures,
    and is not silent either: a WARNING names what failed (else the dashboard's token figures would just
    stop, with nothing in the logs to say why)."""
    try:
        from aws_lambda_powertools.metrics import MetricUnit  # lazy: 31 ms

        from mongomem.observability import metrics  # lazy: 30 ms

        metrics.add_metric(name="LLMInputTokens", unit=MetricUnit.Count, value=result.input_tokens)
        metrics.add_metric(name="LLMOutputTokens", unit=MetricUnit.Count, value=result.output_tokens)
        metrics.add_metric(name="LLMLatencyMs", unit=MetricUnit.Milliseconds, value=result.latency_ms)
    except Exception as exc:  # Powertools' metric errors (value, unit, schema) or its import
        logging.getLogger(__name__).warning(
            "LLM usage metrics not recorded (%s: %s)", type(exc).__name__, exc, extra={"model": result.model}
        )
