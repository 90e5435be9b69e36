"""The last calls an agent made to search, recall and context, with what each returned and why.

The console shows them (GET /v1/users/{user_id}/requests): what a real agent call received is the first
thing to look at when an agent "forgot" something. The log is a diagnostic: it keeps the newest KEPT calls
per user, is written after the answer is computed, never fails the call it describes, and costs the call
no round trip (docs/adr/README.md "Recent requests").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from mongomem.models.common import Scope, utcnow
from mongomem.models.memory import MemoryRecord, MemoryView
from mongomem.models.recall import ContextRequest, ContextResponse, RecallRequest, RecallResponse
from mongomem.models.requests import RecentRequest, ReturnedItem
from mongomem.models.search import SearchRequest, SearchResponse
from mongomem.observability import logger

KEPT = 20  # calls per user
TEXT_CHARS = 300  # of each returned item
BLOCK_CHARS = 8000  # of a context block


class RecentRequestLog(Protocol):
    def record(self, scope: Scope, entry: RecentRequest, keep: int) -> None:
        """Keep `entry` as the user's newest call, dropping the oldest beyond `keep` (best effort)."""
        ...

    def latest(self, scope: Scope, limit: int) -> list[RecentRequest]:
        """The user's newest calls, newest first."""
        ...

    def forget(self, scope: Scope, shown: Callable[[str], bool]) -> int:
        """Drop the user's calls that returned an item whose id `shown` matches; how many."""
        ...


class TurnReads(Protocol):
    def in_ranges(self, scope: Scope, ranges: list[tuple[str, int, int]]) -> list[Any]:
        """The user's turns in several (session_id, from_seq, to_seq) ranges (deleted ones are not)."""
        ...


# A turn's id as the record API hands it out: `session_id:seq`.
TURN_ID = re.compile(r"^(?!mem-|working-memory:).+:\d+$")


class MemoryReads(Protocol):
    def get_many(self, scope: Scope | MemoryView, ids: list[str]) -> list[MemoryRecord]:
        """The versions with these ids the view sees, expired ones left out."""
        ...


GONE = "expired or deleted since"


def without_gone(
    calls: Sequence[RecentRequest], memories: MemoryReads, scope: Scope, turns: TurnReads | None = None
) -> list[RecentRequest]:
    """The calls as the log shows them now: a memory that has expired or been deleted since a call
    returned it, or a turn deleted since (its thread, or the session's turns from a seq on), keeps its id
    but loses its text, and a context block that held it is left out (expired or deleted means gone from
    every read, the log included; docs/security.md)."""
    ids = sorted({i.id for c in calls for i in c.returned if i.id.startswith("mem-")})
    live = (
        {r.memory_id for r in memories.get_many(MemoryView(scope), ids) if r.status != "deleted"}
        if ids
        else set()
    )
    gone = set(ids) - live
    turn_ids = sorted({i.id for c in calls for i in c.returned if TURN_ID.match(i.id)})
    if turns is not None and turn_ids:
        ranges = [(s, int(q), int(q)) for s, q in (i.rsplit(":", 1) for i in turn_ids)]
        gone |= set(turn_ids) - {t.public_id for t in turns.in_ranges(scope, ranges)}
    shown = []
    for call in calls:
        if not any(i.id in gone for i in call.returned):
            shown.append(call)
            continue
        returned = [
            i.model_copy(update={"text": "", "why": f"{i.why} ({GONE})"}) if i.id in gone else i
            for i in call.returned
        ]
        shown.append(call.model_copy(update={"returned": returned, "block": None}))
    return shown


def forget_working_memory(log: RecentRequestLog, scope: Scope, memory_scope: str, owner: str) -> int:
    """Drop the user's calls whose context block held this working memory (cleared, or its thread deleted):
    deleted means gone from every read, the log included. Every agent's working memory of the user in that
    scope goes (a block's reference names the scope and the thread or user, not the agent)."""
    prefix = f"working-memory:{memory_scope}:{owner}@"
    try:
        return log.forget(scope, lambda shown: shown.startswith(prefix))
    except Exception:
        logger.warning("recent requests not purged of cleared working memory", extra={"scope": memory_scope})
        return 0


