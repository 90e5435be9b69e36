"""Gather: every source's candidates for one request, each source one small object.

A source reads what the request asks of it (`ask.latest()` waits for the session's latest turns, read
beside the sources when the request gives its query) and offers candidates (items.Candidate). The same filters
apply whether the request names its sources or not: the relevance floor, the agent's view, the observed
time, the date the question is asked (`as_of`), the kinds and partition keys the project declares. A
source named in `sources` adds its own limits (`top_k`, `min_score`, a payload or metadata `filter`); its
place in the list is its priority (plan.py). Adding a source is one class with a `gather` method and a
line in plan.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from mongomem.errors import MongomemError
from mongomem.kinds.base import norm
from mongomem.longterm.subjects import stored_names
from mongomem.models.common import Principal, Scope, as_utc
from mongomem.models.memory import MemoryView
from mongomem.models.observations import ObservationBlock
from mongomem.models.recall import (
    MAX_TOP_K,
    ContextRequest,
    ContextSource,
    RecalledTurn,
    RecallRequest,
    RecallResponse,
    SourceMode,
    span_of,
)
from mongomem.models.search import SearchMode, SearchRequest, SearchResult
from mongomem.models.turns import Turn
from mongomem.retrieval.block.items import (
    MARKER_TOKENS,
    Candidate,
    Tuning,
    estimate_tokens,
    line_tokens,
    memory_line,
    turn_line,
)
from mongomem.retrieval.recall import RecallDisabled, said_by
from mongomem.retrieval.when import day_text, stamp

if TYPE_CHECKING:
    from mongomem.kinds import KindRegistry
    from mongomem.ports import EmbeddingProvider
    from mongomem.retrieval.query import WorkingMemoryReader
    from mongomem.retrieval.recall import Recall
    from mongomem.retrieval.search import MemorySearch
    from mongomem.shortterm.ports import TurnRepository

NO_QUERY = "no query: pass `query` or record a user turn first"
SEARCH_MODES: dict[str, SearchMode] = {"text": "bm25", "semantic": "knn", "hybrid": "hybrid"}
# A query in the user's own words speaks of the user: "what should I eat?", "my flight".
FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself)\b", re.IGNORECASE)


class ObservationReader(Protocol):
    """Observational memory's logs (observations.service.ObservationService)."""

    def block(
        self,
        scope: Scope,
        *,
        session_id: str | None = None,
        as_of: datetime | None = None,
        after: datetime | None = None,
        before: datetime | None = None,
    ) -> ObservationBlock | None: ...


@dataclass(frozen=True)
class Reach:
    """The services the sources read."""

    turns: TurnRepository
    working: WorkingMemoryReader
    search: MemorySearch
    recall: Recall
    kinds: KindRegistry
    observations: ObservationReader | None = None  # None: observational memory is turned off


@dataclass
class Ask:
    """One request as every source sees it."""

    principal: Principal
    scope: Scope
    request: ContextRequest
    query: str | None
    embedder: EmbeddingProvider  # embeds the query once for every source
    floor: float  # the relevance floor (items.relevance_floor)
    tuning: Tuning
    windows: tuple[int, ...] = ()  # the sizes of the request's recent-turn windows
    reading: Future[list[Turn]] | None = None  # the session's latest turns, while they are read
    read: list[Turn] | None = None  # ... once read

    def latest(self) -> list[Turn]:
        """The session's latest turns said by the question's date (waits for them while they are read)."""
        if self.read is None:
            turns = self.reading.result() if self.reading is not None else []
            self.read = [t for t in turns if said_by(t, self.request.as_of)]
        return self.read

    def recent_ids(self) -> list[str]:
        """The turns of the recent windows: recall does not repeat them."""
        latest = self.latest()
        return list(dict.fromkeys(t.public_id for n in self.windows if n for t in latest[-n:]))


@dataclass
class Use:
    """A source as one request uses it: its section, priority and limits (None: the request's defaults)."""

    source: Source
    slot: int
    section: str
    title: str
    priority: int
    top_k: int | None = None
    mode: SourceMode | None = None
    filter: dict[str, Any] = field(default_factory=dict)
    min_score: float | None = None
    spec: ContextSource | None = None  # as named in `sources`
    as_of: datetime | None = None  # the date the question is asked (dates are read relative to it)

    def fetch(self, pool: int, cap: int, tuning: Tuning) -> int:
        """How many to ask for: more than kept when a filter or min_score may drop some."""
        limited = bool(self.filter) or self.min_score is not None
        return min(pool * (tuning.filter_overfetch if limited else 1), cap)

    def offer(self, ids: list[str], text: str, value: float, reason: str, **kw: Any) -> Candidate:
        return Candidate(self.section, ids, text, value, reason, priority=self.priority, slot=self.slot, **kw)


