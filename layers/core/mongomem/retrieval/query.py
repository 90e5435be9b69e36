"""What every context block starts from: its query (the caller's, else the latest user turn), embedded
once however many sources search with it, and the working memory an agent reads first."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mongomem.errors import NotFound
from mongomem.models.common import Principal, Scope
from mongomem.models.recall import ContextRequest
from mongomem.models.turns import Turn
from mongomem.ports import EmbeddingProvider

if TYPE_CHECKING:
    from mongomem.models.working_memory import WorkingMemoryScope
    from mongomem.workingmemory.service import WorkingMemoryService

# Turns read to find the latest user message when the request has no query.
QUERY_LOOKBACK = 20


class OnceEmbedder:
    """A request's query embedded once, however many sources search with it (the first source embeds,
    the others wait for its vector instead of embedding it again)."""

    def __init__(self, inner: EmbeddingProvider) -> None:
        self.inner = inner
        self.model, self.dim = inner.model, inner.dim
        self._lock = threading.Lock()
        self._done: dict[tuple[str, str], list[float]] = {}

    def __getattr__(self, name: str) -> Any:  # similarity_thresholds, relevance_floor ...
        return getattr(self.inner, name)

    def embed(self, texts: list[str], purpose: Any = "document") -> list[list[float]]:
        if len(texts) != 1:
            return self.inner.embed(texts, purpose)
        key = (texts[0], str(purpose))
        with self._lock:
            if key not in self._done:
                self._done[key] = self.inner.embed(texts, purpose)[0]
            return [self._done[key]]

    def ready(self) -> tuple[bool, str]:
        return self.inner.ready()


def query_of(request: ContextRequest, latest: Sequence[Turn]) -> str | None:
    """The request's query, else the text of the session's latest user turn."""
    if request.query and request.query.strip():
        return request.query
    for turn in reversed(latest):
        if turn.role == "user" and turn.content.strip():
            return turn.content
    return None


@dataclass(frozen=True)
class WorkingNotes:
    """The working memory a block starts with: its reference, its text and which one it is."""

    ref: str
    text: str
    scope: str


@dataclass(frozen=True)
class WorkingRead:
    """What reading the working memory gave: its notes (None when there are none) and a note for the
    response (None, or why there is none: working memory disabled)."""

    notes: WorkingNotes | None = None
    note: str | None = None


class WorkingMemoryReader:
    """The working memory of a request's thread, user or agent (as the project's scope says)."""

    def __init__(self, working: WorkingMemoryService | None, working_scope: WorkingMemoryScope) -> None:
        self.working = working
        self.working_scope = working_scope

    def read(self, principal: Principal, scope: Scope, request: ContextRequest) -> WorkingRead:
        """The notes of the request's working memory, or why there are none."""
        if self.working is None:
            return WorkingRead()
        from mongomem.workingmemory.service import resolve_key  # lazy: 22.5 ms

        key = resolve_key(principal, self.working_scope, scope.user_id, request.session_id, request.agent_id)
        try:
            state = self.working.get(key)
        except NotFound as exc:  # working memory is disabled for the project
            return WorkingRead(note=exc.message)
        text = state.content
        if state.data is not None:
            text = json.dumps(state.data, indent=2, ensure_ascii=False)
        if not text or not text.strip():
            return WorkingRead()
        ref = f"working-memory:{key.scope}:{key.thread_id or key.user_id}@v{state.version}"
        return WorkingRead(WorkingNotes(ref, text.strip(), key.scope))
