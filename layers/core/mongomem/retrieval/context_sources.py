"""A context block from the sources a caller names (`POST /v1/context` with `sources`), and its formats.

Each source (turns, working memory, every memory kind together or one kind, custom types included) is
fetched concurrently with its own mode, top_k, min_score and metadata filter; then the block is fitted
to the budget in the sources' order (the last source loses items first) and rendered as text, markdown,
OpenAI messages or Anthropic system blocks - always inside mongomem's marker. The response says, per
source, how many items it found and chose and why the others were dropped, and how long each stage took.

The default block (retrieval/context.py) values every candidate and packs best value first; here the
caller's order is the value (a strict priority: the last source loses its items first). Both start from
retrieval/query.py (the query, its one embedding, the working memory); this module imports nothing of
the default block.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mongomem import markers
from mongomem.errors import MongomemError, UnknownKind
from mongomem.models.common import Principal, Scope, as_utc
from mongomem.models.recall import (
    ContextFormat,
    ContextRequest,
    ContextResponse,
    ContextSection,
    ContextSource,
    RecallRequest,
    SourceReport,
)
from mongomem.models.search import SearchMode, SearchRequest
from mongomem.models.turns import Turn
from mongomem.observability import logger
from mongomem.retrieval.packing import estimate_tokens
from mongomem.retrieval.query import QUERY_LOOKBACK, OnceEmbedder, WorkingMemoryReader, query_of
from mongomem.retrieval.recall import Recall, RecallDisabled
from mongomem.retrieval.search import MemorySearch
from mongomem.shortterm.ports import TurnRepository

if TYPE_CHECKING:
    from mongomem.kinds import KindRegistry

MAX_WORKERS = 8
# Ranked sources ask for more than top_k when they filter, so that a filter does not leave them short.
FILTER_OVERFETCH = 4
SEARCH_MODES: dict[str, SearchMode] = {"text": "bm25", "semantic": "knn", "hybrid": "hybrid"}
TITLES = {
    "working_memory": "Working memory",
    "turns": "Recent messages in this session",
    "recalled": "Earlier messages that may be relevant",
    "memories": "What is known about the user",
}


@dataclass
class _Item:
    ids: list[str]
    text: str
    score: float | None = None


@dataclass
class _Fetched:
    """One source's items (best first; turns in time order) and what it already dropped."""

    spec: ContextSource
    name: str
    title: str
    items: list[_Item] = field(default_factory=list)
    found: int = 0
    dropped: dict[str, int] = field(default_factory=lambda: {"score": 0, "filter": 0, "budget": 0})
    note: str | None = None
    ms: float = 0.0
    truncated: bool = False
    drop_front: bool = False  # recent turns lose their oldest first


def _matches(data: dict[str, Any] | None, wanted: dict[str, Any]) -> bool:
    """Every wanted field equal (a dotted path reads nested objects; a list holds the value)."""
    for path, value in wanted.items():
        got: Any = data or {}
        for part in path.split("."):
            got = got.get(part) if isinstance(got, dict) else None
        if isinstance(got, list):
            if value not in got:
                return False
        elif got != value:
            return False
    return True


def _turn_line(turn: Turn) -> str:
    return f"[{as_utc(turn.timestamp):%Y-%m-%d %H:%M}] {turn.name or turn.role}: {turn.content}"