@dataclass
class Gathered:
    """One source's candidates and what it left out before the budget."""

    candidates: list[Candidate] = field(default_factory=list)
    found: int = 0
    dropped: dict[str, int] = field(default_factory=lambda: {"score": 0, "filter": 0})
    below_floor: int = 0
    note: str | None = None
    ms: float = 0.0
    version: int | None = None  # observations: the log's version


class Source(Protocol):
    layout: str  # how its section reads: pinned, ranked (best first), timeline, threads

    def gather(self, reach: Reach, ask: Ask, use: Use) -> Gathered: ...


def matches(data: dict[str, Any] | None, wanted: dict[str, Any]) -> bool:
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


def relevant(similarity: float | None, lexical: bool, floor: float) -> bool:
    return lexical or (similarity is not None and similarity >= floor)


class WorkingMemory:
    """The agent's scratchpad: one item, cut to what is left rather than left out."""

    layout = "pinned"

    def gather(self, reach: Reach, ask: Ask, use: Use) -> Gathered:
        read = reach.working.read(ask.principal, ask.scope, ask.request)
        out = Gathered(note=read.note)
        if (notes := read.notes) is not None:
            reason = f"the {notes.scope} working memory (the agent's scratchpad)"
            out.candidates.append(use.offer([notes.ref], notes.text, 1.0, reason, truncatable=True))
            out.found = 1
        return out


class AskedOn:
    """The date the question is asked (`as_of`): what every other date of the block is relative to."""

    layout = "pinned"

    def gather(self, reach: Reach, ask: Ask, use: Use) -> Gathered:
        out = Gathered()
        if ask.request.as_of is not None:
            when = as_utc(ask.request.as_of)
            text = f"{when:%A}, {stamp(when)} (memories and messages recorded after it are left out; working memory is as it is now)"
            out.candidates.append(use.offer(["as_of"], text, 1.0, "the date the question is asked"))
            out.found = 1
        return out


class Observed:
    """The user's observation log (or this session's: `scope: thread`), one item per day, the whole log
    or, when the budget is short, its newest days. A pure render of the log: the same log gives the same
    bytes (no clock, no scores), so the block stays byte-identical until the log changes."""

    layout = "pinned"

    def gather(self, reach: Reach, ask: Ask, use: Use) -> Gathered:
        out = Gathered()
        if reach.observations is None:
            out.note = "observational memory is turned off (memory.observations.enabled: false)"
            return out
        request = ask.request
        thread = use.spec is not None and use.spec.scope == "thread"
        block = reach.observations.block(
            ask.scope,
            session_id=request.session_id if thread else None,
            as_of=request.as_of,
            after=request.observed_after,
            before=request.observed_before,
        )
        out.version = block.version if block is not None else 0
        if block is None or not block.days:
            out.note = "nothing observed yet"
            return out
        out.found = len(block.days)
        room = request.token_budget - MARKER_TOKENS - estimate_tokens(use.title) - 2
        kept, used = [], 0
        for day in reversed(block.days):  # the newest days first, while they fit
            if used + day.tokens + 1 > room:
                break
            kept.append(day)
            used += day.tokens + 1
        out.dropped["older_days"] = len(block.days) - len(kept)
        for day in kept:  # its ids: the turns its lines were observed in
            ids = list(day.turns) or [f"observations:{day.day.isoformat()}"]
            reason = f"the observation log of {day.day.isoformat()}"
            out.candidates.append(use.offer(ids, day.text, 1.0, reason, order=(day.day,)))
        return out


