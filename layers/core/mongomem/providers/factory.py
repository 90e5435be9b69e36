"""Build the configured LLM and embedding providers, and report whether they are usable.

The environment is passed in (only mongomem.config reads os.environ); API keys are read from the
variable that the config *names* (`api_key_env`), so keys never sit in project-config.yaml.
A provider whose key or model is missing is still built: its ready() says what is missing, which is
what `mongomem memory apply` and the status endpoint report.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mongomem.config import ConfigError, EmbeddingProviderConfig, LLMProviderConfig
from mongomem.ports import (
    ANSWERS,
    EmbeddingError,
    EmbeddingProvider,
    LLMError,
    LLMProvider,
    LLMRequest,
    LLMResult,
    Purpose,
)

if TYPE_CHECKING:
    from mongomem.extraction.extractor import EmptyCheck
    from mongomem.extraction.proposal import Proposer, TurnView
    from mongomem.kinds import KindRegistry, MemoryKind

DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "voyage": "VOYAGE_API_KEY"}
OPENAI_HOST = "api.openai.com"


def _region(cfg_region: str | None, environ: Mapping[str, str]) -> str | None:
    return cfg_region or environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION") or None


def _key(
    api_key_env: str | None, default_env: str | None, environ: Mapping[str, str]
) -> tuple[str | None, str | None]:
    """(key value or None, the variable it was read from)."""
    name = api_key_env or default_env
    if not name:
        return None, None
    value = environ.get(name, "").strip()
    return (value or None), name


class RefusedLLM:
    """Stands in for a provider this deployment may not run: never ready, every call fails with the reason."""

    capabilities = ANSWERS  # it stands in for a provider that would answer

    def __init__(self, kind: str, reason: str) -> None:
        self.name = f"{kind} (refused)"
        self.reason = reason

    def complete_json(self, request: LLMRequest) -> LLMResult:
        raise LLMError(self.reason)

    def ready(self) -> tuple[bool, str]:
        return False, self.reason


class RefusedEmbedder(EmbeddingProvider):
    """The embedding counterpart of RefusedLLM."""

    dim = 0

    def __init__(self, kind: str, reason: str) -> None:
        self.model = f"{kind} (refused)"
        self.reason = reason

    def embed(self, texts: list[str], purpose: Purpose = "document") -> list[list[float]]:
        raise EmbeddingError(self.reason)

    def ready(self) -> tuple[bool, str]:
        return False, self.reason


def _refused(kind: str | None, reason: str) -> None:
    from mongomem.observability import logger  # lazy: 18 ms

    logger.error("provider refused", extra={"provider": kind, "reason": reason})


class LimitedLLM:
    """An LLM provider that makes at most `limit` calls at once in this process (memory.providers.llm
    .max_concurrency): the local stack's pollers share one server that a burst would only slow down."""

    _gates: dict[tuple[str, int], threading.BoundedSemaphore] = {}
    _lock = threading.Lock()

    def __init__(self, inner: LLMProvider, limit: int) -> None:
        self.inner = inner
        self.limit = limit
        self.name = inner.name
        self.capabilities = inner.capabilities
        with self._lock:  # one gate per provider name and limit, shared by every rebuild of the provider
            self.gate = self._gates.setdefault((inner.name, limit), threading.BoundedSemaphore(limit))

    def complete_json(self, request: LLMRequest) -> LLMResult:
        timeout = None if request.deadline is None else max(0.0, request.deadline - time.monotonic())
        if not self.gate.acquire(timeout=timeout):
            raise LLMError(
                f"{self.name}: {self.limit} calls already running; the time budget ran out waiting"
            )
        try:
            return self.inner.complete_json(request)
        finally:
            self.gate.release()

    def ready(self) -> tuple[bool, str]:
        return self.inner.ready()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def llm_from_config(
    cfg: LLMProviderConfig, environ: Mapping[str, str], refused: str | None = None
) -> LLMProvider:
    """The LLM provider `cfg` describes (memory.providers.llm); `refused` says why it may not run here."""
    llm = _llm_from_config(cfg, environ, refused)
    if cfg.max_concurrency and not refused and "answers" in llm.capabilities:
        return LimitedLLM(llm, cfg.max_concurrency)
    return llm


