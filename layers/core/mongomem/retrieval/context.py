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

import json
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mongomem import markers
from mongomem.errors import MongomemError, NotFound
from mongomem.extraction.subjects import stored_names
from mongomem.kinds import builtin_registry
from mongomem.kinds.base import norm
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
from mongomem.retrieval.packing import (
    MARKER_TOKENS,
    TITLES,
    Candidate,
    Packed,
    Section,
    Tuning,
    estimate_tokens,
    memory_candidates,
    pack,
    recalled_candidates,
    recent_candidates,
    relevance_floor,
    render,
)
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
# Turns read to find the latest user message when the request has no query.
QUERY_LOOKBACK = 20


class OnceEmbedder:
    """A request's query embedded once, however many sources search with it (the first source embeds,
    the others wait for its vector instead of embedding it again)."""

    def __init__(self, inner: EmbeddingProvider) -> None:
        self.inner = inner
        self.model, self.dim = inner.model, inner.dim
        self._lock = threading.Lock()
        self._done: dict[tuple[str, str], list[float]] = {}

    def __getattr__(self, name: str) -> Any:  # similarity_thresholds, relevance_floor ...
        return getattr(self.inner, name)

    def embed(self, texts: list[str], purpose: Any = "document") -> list[list[float]]:
        if len(texts) != 1:
            return self.inner.embed(texts, purpose)
        key = (texts[0], str(purpose))
        with self._lock:
            if key not in self._done:
                self._done[key] = self.inner.embed(texts, purpose)[0]
            return [self._done[key]]

    def ready(self) -> tuple[bool, str]:
        return self.inner.ready()


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
        self.working = working
        self.working_scope = working_scope
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
        if request.sources:  # the caller names the sources (mongomem.retrieval.context_sources)
            from mongomem.retrieval.context_sources import SourcesContext

            return SourcesContext(self, self.kinds or builtin_registry()).build(principal, scope, request)
        embedder = OnceEmbedder(self.search.embedder)  # both searches share one embedding of the query
        floor = relevance_floor(self.search.embedder)
        given = request.query if request.query and request.query.strip() else None
        pending = in_background(self.pending.of, scope) if self.pending is not None else None
        working = in_background(self._working_memory, principal, scope, request)
        memories = in_background(self._memories, embedder, scope, request, given, floor) if given else None
        latest = self.turns.latest(scope, request.session_id, max(request.recent_turns, QUERY_LOOKBACK))
        query = given or _latest_user_text(latest)
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
            from mongomem.retrieval.context_sources import apply_format

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
        if self.working is None:
            return [], None
        from mongomem.workingmemory.service import resolve_key

        key = resolve_key(principal, self.working_scope, scope.user_id, request.session_id, request.agent_id)
        try:
            state = self.working.get(key)
        except NotFound as exc:  # working memory is disabled for the project
            return [], exc.message
        text = state.content
        if state.data is not None:
            text = json.dumps(state.data, indent=2, ensure_ascii=False)
        if not text or not text.strip():
            return [], None
        ref = f"working-memory:{key.scope}:{key.thread_id or key.user_id}@v{state.version}"
        reason = f"the {key.scope} working memory (the agent's scratchpad): always first"
        return [Candidate.first("working_memory", ref, text.strip(), reason)], None

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
        pool = self.tuning.recall_pool(request.token_budget, request.recall_top_k)
        if not query or pool == 0:
            return [], 0, None
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


def _latest_user_text(turns: list[Turn]) -> str | None:
    for turn in reversed(turns):
        if turn.role == "user" and turn.content.strip():
            return turn.content
    return None