class RecentTurns:
    """The session's newest turns: the newest worth 1, each older one `recent_decay` of the next."""

    layout = "timeline"

    @staticmethod
    def size(request: ContextRequest, use: Use) -> int:
        return use.top_k if use.top_k is not None else request.recent_turns

    def window(self, ask: Ask, use: Use) -> list[Turn]:
        n = self.size(ask.request, use)
        return ask.latest()[-n:] if n else []

    def gather(self, reach: Reach, ask: Ask, use: Use) -> Gathered:
        window = self.window(ask, use)
        out = Gathered(found=len(window))
        kept = [t for t in window if matches(t.metadata, use.filter)]
        out.dropped["filter"] = len(window) - len(kept)
        for age, turn in enumerate(reversed(kept)):
            out.candidates.append(
                use.offer(
                    [turn.public_id],
                    turn_line(turn, ask.tuning, as_of=ask.request.as_of),
                    ask.tuning.recent_decay**age,
                    "one of the session's latest turns" if age else "the session's latest turn",
                    turns=frozenset({turn.public_id}),
                    order=(turn.seq,),
                )
            )
        return out


class Memories:
    """Long-term memories for the query (every kind, or one), ranked by memory search."""

    layout = "ranked"

    def __init__(self, kind: str | None = None) -> None:
        self.kind = kind

    def gather(self, reach: Reach, ask: Ask, use: Use) -> Gathered:
        out = Gathered()
        request = ask.request
        pool = (
            use.top_k
            if use.top_k is not None
            else ask.tuning.memory_pool(request.token_budget, request.memories_top_k)
        )
        if not ask.query:
            out.note = NO_QUERY
            return out
        if pool == 0:
            return out
        try:
            found = reach.search.search(
                ask.scope,
                SearchRequest(
                    query=ask.query[:2000],
                    types=[self.kind] if self.kind else None,
                    top_k=use.fetch(pool, 100, ask.tuning),
                    mode=SEARCH_MODES[use.mode or "hybrid"],
                    observed_after=request.observed_after,
                    observed_before=_before(request.observed_before, request.as_of),
                    agent_id=request.agent_id,
                    include_superseded=True,  # a changed fact: the current value first, the old one marked
                ),
                ask.embedder,
                pending=False,  # the block counts them once (ContextResponse.pending)
            )
            versions = _versions(reach, ask, found.results)
        except MongomemError as exc:
            out.note = f"{use.section} unavailable: {exc.message}"
            return out
        results, since = versions.results, versions.since
        about = about_user(reach, ask.scope, ask.query, results)
        out.found = len(results)
        rank = 0
        ranks: dict[str, int] = {}
        for r in sorted(results, key=lambda r: r.memory_id in since):  # current versions first
            sig = r.signals
            if use.min_score is not None and r.score < use.min_score:
                out.dropped["score"] += 1
            elif use.filter and not matches(r.payload, use.filter):
                out.dropped["filter"] += 1
            elif not (relevant(sig.knn_score, sig.bm25_rank is not None, ask.floor) or about(r)):
                out.below_floor += 1
            elif r.memory_id in since:  # an older version of a fact offered: after the current one
                ahead = ranks.get(r.lineage_id)
                if ahead is not None:
                    out.candidates.append(_memory(use, ask, r, ahead, since[r.memory_id]))
            elif rank >= pool:
                out.dropped["score"] += 1  # ranked below the source's top_k
            else:
                rank += 1
                ranks[r.lineage_id] = rank
                out.candidates.append(_memory(use, ask, r, rank))
        return out


def _before(before: datetime | None, as_of: datetime | None) -> datetime | None:
    """The observed-time bound: the request's, and nothing stated after the question's date."""
    if as_of is None:
        return before
    bound = as_of + timedelta(microseconds=1)
    return bound if before is None else min(before, bound)


@dataclass(frozen=True)
class Versions:
    """Search results as of the question: `results` kept, `since` the time each older version kept was
    superseded (by memory id)."""

    results: list[SearchResult]
    since: dict[str, datetime]


