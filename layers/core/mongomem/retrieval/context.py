"""Build an agent's context for one session: the most useful items of every source within the token budget.

Candidates come from every source at once:

- working memory  - the scratchpad (WorkingMemoryService); always first, truncated only when it alone
                    overflows the budget
- recent turns    - the newest turns of the session (the newest worth most)
- memories        - long-term memories relevant to the query (MemorySearch)
- recalled        - older turns that match the query (Recall), each with its neighbours, which are items
                    of their own worth a share of their match

Each candidate has a value (how likely it holds what the query needs: from its rank in its source), a
token cost and a reason. The block is filled best value per token first until the budget is spent, so a
small budget keeps what matters most and a larger one adds the next-best items (`packing.Tuning` holds the
constants, measured on the LoCoMo dev split: bench/studies/context/RESULTS.md). Nothing below the relevance
floor enters (a memory or a recalled turn that shares no word with the query and is not close in meaning:
an organisation's memories never fill a user's block), and no turn is in the block twice. Every item says
when it was said or stated, every turn who said it; relative dates in a turn are resolved against its date.

Tokens are estimated like the record path (about 4 characters a token), on the rendered block.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from mongomem import markers
from mongomem.errors import MongomemError
from mongomem.kinds import builtin_registry
from mongomem.kinds.base import norm
from mongomem.longterm.subjects import stored_names
from mongomem.models.common import Principal, Scope
from mongomem.models.recall import (
    ContextItem,
    ContextRequest,
    ContextResponse,
    ContextSection,
    RecalledTurn,
    RecallRequest,
    RecallResponse,
    span_of,
)
from mongomem.models.search import SearchRequest, SearchResult
from mongomem.models.turns import Turn
from mongomem.observability import logger
from mongomem.ports import EmbeddingProvider
from mongomem.retrieval.background import in_background
from mongomem.retrieval.context_sources import SourcesContext, apply_format
from mongomem.retrieval.packing import (
    MARKER_TOKENS,
    TITLES,
    Candidate,
    Packed,
    Section,
    Tuning,
    estimate_tokens,
    line_tokens,
    memory_candidates,
    pack,
    recalled_candidates,
    recent_candidates,
    relevance_floor,
    render,
)
from mongomem.retrieval.query import QUERY_LOOKBACK, OnceEmbedder, WorkingMemoryReader, query_of
from mongomem.retrieval.recall import Recall, RecallDisabled
from mongomem.shortterm.ports import TurnRepository

if TYPE_CHECKING:
    from mongomem.kinds import KindRegistry
    from mongomem.models.working_memory import WorkingMemoryScope
    from mongomem.retrieval.pending import Pending
    from mongomem.retrieval.search import MemorySearch
    from mongomem.workingmemory.service import WorkingMemoryService

__all__ = ["PRIORITY", "TITLES", "ContextBuilder", "OnceEmbedder", "estimate_tokens"]

# A query in the user's own words speaks of the user: "what should I eat?", "my flight".
FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself)\b", re.IGNORECASE)

PRIORITY = ("working_memory", "recent_turns", "memories", "recalled")


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
        self.turns = turns
        self.working = WorkingMemoryReader(working, working_scope)
        self.search = search
        self.recall = recall
        self.kinds = kinds
        self.pending = pending
        self.tuning = tuning or Tuning()

    def build(self, principal: Principal, scope: Scope, request: ContextRequest) -> ContextResponse:
        """Collect every source's candidates concurrently, then fill the budget best value per token first.

        Working memory, memories and the pending figures run on the pool, while this thread reads the
        recent turns and then recalls (recall leaves out the recent turns; without a query in the request,
        memories wait for the latest user turn as well). The query is embedded once for both searches."""
        if request.sources:  # the caller names the sources and their order (retrieval/context_sources.py)
            sources = SourcesContext(
                self.turns, self.working, self.search, self.recall, self.kinds or builtin_registry()
            )
            return sources.build(principal, scope, request)
        embedder = OnceEmbedder(self.search.embedder)  # both searches share one embedding of the query
        floor = relevance_floor(self.search.embedder)
        given = request.query if request.query and request.query.strip() else None
        pending = in_background(self.pending.of, scope) if self.pending is not None else None
        working = in_background(self._working_memory, principal, scope, request)
        memories = in_background(self._memories, embedder, scope, request, given, floor) if given else None
        latest = self.turns.latest(scope, request.session_id, max(request.recent_turns, QUERY_LOOKBACK))
        query = query_of(request, latest)
        if memories is None:
            memories = in_background(self._memories, embedder, scope, request, query, floor)
        recent = latest[-request.recent_turns :] if request.recent_turns else []
        recent_ids = [t.public_id for t in recent]
        recalled, recall_below, recall_note = self._recalled(
            embedder, scope, request, query, recent_ids, floor
        )
        wm_candidates, wm_note = working.result()
        memory_found, memory_below, memory_note = memories.result()
        notes = {"working_memory": wm_note, "memories": memory_note, "recalled": recall_note}
        if not query:
            notes["memories"] = notes["memories"] or "no query: pass `query` or record a user turn first"
        candidates = [
            *wm_candidates,
            *recent_candidates(recent, self.tuning),
            *memory_found,
            *recalled,
        ]
        # the block goes out inside mongomem's marker (an agent echoing it is never learnt from again)
        packed = pack(
            candidates, request.token_budget - MARKER_TOKENS, self.tuning, recall_below + memory_below
        )
        rendered = render(packed.sections)
        context = markers.wrap(rendered, "context") if rendered else ""
        response = ContextResponse(
            context=context,
            sections=[_section_out(s, packed, notes.get(s.name)) for s in packed.sections],
            ids={s.name: s.ids() for s in packed.sections},
            items=[_item_out(c) for c in packed.chosen],
            left_out=dict(packed.left_out),
            token_budget=request.token_budget,
            tokens=estimate_tokens(context) if context else 0,
            query=query,
            pending=pending.result() if pending is not None else None,
        )
        if request.format != "text":
            apply_format(
                response,
                request.format,
                [(TITLES[s.name][3:], s.text()) for s in packed.sections if s.items],
            )
        logger.info(
            "context built",
            extra={
                "user_id": scope.user_id,
                "session_id": request.session_id,
                "token_budget": request.token_budget,
                "tokens": response.tokens,
                "ids": response.ids,
                "left_out": response.left_out,
            },
        )
        return response

    # -- sources -------------------------------------------------------------------------------
    def _working_memory(
        self, principal: Principal, scope: Scope, request: ContextRequest
    ) -> tuple[list[Candidate], str | None]:
        notes, note = self.working.read(principal, scope, request)
        if notes is None:
            return [], note
        reason = f"the {notes.scope} working memory (the agent's scratchpad): always first"
        return [Candidate.first("working_memory", notes.ref, notes.text, reason)], note

    def _memories(
        self,
        embedder: EmbeddingProvider,
        scope: Scope,
        request: ContextRequest,
        query: str | None,
        floor: float,
    ) -> tuple[list[Candidate], int, str | None]:
        pool = self.tuning.memory_pool(request.token_budget, request.memories_top_k)
        if not query or pool == 0:
            return [], 0, None
        try:
            found = self.search.search(
                scope,
                SearchRequest(
                    query=query[:2000],
                    top_k=pool,
                    observed_after=request.observed_after,
                    observed_before=request.observed_before,
                    agent_id=request.agent_id,
                ),
                embedder,
                pending=False,  # the block counts them once (ContextResponse.pending)
            )
        except MongomemError as exc:
            return [], 0, f"memories unavailable: {exc.message}"
        about = self._about_user(scope, query, found.results)
        return (*memory_candidates(found.results, floor, self.tuning, about), None)

    def _about_user(
        self, scope: Scope, query: str, results: list[SearchResult]
    ) -> Callable[[SearchResult], bool]:
        """Which results are about the user, when the query is: it speaks in the first person ("what
        should I eat?") or names the user ("Where does Maria live?" with a stored "user|name: Maria")."""
        kinds = self.kinds or builtin_registry()

        def mine(r: SearchResult) -> bool:
            kind = kinds.get(r.type)
            return kind is not None and kind.about_user(r.payload)

        if not any(mine(r) for r in results):
            return lambda _: False
        if not FIRST_PERSON.search(query):
            words = set(norm(query).split())
            names = stored_names(self.search.store, scope)
            if not any(set(name.split()) <= words for name in names if name):
                return lambda _: False
        return mine

    def _recalled(
        self,
        embedder: EmbeddingProvider,
        scope: Scope,
        request: ContextRequest,
        query: str | None,
        recent_ids: list[str],
        floor: float,
    ) -> tuple[list[Candidate], int, str | None]:
        budget = request.token_budget
        pool = self.tuning.recall_pool(budget, request.recall_top_k)
        if not query or pool == 0:
            return [], 0, None

        def enough(matches: list[Turn]) -> bool:  # the matches read so far could fill the budget alone
            return sum(line_tokens(t) for t in matches) >= budget

        try:
            found = self.recall.recall(
                scope,
                RecallRequest(
                    query=query[:2000],
                    thread=request.session_id,
                    scope="resource",
                    top_k=pool,
                    message_range=0,
                    exclude_recent=recent_ids,
                ),
                embedder,
                # what the caller asked for is read whole; the default reads what the budget holds
                enough=enough if request.recall_top_k is None else None,
                read=self.tuning.recall_read(budget),
                text=False,
            )
        except RecallDisabled:
            return [], 0, "recall is disabled (memory.recall.enabled: false)"
        except MongomemError as exc:
            return [], 0, f"recall unavailable: {exc.message}"
        span = span_of(request.message_range)
        return (
            *recalled_candidates(
                found, span, floor, self.tuning, self._neighbours(scope, found, span, recent_ids)
            ),
            None,
        )

    def _neighbours(
        self, scope: Scope, found: RecallResponse, span: tuple[int, int], recent_ids: list[str]
    ) -> list[RecalledTurn]:
        """The neighbours of the best few matches (one read: the rest are worth too little to fetch)."""
        if not any(span):
            return []
        turns = {t.turn_id: t for g in found.threads for t in g.turns}
        best = [turns[m] for m in found.matched[: self.tuning.neighbours_of]]
        ranges = [(t.thread, max(1, t.seq - span[0]), t.seq + span[1]) for t in best]
        skip = set(turns) | set(recent_ids)
        return [
            RecalledTurn(
                turn_id=t.public_id,
                thread=t.session_id,
                seq=t.seq,
                role=t.role,
                name=t.name,
                content=t.content,
                timestamp=t.timestamp,
                metadata=t.metadata,
                matched=False,
            )
            for t in (self.turns.in_ranges(scope, ranges) if ranges else [])
            if t.public_id not in skip
        ]


def _section_out(section: Section, packed: Packed, note: str | None) -> ContextSection:
    text = section.text()
    return ContextSection(
        name=section.name,
        title=TITLES[section.name],
        text=text,
        tokens=estimate_tokens(text) if section.items else 0,
        ids=section.ids(),
        dropped=packed.dropped.get(section.name, 0),
        truncated=section.truncated,
        note=note,
    )


def _item_out(c: Candidate) -> ContextItem:
    return ContextItem(
        id=c.ids[0], ids=c.ids, section=c.section, reason=c.reason, value=round(c.value, 4), tokens=c.tokens
    )
