"""Voyage AI embeddings as an EmbeddingProvider (documents and queries embedded differently)."""

from __future__ import annotations

from typing import Any

from mongomem.ports import Purpose
from mongomem.providers.embed_openai import HTTPEmbedder

VOYAGE_BASE_URL = "https://api.voyageai.com/v1"


class VoyageEmbedder(HTTPEmbedder):
    """POST {base_url}/embeddings with input_type document|query and output_dimension."""

    provider = "voyage"

    def __init__(
        self,
        api_key: str | None,
        model: str = "voyage-3.5",
        dim: int = 1024,
        *,
        base_url: str = VOYAGE_BASE_URL,
        **kwargs: Any,
    ) -> None:
        super().__init__(base_url, model, api_key, dim, **kwargs)

    def _body(self, batch: list[str], purpose: Purpose) -> dict[str, Any]:
        return {
            "input": batch,
            "model": self.model,
            "input_type": "query" if purpose == "query" else "document",
            "output_dimension": self.dim,
        }
