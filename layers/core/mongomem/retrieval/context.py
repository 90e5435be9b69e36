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

import dataclasses
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
from mongomem.retrieval.block.pack import Section, pack
from mongomem.retrieval.block.plan import TITLES, plan
from mongomem.retrieval.block.render import bullet, measure, respond
from mongomem.retrieval.block.sources import Ask, Gathered, Reach, RecentTurns, Use
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
        pending: Pending | None = None,
        tuning: Tuning | None = None,
    ) -> None:
        self.reach = Reach(
            turns, WorkingMemoryReader(working, working_scope), search, recall, kinds or builtin_registry()
        )
        self.pending = pending
        self.tuning = tuning or Tuning()

    def build(self, principal: Principal, scope: Scope, request: ContextRequest) -> ContextResponse:
        """Plan, gather (the sources that need no session turns start first, the others once the
        session's latest turns are read; the slowest, recall, runs on this thread), pack, render."""
        started = time.perf_counter()
        uses = plan(request, self.reach.kinds)
        embedder = OnceEmbedder(self.reach.search.embedder)  # every search shares one embedding of the query
        ask = Ask(principal, scope, request, request.query, embedder, relevance_floor(embedder), self.tuning)
        pending = in_background(self.pending.of, scope) if self.pending is not None else None
        running: dict[int, Future[Gathered]] = {
            u.slot: in_background(self._gather, u, ask) for u in uses if u.source.early(request)
        }
        later = [u for u in uses if u.slot not in running]
        if later:
            ask = self._session(ask, uses)
            last = max(later, key=lambda u: u.source.layout == "threads")  # recall, when there is one
            running.update({u.slot: in_background(self._gather, u, ask) for u in later if u is not last})
            done = {last.slot: self._gather(last, ask)}
        else:
            done = {}
        gathered = [done[u.slot] if u.slot in done else running[u.slot].result() for u in uses]
        fetched = time.perf_counter()
        sections = [Section(u.section, u.title, u.source.layout) for u in uses]
        packed = pack(
            (c for g in gathered for c in g.candidates),
            request.token_budget - MARKER_TOKENS,  # the block goes out inside mongomem's marker
            sections,
            self.tuning,
            measure(request.format),
            bullet(request.format),
        )
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
        )
        ended = time.perf_counter()
        response.timings_ms = {
            "fetch": round((fetched - started) * 1000, 2),
            "fit": round((fitted - fetched) * 1000, 2),
            "render": round((ended - fitted) * 1000, 2),
            "total": round((ended - started) * 1000, 2),
        }
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
        return response

    def _session(self, ask: Ask, uses: list[Use]) -> Ask:
        """The request's query (else the latest user turn) and the recent window recall leaves out."""
        request = ask.request
        windows = [u for u in uses if isinstance(u.source, RecentTurns)]
        sizes = [u.top_k if u.top_k is not None else request.recent_turns for u in windows]
        latest = self.reach.turns.latest(ask.scope, request.session_id, max([*sizes, QUERY_LOOKBACK]))
        ask = dataclasses.replace(ask, latest=latest, query=query_of(request, latest))
        ask.recent_ids = list(dict.fromkeys(t.public_id for u in windows for t in RecentTurns.window(ask, u)))
        return ask

    def _gather(self, use: Use, ask: Ask) -> Gathered:
        started = time.perf_counter()
        try:
            gathered = use.source.gather(self.reach, ask, use)
        except MongomemError as exc:  # one source down: the others still make the block
            gathered = Gathered(note=f"{use.section} unavailable: {exc.message}")
        gathered.ms = (time.perf_counter() - started) * 1000
        return gathered
