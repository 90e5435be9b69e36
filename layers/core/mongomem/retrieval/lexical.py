"""Pure-python BM25 lexical retrieval and reciprocal rank fusion.

Only the standard library is used. The tokenizer lower-cases, folds accents,
splits on non-alphanumerics, drops English stopwords and applies a light
suffix-stripping stemmer, so that "hiking", "hikes" and "hiked" meet.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from mongomem.contentcache import content_cache

__all__ = [
    "STOPWORDS",
    "BM25Index",
    "bm25_union",
    "rrf_fuse",
    "stem",
    "tokenize",
]

STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are aren as at be because
    been before being below between both but by can cannot could couldn did didn
    do does doesn doing don down during each few for from further had hadn has
    hasn have haven having he her here hers herself him himself his how i if in
    into is isn it its itself just let ll me more most mustn my myself no nor not
    now of off on once only or other ought our ours ourselves out over own re
    same shan she should shouldn so some such than that the their theirs them
    themselves then there these they this those through to too under until up
    ve very was wasn we were weren what when where which while who whom why will
    with won would wouldn you your yours yourself yourselves s t d m o y
    """.split()
)

_TOKEN_RE = re.compile(r"[a-z0-9]+")
_VOWELS = frozenset("aeiouy")
_DOUBLE_UNDO = frozenset("bdfgklmnprtz")


def _has_vowel(word: str) -> bool:
    return any(ch in _VOWELS for ch in word)


def _undouble(word: str) -> str:
    if len(word) > 3 and word[-1] == word[-2] and word[-1] in _DOUBLE_UNDO:
        return word[:-1]
    return word


@content_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """Light English stemmer: plurals, -ing, -ed, -ly, -ness, -ment, -ful.

    Cached: a conversation's vocabulary repeats, and indexing a turn stems every word of its texts (at
    most ten minutes, and never past an erasure: `contentcache`)."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("'s"):
        word = word[:-2]
    if word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        word = word[:-1]
    for suffix in ("ness", "ment", "ful", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    if word.endswith("ing") and len(word) > 5 and _has_vowel(word[:-3]):
        word = _undouble(word[:-3])
    elif word.endswith("ied") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("ed") and len(word) > 4 and _has_vowel(word[:-2]):
        word = _undouble(word[:-2])
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    return word


def tokenize(text: str, *, stopwords: frozenset[str] | None = STOPWORDS, stemming: bool = True) -> list[str]:
    """Split text into normalised index terms."""
    folded = unicodedata.normalize("NFKD", text.lower())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    folded = folded.replace("'", "").replace("\u2019", "")
    terms = _TOKEN_RE.findall(folded)
    if stopwords:
        terms = [t for t in terms if t not in stopwords]
    if stemming:
        terms = [stem(t) for t in terms]
    return terms


class BM25Index:
    """Incremental in-memory BM25 (Okapi, Lucene idf) over string document ids."""

    def __init__(
        self,
        k1: float = 1.2,
        b: float = 0.75,
        *,
        stopwords: frozenset[str] | None = STOPWORDS,
        stemming: bool = True,
    ) -> None:
        self.k1 = k1
        self.b = b
        self._stopwords = stopwords
        self._stemming = stemming
        self._postings: dict[str, dict[str, int]] = {}
        self._doc_terms: dict[str, Counter[str]] = {}
        self._doc_len: dict[str, int] = {}
        self._total_len = 0

    def __len__(self) -> int:
        return len(self._doc_len)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._doc_len

    def tokenize(self, text: str) -> list[str]:
        """Tokenize with this index's normalisation settings."""
        return tokenize(text, stopwords=self._stopwords, stemming=self._stemming)

    def add(self, doc_id: str, text: str) -> None:
        """Index a document, replacing any earlier version with the same id."""
        if doc_id in self._doc_len:
            self.remove(doc_id)
        terms = Counter(self.tokenize(text))
        self._doc_terms[doc_id] = terms
        length = sum(terms.values())
        self._doc_len[doc_id] = length
        self._total_len += length
        for term, tf in terms.items():
            self._postings.setdefault(term, {})[doc_id] = tf

    def remove(self, doc_id: str) -> None:
        """Drop a document; unknown ids are ignored."""
        terms = self._doc_terms.pop(doc_id, None)
        if terms is None:
            return
        self._total_len -= self._doc_len.pop(doc_id)
        for term in terms:
            posting = self._postings.get(term)
            if posting is None:
                continue
            posting.pop(doc_id, None)
            if not posting:
                del self._postings[term]

    def idf(self, term: str) -> float:
        """Lucene-style idf, always positive."""
        n_docs = len(self._doc_len)
        df = len(self._postings.get(term, ()))
        return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))

    def search(
        self,
        query: str,
        k: int = 10,
        allowed_ids: set[str] | None = None,
    ) -> list[tuple[str, float]]:
        """Top-k (doc_id, score) for the query, optionally restricted to allowed_ids."""
        if not self._doc_len or k <= 0:
            return []
        avg_len = self._total_len / len(self._doc_len) or 1.0
        k1, b = self.k1, self.b
        scores: dict[str, float] = {}
        for term in dict.fromkeys(self.tokenize(query)):
            posting = self._postings.get(term)
            if not posting:
                continue
            idf = self.idf(term)
            for doc_id, tf in posting.items():
                if allowed_ids is not None and doc_id not in allowed_ids:
                    continue
                norm = k1 * (1.0 - b + b * self._doc_len[doc_id] / avg_len)
                scores[doc_id] = scores.get(doc_id, 0.0) + idf * tf * (k1 + 1.0) / (tf + norm)
        ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
        return ranked[:k]


def bm25_union(
    parts: Sequence[tuple[BM25Index, set[str] | None]], query: str, k: int = 10
) -> list[tuple[str, float]]:
    """Top-k BM25 over several indexes as if they were one: document counts, lengths and idf are summed,
    so a document scores what it would in a single index holding them all. Each index comes with the ids
    it may return (None: all)."""
    parts = [(index, allowed) for index, allowed in parts if len(index) and allowed != set()]
    if not parts or k <= 0:
        return []
    first = parts[0][0]
    n_docs = sum(len(index._doc_len) for index, _ in parts)
    avg_len = sum(index._total_len for index, _ in parts) / n_docs or 1.0
    scores: dict[str, float] = {}
    for term in dict.fromkeys(first.tokenize(query)):
        postings = [(index, index._postings.get(term), allowed) for index, allowed in parts]
        df = sum(len(p) for _, p, _ in postings if p)
        if not df:
            continue
        idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        for index, posting, allowed in postings:
            for doc_id, tf in (posting or {}).items():
                if allowed is not None and doc_id not in allowed:
                    continue
                norm = index.k1 * (1.0 - index.b + index.b * index._doc_len[doc_id] / avg_len)
                scores[doc_id] = scores.get(doc_id, 0.0) + idf * tf * (index.k1 + 1.0) / (tf + norm)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]


def rrf_fuse(
    rankings: Sequence[Sequence[str]] | Iterable[Sequence[str]],
    k: int = 60,
    weights: list[float] | None = None,
) -> list[tuple[str, float]]:
    """Weighted reciprocal rank fusion: score(d) = sum_i w_i / (k + rank_i(d)), rank from 1."""
    rankings = list(rankings)
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("weights must match rankings in length")
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[str] = set()
        for rank, doc_id in enumerate(ranking, start=1):
            if doc_id in seen:
                continue
            seen.add(doc_id)
            fused[doc_id] = fused.get(doc_id, 0.0) + weight / (k + rank)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))
