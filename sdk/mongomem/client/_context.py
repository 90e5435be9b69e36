"""The SDK's methods for what an agent's next turn reads: recall, the context block and working memory
(see mongomem.client._calls)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from mongomem.client._call import Call, _fields, _model, endpoint, takes
from mongomem.models.recall import ContextRequest, ContextResponse, RecallRequest, RecallResponse
from mongomem.models.working_memory import (
    Unchanged,
    WorkingMemoryContext,
    WorkingMemoryState,
    WorkingMemoryWrite,
)


def _working_memory(data: Any) -> WorkingMemoryState | Unchanged:
    if isinstance(data, dict) and data.get("unchanged"):
        return Unchanged.model_validate(data)
    return WorkingMemoryState.model_validate(data)


def _working_memory_tool(data: Any) -> WorkingMemoryContext | Unchanged:
    if isinstance(data, dict) and data.get("unchanged"):
        return Unchanged.model_validate(data)
    return WorkingMemoryContext.model_validate(data)


class ContextMethods:
    """Recall and context, and working memory."""

    # -- recall and context ----------------------------------------------------------------------------

    @endpoint
    @takes(RecallRequest)
    def recall(
        user_id: str | None,
        query: str,
        thread: str | None = None,
        scope: str | None = None,
        top_k: int | None = None,
        *,
        message_range: int | Mapping[str, int] | None = None,
        min_score: float | None = None,
        order: str | None = None,
        exclude_recent: int | Iterable[str] | None = None,
        as_of: datetime | str | None = None,
    ) -> Call[RecallResponse]:
        """Old messages similar to `query` (semantic recall), with `message_range` turns around each.

        `order="time"` also returns them as `messages`, in time order across threads; `as_of` (the date
        the question is asked) hides the messages recorded after it."""
        body = _fields(RecallRequest, locals())
        return Call("POST", "/v1/recall", body=body, safe=True, parse=_model(RecallResponse))

    @endpoint
    @takes(ContextRequest)
    def build_context(
        user_id: str | None,
        session_id: str,
        query: str | None = None,
        token_budget: int | None = None,
        *,
        agent_id: str | None = None,
        sources: Iterable[Mapping[str, Any]] | None = None,
        format: str | None = None,
        max_tokens: int | None = None,
        recent_turns: int | None = None,
        memories_top_k: int | None = None,
        recall_top_k: int | None = None,
        message_range: int | Mapping[str, int] | None = None,
        observed_after: datetime | str | None = None,
        observed_before: datetime | str | None = None,
        as_of: datetime | str | None = None,
    ) -> Call[ContextResponse]:
        """Everything an agent's next turn in `session_id` needs (working memory, memories, recent turns,
        recalled messages) within a token budget: POST /v1/context. `as_of` (the date the question is
        asked) hides what was recorded after it and dates the block relative to it."""
        body = _fields(ContextRequest, locals())
        return Call("POST", "/v1/context", body=body, safe=True, parse=_model(ContextResponse))

    # -- working memory --------------------------------------------------------------------------------

    @endpoint
    def get_working_memory(
        user_id: str | None,
        thread_id: str | None = None,
        scope: str | None = None,
        read_only: bool = False,
        if_none_match: str | None = None,
        agent_id: str | None = None,
    ) -> Call[WorkingMemoryState | Unchanged]:
        """The working memory (Unchanged when `if_none_match` is still its cache key); `agent_id`: one
        agent's resource-scoped working memory of the user."""
        query = {
            "agent_id": agent_id,
            "user_id": user_id,
            "thread_id": thread_id,
            "scope": scope,
            "readOnly": "true" if read_only else None,
            "if_none_match": if_none_match,
        }
        return Call("GET", "/v1/working-memory", query, parse=_working_memory)

    @endpoint
    @takes(WorkingMemoryWrite)
    def update_working_memory(
        user_id: str | None,
        *,
        content: str | None = None,
        data: Mapping[str, Any] | None = None,
        memory: str | Mapping[str, Any] | None = None,
        thread_id: str | None = None,
        scope: str | None = None,
        replace: bool = False,
        agent_id: str | None = None,
    ) -> Call[WorkingMemoryState]:
        """Merge into the working memory (PATCH), or replace it whole with replace=True (PUT).

        Give exactly one of `content` (template mode), `data` (schema mode) or `memory` (the update
        tool's argument, forwarded as the agent produced it).
        """
        body = _fields(WorkingMemoryWrite, locals())
        query = {"user_id": user_id, "thread_id": thread_id, "scope": scope, "agent_id": agent_id}
        method = "PUT" if replace else "PATCH"
        return Call(method, "/v1/working-memory", query, body, safe=replace, parse=_model(WorkingMemoryState))

    @endpoint
    def clear_working_memory(
        user_id: str | None,
        thread_id: str | None = None,
        scope: str | None = None,
        agent_id: str | None = None,
    ) -> Call[WorkingMemoryState]:
        query = {"user_id": user_id, "thread_id": thread_id, "scope": scope, "agent_id": agent_id}
        return Call("DELETE", "/v1/working-memory", query, parse=_model(WorkingMemoryState))

    @endpoint
    def working_memory_tool(
        user_id: str | None,
        thread_id: str | None = None,
        scope: str | None = None,
        delivery: str | None = None,
        agent_id: str | None = None,
        if_none_match: str | None = None,
    ) -> Call[WorkingMemoryContext | Unchanged]:
        """The agent's update tool, its instructions and the current working memory (Unchanged when
        `if_none_match` is still its cache key)."""
        query = {
            "user_id": user_id,
            "thread_id": thread_id,
            "scope": scope,
            "delivery": delivery,
            "agent_id": agent_id,
            "if_none_match": if_none_match,
        }
        return Call("GET", "/v1/working-memory/tool", query, parse=_working_memory_tool)

    @endpoint
    def apply_working_memory_tool(
        user_id: str | None,
        arguments: str | Mapping[str, Any],
        thread_id: str | None = None,
        scope: str | None = None,
        agent_id: str | None = None,
    ) -> Call[WorkingMemoryState]:
        """Apply an update-tool call as the model made it: `{"memory": ...}` or the memory itself;
        `agent_id`: one agent's resource-scoped working memory (the one `working_memory_tool` reads)."""
        query = {"user_id": user_id, "thread_id": thread_id, "scope": scope, "agent_id": agent_id}
        body = dict(arguments) if isinstance(arguments, Mapping) else arguments
        return Call("POST", "/v1/working-memory/tool", query, body, parse=_model(WorkingMemoryState))
