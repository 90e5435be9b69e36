"""Build an agent's context for one session: one labelled block within a token budget.

Sections, in priority order (the budget goes to them in this order; when the block is too long,
items of the lowest-priority section are dropped first):

1. working memory   - the scratchpad (WorkingMemoryService); truncated only when it alone overflows
2. recent turns     - the newest turns of the session; the oldest go first
3. memories         - long-term memories relevant to the query (MemorySearch); the weakest go first
4. recalled         - older messages found by semantic recall, excluding the recent window; each match
                      with its neighbours is one item; the lowest-ranked go first

Tokens are estimated like the record path (about 4 characters a token), on the rendered block.
"""

from __future__ import annotations

import contextvars
import json
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from mongomem import markers
from mongomem.errors import MongomemError, NotFound
from mongomem.models.common import Principal, Scope, as_utc
from mongomem.models.recall import (
    ContextRequest,
    ContextResponse,
    ContextSection,
    RecalledThread,
    RecallRequest,
    SectionName,
    span_of,
)
from mongomem.models.search import SearchRequest
from mongomem.models.turns import Turn
from mongomem.observability import logger
from mongomem.retrieval.recall import Recall, RecallDisabled
from mongomem.shortterm.ports import TurnRepository

if TYPE_CHECKING:
    from mongomem.kinds import KindRegistry
    from mongomem.models.working_memory import WorkingMemoryScope
    from mongomem.retrieval.search import MemorySearch
    from mongomem.workingmemory.service import WorkingMemoryService

__all__ = ["PRIORITY", "TITLES", "ContextBuilder", "estimate_tokens"]

