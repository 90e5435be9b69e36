"""Build an agent's context for one session: the most useful items of every source within the token budget.

One pipeline, walked forward, whether the request names its `sources` or not (retrieval/block/):

    plan    which sources, each with its section, priority and limits          (block/plan.py)
    gather  every source's candidates at once, the same filters for all        (block/sources.py)
    pack    the budget filled in priority order, then best value first         (block/pack.py)
    render  the block in the request's format and the response that explains it (block/render.py)

Sources: the working memory (the agent's scratchpad: first, cut rather than left out), the session's
recent turns (the newest worth most), long-term memories for the query (the user's and the
organisation's; every kind or one), and recalled turns (older turns of every session that match the
query, each with its neighbours). Nothing below the relevance floor enters (a memory or a recalled turn
that shares no word with the query and is not close in meaning), and no turn is in the block twice.
Every item says when it was said or stated, every turn who said it. The constants are `Tuning`'s,
measured on the LoCoMo dev split (bench/studies/context/RESULTS.md). Tokens are estimated like the
record path (about 4 characters a token), on the rendered block.
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from typing import TYPE_CHECKING

from mongomem.errors import MongomemError
from mongomem.kinds import builtin_registry
from mongomem.models.common import Principal, Scope
from mongomem.models.recall import ContextRequest, ContextResponse
from mongomem.observability import logger
from mongomem.retrieval.background import in_background
from mongomem.retrieval.block.items import MARKER_TOKENS, Tuning, estimate_tokens, relevance_floor
from mongomem.retrieval.block.pack import Packed, Section, pack
from mongomem.retrieval.block.plan import TITLES, plan
from mongomem.retrieval.block.render import bullet, measure, respond
from mongomem.retrieval.block.sources import Ask, Gathered, ObservationReader, Reach, RecentTurns, Use
from mongomem.retrieval.query import QUERY_LOOKBACK, OnceEmbedder, WorkingMemoryReader, query_of
from mongomem.retrieval.recall import Recall
from mongomem.shortterm.ports import TurnRepository

if TYPE_CHECKING:
    from mongomem.kinds import KindRegistry
    from mongomem.models.working_memory import WorkingMemoryScope
    from mongomem.retrieval.pending import Pending
    from mongomem.retrieval.search import MemorySearch
    from mongomem.workingmemory.service import WorkingMemoryService

__all__ = ["TITLES", "ContextBuilder", "OnceEmbedder", "estimate_tokens"]


class ContextBuilder:
    def __init__(
        self,
        turns: TurnRepository,
        working: WorkingMemoryService | None,
        working_scope: WorkingMemoryScope,
        search: MemorySearch,
        recall: Recall,
        kinds: KindRegistry | None = None,
        *,
        pending: Pending | None = None,
        tuning: Tuning | None = None,
        observations: ObservationReader | None = None,
    ) -> None:
        self.reach = Reach(
            turns,
            WorkingMemoryReader(working, working_scope),
            search,
            recall,
            kinds or builtin_registry(),
            observations,
        )
        self.pending = pending
        self.tuning = tuning or Tuning()

    def build(self, principal: Principal, scope: Scope, request: ContextRequest) -> ContextResponse:
        """Plan, gather (every source at once on the pool, recall on this thread; the session's latest
        turns are read beside them, or first when the query is the latest user turn), pack, render."""
        started = time.perf_counter()
        uses = plan(request, self.reach.kinds)
        ask = self._ask(principal, scope, request, uses)
        pending = in_background(self.pending.of, scope) if self.pending is not None else None
        self._read_latest(ask)
        gathered = self._gather_all(uses, ask)
        fetched = time.perf_counter()
        packed = self._pack(request, uses, gathered)
        fitted = time.perf_counter()
        response = respond(
            uses,
            gathered,
            packed,
            fmt=request.format,
            token_budget=request.token_budget,
            query=ask.query,
            pending=pending.result() if pending is not None else None,
            named=bool(request.sources),
            reader=f"{scope.tenant}\0{scope.user_id}\0{request.agent_id or ''}",
        )
        ended = time.perf_counter()
        response.timings_ms = {
            "fetch": round((fetched - started) * 1000, 2),
            "fit": round((fitted - fetched) * 1000, 2),
            "render": round((ended - fitted) * 1000, 2),
            "total": round((ended - started) * 1000, 2),
        }
        _log_built(scope, request, response)
        return response

    def _ask(self, principal: Principal, scope: Scope, request: ContextRequest, uses: list[Use]) -> Ask:
        """The request as every source sees it; every search shares one embedding of the query."""
        embedder = OnceEmbedder(self.reach.search.embedder)
        windows = tuple(RecentTurns.size(request, u) for u in uses if isinstance(u.source, RecentTurns))
        return Ask(
            principal,
            scope,
            request,
            request.query,
            embedder,
            relevance_floor(embedder),
            self.tuning,
            windows,
        )

    def _read_latest(self, ask: Ask) -> None:
        """Start reading the session's latest turns beside the sources; read them first when the query
        is the session's latest user turn."""
        request, scope = ask.request, ask.scope
        lookback = max([*ask.windows, QUERY_LOOKBACK])
        if request.query and request.query.strip():
            ask.reading = in_background(self.reach.turns.latest, scope, request.session_id, lookback)
        else:
            ask.reading = Future()
            ask.reading.set_result(self.reach.turns.latest(scope, request.session_id, lookback))
            ask.query = query_of(request, ask.latest())

    def _gather_all(self, uses: list[Use], ask: Ask) -> list[Gathered]:
        """Every source's candidates, in the order of `uses`: recall (when there is one) on this thread,
        the others on the pool at once."""
        last = max(uses, key=lambda u: u.source.layout == "threads")
        running = {u.slot: in_background(self._gather, u, ask) for u in uses if u is not last}
        done = {last.slot: self._gather(last, ask)}
        return [done[u.slot] if u.slot in done else running[u.slot].result() for u in uses]

    def _pack(self, request: ContextRequest, uses: list[Use], gathered: list[Gathered]) -> Packed:
        sections = [Section(u.section, u.title, u.source.layout) for u in uses]
        return pack(
            (c for g in gathered for c in g.candidates),
            request.token_budget - MARKER_TOKENS,  # the block goes out inside mongomem's marker
            sections,
            self.tuning,
            measure(request.format),
            bullet(request.format),
        )

    def _gather(self, use: Use, ask: Ask) -> Gathered:
        started = time.perf_counter()
        try:
            gathered = use.source.gather(self.reach, ask, use)
        except MongomemError as exc:  # one source down: the others still make the block
            gathered = Gathered(note=f"{use.section} unavailable: {exc.message}")
        gathered.ms = (time.perf_counter() - started) * 1000
        return gathered


def _log_built(scope: Scope, request: ContextRequest, response: ContextResponse) -> None:
    logger.info(
        "context built",
        extra={
            "user_id": scope.user_id,
            "session_id": request.session_id,
            "token_budget": request.token_budget,
            "tokens": response.tokens,
            "ids": response.ids,
            "left_out": response.left_out,
            "timings_ms": response.timings_ms,
        },
    )
