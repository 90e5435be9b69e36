"""Index recorded turns for semantic recall, in the scan job (never on the record path).

Each user/assistant turn becomes two index documents (kind "turn"), per the recipe measured in
bench/studies/embeddings/RESULTS.md:

- own text:     "({date}) {speaker}: {content}"
- context text: own text + " (context: {previous turn} {next turn})", neighbours from the same session.

A turn longer than `recall.chunk_chars` is embedded in overlapping chunks: its own text becomes one
document per chunk (`<key>#own`, `<key>#own.1`, ...), its context text starts with the first chunk and
quotes the neighbours shortened; any chunk's match recalls the whole turn.

A turn indexed before its next turn existed has `recall_ctx_next: false`; when the next turn is
indexed, the earlier turn's context document is rewritten to include it. MongoDB stays the source
of truth: the index only proposes turn ids, recall reads the turns themselves from MongoDB.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mongomem.config import RecallConfig
from mongomem.models.common import Scope, as_utc
from mongomem.models.turns import RecallLane, Turn
from mongomem.observability import logger
from mongomem.ports import EmbeddingError, EmbeddingProvider
from mongomem.shortterm.ports import TurnRepository
from mongomem.shortterm.record import RECALL_ROLES
from mongomem.vectors.port import IndexDoc, IndexUnavailable, VectorIndex

__all__ = [
    "MAX_ATTEMPTS",
    "Lanes",
    "TurnIndexer",
    "chunks",
    "context_text",
    "doc_id",
    "doc_ids",
    "forget_turns",
    "own_text",
    "recallable",
    "short_date",
    "speaker",
]

# A batch that failed this many times is parked (recall_indexed "failed") so it cannot block the queue.
MAX_ATTEMPTS = 5
# Users (lanes) one run serves at most, those waiting longest first; the rest wait for the next run.
MAX_LANES = 1000
# Seqs read on each side of a batch to find neighbours (tool/system turns in between are skipped).
NEIGHBOUR_WINDOW = 6
CHANNELS = ("own", "ctx")


def speaker(turn: Turn) -> str:
    """Who spoke: the turn's `name` when set (LoCoMo speakers), else its role."""
    return str(turn.name or turn.role)


def short_date(ts: datetime) -> str:
    """'8 May 2023' (no time: the date is what questions ask about)."""
    ts = as_utc(ts)
    return f"{ts.day} {ts:%B} {ts.year}"


def chunks(text: str, size: int, overlap: int = 0, limit: int | None = None) -> list[str]:
    """`text` in pieces of at most `size` characters, each overlapping the previous by `overlap`.

    A piece ends at the last whitespace of its window when there is one in its second half, so words
    are not cut. With `limit`, a text of more pieces keeps its head and its tail: the first
    `limit - limit // 4` pieces and the last `limit // 4` (what a long paste is about is usually said
    at its start, and its conclusion at its end); the middle is not embedded.
    """
    pieces = _pieces(text, size, overlap)
    if limit is None or len(pieces) <= limit:
        return pieces
    tail = limit // 4
    return pieces[: limit - tail] + (pieces[len(pieces) - tail :] if tail else [])