PRIORITY = ("working_memory", "recent_turns", "memories", "recalled")
TITLES = {
    "working_memory": "## Working memory",
    "recent_turns": "## Recent messages in this session",
    "memories": "## What is known about the user",
    "recalled": "## Earlier messages that may be relevant",
}
# Turns read to find the latest user message when the request has no query.
QUERY_LOOKBACK = 20
# The sources run concurrently, each waiting on its own store or index: one worker per source that
# runs beside the request's thread (working memory, memories), shared by the process's requests.
SOURCE_WORKERS = 4
T = TypeVar("T")
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _in_background(fn: Callable[..., T], *args: Any) -> Future[T]:
    """Run `fn(*args)` on the sources' pool, with the caller's context variables (log keys, request)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=SOURCE_WORKERS, thread_name_prefix="context-source")
    return _pool.submit(contextvars.copy_context().run, fn, *args)


def estimate_tokens(text: str) -> int:
    """About 4 characters a token, the rule shortterm.record.estimate_tokens uses."""
    return len(text) // 4 + 1


# What the marker around the block costs of the budget.
MARKER_TOKENS = estimate_tokens(markers.wrap(".", "context")) - estimate_tokens(".")


@dataclass
class _Item:
    ids: list[str]
    text: str


@dataclass
class _Section:
    name: SectionName
    items: list[_Item] = field(default_factory=list)
    note: str | None = None
    dropped: int = 0
    truncated: bool = False
    # which end loses items first: recent turns drop their oldest (front), the ranked sections their last
    drop_front: bool = False
    # how the kept items read as text (default: one line each)
    renderer: Callable[[list[_Item]], str] | None = None

    def text(self) -> str:
        if self.renderer is not None:
            return self.renderer(self.items)
        return "\n".join(item.text for item in self.items)


def _render(sections: list[_Section]) -> str:
    return "\n\n".join(f"{TITLES[s.name]}\n{s.text()}" for s in sections if s.items)


def _line(turn: Turn) -> str:
    ts = as_utc(turn.timestamp)
    return f"[{ts:%Y-%m-%d %H:%M}] {turn.name or turn.role}: {turn.content}"


class ContextBuilder:
    def __init__(
        self,
        turns: TurnRepository,
        working: WorkingMemoryService | None,
        working_scope: WorkingMemoryScope,
        search: MemorySearch,
        recall: Recall,
        kinds: KindRegistry | None = None,
    ) -> None:
        self.turns = turns
        self.working = working
        self.working_scope = working_scope
        self.search = search
        self.recall = recall
        self.kinds = kinds

    def build(self, principal: Principal, scope: Scope, request: ContextRequest) -> ContextResponse:
        """Collect every section, then drop lowest-priority items until the block fits the budget.

        The sources run concurrently: working memory and memories on the pool, while this thread reads
        the recent turns and then recalls (recall leaves out the recent turns; without a query in the
        request, memories wait for the latest user turn as well)."""
        if request.sources:  # the caller names the sources (mongomem.retrieval.context_sources)
            from mongomem.kinds import builtin_registry
            from mongomem.retrieval.context_sources import SourcesContext

            return SourcesContext(self, self.kinds or builtin_registry()).build(principal, scope, request)
        given = request.query if request.query and request.query.strip() else None
        working = _in_background(self._working_memory, principal, scope, request)
        memories = _in_background(self._memories, scope, request, given) if given else None
        recent_docs = self.turns.latest(scope, request.session_id, max(request.recent_turns, QUERY_LOOKBACK))
        query = given or _latest_user_text(recent_docs)
        if memories is None:
            memories = _in_background(self._memories, scope, request, query)
        recent_docs = recent_docs[-request.recent_turns :] if request.recent_turns else []
        recalled = self._recalled(scope, request, query, [d.public_id for d in recent_docs])
        sections = [
            working.result(),
            _Section(
                "recent_turns",
                [_Item([d.public_id], _line(d)) for d in recent_docs],
                drop_front=True,
            ),
            memories.result(),
            recalled,
        ]
        # the block goes out inside mongomem's marker (an agent echoing it is never learnt from again)
        self._fit(sections, request.token_budget - MARKER_TOKENS)
        rendered = _render(sections)
        context = markers.wrap(rendered, "context") if rendered else ""
        out = [
            ContextSection(
                name=s.name,
                title=TITLES[s.name],
                text=s.text(),
                tokens=estimate_tokens(s.text()) if s.items else 0,
                ids=[i for item in s.items for i in item.ids],
                dropped=s.dropped,
                truncated=s.truncated,
                note=s.note,
            )
            for s in sections
        ]
        response = ContextResponse(
            context=context,
            sections=out,
            ids={s.name: s.ids for s in out},
            token_budget=request.token_budget,
            tokens=estimate_tokens(context) if context else 0,
            query=query,
        )
        if request.format != "text":
            from mongomem.retrieval.context_sources import apply_format

            apply_format(
                response, request.format, [(TITLES[s.name][3:], s.text()) for s in sections if s.items]
            )
        logger.info(
            "context built",
            extra={
                "user_id": scope.user_id,
                "session_id": request.session_id,
                "token_budget": request.token_budget,
                "tokens": response.tokens,
                "ids": response.ids,
            },
        )
        return response

    # -- sections ------------------------------------------------------------------------------
    def _working_memory(self, principal: Principal, scope: Scope, request: ContextRequest) -> _Section:
        section = _Section("working_memory")
        if self.working is None:
            return section
        from mongomem.workingmemory.service import resolve_key

        key = resolve_key(principal, self.working_scope, scope.user_id, request.session_id, request.agent_id)
        try:
            state = self.working.get(key)
        except NotFound as exc:  # working memory is disabled for the project
            section.note = exc.message
            return section
        text = state.content
        if state.data is not None:
            text = json.dumps(state.data, indent=2, ensure_ascii=False)
        if text and text.strip():
            ref = f"working-memory:{key.scope}:{key.thread_id or key.user_id}@v{state.version}"
            section.items.append(_Item([ref], text.strip()))
        return section

    def _memories(self, scope: Scope, request: ContextRequest, query: str | None) -> _Section:
        section = _Section("memories")
        if not query or request.memories_top_k == 0:
            section.note = None if query else "no query: pass `query` or record a user turn first"
            return section
        try:
            found = self.search.search(
                scope,
                SearchRequest(
                    query=query[:2000],
                    top_k=request.memories_top_k,
                    observed_after=request.observed_after,
                    observed_before=request.observed_before,
                    agent_id=request.agent_id,
                ),
            )
        except MongomemError as exc:
            section.note = f"memories unavailable: {exc.message}"
            return section
        for r in found.results:
            label = f"{r.type}, shared by the organisation" if r.visibility == "org" else r.type
            section.items.append(_Item([r.memory_id], f"- ({label}) {r.text}"))
        return section

    def _recalled(
        self, scope: Scope, request: ContextRequest, query: str | None, recent_ids: list[str]
    ) -> _Section:
        section = _Section("recalled")
        if not query or request.recall_top_k == 0:
            return section
        try:
            found = self.recall.recall(
                scope,
                RecallRequest(
                    query=query[:2000],
                    thread=request.session_id,
                    scope="resource",
                    top_k=request.recall_top_k,
                    message_range=request.message_range,
                    exclude_recent=recent_ids,
                ),
            )
        except RecallDisabled:
            section.note = "recall is disabled (memory.recall.enabled: false)"
            return section
        except MongomemError as exc:
            section.note = f"recall unavailable: {exc.message}"
            return section
        # One item per match: the match and the neighbours no better-ranked match already took.
        before, after = span_of(request.message_range)
        turns = {t.turn_id: (g.thread, t) for g in found.threads for t in g.turns}
        claimed: set[str] = set()
        snippets: list[list[str]] = []
        for match_id in found.matched:
            thread, match = turns[match_id]
            ids = [
                tid
                for tid, (th, t) in turns.items()
                if th == thread and match.seq - before <= t.seq <= match.seq + after and tid not in claimed
            ]
            claimed.update(ids)
            snippets.append(ids)
        section.items = [_Item(ids, "") for ids in snippets]
        section.renderer = lambda items: _recalled_text(found.threads, items)
        return section

    # -- budget --------------------------------------------------------------------------------
    def _fit(self, sections: list[_Section], budget: int) -> None:
        """Drop (or, for working memory, truncate) lowest-priority items until the block fits."""
        while True:
            overflow = estimate_tokens(_render(sections)) - budget
            if overflow <= 0:
                return
            section = next(s for s in reversed(sections) if s.items)
            if section.name == "working_memory":
                item = section.items[0]
                keep = len(item.text) - 4 * overflow - 8
                if keep <= 0:
                    section.items.clear()
                    section.dropped += 1
                else:
                    item.text = item.text[:keep].rstrip() + " …"
                    section.truncated = True
                continue
            section.items.pop(0 if section.drop_front else -1)
            section.dropped += 1


def _latest_user_text(turns: list[Turn]) -> str | None:
    for turn in reversed(turns):
        if turn.role == "user" and turn.content.strip():
            return turn.content
    return None


def _recalled_text(threads: list[RecalledThread], items: list[_Item]) -> str:
    """The kept recalled turns, grouped by thread in time order; context turns are indented."""
    keep = {tid for item in items for tid in item.ids}
    lines: list[str] = []
    for group in threads:
        kept = [t for t in group.turns if t.turn_id in keep]
        if not kept:
            continue
        lines.append(f"### thread {group.thread}")
        for t in kept:
            mark = "" if t.matched else "  "
            lines.append(f"{mark}[{t.timestamp:%Y-%m-%d %H:%M}] {t.name or t.role}: {t.content}")
    return "\n".join(lines)
