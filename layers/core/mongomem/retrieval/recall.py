"""Semantic recall: a user's earlier turns by meaning and keywords, with their neighbours.

Four rankings over the turn index (kind "turn"), as measured in bench/studies/embeddings/RESULTS.md:
BM25 over each turn's own text, BM25 over its text with neighbours, and cosine of the query
(embedded with purpose "query") against both texts' embeddings; fused by reciprocal rank fusion
(k = 10, equal weights). The index only proposes turn ids: the turns, and their neighbours, are
read from MongoDB, scoped by tenant and user, so a stale or foreign index entry is never returned.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from mongomem import markers
from mongomem.config import RecallConfig
from mongomem.errors import Conflict, InvalidInput
from mongomem.models.common import Scope, as_utc
from mongomem.models.recall import RecalledThread, RecalledTurn, RecallRequest, RecallResponse
from mongomem.models.turns import Turn
from mongomem.observability import logger
from mongomem.ports import EmbeddingProvider
from mongomem.retrieval.lexical import rrf_fuse
from mongomem.shortterm.ports import TurnRepository
from mongomem.vectors.port import (
    DimensionMismatch,
    IndexUnavailable,
    Mode,
    SearchQuery,
    VectorIndex,
    search_all,
)
from mongomem.wire import response_bytes

__all__ = ["CHANNELS", "Recall", "RecallDisabled", "public_turn_id"]

# (channel, mode) of the four rankings, fused with equal weights.
CHANNELS: tuple[tuple[str, Mode], ...] = (("own", "bm25"), ("ctx", "bm25"), ("own", "knn"), ("ctx", "knn"))
MAX_CANDIDATES = 2000
# Each ranking is read this deep at least before fusing: a turn ranked 150th by one ranking and high by
# the others is fused with all of its ranks (dev split: R@10 0.791 at a depth of 100, 0.797 at 200,
# 0.802 at 400; bench/studies/context/RESULTS.md).
FUSION_DEPTH = 400


@dataclass(frozen=True)
class Ranking:
    """The index's answer for a query: the fused ranking of turn keys (best first, with their fused
    score), each turn's rank in every ranking it appeared in (1 = best), and the query's cosine
    similarity to each turn the dense rankings found (its best chunk, own text)."""

    fused: list[tuple[str, float]]
    ranks: dict[str, dict[str, int]]
    similarity: dict[str, float]


class Match(NamedTuple):
    """A matching turn as MongoDB holds it, with its fused score."""

    turn: Turn
    score: float


@dataclass(frozen=True)
class Fitted:
    """The turns that fit the response budget, and how many were left out for it."""

    turns: dict[str, RecalledTurn]
    omitted: int


class RecallDisabled(Conflict):
    """memory.recall.enabled is false: nothing is embedded and recall answers 409."""

    code = "recall_disabled"


def public_turn_id(turn: Turn) -> str:
    """`session_id:seq`, the id the record API hands out."""
    return turn.public_id


def _public_id(turn_id: str, index: int) -> str:
    """A turn id as the record API hands it out (`session_id:seq`, the seq without leading zeros)."""
    session, _, seq = turn_id.rpartition(":")
    if not session or not seq.isdigit():
        raise InvalidInput(
            f"exclude_recent[{index}] is not a turn id (session_id:seq)",
            {"path": f"exclude_recent.{index}", "value": turn_id[:160]},
        )
    return f"{session}:{int(seq)}"


class Recall:
    def __init__(
        self,
        turns: TurnRepository,
        index: VectorIndex | None,
        embedder: EmbeddingProvider,
        config: RecallConfig,
        max_response_bytes: int | None = None,
    ) -> None:
        self.turns = turns
        self.index = index
        self.embedder = embedder
        self.config = config
        self.max_response_bytes = max_response_bytes

    def recall(
        self,
        scope: Scope,
        request: RecallRequest,
        embedder: EmbeddingProvider | None = None,
        *,
        enough: Callable[[list[Turn]], bool] | None = None,
        read: int | None = None,
        text: bool = True,
    ) -> RecallResponse:
        """The best `top_k` matching turns with their neighbours, grouped by thread in time order.
        `embedder` embeds the query instead of the service's own (see MemorySearch.search).

        A caller that can use fewer (the context block: what its budget holds) passes `enough`: the
        matches are read `read` at a time, best first, and reading stops as soon as `enough(matches)`
        says so, however many of `top_k` that is (each turn read from MongoDB costs the request time).
        `text=False` leaves `text` empty (an in-process caller that renders the turns itself)."""
        started = time.perf_counter()
        self._check(request)
        excluded = self._excluded(scope, request)
        ranking = self._rank(scope, request, len(excluded), embedder or self.embedder)
        matches = self._matches(scope, request, ranking.fused, excluded, enough, read)
        turns = self._with_neighbours(scope, request, matches, excluded, ranking)
        # each message's content is in the answer twice (its turn and `text`), thrice with order time;
        # an in-process caller (text=False) sends none of it as it is
        copies = 3 if request.order == "time" else 2
        fitted = _within(turns, self.max_response_bytes if text else None, copies)
        response = _response(fitted.turns, matches, started, request.order, fitted.omitted, text)
        logger.info(
            "recall",
            extra={
                "user_id": scope.user_id,
                "recall_scope": request.scope,
                "thread_id": request.thread,
                "top_k": request.top_k,
                "matched": response.matched,
                "returned": response.turn_ids,
                "excluded": len(excluded),
                "took_ms": response.took_ms,
            },
        )
        return response

    # -- steps ---------------------------------------------------------------------------------
    def _check(self, request: RecallRequest) -> None:
        if not self.config.enabled:
            raise RecallDisabled(
                "semantic recall is disabled for this project (memory.recall.enabled: false)",
                {"setting": "memory.recall.enabled"},
            )
        if request.scope == "thread" and not request.thread:
            raise InvalidInput("scope 'thread' needs `thread` (the session id)", {"path": "thread"})
        if isinstance(request.exclude_recent, int) and request.exclude_recent and not request.thread:
            raise InvalidInput(
                "exclude_recent as a count needs `thread`: it counts that thread's newest turns",
                {"path": "exclude_recent"},
            )
        if self.index is None:
            raise IndexUnavailable(
                "no vector index is configured (set MONGOMEM_OPENSEARCH_ENDPOINT or MONGOMEM_VECTOR_INDEX_PATH)"
            )

    def _excluded(self, scope: Scope, request: RecallRequest) -> set[str]:
        """The public ids (`session_id:seq`) of the turns the caller already has."""
        recent = request.exclude_recent
        if isinstance(recent, list):
            return {_public_id(t, i) for i, t in enumerate(recent)}
        if recent and request.thread:
            return {t.public_id for t in self.turns.latest(scope, request.thread, recent)}
        return set()

    def _rank(
        self, scope: Scope, request: RecallRequest, n_excluded: int, embedder: EmbeddingProvider
    ) -> Ranking:
        """The fused ranking of the turns matching the query, with each turn's ranks and similarity."""
        assert self.index is not None
        vector = embedder.embed([request.query], "query")[0]
        window = min(
            max(self.config.candidates, 4 * request.top_k, FUSION_DEPTH) + n_excluded, MAX_CANDIDATES
        )
        base: dict[str, str | list[str]] = {}
        if request.scope == "thread" and request.thread:
            base["session_id"] = request.thread
        queries = [
            SearchQuery(
                tenant=scope.tenant,
                user_id=scope.user_id,
                kind="turn",
                text=request.query,
                vector=vector if mode == "knn" else None,
                top_k=window,
                filters={**base, "channel": channel},
                ranges=until(request.as_of),
                min_score=request.min_score if mode == "knn" else None,
                mode=mode,
            )
            for channel, mode in CHANNELS
        ]
        try:
            # every ranking in one round trip; ids are "<turn key>#<channel>": both channels of a turn
            # fuse into one turn (a long turn's chunks are several documents of one channel: its best
            # one ranks it)
            found = search_all(self.index, queries)
            rankings = [list(dict.fromkeys(hit.id.rpartition("#")[0] for hit in hits)) for hits in found]
            similarity: dict[str, float] = {}
            for (channel, mode), hits in zip(CHANNELS, found, strict=True):
                if (channel, mode) == ("own", "knn"):
                    for hit in hits:
                        key = hit.id.rpartition("#")[0]
                        similarity[key] = max(similarity.get(key, -1.0), hit.score)
        except DimensionMismatch as exc:
            raise IndexUnavailable(
                "the search index was built with another embedding model; run `mongomem reindex --re-embed`",
                {"index_dim": exc.index_dim, "query_dim": exc.got_dim},
            ) from exc
        ranks: dict[str, dict[str, int]] = {}
        for (channel, mode), ranking in zip(CHANNELS, rankings, strict=True):
            name = mode if channel == "own" else f"{mode}_context"
            for position, key in enumerate(ranking, start=1):
                ranks.setdefault(key, {}).setdefault(name, position)
        return Ranking(rrf_fuse(rankings, k=self.config.rrf_k), ranks, similarity)

    def _matches(
        self,
        scope: Scope,
        request: RecallRequest,
        ranked: list[tuple[str, float]],
        excluded: set[str],
        enough: Callable[[list[Turn]], bool] | None = None,
        read: int | None = None,
    ) -> list[Match]:
        found: list[Match] = []
        # the first read takes the page and a few more (stale index hits are rare): fewer ids to read
        step = request.top_k + 10 if enough is None else max(1, read or request.top_k)
        for start in range(0, len(ranked), step):
            if enough is not None and found and enough([m.turn for m in found]):
                return found
            chunk = ranked[start : start + step]
            turns = {t.id: t for t in self.turns.by_ids(scope, [k for k, _ in chunk])}
            for key, score in chunk:
                turn = turns.get(key)
                # The index may lag MongoDB (an erased or expired turn): MongoDB decides.
                if turn is None or (request.scope == "thread" and turn.session_id != request.thread):
                    continue
                if turn.public_id in excluded or not said_by(turn, request.as_of):
                    continue
                found.append(Match(turn, score))
                if len(found) == request.top_k:
                    return found
        return found

    def _with_neighbours(
        self,
        scope: Scope,
        request: RecallRequest,
        matches: list[Match],
        excluded: set[str],
        ranking: Ranking,
    ) -> dict[str, RecalledTurn]:
        before, after = request.span()
        turns: dict[str, RecalledTurn] = {}
        for rank, match in enumerate(matches, start=1):
            key = match.turn.id
            turns[key] = _turn(
                match.turn, rank, match.score, ranking.ranks.get(key), ranking.similarity.get(key)
            )
        if before or after:
            ranges = [(m.turn.session_id, max(1, m.turn.seq - before), m.turn.seq + after) for m in matches]
            for turn in self.turns.in_ranges(scope, ranges):
                if turn.id not in turns and turn.public_id not in excluded and said_by(turn, request.as_of):
                    turns[turn.id] = _turn(turn, None, None)
        return turns