def proposer_for(llm: LLMProvider, kinds: KindRegistry, *, with_rules: bool = False) -> Proposer:
    """Extraction's proposer for `llm`: the LLM asked per kind (`with_rules`: the offline rules' items
    proposed beside the model's), or the offline rules when the provider declares it answers nothing
    (the offline setting)."""
    if "answers" in llm.capabilities:
        from mongomem.extraction.proposers import LLMProposer  # lazy: 66 ms

        if with_rules:
            from mongomem.offline.rules import OfflineProposer  # lazy: 134 ms

            return LLMProposer(llm, kinds, rules=OfflineProposer())
        return LLMProposer(llm, kinds)
    from mongomem.offline.rules import RulesProposer  # lazy: 126 ms

    return RulesProposer()


def empty_answer_check(llm: LLMProvider) -> EmptyCheck | None:
    """What an empty model answer is checked against: the offline rules over the same turns (their item
    count; None for a kind without rules). None when the rules are the proposer themselves."""
    if "answers" not in llm.capabilities:
        return None

    def check(kind: MemoryKind, turns: Sequence[TurnView]) -> int | None:
        # imported on the first empty answer only: a function that never gets one never loads the rules
        from mongomem.offline.rules import OfflineProposer  # lazy: 134 ms

        rules = OfflineProposer()
        if kind.name not in rules.kinds:
            return None
        return len(rules.propose(kind.name, turns, ""))

    return check


def _llm_from_config(cfg: LLMProviderConfig, environ: Mapping[str, str], refused: str | None) -> LLMProvider:
    if refused:
        _refused(cfg.kind, refused)
        return RefusedLLM(str(cfg.kind), refused)
    if cfg.kind == "bedrock":
        from mongomem.providers.llm_bedrock import BedrockLLM  # lazy: 5.5 ms

        return BedrockLLM(
            cfg.model or "",
            region=_region(cfg.region, environ),
            timeout=cfg.timeout_seconds,
            max_retries=cfg.max_retries,
            temperature=cfg.temperature,
        )
    if cfg.kind == "openai-compatible":
        from mongomem.providers.llm_openai import OPENAI_BASE_URL, OpenAICompatibleLLM  # lazy: 58 ms

        base_url = cfg.base_url or OPENAI_BASE_URL
        # A local server (vLLM, Ollama) needs no key; OpenAI itself, or a named key variable, does.
        official = OPENAI_HOST in base_url
        key, key_env = _key(cfg.api_key_env, DEFAULT_KEY_ENV["openai"] if official else None, environ)
        try:
            return OpenAICompatibleLLM(
                base_url,
                cfg.model or "",
                key,
                timeout=cfg.timeout_seconds,
                max_retries=cfg.max_retries,
                api_key_env=key_env,
                require_key=key_env is not None,
                temperature=cfg.temperature,
                structured_output=cfg.structured_output,
            )
        except ValueError as exc:
            raise ConfigError(f"memory.providers.llm.base_url: {exc}") from exc
    if cfg.kind == "scripted":
        from mongomem.offline.llm_scripted import ScriptedLLM  # lazy: 3.4 ms

        try:
            return ScriptedLLM(cfg.script_file if cfg.script_file else {})
        except ValueError as exc:
            raise ConfigError(f"memory.providers.llm.script_file: {exc}") from exc
    if cfg.kind == "offline":
        from mongomem.offline.llm_offline import OfflineLLM  # lazy: 0.9 ms

        return OfflineLLM()
    raise ConfigError(f"memory.providers.llm.kind: unknown provider {cfg.kind!r}")


