"""A deterministic feature-hashing embedder: always available, no model, pure Python.

Word unigrams and bigrams are hashed (blake2b, so the same text gives the same vector in every
process) into `dim` signed buckets and the result is L2-normalised. Texts that share words are
close; there is no semantics beyond that. Meant for tests and as the fallback of last resort.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re

from mongomem.ports import EmbeddingProvider, Purpose
from mongomem.providers import check_texts

_WORD = re.compile(r"\w+", re.UNICODE)
_BIGRAM_WEIGHT = 0.5


class HashingEmbedder(EmbeddingProvider):
    model = "hashing-v1"

    def __init__(self, dim: int = 256) -> None:
        if dim < 8:
            raise ValueError("hashing embedder: dim must be at least 8")
        self.dim = dim

    def ready(self) -> tuple[bool, str]:
        return True, ""

    def _bucket(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        value = int.from_bytes(digest, "big")
        return value % self.dim, (1.0 if (value >> 63) & 1 else -1.0)

    def embed_one(self, text: str) -> list[float]:
        words = _WORD.findall(text.lower())
        vec = [0.0] * self.dim
        features: list[tuple[str, float]] = [(w, 1.0) for w in words]
        features += [(f"{a} {b}", _BIGRAM_WEIGHT) for a, b in itertools.pairwise(words)]
        if not features:  # punctuation only: still a unit vector, identical for identical text
            features = [(f"\x00{text.strip()}", 1.0)]
        for feature, weight in features:
            index, sign = self._bucket(feature)
            vec[index] += sign * weight
        norm = math.sqrt(math.fsum(v * v for v in vec))
        if norm == 0.0:  # every feature cancelled out in its bucket: fall back to the whole text
            index, sign = self._bucket(f"\x00{text}")
            vec[index] = sign
            norm = 1.0
        return [v / norm for v in vec]

    def embed(self, texts: list[str], purpose: Purpose = "document") -> list[list[float]]:
        return [self.embed_one(t) for t in check_texts(texts)]
