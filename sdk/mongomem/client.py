"""A synchronous Python client for the mongomem HTTP API (stdlib only, so it adds no dependency).

    from mongomem.client import MemoryClient

    mem = MemoryClient("http://127.0.0.1:3000")
    mem.record_turn("chat-1", "ana", "user", "I moved to Lisbon.")
    mem.search("ana", "where does Ana live?")

Errors are `MemoryClientError` (status, code, message, details from the API's
`{"error": {...}}`). 429 and 503 are retried with backoff (honouring Retry-After); record writes
carry a client token, generated when not given, so a retried write records nothing twice.
"""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit

from pydantic import BaseModel

from mongomem.models.memory import DeleteResult, MemoryOut, MemoryPage, MemoryWithHistory, WriteResult
from mongomem.models.search import SearchResponse
from mongomem.models.sessions import FlushResponse, SessionState
from mongomem.models.turns import RecordTurnsResponse, TurnIn, TurnPage
from mongomem.models.working_memory import (
    Thread,
    Unchanged,
    WorkingMemoryContext,
    WorkingMemoryState,
)

M = TypeVar("M", bound=BaseModel)

# (method, url, headers, body) -> extra headers, e.g. a SigV4 signature for an IAM-authenticated API
Auth = Callable[[str, str, dict[str, str], bytes | None], Mapping[str, str]]

RETRY_STATUSES = frozenset({429, 503})
MAX_RETRY_AFTER = 30.0


class MemoryClientError(Exception):
    """The API answered with an error (status >= 400), or could not be reached (status None)."""

    def __init__(
        self,
        status: int | None,
        code: str,
        message: str,
        details: Any = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status or 'no response'} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.retry_after = retry_after