def _pieces(text: str, size: int, overlap: int) -> list[str]:
    if len(text) <= size:
        return [text]
    overlap = min(overlap, size // 2)
    out: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            cut = max(text.rfind(" ", start + size // 2, end), text.rfind("\n", start + size // 2, end))
            if cut > start:
                end = cut
        piece = text[start:end]
        if piece.strip():
            out.append(piece)
        if end >= len(text):
            break
        start = max(end - overlap, start + 1)
    return out or [text[:size]]


def _base(turn: Turn, limit: int | None = None) -> str:
    content = turn.content if limit is None or len(turn.content) <= limit else turn.content[:limit]
    return f"{speaker(turn)}: {content}"


def own_text(turn: Turn, content: str | None = None) -> str:
    body = turn.content if content is None else content
    return f"({short_date(turn.timestamp)}) {speaker(turn)}: {body}"


def context_text(turn: Turn, prev: Turn | None, nxt: Turn | None, limit: int | None = None) -> str:
    """Own text (its first `limit` characters) with the neighbours' (each shortened to half of it)."""
    around = [_base(t, None if limit is None else limit // 2) for t in (prev, nxt) if t is not None]
    own = own_text(turn, None if limit is None else turn.content[:limit])
    return f"{own} (context: {' '.join(around)})" if around else own


def recallable(turn: Turn) -> bool:
    return turn.role in RECALL_ROLES and bool(turn.content.strip())


def doc_id(turn_key: str, channel: str, chunk: int = 0) -> str:
    return f"{turn_key}#{channel}" if chunk == 0 else f"{turn_key}#{channel}.{chunk}"


def own_chunks(turn: Turn, config: RecallConfig) -> list[str]:
    return chunks(turn.content, config.chunk_chars, config.chunk_overlap, config.max_chunks)


def doc_ids(turn: Turn, config: RecallConfig) -> list[str]:
    """Every recall index document a turn may have (its own-text chunks and its context text): one id
    per piece of its text, beyond the cap too (a version with a higher cap may have written them)."""
    n = len(_pieces(turn.content, config.chunk_chars, config.chunk_overlap)) if recallable(turn) else 1
    return [doc_id(turn.id, "own", i) for i in range(n)] + [doc_id(turn.id, "ctx")]


def _fields(turn: Turn, channel: str) -> dict[str, Any]:
    return {
        "channel": channel,
        "turn_key": turn.id,
        "session_id": turn.session_id,
        "seq": int(turn.seq),
        "role": turn.role,
        "created_at": as_utc(turn.timestamp).isoformat(),
    }


def forget_turns(index: VectorIndex | None, config: RecallConfig, turns: list[Turn]) -> int:
    """Remove the recall index documents of these turns (deleted from MongoDB); how many ids were sent."""
    if index is None or not turns:
        return 0
    ids = [i for t in turns for i in doc_ids(t, config)]
    for start in range(0, len(ids), 500):
        index.delete(ids[start : start + 500])
    return len(ids)


class Lanes:
    """The recall queue as one lane per user, served in turn (docs/adr/0053-fair-recall-indexing.md).

    A batch takes an equal share of its turns from each lane in rotation (a lane that has fewer gives
    its room to the others), so a user recording after another's backlog, or after a 1 MiB turn, is in
    the next batch; lanes are visited the longest-waiting first. Each lane's turns are read a share at
    a time through the lane index (oldest first) when its earlier reads are used up, skipping those
    already in the batch being built (the others were indexed), so no turn is taken twice.
    """

    def __init__(self, turns: TurnRepository, lanes: list[RecallLane]) -> None:
        self.turns = turns
        self.order: deque[tuple[str, str]] = deque((lane.tenant, lane.user_id) for lane in lanes)
        self.buffered: dict[tuple[str, str], deque[Turn]] = {}
        self.drained: set[tuple[str, str]] = set()  # the last read found fewer turns than asked
        self.served: set[tuple[str, str]] = set()
        self.taken: dict[tuple[str, str], list[str]] = {}  # ids in the batch being built, per lane

    def next_batch(self, limit: int, max_texts: int, texts_of: Callable[[Turn], int]) -> list[Turn]:
        """At most `limit` turns and `max_texts` texts to embed (a batch's first turn always goes).

        In each round every lane left may take its share of the room left, in turns and in texts (its
        first turn of the round goes beyond its text share while the batch has room). A lane whose next
        turn does not fit the batch opens the next one. Call again only once the previous batch was
        indexed (or the run stops).
        """
        self.taken = {}
        batch: list[Turn] = []
        texts = 0
        closed: list[tuple[str, str]] = []  # lanes whose next turn waits for the next batch
        share = text_share = visits_left = 0
        while len(batch) < limit and self.order:
            if visits_left <= 0:  # a new round: each lane's share of the room left
                visits_left = len(self.order)
                share = -(-(limit - len(batch)) // visits_left)
                text_share = max(1, (max_texts - texts) // visits_left)
            visits_left -= 1
            lane = self.order[0]
            queued = self._queued(lane, share)
            if not queued:
                self.order.popleft()
                continue
            took = used = 0
            while queued and took < share and len(batch) < limit:
                cost = texts_of(queued[0])
                if took and used + cost > text_share:
                    break  # the lane's share of this round is used
                if batch and texts + cost > max_texts:
                    break
                turn = queued.popleft()
                batch.append(turn)
                texts += cost
                used += cost
                took += 1
                self.taken.setdefault(lane, []).append(turn.id)
                self.served.add(lane)
            if not took:  # its next turn does not fit what is left of this batch
                closed.append(self.order.popleft())
            else:
                self.order.rotate(-1)
        self.order.extendleft(reversed(closed))
        return batch

    def _queued(self, lane: tuple[str, str], share: int) -> deque[Turn]:
        queued = self.buffered.setdefault(lane, deque())
        if not queued and lane not in self.drained:
            got = self.turns.unindexed(share, Scope(tenant=lane[0], user_id=lane[1]), self.taken.get(lane))
            if len(got) < share:
                self.drained.add(lane)
            queued.extend(got)
        return queued


@dataclass(frozen=True)
class _Job:
    """One turn's documents to write, with its neighbours; `with_own` False: its context text only."""

    turn: Turn
    prev: Turn | None
    next: Turn | None
    with_own: bool


@dataclass
class _Plan:
    """A batch's jobs, and the turn ids whose recall state they change."""

    jobs: list[_Job] = field(default_factory=list)
    complete: list[str] = field(default_factory=list)  # indexed with their next turn
    partial: list[str] = field(default_factory=list)  # indexed before their next turn exists
    reindexed: list[str] = field(default_factory=list)  # earlier turns whose context now has its next


@dataclass(frozen=True)
class _Documents:
    """A batch's index documents and the turn ids whose recall state they change (see `_Plan`)."""

    docs: list[IndexDoc]
    complete: list[str]
    partial: list[str]
    reindexed: list[str]


def _neighbour_ranges(batch: list[Turn]) -> dict[tuple[str, str], list[tuple[str, int, int]]]:
    """By (tenant, user): each session's (session, first seq, last seq) the batch spans, widened by
    NEIGHBOUR_WINDOW on each side so its turns' neighbours are read with them."""
    spans: dict[tuple[str, str, str], list[int]] = {}
    for t in batch:
        key = (t.tenant, t.user_id, t.session_id)
        lo_hi = spans.setdefault(key, [t.seq, t.seq])
        lo_hi[0], lo_hi[1] = min(lo_hi[0], t.seq), max(lo_hi[1], t.seq)
    by_user: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
    for (tenant, user, session), (lo, hi) in spans.items():
        by_user.setdefault((tenant, user), []).append(
            (session, max(1, lo - NEIGHBOUR_WINDOW), hi + NEIGHBOUR_WINDOW)
        )
    return by_user


class TurnIndexer:
    """Embeds turns whose `recall_indexed` is false, a bounded batch at a time, every user in turn."""

    def __init__(
        self,
        turns: TurnRepository,
        index: VectorIndex | None,
        embedder: EmbeddingProvider,
        config: RecallConfig,
    ) -> None:
        self.turns = turns
        self.index = index
        self.embedder = embedder
        self.config = config
        self.last_texts = 0  # texts the last batch embedded

    def run(self, deadline_ms: Callable[[], int] | None = None, safety_ms: int = 10_000) -> dict[str, Any]:
        """Index pending turns in batches until none is left, the per-run cap, or the deadline.

        Batches are filled from every user's lane in turn (`Lanes`), so no user's or tenant's turns
        wait behind another's backlog; each batch is one embedding call of at most `batch_texts` texts.
        """
        totals = {"turns": 0, "reindexed": 0, "failed": 0}
        batches = texts = 0
        if not self.config.enabled or self.index is None:
            return totals
        started = time.perf_counter()
        lanes = Lanes(self.turns, self.turns.recall_lanes(MAX_LANES))
        while totals["turns"] < self.config.index_max_per_run:
            if deadline_ms is not None and deadline_ms() < safety_ms:
                break
            limit = min(self.config.index_batch, self.config.index_max_per_run - totals["turns"])
            batch = lanes.next_batch(limit, self.batch_texts, self.texts_of)
            if not batch:
                break
            done = self.index_batch(batch)
            if done is None:
                totals["failed"] += len(batch)
                break
            totals["turns"] += len(batch)
            totals["reindexed"] += done
            batches += 1
            texts += self.last_texts
        if totals["turns"] or totals["failed"]:
            took = time.perf_counter() - started
            logger.info(
                "recall indexing finished",
                extra={
                    **totals,
                    "batches": batches,
                    "texts": texts,
                    "lanes": len(lanes.served),
                    "took_ms": round(took * 1000, 1),
                    "turns_per_s": round(totals["turns"] / took, 2) if took > 0 else None,
                },
            )
        return totals

    @property
    def batch_texts(self) -> int:
        """Texts one batch embeds at most: two per turn of a full batch (its own text and its context),
        so a long turn takes the room of the ordinary turns it costs as much as."""
        return 2 * self.config.index_batch

    def texts_of(self, turn: Turn) -> int:
        """Texts indexing this turn embeds: its own-text chunks (capped) and its context text."""
        return len(own_chunks(turn, self.config)) + 1 if recallable(turn) else 0

    def requeue(self) -> int:
        """After the index was dropped (`mongomem reindex --drop`): the next scans index every turn again."""
        return self.turns.requeue_recall() if self.config.enabled else 0

    def index_batch(self, batch: list[Turn]) -> int | None:
        """Index one batch; returns how many earlier turns got their context rewritten (None: failed)."""
        ids = [t.id for t in batch]
        try:
            written = self._documents(batch)
            if written.docs:
                assert self.index is not None
                self.index.upsert(written.docs)
        except (EmbeddingError, IndexUnavailable) as exc:
            self._failed(batch, exc)
            return None
        # Turns that are no longer recallable (content edited away) simply leave the queue.
        self.turns.set_recall_state(written.complete, indexed=True, ctx_next=True)
        self.turns.set_recall_state(written.partial, indexed=True, ctx_next=False)
        self.turns.set_recall_state(written.reindexed, ctx_next=True)
        skipped = set(ids) - set(written.complete) - set(written.partial)
        self.turns.set_recall_state(sorted(skipped), indexed=True)
        return len(written.reindexed)

    def _documents(self, batch: list[Turn]) -> _Documents:
        """The batch's index documents, with which turns they complete, leave waiting for their next
        turn, or rewrite (an earlier turn whose next turn is in the batch)."""
        plan = self._plan(batch)
        return _Documents(self._embed(plan.jobs), plan.complete, plan.partial, plan.reindexed)

    def _plan(self, batch: list[Turn]) -> _Plan:
        """Every document to write: the batch's recallable turns, and the earlier turns whose context
        waits for a next turn the batch holds (neighbours read from the same session)."""
        in_batch = {t.id for t in batch}
        plan = _Plan()
        for (tenant, user), ranges in _neighbour_ranges(batch).items():
            window = self.turns.in_ranges(Scope(tenant=tenant, user_id=user), ranges)
            sessions: dict[str, list[Turn]] = {}
            for t in window:
                if recallable(t):
                    sessions.setdefault(t.session_id, []).append(t)
            for turns in sessions.values():
                for i, t in enumerate(turns):
                    prev = turns[i - 1] if i > 0 else None
                    nxt = turns[i + 1] if i + 1 < len(turns) else None
                    if t.id in in_batch:
                        plan.jobs.append(_Job(t, prev, nxt, with_own=True))
                        (plan.complete if nxt is not None else plan.partial).append(t.id)
                    elif (
                        nxt is not None
                        and nxt.id in in_batch
                        and t.recall_indexed is True
                        and not t.recall_ctx_next
                    ):
                        plan.jobs.append(_Job(t, prev, nxt, with_own=False))
                        plan.reindexed.append(t.id)
        return plan

    def _embed(self, jobs: list[_Job]) -> list[IndexDoc]:
        """The jobs' documents, embedded in one model call (`last_texts`: how many texts it embedded)."""
        texts: list[str] = []
        slots: list[tuple[Turn, str, int]] = []  # (turn, channel, chunk) of each text
        size = self.config.chunk_chars
        for job in jobs:
            t = job.turn
            if job.with_own:
                for i, piece in enumerate(own_chunks(t, self.config)):
                    texts.append(own_text(t, piece))
                    slots.append((t, "own", i))
            texts.append(context_text(t, job.prev, job.next, size))
            slots.append((t, "ctx", 0))
        self.last_texts = len(texts)
        if not texts:
            return []
        vectors = self.embedder.embed(texts, "document")  # one model call per batch
        return [
            IndexDoc(
                id=doc_id(t.id, channel, chunk),
                tenant=t.tenant,
                user_id=t.user_id,
                kind="turn",
                text=text,
                vector=vector,
                fields=_fields(t, channel),
            )
            for (t, channel, chunk), text, vector in zip(slots, texts, vectors, strict=True)
        ]

    def _failed(self, batch: list[Turn], exc: Exception) -> None:
        ids = [t.id for t in batch]
        parked = [t.id for t in batch if t.recall_attempts + 1 >= MAX_ATTEMPTS]
        self.turns.note_recall_failure(ids, f"{type(exc).__name__}: {exc}"[:500])
        self.turns.set_recall_state(parked, indexed="failed")
        logger.warning(
            "recall indexing failed; the turns stay queued",
            extra={"turns": len(ids), "parked": len(parked), "error": type(exc).__name__},
        )