class SourcesContext:
    """Builds the block of one request with `sources` (a new one per request: its searches share one
    embedding of the query)."""

    def __init__(
        self,
        turns: TurnRepository,
        working: WorkingMemoryReader,
        search: MemorySearch,
        recall: Recall,
        kinds: KindRegistry,
    ) -> None:
        self.turns = turns
        self.working = working
        self.recall = recall
        self.kinds = kinds
        self.search = MemorySearch(search.store, search.index, OnceEmbedder(search.embedder))

    def build(self, principal: Principal, scope: Scope, request: ContextRequest) -> ContextResponse:
        started = time.perf_counter()
        specs = request.sources or []
        unknown = [
            s.source
            for s in specs
            if s.source not in ("turns", "working_memory", "memories", *self.kinds.names())
        ]
        if unknown:
            allowed = ["turns", "working_memory", "memories", *self.kinds.names()]
            raise UnknownKind(
                f"unknown context source(s) {', '.join(repr(u) for u in unknown)}; allowed: {', '.join(allowed)}",
                {"path": "sources", "allowed": allowed},
            )
        # the session's latest turns: the default query, and what recall must not repeat
        lookback = max(
            [s.top_k for s in specs if s.source == "turns" and s.mode == "text"] + [QUERY_LOOKBACK]
        )
        latest = self.turns.latest(scope, request.session_id, lookback)
        query = query_of(request, latest)
        recent_ids = [
            t.public_id for s in specs if s.source == "turns" and s.mode == "text" for t in latest[-s.top_k :]
        ]

        def job(spec: ContextSource) -> _Fetched:
            return self._timed(
                spec, lambda: self._fetch(principal, scope, request, spec, query, latest, recent_ids)
            )

        # every source at once: the block takes as long as its slowest source, not their sum
        with ThreadPoolExecutor(
            max_workers=min(len(specs), MAX_WORKERS), thread_name_prefix="context"
        ) as pool:
            fetched = list(pool.map(job, specs))
        fetch_ms = (time.perf_counter() - started) * 1000
        t_fit = time.perf_counter()
        render = _renderer(request.format)
        budget = request.token_budget - estimate_tokens(markers.wrap(".", "context")) + estimate_tokens(".")
        _fit(fetched, budget, render)
        fit_ms = (time.perf_counter() - t_fit) * 1000
        t_render = time.perf_counter()
        body = render(fetched)
        context = markers.wrap(body, "context") if body else ""
        response = ContextResponse(
            context=context,
            sections=[
                ContextSection(
                    name=f.name,
                    title=f.title,
                    text=_section_text(f, request.format),
                    tokens=estimate_tokens(_section_text(f, request.format)) if f.items else 0,
                    ids=[i for item in f.items for i in item.ids],
                    dropped=sum(f.dropped.values()),
                    truncated=f.truncated,
                    note=f.note,
                )
                for f in fetched
            ],
            ids={},
            token_budget=request.token_budget,
            tokens=estimate_tokens(context) if context else 0,
            query=query,
            format=request.format,
            sources=[
                SourceReport(
                    source=f.spec.source,
                    mode=f.spec.mode,
                    top_k=f.spec.top_k,
                    found=f.found,
                    chosen=len(f.items),
                    dropped=dict(f.dropped),
                    tokens=estimate_tokens(_section_text(f, request.format)) if f.items else 0,
                    ids=[i for item in f.items for i in item.ids],
                    ms=round(f.ms, 2),
                    note=f.note,
                )
                for f in fetched
            ],
        )
        for section in response.sections:
            response.ids[section.name] = [*response.ids.get(section.name, []), *section.ids]
        apply_format(
            response,
            request.format,
            [(f.title, _section_text(f, request.format)) for f in fetched if f.items],
        )
        render_ms = (time.perf_counter() - t_render) * 1000
        response.timings_ms = {
            "fetch": round(fetch_ms, 2),
            "fit": round(fit_ms, 2),
            "render": round(render_ms, 2),
            "total": round((time.perf_counter() - started) * 1000, 2),
        }
        logger.info(
            "context built from sources",
            extra={
                "user_id": scope.user_id,
                "session_id": request.session_id,
                "sources": [(s.source, s.chosen, s.dropped) for s in response.sources or []],
                "tokens": response.tokens,
                "timings_ms": response.timings_ms,
            },
        )
        return response

    # -- fetching ------------------------------------------------------------------------------
    @staticmethod
    def _timed(spec: ContextSource, run: Callable[[], _Fetched]) -> _Fetched:
        started = time.perf_counter()
        try:
            fetched = run()
        except MongomemError as exc:  # one source down: the others still make the block
            fetched = _Fetched(spec, spec.source, TITLES.get(spec.source, spec.source))
            fetched.note = f"{spec.source} unavailable: {exc.message}"
        fetched.ms = (time.perf_counter() - started) * 1000
        return fetched

    def _fetch(
        self,
        principal: Principal,
        scope: Scope,
        request: ContextRequest,
        spec: ContextSource,
        query: str | None,
        latest: list[Turn],
        recent_ids: list[str],
    ) -> _Fetched:
        if spec.source == "working_memory":
            return self._working_memory(principal, scope, request, spec)
        if spec.source == "turns":
            if spec.mode == "text":
                return self._recent(spec, latest)
            return self._recalled(scope, request, spec, query, recent_ids)
        return self._memories(scope, request, spec, query)

    def _working_memory(
        self, principal: Principal, scope: Scope, request: ContextRequest, spec: ContextSource
    ) -> _Fetched:
        out = _Fetched(spec, "working_memory", TITLES["working_memory"])
        notes, note = self.working.read(principal, scope, request)
        out.items = [_Item([notes.ref], notes.text)] if notes is not None else []
        out.found, out.note = len(out.items), note
        return out

    def _recent(self, spec: ContextSource, latest: list[Turn]) -> _Fetched:
        out = _Fetched(spec, "turns", TITLES["turns"], drop_front=True)
        window = latest[-spec.top_k :]
        out.found = len(window)
        kept = [t for t in window if _matches(t.metadata, spec.filter)]
        out.dropped["filter"] = len(window) - len(kept)
        out.items = [_Item([t.public_id], _turn_line(t)) for t in kept]
        return out

    def _recalled(
        self,
        scope: Scope,
        request: ContextRequest,
        spec: ContextSource,
        query: str | None,
        recent_ids: list[str],
    ) -> _Fetched:
        out = _Fetched(spec, "recalled", TITLES["recalled"])
        if not query:
            out.note = "no query: pass `query` or record a user turn first"
            return out
        try:
            found = self.recall.recall(
                scope,
                RecallRequest(
                    query=query[:2000],
                    thread=request.session_id,
                    scope="resource",
                    top_k=min(spec.top_k * (FILTER_OVERFETCH if spec.filter else 1), 100),
                    message_range=request.message_range,
                    exclude_recent=recent_ids or None,
                ),
                text=False,
            )
        except RecallDisabled:
            out.note = "recall is disabled (memory.recall.enabled: false)"
            return out
        turns = {t.turn_id: (g.thread, t) for g in found.threads for t in g.turns}
        out.found = len(found.matched)
        for match_id in found.matched:
            thread, turn = turns[match_id]
            if spec.min_score is not None and (turn.score or 0.0) < spec.min_score:
                out.dropped["score"] += 1
            elif not _matches(turn.metadata, spec.filter):
                out.dropped["filter"] += 1
            elif len(out.items) < spec.top_k:
                line = (
                    f"[{turn.timestamp:%Y-%m-%d %H:%M}] ({thread}) {turn.name or turn.role}: {turn.content}"
                )
                out.items.append(_Item([match_id], line, turn.score))
        return out

    def _memories(
        self, scope: Scope, request: ContextRequest, spec: ContextSource, query: str | None
    ) -> _Fetched:
        name = spec.source
        title = TITLES["memories"] if name == "memories" else f"{name.capitalize()} memories"
        out = _Fetched(spec, name, title)
        if not query:
            out.note = "no query: pass `query` or record a user turn first"
            return out
        found = self.search.search(
            scope,
            SearchRequest(
                query=query[:2000],
                types=None if name == "memories" else [name],
                top_k=min(spec.top_k * (FILTER_OVERFETCH if spec.filter else 1), 100),
                mode=SEARCH_MODES[spec.mode],
                observed_after=request.observed_after,
                observed_before=request.observed_before,
            ),
        )
        out.found = len(found.results)
        for r in found.results:
            if spec.min_score is not None and r.score < spec.min_score:
                out.dropped["score"] += 1
            elif not _matches(r.payload, spec.filter):
                out.dropped["filter"] += 1
            elif len(out.items) < spec.top_k:
                out.items.append(_Item([r.memory_id], f"({r.type}) {r.text}", r.score))
            else:
                out.dropped["score"] += 1  # ranked below the source's top_k
        return out


