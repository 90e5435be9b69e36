"""The SDK's methods for long-term memory: memories, procedures, search and importing history (see
mongomem.client._calls)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Literal

from mongomem.client._call import Call, _fields, _model, _seg, endpoint, takes
from mongomem.models.imports import ImportReport, ImportRequest
from mongomem.models.memory import (
    CreateMemoryRequest,
    DeleteResult,
    DomainList,
    MemoryPage,
    MemoryWithHistory,
    WriteResult,
)
from mongomem.models.procedures import (
    DiscoverRequest,
    DiscoverResponse,
    FeedbackRequest,
    FeedbackResult,
    SkillExport,
)
from mongomem.models.search import SearchRequest, SearchResponse


class MemoryMethods:
    """Memories, procedures as skills, search and importing history."""

    # -- long-term memories ---------------------------------------------------------------------------

    @endpoint
    @takes(CreateMemoryRequest)
    def create_memory(
        user_id: str | None,
        type: str,
        payload: Mapping[str, Any],
        reconcile: bool = True,
        *,
        expires_at: datetime | str | None = None,
        visibility: str | None = None,
        agent_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        observed_at: datetime | str | None = None,
    ) -> Call[WriteResult]:
        """Write a memory; with reconcile it may UPDATE or REINFORCE an existing one instead of adding."""
        body = _fields(CreateMemoryRequest, locals())
        return Call("POST", "/v1/memories", body=body, parse=_model(WriteResult))

    @endpoint
    def get_memory(memory_id: str, user_id: str | None, history: bool = False) -> Call[MemoryWithHistory]:
        query = {"user_id": user_id, "history": "true" if history else None}
        return Call("GET", f"/v1/memories/{_seg(memory_id)}", query, parse=_model(MemoryWithHistory))

    @endpoint
    def list_memories(
        user_id: str | None,
        type: str | None = None,
        status: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        *,
        subject: str | None = None,
        attribute: str | None = None,
        subject_prefix: str | None = None,
        observed_after: str | datetime | None = None,
        observed_before: str | datetime | None = None,
        agent_id: str | None = None,
        visibility: str | None = None,
        tags: Iterable[str] | None = None,
        domain: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        snapshot_id: str | None = None,
    ) -> Call[MemoryPage]:
        """A page of memories (the user's and the org's), newest first; semantic facts can be filtered by
        exact subject/attribute, any memory by when it was first stated (observed_after <= observed_at <
        observed_before), by agent, visibility, tags (any of), taxonomic domain and metadata values, and
        by the snapshot whose extraction wrote or reinforced them (`snapshot_id`)."""
        query = {
            "agent_id": agent_id,
            "visibility": visibility,
            "tags": ",".join(tags) if tags is not None else None,
            "domain": domain,
            "metadata": json.dumps(dict(metadata)) if metadata is not None else None,
            "observed_after": observed_after.isoformat()
            if isinstance(observed_after, datetime)
            else observed_after,
            "observed_before": (
                observed_before.isoformat() if isinstance(observed_before, datetime) else observed_before
            ),
            "user_id": user_id,
            "type": type,
            "status": status,
            "limit": limit,
            "cursor": cursor,
            "subject": subject,
            "attribute": attribute,
            "subject_prefix": subject_prefix,
            "snapshot_id": snapshot_id,
        }
        return Call("GET", "/v1/memories", query, parse=_model(MemoryPage))

    # -- procedures as skills --------------------------------------------------------------------------

    @endpoint
    def get_skill(memory_id: str, user_id: str | None) -> Call[SkillExport]:
        """A procedural memory as an Agent Skill (its SKILL.md and folder name): GET /v1/memories/{id}/skill."""
        path = f"/v1/memories/{_seg(memory_id)}/skill"
        return Call("GET", path, {"user_id": user_id}, parse=_model(SkillExport))

    @endpoint
    @takes(FeedbackRequest)
    def procedure_feedback(
        memory_id: str,
        user_id: str | None,
        outcome: Literal["success", "failure"],
        used_at: datetime | str | None = None,
    ) -> Call[FeedbackResult]:
        """Record that using a procedure worked (or did not): POST /v1/memories/{id}/feedback."""
        body = _fields(FeedbackRequest, {"outcome": outcome, "used_at": used_at})
        path = f"/v1/memories/{_seg(memory_id)}/feedback"
        return Call("POST", path, {"user_id": user_id}, body, parse=_model(FeedbackResult))

    @endpoint
    @takes(DiscoverRequest)
    def discover_procedures(
        user_id: str | None,
        query: str,
        top_k: int = 5,
        *,
        mode: str | None = None,
        min_score: float | None = None,
        observed_after: datetime | str | None = None,
        observed_before: datetime | str | None = None,
    ) -> Call[DiscoverResponse]:
        """The procedures that fit a task, by relevance and success: POST /v1/procedures/discover."""
        body = _fields(DiscoverRequest, locals())
        return Call("POST", "/v1/procedures/discover", body=body, safe=True, parse=_model(DiscoverResponse))

    @endpoint
    def list_domains(user_id: str | None) -> Call[DomainList]:
        """The domains of the taxonomic terms the user sees (theirs and the org's): GET /v1/domains."""
        return Call("GET", "/v1/domains", {"user_id": user_id}, parse=_model(DomainList))

    @endpoint
    def delete_memory(memory_id: str, user_id: str | None) -> Call[DeleteResult]:
        path = f"/v1/memories/{_seg(memory_id)}"
        return Call("DELETE", path, {"user_id": user_id}, parse=_model(DeleteResult))

    @endpoint
    @takes(SearchRequest)
    def search(
        user_id: str | None,
        query: str,
        types: Iterable[str] | None = None,
        top_k: int = 10,
        *,
        agent_id: str | None = None,
        visibility: str | None = None,
        tags: Iterable[str] | None = None,
        domain: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        mode: str | None = None,
        min_score: float | None = None,
        include_superseded: bool | None = None,
        observed_after: datetime | str | None = None,
        observed_before: datetime | str | None = None,
    ) -> Call[SearchResponse]:
        """Hybrid (vector + keyword) search over a user's memories and the org's: POST /v1/memories/search.

        agent_id, visibility, tags, domain and metadata filter inside the index query."""
        body = _fields(SearchRequest, locals())
        return Call("POST", "/v1/memories/search", body=body, safe=True, parse=_model(SearchResponse))

    # -- importing history -------------------------------------------------------------------------------

    @endpoint
    @takes(ImportRequest)
    def import_history(
        user_id: str | None,
        data: str | Mapping[str, Any] | list[Any] | None = None,
        format: Literal["turns", "jsonl", "locomo"] = "jsonl",
        turns: Iterable[Mapping[str, Any]] | None = None,
    ) -> Call[ImportReport]:
        """Import past conversations with their original timestamps (re-sending it imports nothing twice)."""
        # idempotent by each turn's import key: a lost answer may be sent again
        body = _fields(ImportRequest, locals())
        return Call("POST", "/v1/import", body=body, safe=True, parse=_model(ImportReport))


def next_memories_page(first: Call[MemoryPage], page: MemoryPage) -> Call[MemoryPage] | None:
    """The call for the page after `page` (same filters), or None at the end."""
    if not page.next_cursor:
        return None
    return Call(
        first.method, first.path, {**(first.query or {}), "cursor": page.next_cursor}, parse=first.parse
    )
