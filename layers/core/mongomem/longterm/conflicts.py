"""Conflicting facts: two active memories that say different things about one thing.

Reconciliation keeps one active version per match key (a new value supersedes the old one), so two active
versions of one key with different values mean a conflict nothing has settled: written with reconciliation
switched off, or by an older release that stored the user's facts under several subjects (`mongomem
migrate` re-keys those to one). They are listed (GET /v1/memories/conflicts, the console) and counted
(/v1/status) until one is deleted, or a later statement of the key supersedes them all.
"""

from __future__ import annotations

from mongomem.kinds import KindRegistry
from mongomem.longterm.ports import MemoryRepository
from mongomem.models.memory import Conflict, ConflictingMemory, MemoryRecord

LIMIT = 1000


def conflicts(
    store: MemoryRepository, kinds: KindRegistry, tenant: str, user_id: str | None, limit: int = LIMIT
) -> list[Conflict]:
    """The tenant's (or one user's) conflicts: per owner, kind, key and agent, active versions whose
    values differ by the kind's own comparison (a restatement stored twice is not a conflict)."""
    found: list[Conflict] = []
    for group in store.shared_keys(tenant, user_id, limit):
        by_agent: dict[str | None, list[MemoryRecord]] = {}
        for record in group:
            by_agent.setdefault(record.agent_id, []).append(record)
        for agent_id, records in by_agent.items():
            kind = kinds.get(records[0].type)
            if kind is None or len(records) < 2:
                continue
            distinct: list[MemoryRecord] = []
            for record in sorted(records, key=lambda r: (r.observed_at or r.created_at, r.memory_id)):
                if not any(kind.same_content(d.payload, record.payload) for d in distinct):
                    distinct.append(record)
            if len(distinct) < 2:
                continue
            found.append(
                Conflict(
                    user_id=records[0].user_id,
                    type=records[0].type,
                    key=records[0].key,
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
            )
    return found