# -- budget and rendering ------------------------------------------------------------------------
Renderer = Callable[[list[_Fetched]], str]


def _section_text(f: _Fetched, fmt: ContextFormat) -> str:
    if fmt == "markdown" and f.name != "working_memory":
        return "\n".join(f"- {i.text}" for i in f.items)
    return "\n".join(i.text for i in f.items)


def _renderer(fmt: ContextFormat) -> Renderer:
    level = "##"

    def render(fetched: list[_Fetched]) -> str:
        parts = [f"{level} {f.title}\n{_section_text(f, fmt)}" for f in fetched if f.items]
        text = "\n\n".join(parts)
        return f"# Context\n\n{text}" if fmt == "markdown" and text else text

    return render


def _fit(fetched: list[_Fetched], budget: int, render: Renderer) -> None:
    """Drop items of the last sources first (working memory is truncated, not dropped) until it fits."""
    while True:
        overflow = estimate_tokens(render(fetched)) - budget
        if overflow <= 0:
            return
        source = next((f for f in reversed(fetched) if f.items), None)
        if source is None:
            return
        if source.name == "working_memory":
            item = source.items[0]
            keep = len(item.text) - 4 * overflow - 8
            if keep <= 0:
                source.items.clear()
                source.dropped["budget"] += 1
            else:
                item.text = item.text[:keep].rstrip() + " …"
                source.truncated = True
            continue
        source.items.pop(0 if source.drop_front else -1)
        source.dropped["budget"] += 1


def apply_format(response: ContextResponse, fmt: ContextFormat, sections: list[tuple[str, str]]) -> None:
    """Add the chat-API shapes of the block: OpenAI system messages or Anthropic system blocks (each
    block inside mongomem's marker); text and markdown are the `context` itself."""
    response.format = fmt
    if not response.context:
        return
    if fmt == "openai":
        response.messages = [{"role": "system", "content": response.context}]
    elif fmt == "anthropic":
        response.system = [
            {"type": "text", "text": markers.wrap(f"## {title}\n{text}", "context")}
            for title, text in sections
        ]
