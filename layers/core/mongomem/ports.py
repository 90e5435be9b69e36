"""Ports the logic depends on; adapters implement them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol


class QueuePort(Protocol):
    """Sends extraction requests {snapshot_id, type} to the queue of each memory type (a built-in kind's
    own; every custom type shares `custom`, the message naming the type)."""

    def send_extraction(self, memory_type: str, body: dict[str, Any]) -> None: ...


# --- LLM -----------------------------------------------------------------------------------------

# A memory kind's name (one extraction call per kind) or "reconcile".
LLMTask = str


@dataclass
class LLMRequest:
    """One structured-output call: instructions (`system`), a part several calls share (`shared`, sent
    first and marked as a prompt-cache point where the provider has one), the call's own `prompt`, and
    the JSON Schema the answer must satisfy (the caller validates it again)."""

    task: LLMTask
    system: str
    prompt: str
    schema: dict[str, Any]  # JSON Schema the answer must satisfy (an object)
    schema_name: str
    shared: str = ""
    max_tokens: int = 2048
    # A time.monotonic() value the call must not outlive, retries included (e.g. the Lambda's remaining
    # time budget). The OpenAI-compatible provider honours it; Bedrock does not yet.
    deadline: float | None = None


@dataclass
class LLMResult:
    text: str  # the raw answer: JSON text, validated by the caller (never trusted)
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0


class LLMError(Exception):
    """A provider call failed after its retries (throttling, timeout, refusal); retryable upstream."""


class LLMProvider(Protocol):
    name: str  # e.g. "bedrock:anthropic.claude-3-5-haiku", "openai-compatible:gpt-4o-mini", "offline"
    offline: bool  # True for the offline pattern extractor (status endpoints say so)

    def complete_json(self, request: LLMRequest) -> LLMResult: ...

    def ready(self) -> tuple[bool, str]:
        """(usable, reason) without a network call where possible (e.g. key present)."""
        ...


# --- embeddings ----------------------------------------------------------------------------------

Purpose = Literal["document", "query"]


class EmbeddingError(Exception):
    """An embedding call failed after its retries."""


class EmbeddingProvider(Protocol):
    model: str  # e.g. "amazon.titan-embed-text-v2:0", "local:all-MiniLM-L6-v2"
    dim: int

    def embed(self, texts: list[str], purpose: Purpose = "document") -> list[list[float]]:
        """L2-normalised vectors, one per text, in order."""
        ...

    def ready(self) -> tuple[bool, str]: ...
