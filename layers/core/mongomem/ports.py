"""Ports the logic depends on; adapters implement them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol


class QueuePort(Protocol):
    """Sends extraction requests {snapshot_id, type} to the queue of each memory type (a built-in kind's
    own; every custom type shares `custom`, the message naming the type)."""

    def send_extraction(self, kind: str, body: dict[str, Any]) -> None: ...


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
    # time budget).
    deadline: float | None = None
    # The answer schemas of every call that shares this one's prefix (the kinds of one snapshot), by name,
    # `schema_name` among them: a provider answering through a tool offers all of them, in this order, and
    # names this call's, so the calls' prompts stay identical up to their own part (prompt caching).
    siblings: dict[str, dict[str, Any]] = field(default_factory=dict)
    # An answer that satisfies the schema, shown instead of the raw schema where the server cannot be
    # held to the schema (plain JSON mode): small models echo a schema back, not an example.
    example: str = ""


@dataclass
class LLMResult:
    text: str  # the raw answer: JSON text, validated by the caller (never trusted)
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0
    cached_tokens: int = 0  # input tokens the server read from its prompt cache (where it reports them)


class LLMError(Exception):
    """A provider call failed after its retries (throttling, timeout, a server error); retryable upstream."""


class LLMAnswerError(LLMError):
    """The call worked but the answer is unusable (cut off, no tool call, a refusal, not JSON). At
    temperature 0 the same request gets the same answer: worth one changed request, not a blind retry."""

    def __init__(self, message: str, reason: str, text: str = "") -> None:
        super().__init__(message)
        self.reason = reason  # cut_off | no_answer | refused | not_json | wrong_tool
        self.text = text  # what the model did answer (a cut-off answer's start)


class LLMConfigError(LLMError):
    """The provider refuses this deployment's requests for good (no access to the model, bad credentials,
    an unknown model): retrying changes nothing until an operator acts, so it is reported at once."""


# What an LLM provider can do, declared by the provider: "answers" = it answers requests
# (complete_json), which extraction's LLM proposer and reconciliation's judge need. The offline setting
# declares none: extraction then runs the offline rules and reconciliation decides by rules.
LLMCapability = Literal["answers"]
ANSWERS: frozenset[LLMCapability] = frozenset({"answers"})


class LLMProvider(Protocol):
    name: str  # e.g. "bedrock:anthropic.claude-3-5-haiku", "openai-compatible:gpt-4o-mini", "offline"
    capabilities: frozenset[LLMCapability]  # empty for the offline setting (status endpoints say so)

    def complete_json(self, request: LLMRequest) -> LLMResult: ...

    def ready(self) -> tuple[bool, str]:
        """(usable, reason) without a network call where possible (e.g. key present)."""
        ...


# --- embeddings ----------------------------------------------------------------------------------

Purpose = Literal["document", "query"]


class EmbeddingError(Exception):
    """An embedding call failed after its retries."""


class EmbeddingProvider(Protocol):
    """An embedding model. Providers subclass it, so they have the similarity profile below unless they
    declare their own."""

    model: str  # e.g. "amazon.titan-embed-text-v2:0", "local:all-MiniLM-L6-v2"
    dim: int
    # The model's similarity profile: cosine scores measured for it where they differ from the defaults each
    # use keeps (None: that default). Reconciliation's (reinforce at, ambiguous from) (longterm.write); where
    # a topic changes (shortterm.topics); under which a match by meaning alone is not relevant (retrieval).
    similarity_thresholds: tuple[float, float] | None = None
    topic_shift_threshold: float | None = None
    relevance_floor: float | None = None

    def embed(self, texts: list[str], purpose: Purpose = "document") -> list[list[float]]:
        """L2-normalised vectors, one per text, in order."""
        ...

    def ready(self) -> tuple[bool, str]: ...