def _versions(reach: Reach, ask: Ask, results: Sequence[SearchResult]) -> Versions:
    """The results with every superseded version that is not current as of the question left out,
    unless a newer version of its fact is among them: then it stays, with the time it was superseded
    (`since`, by memory id). As of a date (`as_of`), a version superseded only after it is current."""
    newest: dict[str, SearchResult] = {}
    for r in results:
        held = newest.get(r.lineage_id)
        if held is None or r.version > held.version:
            newest[r.lineage_id] = r
    alone = [r for r in results if r.status == "superseded" and newest[r.lineage_id] is r]
    current: set[str] = set()
    if alone and ask.request.as_of is not None:  # superseded now: was it still current then?
        view = MemoryView(ask.scope, ask.request.agent_id)
        records = reach.search.store.get_many(view, [r.memory_id for r in alone])
        after = {rec.superseded_by: rec.memory_id for rec in records if rec.superseded_by}
        for rec in reach.search.store.get_many(view, list(after)) if after else []:
            if as_utc(rec.observed_at or rec.created_at) > as_utc(ask.request.as_of):
                current.add(after[rec.memory_id])
    kept = [
        r
        for r in results
        if not (r.status == "superseded" and newest[r.lineage_id] is r) or r.memory_id in current
    ]
    since = {
        r.memory_id: newest[r.lineage_id].observed_at or newest[r.lineage_id].created_at
        for r in kept
        if newest[r.lineage_id] is not r
    }
    return Versions(kept, since)


def _memory(use: Use, ask: Ask, r: SearchResult, rank: int, superseded: datetime | None = None) -> Candidate:
    tuning, sig = ask.tuning, r.signals
    org = r.visibility == "org"
    label = f"{r.type}, shared by the organisation" if org else r.type
    value = tuning.memory_weight * tuning.rank_value(rank)
    if superseded is not None:  # an older value of a fact: marked, and after the current one
        label += f", superseded on {day_text(as_utc(superseded).date())}"
        value *= tuning.neighbour_share
    parts = [
        f"knn #{sig.knn_rank}, cosine {sig.knn_score:.2f}"
        if sig.knn_rank and sig.knn_score is not None
        else "",
        f"bm25 #{sig.bm25_rank}" if sig.bm25_rank else "",
    ]
    why = "; ".join(p for p in parts if p)
    return use.offer(
        [r.memory_id],
        memory_line(r.observed_at or r.created_at, label, r.text, ask.request.as_of),
        value,
        f"{r.type} memory{' of the organisation' if org else ''}: #{rank} for the query ({why})"
        + (" - an older value of the fact above" if superseded is not None else ""),
        order=(rank, superseded is not None),
    )


def about_user(
    reach: Reach, scope: Scope, query: str, results: Sequence[SearchResult]
) -> Callable[[SearchResult], bool]:
    """Which results are about the user, when the query is: it speaks in the first person ("what
    should I eat?") or names the user ("Where does Maria live?" with a stored "user|name: Maria")."""

    def mine(r: SearchResult) -> bool:
        kind = reach.kinds.get(r.type)
        return kind is not None and kind.about_user(r.payload)

    if not any(mine(r) for r in results):
        return lambda _: False
    if not FIRST_PERSON.search(query):
        words = set(norm(query).split())
        names = stored_names(reach.search.store, scope)
        if not any(set(name.split()) <= words for name in names if name):
            return lambda _: False
    return mine