class MemoryClient:
    """The memory API over HTTP; every method returns the API's pydantic model (dicts where none exists)."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:3000",
        timeout: float = 10,
        retries: int = 3,
        headers: Mapping[str, str] | None = None,
        *,
        auth: Auth | None = None,
        api_key: str | None = None,
        backoff: float = 0.25,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retries = max(0, retries)
        self.headers = dict(headers or {})
        if api_key:
            self.headers["x-api-key"] = api_key
        self.auth = auth
        self.backoff = backoff

    # -- short-term memory: turns and sessions ------------------------------------------------------

    def record_turn(
        self,
        session_id: str,
        user_id: str | None,
        role: str,
        content: str,
        *,
        agent_id: str | None = None,
        client_token: str | None = None,
        **turn: Any,
    ) -> RecordTurnsResponse:
        """Record one turn; extra keywords (tool_calls, tool_call_id, name, metadata, timestamp) go in it."""
        return self.record_turns(
            session_id,
            user_id,
            [{"role": role, "content": content, **turn}],
            client_token=client_token,
            agent_id=agent_id,
        )

    def record_turns(
        self,
        session_id: str,
        user_id: str | None,
        turns: Iterable[Mapping[str, Any] | TurnIn],
        client_token: str | None = None,
        *,
        agent_id: str | None = None,
    ) -> RecordTurnsResponse:
        """Record a batch in order; the client token (uuid4 when not given) makes retries safe."""
        body: dict[str, Any] = {
            "user_id": user_id,
            "agent_id": agent_id,
            "client_token": client_token or str(uuid.uuid4()),
            "turns": [_plain(t) for t in turns],
        }
        data = self._call("POST", f"/v1/sessions/{_seg(session_id)}/turns", body=_drop_none(body), safe=True)
        return RecordTurnsResponse.model_validate(data)

    def list_turns(
        self, session_id: str, user_id: str | None, limit: int = 20, before_seq: int | None = None
    ) -> TurnPage:
        """The newest `limit` turns (oldest first); pass `next_before_seq` to page further back."""
        query = {"user_id": user_id, "limit": limit, "before_seq": before_seq}
        return TurnPage.model_validate(self._call("GET", f"/v1/sessions/{_seg(session_id)}/turns", query))

    def get_session(self, session_id: str, user_id: str | None) -> SessionState:
        data = self._call("GET", f"/v1/sessions/{_seg(session_id)}", {"user_id": user_id})
        return SessionState.model_validate(data)

    def flush(self, session_id: str, user_id: str | None) -> FlushResponse:
        """Promote the session's unpromoted turns to a snapshot now (extraction follows in the background)."""
        data = self._call("POST", f"/v1/sessions/{_seg(session_id)}/flush", {"user_id": user_id}, safe=True)
        return FlushResponse.model_validate(data)

    # -- long-term memories ---------------------------------------------------------------------------

    def create_memory(
        self,
        user_id: str | None,
        type: str,
        payload: Mapping[str, Any],
        reconcile: bool = True,
        *,
        expires_at: datetime | str | None = None,
    ) -> WriteResult:
        """Write a memory; with reconcile it may UPDATE or REINFORCE an existing one instead of adding."""
        body = {
            "user_id": user_id,
            "type": type,
            "payload": dict(payload),
            "reconcile": reconcile,
            "expires_at": expires_at.isoformat() if isinstance(expires_at, datetime) else expires_at,
        }
        return WriteResult.model_validate(self._call("POST", "/v1/memories", body=_drop_none(body)))

    def get_memory(self, memory_id: str, user_id: str | None, history: bool = False) -> MemoryWithHistory:
        query = {"user_id": user_id, "history": "true" if history else None}
        return MemoryWithHistory.model_validate(self._call("GET", f"/v1/memories/{_seg(memory_id)}", query))

    def list_memories(
        self,
        user_id: str | None,
        type: str | None = None,
        status: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> MemoryPage:
        query = {"user_id": user_id, "type": type, "status": status, "limit": limit, "cursor": cursor}
        return MemoryPage.model_validate(self._call("GET", "/v1/memories", query))

    def iter_memories(
        self, user_id: str | None, type: str | None = None, status: str | None = None, page_size: int = 100
    ) -> Iterator[MemoryOut]:
        """Every matching memory, following the cursor page by page."""
        cursor: str | None = None
        while True:
            page = self.list_memories(user_id, type, status, page_size, cursor)
            yield from page.memories
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def delete_memory(self, memory_id: str, user_id: str | None) -> DeleteResult:
        data = self._call("DELETE", f"/v1/memories/{_seg(memory_id)}", {"user_id": user_id}, safe=True)
        return DeleteResult.model_validate(data)

    def search(
        self,
        user_id: str | None,
        query: str,
        types: Iterable[str] | None = None,
        top_k: int = 10,
        **options: Any,
    ) -> SearchResponse:
        """Hybrid (vector + keyword) search over a user's memories: POST /v1/memories/search.

        `options` are the request's other fields (mode, min_score, include_superseded).
        """
        body = {
            "user_id": user_id,
            "query": query,
            "types": list(types) if types is not None else None,
            "top_k": top_k,
            **options,
        }
        return SearchResponse.model_validate(
            self._call("POST", "/v1/memories/search", body=_drop_none(body), safe=True)
        )

    # -- recall and context ----------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        user_id: str | None,
        thread: str | None = None,
        scope: str | None = None,
        top_k: int | None = None,
        message_range: int | Mapping[str, int] | None = None,
        min_score: float | None = None,
    ) -> dict[str, Any]:
        """Old messages similar to `query` (semantic recall), with `message_range` turns around each."""
        body = {
            "query": query,
            "user_id": user_id,
            "thread": thread,
            "scope": scope,
            "top_k": top_k,
            "message_range": dict(message_range) if isinstance(message_range, Mapping) else message_range,
            "min_score": min_score,
        }
        return dict(self._call("POST", "/v1/recall", body=_drop_none(body), safe=True))

    def build_context(
        self,
        user_id: str | None,
        session_id: str | None = None,
        thread: str | None = None,
        query: str | None = None,
        token_budget: int | None = None,
    ) -> dict[str, Any]:
        """Everything an agent's next turn needs (working memory, memories, recent turns) within a budget."""
        body = {
            "user_id": user_id,
            "session_id": session_id,
            "thread": thread,
            "query": query,
            "token_budget": token_budget,
        }
        return dict(self._call("POST", "/v1/context", body=_drop_none(body), safe=True))

    # -- working memory --------------------------------------------------------------------------------

    def get_working_memory(
        self,
        user_id: str | None,
        thread_id: str | None = None,
        scope: str | None = None,
        read_only: bool = False,
        if_none_match: str | None = None,
    ) -> WorkingMemoryState | Unchanged:
        """The working memory (Unchanged when `if_none_match` is still its cache key)."""
        query = {
            "user_id": user_id,
            "thread_id": thread_id,
            "scope": scope,
            "readOnly": "true" if read_only else None,
            "if_none_match": if_none_match,
        }
        data = self._call("GET", "/v1/working-memory", query)
        if isinstance(data, dict) and data.get("unchanged"):
            return Unchanged.model_validate(data)
        return WorkingMemoryState.model_validate(data)

    def update_working_memory(
        self,
        user_id: str | None,
        *,
        content: str | None = None,
        data: Mapping[str, Any] | None = None,
        memory: str | Mapping[str, Any] | None = None,
        thread_id: str | None = None,
        scope: str | None = None,
        replace: bool = False,
    ) -> WorkingMemoryState:
        """Merge into the working memory (PATCH), or replace it whole with replace=True (PUT).

        Give exactly one of `content` (template mode), `data` (schema mode) or `memory` (the update
        tool's argument, forwarded as the agent produced it).
        """
        body = _drop_none(
            {
                "content": content,
                "data": dict(data) if data is not None else None,
                "memory": dict(memory) if isinstance(memory, Mapping) else memory,
            }
        )
        query = {"user_id": user_id, "thread_id": thread_id, "scope": scope}
        method = "PUT" if replace else "PATCH"
        return WorkingMemoryState.model_validate(
            self._call(method, "/v1/working-memory", query, body=body, safe=replace)
        )

    def clear_working_memory(
        self, user_id: str | None, thread_id: str | None = None, scope: str | None = None
    ) -> WorkingMemoryState:
        query = {"user_id": user_id, "thread_id": thread_id, "scope": scope}
        return WorkingMemoryState.model_validate(self._call("DELETE", "/v1/working-memory", query, safe=True))

    def working_memory_tool(
        self,
        user_id: str | None,
        thread_id: str | None = None,
        scope: str | None = None,
        delivery: str | None = None,
    ) -> WorkingMemoryContext | Unchanged:
        """The agent's update tool, its instructions and the current working memory."""
        query = {"user_id": user_id, "thread_id": thread_id, "scope": scope, "delivery": delivery}
        data = self._call("GET", "/v1/working-memory/tool", query)
        if isinstance(data, dict) and data.get("unchanged"):
            return Unchanged.model_validate(data)
        return WorkingMemoryContext.model_validate(data)

    def create_thread(
        self,
        thread_id: str,
        user_id: str | None,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Thread:
        body = _drop_none(
            {"thread_id": thread_id, "user_id": user_id, "title": title, "metadata": dict(metadata or {})}
        )
        return Thread.model_validate(self._call("POST", "/v1/threads", body=body))

    def get_thread(self, thread_id: str, user_id: str | None) -> Thread:
        return Thread.model_validate(
            self._call("GET", f"/v1/threads/{_seg(thread_id)}", {"user_id": user_id})
        )

    # -- the service -----------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """Readiness (LLM and embedding providers, with reasons), configuration and backlog."""
        return dict(self._call("GET", "/v1/status"))

    # -- transport -------------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        *,
        safe: bool | None = None,
    ) -> Any:
        """Call any route; returns the decoded JSON body. `safe` marks a request that may be re-sent."""
        return self._call(method, path, query, body=body, safe=safe)

    def _call(
        self,
        method: str,
        path: str,
        query: Mapping[str, Any] | None = None,
        *,
        body: Any = None,
        safe: bool | None = None,
    ) -> Any:
        url = self.base_url + path
        params = {k: _query_value(v) for k, v in (query or {}).items() if v is not None}
        if params:
            url += "?" + urlencode(params)
        data = json.dumps(body, default=_json_default).encode("utf-8") if body is not None else None
        # Network failures are retried only when re-sending cannot do a thing twice.
        resend_ok = method in ("GET", "HEAD", "PUT", "DELETE") if safe is None else safe
        attempt = 0
        while True:
            try:
                return self._send(method, url, data)
            except MemoryClientError as err:
                retryable = err.status in RETRY_STATUSES or (err.status is None and resend_ok)
                if not retryable or attempt >= self.retries:
                    raise
                delay = err.retry_after if err.retry_after is not None else self._backoff(attempt)
                time.sleep(min(delay, MAX_RETRY_AFTER))
                attempt += 1

    def _backoff(self, attempt: int) -> float:
        return float(self.backoff * (2**attempt) * (0.5 + random.random() / 2))

    def _send(self, method: str, url: str, data: bytes | None) -> Any:
        headers = {"Accept": "application/json", **self.headers}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.auth is not None:
            headers.update(self.auth(method, url, dict(headers), data))
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            with exc:
                raise _error_from(exc.code, exc.read(), exc.headers.get("Retry-After")) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise MemoryClientError(
                None, "unreachable", f"cannot reach {urlsplit(url).netloc}: {reason}"
            ) from exc
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise MemoryClientError(None, "invalid_response", "the API answered with non-JSON") from exc

    def __repr__(self) -> str:
        return f"MemoryClient({self.base_url!r})"


