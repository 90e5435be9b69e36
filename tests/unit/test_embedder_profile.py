"""An embedder's similarity profile is part of the EmbeddingProvider protocol: every provider has it (the
defaults, or the values measured for its model), and the three uses read it from the provider."""

from __future__ import annotations

import pytest

from mongomem.config import TopicShiftConfig
from mongomem.longterm.write.decision import Thresholds
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.ports import EmbeddingProvider
from mongomem.providers.embed_bedrock import BedrockTitanEmbedder
from mongomem.providers.embed_local import LocalEmbedderProvider
from mongomem.providers.embed_openai import OpenAICompatibleEmbedder
from mongomem.providers.embed_voyage import VoyageEmbedder
from mongomem.providers.factory import RefusedEmbedder
from mongomem.retrieval.block.items import DEFAULT_RELEVANCE_FLOOR, relevance_floor
from mongomem.retrieval.query import OnceEmbedder
from mongomem.shortterm.topics import DEFAULT_THRESHOLD, TopicSegmenter

PROVIDERS = [
    BedrockTitanEmbedder,
    OpenAICompatibleEmbedder,
    VoyageEmbedder,
    LocalEmbedderProvider,
    HashingEmbedder,
    RefusedEmbedder,
]


@pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.__name__)
def test_every_provider_has_a_similarity_profile(provider: type[EmbeddingProvider]) -> None:
    assert EmbeddingProvider in provider.__mro__
    profile = (provider.similarity_thresholds, provider.topic_shift_threshold, provider.relevance_floor)
    if provider is LocalEmbedderProvider:  # e5's scores were measured (docs/embeddings.md)
        assert profile == ((0.975, 0.95), 0.915, 0.87)
    else:
        assert profile == (None, None, None)


def test_the_uses_read_the_profile_or_keep_their_defaults() -> None:
    local, hashing = LocalEmbedderProvider(), HashingEmbedder(dim=32)
    assert Thresholds.for_embedder(local) == Thresholds(0.975, 0.95)
    assert Thresholds.for_embedder(hashing) == Thresholds()
    assert relevance_floor(OnceEmbedder(local)) == 0.87  # through the request's once-embedder too
    assert relevance_floor(hashing) == DEFAULT_RELEVANCE_FLOOR
    assert TopicSegmenter(local, TopicShiftConfig()).threshold == 0.915
    assert TopicSegmenter(hashing, TopicShiftConfig()).threshold == DEFAULT_THRESHOLD
    assert TopicSegmenter(local, TopicShiftConfig(threshold=0.5)).threshold == 0.5  # the config wins
