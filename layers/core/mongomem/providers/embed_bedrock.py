"""Amazon Titan Text Embeddings V2 on Bedrock as an EmbeddingProvider (one text per InvokeModel)."""

from __future__ import annotations

import functools
import json
from typing import Any

from mongomem.ports import EmbeddingError, Purpose
from mongomem.providers import check_texts, checked_vectors
from mongomem.providers.llm_bedrock import (
    aws_credentials_ready,
    bedrock_runtime_client,
    is_retryable_aws_error,
)
from mongomem.providers.retry import RetriesExhausted, RetryPolicy, call_with_retries

TITAN_V2 = "amazon.titan-embed-text-v2:0"
TITAN_V2_DIMS = (256, 512, 1024)
MAX_CHARS = 50_000  # Titan v2 rejects longer input; the tail of such a text adds little to its vector


class BedrockTitanEmbedder:
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
        base_delay: float = 0.5,
        max_delay: float = 8.0,
    ) -> None:
        if dim not in TITAN_V2_DIMS:
            raise ValueError(f"bedrock-titan-v2 supports dim 256, 512 or 1024 (got {dim})")
        self.region = region
        self.dim = dim
        self.normalize = normalize
        self.timeout = timeout
        self.policy = RetryPolicy(max_retries=max_retries, base_delay=base_delay, max_delay=max_delay)
        self._client = client
        self._credentials_ok = False
        self.calls = 0  # InvokeModel attempts made by the last embed()

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = bedrock_runtime_client(self.region, self.timeout)
        return self._client

    def ready(self) -> tuple[bool, str]:
        if self._client is not None or self._credentials_ok:
            return True, ""
        ok, reason = aws_credentials_ready(self.region)
        self._credentials_ok = ok
        return ok, reason

    def _invoke(self, text: str) -> Any:
        self.calls += 1
        response = self.client.invoke_model(
            modelId=self.model,
            contentType="application/json",
            accept="application/json",
            body=json.dumps(
                {"inputText": text[:MAX_CHARS], "dimensions": self.dim, "normalize": self.normalize}
            ),
        )
        return json.loads(response["body"].read())

    def embed(self, texts: list[str], purpose: Purpose = "document") -> list[list[float]]:
        from botocore.exceptions import ClientError

        texts = check_texts(texts)
        self.calls = 0
        vectors: list[Any] = []
        for i, text in enumerate(texts):
            try:
                data = call_with_retries(
                    functools.partial(self._invoke, text), self.policy, is_retryable_aws_error
                )
            except RetriesExhausted as exc:
                raise EmbeddingError(f"{self.model}: {exc}") from exc.last
            except ClientError as exc:
                err = exc.response.get("Error", {})
                raise EmbeddingError(
                    f"{self.model}: {err.get('Code', 'error')}: {err.get('Message', '')}"
                ) from exc
            except Exception as exc:
                raise EmbeddingError(f"{self.model}: text #{i}: {type(exc).__name__}: {exc}") from exc
            vectors.append(data.get("embedding") if isinstance(data, dict) else None)
        return checked_vectors(self.model, self.dim, vectors, len(texts))
