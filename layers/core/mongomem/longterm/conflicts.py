"""Conflicting facts: two active memories that say different things about one thing.

Reconciliation keeps one active version per match key (a new value supersedes the old one), so two active
versions of one key with different values mean a conflict nothing has settled: written with reconciliation
switched off, or by an older release that stored the user's facts under several subjects (`mongomem
migrate` re-keys those to one). They are listed (GET /v1/memories/conflicts, the console) and counted
(/v1/status) until one is deleted, or a later statement of the key supersedes them all.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from mongomem.kinds import KindRegistry, MemoryKind
from mongomem.longterm.ports import MemoryRepository
from mongomem.models.memory import Conflict, ConflictingMemory, MemoryRecord

logger = logging.getLogger(__name__)

LIMIT = 1000
# How long one request compares values (each comparison reads both values: ~25 ms for two of 3,900
# characters): one user's many long facts of one key must not hold every user's /v1/status (issue 33's
# twenty-ninth probe). What is left is reported as not compared (`complete: false`), never as no conflict.
LISTING_SECONDS = 5.0
COUNTING_SECONDS = 0.5


@dataclass(frozen=True)
class Found:
    conflicts: list[Conflict]
    complete: bool  # False: the time ran out before every key was compared


def conflicts(
    store: MemoryRepository,
    kinds: KindRegistry,
    tenant: str,
    user_id: str | None,
    limit: int = LIMIT,
    *,
    seconds: float = LISTING_SECONDS,
    counting: bool = False,
) -> Found:
    """The tenant's (or one user's) conflicts: per owner, kind, key and agent, active versions whose
    values differ by the kind's own comparison (a restatement stored twice is not a conflict), oldest
    first. `counting`: each conflict holds its first two distinct versions only (what /v1/status counts).
    Values are compared for `seconds` at most."""
    deadline = time.monotonic() + seconds
    found: list[Conflict] = []
    for group in store.shared_keys(tenant, user_id, limit):
        by_agent: dict[str | None, list[MemoryRecord]] = {}
        for record in group:
            by_agent.setdefault(record.agent_id, []).append(record)
        for agent_id, records in by_agent.items():
            kind = kinds.get(records[0].type)
            if kind is None or len(records) < 2:
                continue
            distinct = _distinct(kind, records, deadline, 2 if counting else None)
            if distinct is None:
                logger.warning(
                    "conflicting facts not all compared: the time ran out",
                    extra={"tenant": tenant, "seconds": seconds, "conflicts_found": len(found)},
                )
                return Found(found, complete=False)
            if len(distinct) >= 2:
                found.append(_conflict(kind, records[0], agent_id, distinct))
    return Found(found, complete=True)


def _distinct(
    kind: MemoryKind, records: list[MemoryRecord], deadline: float, enough: int | None
) -> list[MemoryRecord] | None:
    """The versions that say different things, oldest first (`enough`: stop at that many); None when the
    time ran out first."""
    distinct: list[MemoryRecord] = []
    for record in sorted(records, key=lambda r: (r.observed_at or r.created_at, r.memory_id)):
        same = False
        for held in distinct:
            if held.payload == record.payload:
                same = True  # stored twice as written: no comparison needed
                break
            if time.monotonic() > deadline:
                return None
            if kind.same_content(held.payload, record.payload):
                same = True
                break
        if not same:
            distinct.append(record)
            if enough is not None and len(distinct) >= enough:
                break
    return distinct


def _conflict(
    kind: MemoryKind, first: MemoryRecord, agent_id: str | None, distinct: list[MemoryRecord]
) -> Conflict:
    return Conflict(
        user_id=first.user_id,
        type=first.type,
        key=first.key,
        agent_id=agent_id,
        memories=[
            ConflictingMemory(
                memory_id=r.memory_id,
                text=r.text,
                value=kind.value(r.payload),
                observed_at=r.observed_at,
                created_at=r.created_at,
            )
            for r in distinct
        ],
    )