def remember(log: RecentRequestLog | None, scope: Scope, entry: RecentRequest) -> None:
    """Record a call; a failure is logged and never reaches the caller."""
    if log is None:
        return
    try:
        log.record(scope, entry, KEPT)
    except Exception:
        logger.warning("recent request not recorded", extra={"kind": entry.kind})


def _short(text: str | None, limit: int = TEXT_CHARS) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _settings(request: Any, *skip: str) -> dict[str, Any]:
    """The request's fields that were set, as JSON (the query and the user are shown apart)."""
    fields: dict[str, Any] = request.model_dump(
        mode="json", exclude_none=True, exclude={"query", "user_id", *skip}
    )
    return fields


def _rank(name: str, rank: int | None, score: float | None) -> str | None:
    if rank is None:
        return None
    return f"{name} #{rank}" + (f" ({score:.3f})" if score is not None else "")


def of_search(request: SearchRequest, response: SearchResponse) -> RecentRequest:
    returned = []
    for hit in response.results:
        s = hit.signals
        parts = [
            _rank("k-NN", s.knn_rank, s.knn_score),
            _rank("BM25", s.bm25_rank, s.bm25_score),
            f"RRF {s.rrf:.4f}" if s.rrf is not None else None,
            f"reinforced x{s.reinforcement_boost:.2f}" if s.reinforcement_boost != 1.0 else None,
        ]
        why = ", ".join(p for p in parts if p) or "ranked by the index"
        returned.append(
            ReturnedItem(id=hit.memory_id, text=_short(hit.text), score=hit.score, why=f"{hit.type}: {why}")
        )
    return RecentRequest(
        kind="search",
        at=utcnow(),
        query=request.query,
        request=_settings(request),
        returned=returned,
        took_ms=response.took_ms,
    )


def of_recall(request: RecallRequest, response: RecallResponse) -> RecentRequest:
    turns = {t.turn_id: t for g in response.threads for t in g.turns}
    returned = []
    for turn_id in response.matched:
        turn = turns.get(turn_id)
        if turn is None:
            continue
        ranks = ", ".join(f"{k} #{v}" for k, v in (turn.signals or {}).items()) or "matched"
        returned.append(
            ReturnedItem(
                id=turn_id,
                text=_short(f"{turn.role}: {turn.content}"),
                section=turn.thread,
                score=turn.score,
                why=f"match #{turn.rank}: {ranks}",
            )
        )
    return RecentRequest(
        kind="recall",
        at=utcnow(),
        query=request.query,
        request=_settings(request),
        returned=returned,
        took_ms=response.took_ms,
    )


def of_context(request: ContextRequest, response: ContextResponse) -> RecentRequest:
    returned = []
    for section in response.sections:
        items = getattr(section, "items", None)  # per-item texts and reasons, when the response has them
        if items:
            for item in items:
                returned.append(
                    ReturnedItem(
                        id=str(getattr(item, "id", "")),
                        text=_short(getattr(item, "text", "")),
                        section=section.name,
                        score=getattr(item, "score", None),
                        why=str(getattr(item, "reason", None) or section.title.lstrip("# ")),
                    )
                )
            continue
        for item_id in section.ids:
            returned.append(
                ReturnedItem(
                    id=item_id, text="", section=section.name, why=f"in {section.title.lstrip('# ').lower()}"
                )
            )
    return RecentRequest(
        kind="context",
        at=utcnow(),
        query=response.query,
        request=_settings(request),
        returned=returned,
        left_out={s.name: s.dropped for s in response.sections if s.dropped},
        block=_short(response.context, BLOCK_CHARS),
        tokens=response.tokens,
        took_ms=(response.timings_ms or {}).get("total"),
    )