def until(as_of: datetime | None) -> dict[str, tuple[str | None, str | None]]:
    """The index range of the turns recorded at or before `as_of` (all of them without)."""
    if as_of is None:
        return {}
    # the turn documents hold `created_at` as an ISO-8601 UTC string (turn_indexing); the bound is
    # exclusive, so one microsecond after; MongoDB's timestamps decide (said_by)
    return {"created_at": (None, as_utc(as_of + timedelta(microseconds=1)).isoformat())}


def said_by(turn: Turn, as_of: datetime | None) -> bool:
    """Whether the turn was recorded at or before the question's date (`as_of`; always without)."""
    return as_of is None or as_utc(turn.timestamp) <= as_utc(as_of)


def _within(turns: dict[str, RecalledTurn], budget: int | None, copies: int = 2) -> Fitted:
    """The turns whose content fits the response budget: matches by rank first, then neighbours."""
    if budget is None:
        return Fitted(turns, 0)
    ordered = sorted(turns.items(), key=lambda kv: (kv[1].rank is None, kv[1].rank or 0))
    kept: dict[str, RecalledTurn] = {}
    used = omitted = 0
    for key, turn in ordered:
        size = copies * response_bytes(turn.content) + 512  # and the fields around it
        if used + size > budget:
            omitted += 1
            continue
        used += size
        kept[key] = turn
    return Fitted(kept, omitted)


