"""Amazon Titan Text Embeddings V2 on Bedrock as an EmbeddingProvider (one text per InvokeModel)."""

from __future__ import annotations

import json
import time
from typing import Any

from mongomem.budget import request_deadline
from mongomem.ports import EmbeddingError, EmbeddingProvider, LLMError, Purpose
from mongomem.providers import check_texts, checked_vectors
from mongomem.providers.llm_bedrock import (
    attempts_made,
    aws_credentials_ready,
    aws_error_message,
    bedrock_runtime_client,
    budget_fit,
)

TITAN_V2 = "amazon.titan-embed-text-v2:0"
TITAN_V2_DIMS = (256, 512, 1024)
MAX_CHARS = 50_000  # Titan v2 rejects longer input; the tail of such a text adds little to its vector


class BedrockTitanEmbedder(EmbeddingProvider):
    model = TITAN_V2

    def __init__(
        self,
        region: str | None = None,
        dim: int = 1024,
        normalize: bool = True,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        client: Any = None,
    ) -> None:
        if dim not in TITAN_V2_DIMS:
            raise ValueError(f"bedrock-titan-v2 supports dim 256, 512 or 1024 (got {dim})")
        self.region = region
        self.dim = dim
        self.normalize = normalize
        self.timeout = timeout
        self.max_retries = max_retries  # botocore's standard retries (llm_bedrock.client_config)
        self._client = client
        self._credentials_ok = False
        self.calls = 0  # InvokeModel requests (botocore's retries included) made by the last embed()

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = bedrock_runtime_client(self.region, self.timeout, self.max_retries)
        return self._client

    def ready(self) -> tuple[bool, str]:
        if self._client is not None or self._credentials_ok:
            return True, ""
        ok, reason = aws_credentials_ready(self.region)
        self._credentials_ok = ok
        return ok, reason

    def _client_now(self) -> Any:
        """The client, its timeouts and retries cut to end before the current request's deadline."""
        deadline = request_deadline()
        if deadline is None or self._client is not None:
            return self.client
        try:
            timeout, attempts = budget_fit(deadline - time.monotonic(), self.timeout, self.max_retries + 1)
        except LLMError as exc:
            raise EmbeddingError(f"{self.model}: the request's time budget ran out") from exc
        return bedrock_runtime_client(self.region, timeout, attempts - 1)

    def _invoke(self, text: str) -> Any:
        response = self._client_now().invoke_model(
            modelId=self.model,
            contentType="application/json",
            accept="application/json",
            body=json.dumps(
                {"inputText": text[:MAX_CHARS], "dimensions": self.dim, "normalize": self.normalize}
            ),
        )
        self.calls += attempts_made(response)
        return json.loads(response["body"].read())

    def embed(self, texts: list[str], purpose: Purpose = "document") -> list[list[float]]:
        from botocore.exceptions import ClientError  # lazy: 7.7 ms

        texts = check_texts(texts)
        self.calls = 0
        vectors: list[Any] = []
        for i, text in enumerate(texts):
            try:
                data = self._invoke(text)
            except ClientError as exc:
                self.calls += attempts_made(exc.response)
                raise EmbeddingError(f"{self.model}: {aws_error_message(exc)}") from exc
            except Exception as exc:
                raise EmbeddingError(f"{self.model}: text #{i}: {type(exc).__name__}: {exc}") from exc
            vectors.append(data.get("embedding") if isinstance(data, dict) else None)
        return checked_vectors(self.model, self.dim, vectors, len(texts))