def embedder_from_config(
    cfg: EmbeddingProviderConfig, environ: Mapping[str, str], refused: str | None = None
) -> EmbeddingProvider:
    """The embedding provider `cfg` describes (memory.providers.embeddings)."""
    if refused:
        _refused(cfg.kind, refused)
        return RefusedEmbedder(str(cfg.kind), refused)
    common: dict[str, Any] = {"timeout": cfg.timeout_seconds, "max_retries": cfg.max_retries}
    try:
        if cfg.kind == "bedrock-titan-v2":
            from mongomem.providers.embed_bedrock import TITAN_V2, BedrockTitanEmbedder  # lazy: 7.9 ms

            if cfg.model and cfg.model != TITAN_V2:
                raise ValueError(f"bedrock-titan-v2 uses model {TITAN_V2} (got {cfg.model!r})")
            return BedrockTitanEmbedder(_region(cfg.region, environ), dim=cfg.dim or 1024, **common)
        if cfg.kind == "voyage":
            from mongomem.providers.embed_voyage import VOYAGE_BASE_URL, VoyageEmbedder  # lazy: 52 ms

            key, key_env = _key(cfg.api_key_env, DEFAULT_KEY_ENV["voyage"], environ)
            return VoyageEmbedder(
                key,
                model=cfg.model or "voyage-3.5",
                dim=cfg.dim or 1024,
                base_url=cfg.base_url or VOYAGE_BASE_URL,
                api_key_env=key_env,
                batch_size=cfg.batch_size,
                **common,
            )
        if cfg.kind == "openai-compatible":
            from mongomem.providers.embed_openai import (  # lazy: 63 ms
                OPENAI_BASE_URL,
                OpenAICompatibleEmbedder,
            )

            base_url = cfg.base_url or OPENAI_BASE_URL
            official = OPENAI_HOST in base_url
            key, key_env = _key(cfg.api_key_env, DEFAULT_KEY_ENV["openai"] if official else None, environ)
            return OpenAICompatibleEmbedder(
                base_url,
                model=cfg.model or "text-embedding-3-small",
                api_key=key,
                dim=cfg.dim,
                api_key_env=key_env,
                require_key=key_env is not None,
                batch_size=cfg.batch_size,
                **common,
            )
        if cfg.kind == "hashing":
            from mongomem.offline.embed_hashing import HashingEmbedder  # lazy: 1.5 ms

            return HashingEmbedder(dim=cfg.dim or 256)
        if cfg.kind == "local":
            from mongomem.providers.embed_local import LocalEmbedderProvider  # lazy: 1.7 ms

            return LocalEmbedderProvider(model=cfg.model, dim=cfg.dim)
    except ValueError as exc:
        raise ConfigError(f"memory.providers.embeddings: {exc}") from exc
    raise ConfigError(f"memory.providers.embeddings.kind: unknown provider {cfg.kind!r}")


def _check(provider: Any) -> tuple[bool, str]:
    try:
        ok, reason = provider.ready()
    except Exception as exc:  # a readiness probe must report, not crash the status endpoint
        return False, f"readiness check failed: {type(exc).__name__}: {exc}"
    return bool(ok), "" if ok else (reason or "not ready")


def readiness(llm: LLMProvider, embedder: EmbeddingProvider) -> dict[str, Any]:
    """Whether both providers are usable, with the reasons when not. A provider that can ask its server
    cheaply (`answers()`: the OpenAI-compatible models list, cached for a minute) is asked."""
    llm_ok, llm_reason = _check(llm)
    probe = getattr(llm, "answers", None)
    if llm_ok and callable(probe):
        try:
            llm_ok, llm_reason = probe()
        except Exception as exc:
            llm_ok, llm_reason = False, f"readiness probe failed: {type(exc).__name__}: {exc}"
    emb_ok, emb_reason = _check(embedder)
    reasons = []
    if not llm_ok:
        reasons.append(f"llm: {llm_reason}")
    if not emb_ok:
        reasons.append(f"embeddings: {emb_reason}")
    try:
        model, dim = str(embedder.model), int(embedder.dim)
    except Exception:
        model, dim = "unknown", 0
    return {
        "ready": llm_ok and emb_ok,
        "llm": {
            "kind": _llm_kind(llm),
            "name": str(getattr(llm, "name", type(llm).__name__)),
            "offline": _offline(llm),
            "ready": llm_ok,
            "reason": llm_reason,
        },
        "embeddings": {"model": model, "dim": dim, "ready": emb_ok, "reason": emb_reason},
        "reasons": reasons,
    }


def _offline(llm: Any) -> bool:
    """The offline setting: a provider that declares it answers nothing."""
    return "answers" not in getattr(llm, "capabilities", ANSWERS)


def _llm_kind(llm: Any) -> str:
    if _offline(llm):
        return "offline"
    name = str(getattr(llm, "name", ""))
    return name.split(":", 1)[0] if name else type(llm).__name__
