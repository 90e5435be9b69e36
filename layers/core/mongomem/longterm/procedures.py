"""Procedures as skills: export one as an Agent Skill, record whether using it worked, discover the ones
that fit a task (ranked by relevance and by success)."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from mongomem.errors import Conflict, InvalidInput, NotFound, Unprocessable
from mongomem.longterm.ports import MemoryRepository
from mongomem.longterm.skills import render_skill
from mongomem.models.common import Scope, utcnow
from mongomem.models.memory import MemoryRecord, MemoryView, ProcedureUsage
from mongomem.models.procedures import (
    DiscoverRequest,
    DiscoverResponse,
    FeedbackRequest,
    FeedbackResult,
    ProcedureHit,
    SkillExport,
)
from mongomem.models.search import SearchRequest
from mongomem.retrieval.search import MemorySearch

PROCEDURAL = "procedural"
# Candidates the search returns per result asked for: success may lift a slightly less relevant procedure.
OVERFETCH = 3
# A user's feedback on one version counts once per window (of the server's clock: a caller's used_at
# cannot open new windows); a later report in the same window replaces the earlier one.
FEEDBACK_WINDOW = timedelta(days=1)
# How far ahead of the server's clock a caller's used_at may be (clocks differ a little).
CLOCK_SKEW = timedelta(minutes=5)


def feedback_window(at: datetime) -> str:
    """The window `at` falls in (UTC days for the one-day window)."""
    start = int(at.timestamp() // FEEDBACK_WINDOW.total_seconds())
    return f"{int(FEEDBACK_WINDOW.total_seconds())}s:{start}"


def success_rate(usage: ProcedureUsage | None) -> float:
    """(successes + 1) / (uses + 2): an untried procedure is 0.5, one that always worked tends to 1."""
    if usage is None:
        return 0.5
    return (usage.successes + 1) / (usage.successes + usage.failures + 2)


class ProcedureService:
    def __init__(self, store: MemoryRepository, search: MemorySearch) -> None:
        self.store = store
        self.search = search

    def _procedure(self, scope: Scope, memory_id: str) -> MemoryRecord:
        # the user's own procedures and the tenant's shared (org) ones: procedures default to org
        record = self.store.get(MemoryView(scope), memory_id)
        if record is None or record.status == "deleted":
            raise NotFound(f"memory {memory_id!r} not found for this user", {"memory_id": memory_id})
        if record.type != PROCEDURAL:
            raise InvalidInput(
                f"memory {memory_id!r} is a {record.type} memory; only procedural memories are skills",
                {"path": "memory_id", "type": record.type},
            )
        return record

    def skill(self, scope: Scope, memory_id: str) -> SkillExport:
        record = self._procedure(scope, memory_id)
        if record.status == "proposed":
            # a proposal changes nothing until enough users state it: exported under the skill's name it
            # would read as the procedure every agent follows
            raise Conflict(
                f"memory {memory_id!r} is a proposal not yet accepted; export the current version",
                {"memory_id": memory_id, "status": record.status, "lineage_id": record.lineage_id},
            )
        if record.status != "active" and record.payload.get("allowed_tools"):
            # a version no longer current grants nothing: its tool grants were replaced or revoked
            payload = {k: v for k, v in record.payload.items() if k != "allowed_tools"}
            record = record.model_copy(update={"payload": payload})
        name, content = render_skill(record)
        return SkillExport(
            memory_id=record.memory_id,
            lineage_id=record.lineage_id,
            name=name,
            path=f"{name}/SKILL.md",
            content=content,
        )

    def feedback(self, scope: Scope, memory_id: str, request: FeedbackRequest) -> FeedbackResult:
        record = self._procedure(scope, memory_id)
        if record.status != "active":
            raise Conflict(
                f"memory {memory_id!r} was replaced by {record.superseded_by!r}; give feedback on the current version",
                {"memory_id": memory_id, "superseded_by": record.superseded_by},
            )
        now = utcnow()
        used_at = request.used_at or now
        if used_at > now + CLOCK_SKEW:
            raise Unprocessable(
                "used_at is in the future: report a use after it happened",
                {"path": "used_at", "now": now.isoformat()},
            )
        home = Scope(tenant=record.tenant, user_id=record.user_id)  # where the version is stored
        updated, counted = self.store.record_use(
            home, memory_id, scope.user_id, feedback_window(now), request.outcome, used_at
        )
        if updated is None:  # replaced or deleted meanwhile
            raise Conflict(f"memory {memory_id!r} is no longer the current version", {"memory_id": memory_id})
        usage = updated.usage or ProcedureUsage()
        return FeedbackResult(
            memory_id=updated.memory_id,
            lineage_id=updated.lineage_id,
            usage=usage,
            success_rate=success_rate(usage),
            counted=counted,
        )

    def discover(self, scope: Scope, request: DiscoverRequest) -> DiscoverResponse:
        started = time.perf_counter()
        found = self.search.search(
            scope,
            SearchRequest(
                query=request.query,
                types=[PROCEDURAL],
                top_k=min(request.top_k * OVERFETCH, 100),
                mode=request.mode,
                min_score=request.min_score,
                observed_after=request.observed_after,
                observed_before=request.observed_before,
            ),
        )
        records = {
            r.memory_id: r
            for r in self.store.get_many(MemoryView(scope), [h.memory_id for h in found.results])
        }
        hits: list[ProcedureHit] = []
        for hit in found.results:
            record = records.get(hit.memory_id)
            if record is None:
                continue
            rate = success_rate(record.usage)
            name, _ = render_skill(record)
            hits.append(
                ProcedureHit(
                    memory_id=record.memory_id,
                    lineage_id=record.lineage_id,
                    name=str(record.payload.get("name") or name),
                    skill_name=name,
                    description=record.payload.get("description"),
                    when_to_use=record.payload.get("when_to_use"),
                    score=hit.score * (0.5 + rate),
                    relevance=hit.score,
                    success_rate=round(rate, 4),
                    usage=record.usage or ProcedureUsage(),
                    reinforcement_count=record.reinforcement_count,
                    created_at=record.created_at,
                    payload=record.payload,
                )
            )
        hits.sort(key=lambda h: h.score, reverse=True)
        took = round((time.perf_counter() - started) * 1000, 2)
        return DiscoverResponse(results=hits[: request.top_k], took_ms=took)