class Recalled:
    """Older turns of every session that match the query (recall), each with its neighbours."""

    layout = "threads"

    def gather(self, reach: Reach, ask: Ask, use: Use) -> Gathered:
        out = Gathered()
        request, tuning = ask.request, ask.tuning
        asked = use.top_k if use.top_k is not None else request.recall_top_k
        pool = tuning.recall_pool(request.token_budget, asked)
        if not ask.query:
            out.note = NO_QUERY
            return out
        if pool == 0:
            return out
        try:
            found = self._recall(reach, ask, use, ask.query, pool, whole=asked is not None)
        except RecallDisabled:
            out.note = "recall is disabled (memory.recall.enabled: false)"
            return out
        except MongomemError as exc:
            out.note = f"recall unavailable: {exc.message}"
            return out
        turns = {t.turn_id: t for g in found.threads for t in g.turns}
        recent = set(ask.recent_ids())
        kept = self._keep(ask, use, [turns[m] for m in found.matched if m not in recent], pool, out)
        span = span_of(request.message_range)
        around = [t for g in found.threads for t in g.turns if not t.matched and t.turn_id not in recent]
        around += self._neighbours(reach, ask, kept, set(turns), span)
        out.candidates = _recalled(use, tuning, kept, around, span)
        return out

    @staticmethod
    def _recall(reach: Reach, ask: Ask, use: Use, query: str, pool: int, *, whole: bool) -> RecallResponse:
        """Recall's matches for the query (`whole`: what the caller asked for is read whole; else what
        the budget holds)."""
        request, tuning = ask.request, ask.tuning
        budget = request.token_budget

        def enough(found: list[Turn]) -> bool:  # the matches read so far could fill the budget alone
            return sum(line_tokens(t) for t in found) >= budget

        # while the session's latest turns are still being read, recall runs beside them and asks for as
        # many more as they may take of its matches
        known = ask.reading is None or ask.reading.done()
        extra = 0 if known else max(ask.windows, default=0)
        return reach.recall.recall(
            ask.scope,
            RecallRequest(
                query=query[:2000],
                thread=request.session_id,
                scope="resource",
                top_k=min(use.fetch(pool, MAX_TOP_K, tuning) + extra, MAX_TOP_K),
                message_range=0,
                exclude_recent=ask.recent_ids() if known else None,
                as_of=request.as_of,
            ),
            ask.embedder,
            enough=None if whole else enough,
            read=tuning.recall_read(budget),
            text=False,
        )

    @staticmethod
    def _keep(
        ask: Ask, use: Use, matched: list[RecalledTurn], pool: int, out: Gathered
    ) -> list[RecalledTurn]:
        """The matches above the source's limits and the relevance floor, at most `pool`; `out` counts
        what was found and left out."""
        out.found = len(matched)
        kept: list[RecalledTurn] = []
        for match in matched:
            signals = match.signals or {}
            lexical = "bm25" in signals or "bm25_context" in signals
            if use.min_score is not None and (match.score or 0.0) < use.min_score:
                out.dropped["score"] += 1
            elif use.filter and not matches(match.metadata, use.filter):
                out.dropped["filter"] += 1
            elif not relevant(match.similarity, lexical, ask.floor):
                out.below_floor += 1
            elif len(kept) >= pool:
                out.dropped["score"] += 1
            else:
                kept.append(match)
        return kept

    @staticmethod
    def _neighbours(
        reach: Reach, ask: Ask, kept: list[RecalledTurn], have: set[str], span: tuple[int, int]
    ) -> list[RecalledTurn]:
        """The neighbours of the best few matches (one read: the rest are worth too little to fetch)."""
        if not any(span) or not kept:
            return []
        best = kept[: ask.tuning.neighbours_of]
        ranges = [(t.thread, max(1, t.seq - span[0]), t.seq + span[1]) for t in best]
        skip = have | set(ask.recent_ids())
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
            for t in reach.turns.in_ranges(ask.scope, ranges)
            if t.public_id not in skip and said_by(t, ask.request.as_of)
        ]


def _recalled(
    use: Use, tuning: Tuning, kept: list[RecalledTurn], around: list[RecalledTurn], span: tuple[int, int]
) -> list[Candidate]:
    """Each kept match, worth its rank's value, and its neighbours (within `span` = (before, after) of
    it), worth a share of it; a turn offered twice keeps its best value."""
    by_thread: dict[str, list[RecalledTurn]] = {}
    for turn in around:
        by_thread.setdefault(turn.thread, []).append(turn)
    best: dict[str, Candidate] = {}

    def offer(turn: RecalledTurn, value: float, reason: str, indent: bool) -> None:
        held = best.get(turn.turn_id)
        if held is not None and held.value >= value:
            return
        best[turn.turn_id] = use.offer(
            [turn.turn_id],
            turn_line(turn, tuning, tuning.recalled_time, as_of),
            value,
            reason,
            turns=frozenset({turn.turn_id}),
            thread=turn.thread,
            order=(as_utc(turn.timestamp), turn.thread, turn.seq),
            indent=indent,
        )

    as_of = use.as_of
    for rank, match in enumerate(kept, start=1):
        value = tuning.rank_value(rank)
        signals = match.signals or {}
        ranked_by = ", ".join(f"{name} #{r}" for name, r in sorted(signals.items(), key=lambda kv: kv[1]))
        cosine = f", cosine {match.similarity:.2f}" if match.similarity is not None else ""
        offer(match, value, f"recalled: #{rank} for the query ({ranked_by}{cosine})", False)
        for other in by_thread.get(match.thread, []):
            if -span[0] <= other.seq - match.seq <= span[1]:
                reason = f"next to recalled turn {match.turn_id} (#{rank})"
                offer(other, value * tuning.neighbour_share, reason, True)
    return list(best.values())