def sigv4_auth(region: str, service: str = "execute-api", credentials: Any = None) -> Auth:
    """Sign requests with AWS SigV4 for an IAM-authenticated API (needs botocore, imported on use).

    `credentials` is a botocore/boto3 credentials object; default: the standard AWS credential chain.
    """
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.session import Session

    creds = credentials if credentials is not None else Session().get_credentials()
    if creds is None:
        raise MemoryClientError(None, "no_credentials", "no AWS credentials found to sign API requests")

    def sign(method: str, url: str, headers: dict[str, str], body: bytes | None) -> dict[str, str]:
        request = AWSRequest(method=method, url=url, data=body or b"", headers=dict(headers))
        SigV4Auth(creds.get_frozen_credentials(), service, region).add_auth(request)
        return dict(request.headers.items())

    return sign


def _error_from(status: int, raw: bytes, retry_after: str | None) -> MemoryClientError:
    code, message, details = f"http_{status}", raw.decode("utf-8", "replace")[:500] or "", None
    try:
        payload = json.loads(raw) if raw else None
    except ValueError:
        payload = None
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        error = payload["error"]
        code = str(error.get("code") or code)
        message = str(error.get("message") or message)
        details = error.get("details")
    elif isinstance(payload, dict) and "message" in payload:  # API Gateway's own errors
        message = str(payload["message"])
    return MemoryClientError(status, code, message or f"HTTP {status}", details, _retry_after(retry_after))


def _retry_after(value: str | None) -> float | None:
    """Retry-After as seconds: a number, or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _seg(value: str) -> str:
    from urllib.parse import quote

    return quote(str(value), safe="")


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return _drop_none(dict(value))


def _drop_none(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if v is not None}


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")
