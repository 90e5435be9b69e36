"""Any OpenAI-compatible /embeddings endpoint as an EmbeddingProvider (OpenAI, vLLM, Ollama, TEI, ...)."""

from __future__ import annotations

from typing import Any

from mongomem.ports import EmbeddingError, EmbeddingProvider, Purpose
from mongomem.providers import check_texts, checked_vectors
from mongomem.providers.http import HTTPError, check_url, post_json
from mongomem.retrying import RetriesExhausted, RetryPolicy

OPENAI_BASE_URL = "https://api.openai.com/v1"
# Known output sizes, so a config may omit dim for these models.
KNOWN_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


class HTTPEmbedder(EmbeddingProvider):
    """POST {base_url}/embeddings in batches; answers {"data": [{"index", "embedding"}], "usage"}."""

    provider = "embeddings"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        dim: int,
        *,
        api_key_env: str | None = None,
        require_key: bool = True,
        timeout: float = 30.0,
        max_retries: int = 3,
        batch_size: int = 128,
        base_delay: float = 0.5,
        max_delay: float = 8.0,
        max_retry_after: float = 20.0,
    ) -> None:
        self.base_url = check_url(base_url)
        self.model = model
        self.dim = dim
        self.api_key = api_key or None
        self.api_key_env = api_key_env
        self.require_key = require_key
        self.timeout = timeout
        self.batch_size = max(1, batch_size)
        self.policy = RetryPolicy(
            max_retries=max_retries,
            base_delay=base_delay,
            max_delay=max_delay,
            max_retry_after=max_retry_after,
        )
        self.attempts = 0  # HTTP requests made by the last embed()
        self.total_tokens = 0  # tokens the server reported for the last embed()

    def ready(self) -> tuple[bool, str]:
        if not self.model:
            return False, "no embedding model configured (memory.providers.embeddings.model)"
        if self.dim <= 0:
            return False, f"the dimension of {self.model} is unknown: set memory.providers.embeddings.dim"
        if self.require_key and not self.api_key:
            where = f"environment variable {self.api_key_env}" if self.api_key_env else "api_key_env"
            return False, f"API key missing: {where} is not set"
        return True, ""

    def _body(self, batch: list[str], purpose: Purpose) -> dict[str, Any]:
        raise NotImplementedError

    def embed(self, texts: list[str], purpose: Purpose = "document") -> list[list[float]]:
        texts = check_texts(texts)
        ok, reason = self.ready()
        if not ok:
            raise EmbeddingError(f"{self.provider}:{self.model}: not ready: {reason}")
        self.attempts = 0
        self.total_tokens = 0
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            try:
                response = post_json(
                    f"{self.base_url}/embeddings",
                    self._body(batch, purpose),
                    headers=headers,
                    timeout=self.timeout,
                    policy=self.policy,
                    what=f"{self.provider}:{self.model} embeddings",
                )
            except (RetriesExhausted, HTTPError) as exc:
                self.attempts += exc.attempts
                raise EmbeddingError(str(exc)) from exc
            self.attempts += response.attempts
            out.extend(self._vectors(response.data, len(batch)))
        return out

    def _vectors(self, data: Any, expected: int) -> list[list[float]]:
        items = data.get("data") if isinstance(data, dict) else None
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise EmbeddingError(
                f"{self.provider}:{self.model}: malformed answer (no data list): {str(data)[:200]!r}"
            )
        usage = data.get("usage")
        if isinstance(usage, dict):
            self.total_tokens += int(usage.get("total_tokens") or usage.get("prompt_tokens") or 0)
        # The API documents an index per item; order by it rather than trusting the list order.
        if all(isinstance(item.get("index"), int) for item in items):
            items = sorted(items, key=lambda item: item["index"])
        return checked_vectors(self.model, self.dim, [item.get("embedding") for item in items], expected)


class OpenAICompatibleEmbedder(HTTPEmbedder):
    """POST {base_url}/embeddings with {"model", "input": [...]} (and "dimensions" where supported)."""

    provider = "openai-compatible"

    def __init__(
        self,
        base_url: str = OPENAI_BASE_URL,
        model: str = "text-embedding-3-small",
        api_key: str | None = None,
        dim: int | None = None,
        *,
        send_dimensions: bool | None = None,
        **kwargs: Any,
    ) -> None:
        resolved = dim if dim is not None else KNOWN_DIMS.get(model, 0)
        super().__init__(base_url, model, api_key, resolved, **kwargs)
        # Only models trained for it (text-embedding-3-*) accept "dimensions"; others reject the field.
        self.send_dimensions = (
            model.startswith("text-embedding-3") if send_dimensions is None else send_dimensions
        )

    def _body(self, batch: list[str], purpose: Purpose) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "input": batch, "encoding_format": "float"}
        if self.send_dimensions:
            body["dimensions"] = self.dim
        return body