def _turn(
    turn: Turn,
    rank: int | None,
    score: float | None,
    signals: dict[str, int] | None = None,
    similarity: float | None = None,
) -> RecalledTurn:
    return RecalledTurn(
        turn_id=turn.public_id,
        thread=turn.session_id,
        seq=turn.seq,
        role=turn.role,
        name=turn.name,
        content=turn.content,
        timestamp=turn.timestamp,
        metadata=turn.metadata,
        matched=rank is not None,
        rank=rank,
        score=score,
        signals=signals,
        similarity=round(similarity, 4) if similarity is not None else None,
    )


def _response(
    turns: dict[str, RecalledTurn],
    matches: list[Match],
    started: float,
    order: str = "thread",
    omitted: int = 0,
    text: bool = True,
) -> RecallResponse:
    by_thread: dict[str, list[RecalledTurn]] = {}
    for turn in turns.values():
        by_thread.setdefault(turn.turn_id.rpartition(":")[0], []).append(turn)
    threads = []
    for thread, items in by_thread.items():
        items.sort(key=lambda t: t.seq)
        threads.append(RecalledThread(thread=thread, turns=items))
    # Threads in time order (by their first returned turn), then turns by seq inside each thread.
    threads.sort(key=lambda g: (g.turns[0].timestamp, g.thread))
    kept = {t.turn_id for g in threads for t in g.turns}
    messages = None
    if order == "time":
        messages = sorted((t for g in threads for t in g.turns), key=lambda t: (t.timestamp, t.thread, t.seq))
    return RecallResponse(
        threads=threads,
        messages=messages,
        omitted=omitted,
        text=("" if not text else recall_text(threads) if messages is None else timeline_text(messages)),
        matched=[m.turn.public_id for m in matches if m.turn.public_id in kept],
        turn_ids=[t.turn_id for t in messages] if messages else [t.turn_id for g in threads for t in g.turns],
        took_ms=round((time.perf_counter() - started) * 1000, 3),
    )


def recall_text(threads: list[RecalledThread]) -> str:
    """The recalled messages as an agent reads them, inside mongomem's marker ("" when none)."""
    lines = []
    for group in threads:
        lines.append(f"## thread {group.thread}")
        lines.extend(f"[{t.timestamp.isoformat()}] {t.name or t.role}: {t.content}" for t in group.turns)
    return markers.wrap("\n".join(lines), "recall") if lines else ""


def timeline_text(messages: list[RecalledTurn]) -> str:
    """The recalled messages in time order across threads, each naming its thread ("" when none)."""
    lines = [
        f"[{t.timestamp.isoformat()}] (thread {t.thread}) {t.name or t.role}: {t.content}" for t in messages
    ]
    return markers.wrap("\n".join(lines), "recall") if lines else ""
