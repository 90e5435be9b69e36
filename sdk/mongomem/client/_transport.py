"""The two executors of `Call`s: MemoryClient (httpx.Client) and AsyncMemoryClient (httpx.AsyncClient).

Both build the same request, read the answer the same way and retry through the same policy
(mongomem.retrying); only sending and sleeping differ.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any, Literal, TypeVar
from urllib.parse import unquote, urlsplit

import httpx
from pydantic import ValidationError

from mongomem.client._calls import Call, Methods, json_default, next_memories_page
from mongomem.models.common import ID_PATTERN, ID_RULE
from mongomem.models.memory import MemoryOut
from mongomem.retrying import RetriesExhausted, RetryPolicy, parse_retry_after

T = TypeVar("T")

# (method, url, headers, body) -> extra headers, e.g. a SigV4 signature for an IAM-authenticated API
Auth = Callable[[str, str, dict[str, str], bytes | None], Mapping[str, str]]

MAX_RETRY_AFTER = 30.0


_ID = re.compile(ID_PATTERN)


class MemoryClientError(Exception):
    """The API answered with an error (status >= 400), or could not be reached (status None).

    `str(err)` names each refused field with the reason: `422 validation_error: the request does not
    match the schema: session_id: Field required`."""

    def __init__(
        self,
        status: int | None,
        code: str,
        message: str,
        details: Any = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status or 'no response'} {code}: {message}{_described(details)}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.retry_after = retry_after

    @property
    def transport_failure(self) -> bool:
        """No answer at all (unreachable, timed out): the retry policy's TransportFailure."""
        return self.status is None and self.code in ("unreachable", "timeout")


def _shape(call: Call[Any]) -> str:
    return str(getattr(getattr(call.parse, "__self__", None), "__name__", "") or "valid answer")


class _Base(Methods):
    """What both clients share: settings, request building, answer reading, retry decisions."""

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
        max_backoff: float = 8.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.retries = max(0, retries)
        self.headers = dict(headers or {})
        if api_key:
            self.headers["x-api-key"] = api_key
        self.auth = auth
        self.policy = RetryPolicy(
            max_retries=self.retries,
            base_delay=backoff,
            max_delay=max_backoff,
            max_retry_after=MAX_RETRY_AFTER,
        )

    def _request(self, http: httpx.Client | httpx.AsyncClient, call: Call[Any]) -> httpx.Request:
        if any(part in (".", "..") for part in call.path.split("/")):
            # `.` and `..` are dot-segments (RFC 3986 5.2.4): a URL client removes them, so such an id
            # would address another resource. The API refuses them as ids (422); so does the client.
            raise MemoryClientError(
                None,
                "validation_error",
                "an id cannot be '.' or '..' (URL clients drop such path segments)",
                [{"path": call.path, "message": "an id cannot be '.' or '..'"}],
            )
        for part in call.path.split("/")[1:]:
            # every segment of a route is a word or an id: one that is no id ("a\\b", "#org") the API would
            # answer with a 422, or send to another route (issue 33's twenty-third probe)
            if not _ID.fullmatch(unquote(part)):
                raise MemoryClientError(
                    None,
                    "validation_error",
                    f"{unquote(part)!r} is no id: {ID_RULE}",
                    [{"path": call.path, "message": f"must be an identifier: {ID_RULE}"}],
                )
        content = (
            json.dumps(call.body, default=json_default).encode("utf-8") if call.body is not None else None
        )
        headers = {"Accept": "application/json", **self.headers}
        if content is not None:
            headers["Content-Type"] = "application/json"
        request = http.build_request(
            call.method,
            self.base_url + call.path,
            params=call.params or None,
            content=content,
            headers=headers,
        )
        if self.auth is not None:
            # The signer sees the final URL (query encoded as sent) and the headers we chose, as before.
            request.headers.update(self.auth(call.method, str(request.url), dict(headers), content))
        return request

    def _read(self, call: Call[T], response: httpx.Response) -> T:
        if response.status_code >= 400:
            raise _error_from(response)
        # a redirect is never followed (follow_redirects=False): it is no answer of the API's
        if 300 <= response.status_code < 400:
            raise MemoryClientError(
                response.status_code, "invalid_response", "the API answered with a redirect"
            )
        # no body: a call that expects nothing parses None; one that expects a model refuses it below
        data = None
        if response.content:
            try:
                data = response.json()
            # RecursionError: nested deeper than the decoder recurses
            except (ValueError, RecursionError) as exc:
                raise MemoryClientError(None, "invalid_response", "the API answered with non-JSON") from exc
        try:
            return call.parse(data)
        except (
            ValidationError,
            TypeError,
            ValueError,
        ) as exc:  # an answer of another shape than the call's (never a raw pydantic or Python error)
            raise MemoryClientError(
                response.status_code, "invalid_response", f"the API's answer is not a {_shape(call)}"
            ) from exc

    def _unreachable(self, exc: httpx.TransportError) -> MemoryClientError:
        where = urlsplit(self.base_url).netloc
        if isinstance(exc, httpx.TimeoutException):
            return MemoryClientError(None, "timeout", f"{where} did not answer within {self.timeout:g}s")
        return MemoryClientError(None, "unreachable", f"cannot reach {where}: {exc}")

    def _retryable(self, call: Call[Any]) -> Callable[[BaseException], bool]:
        # Network failures and 5xx are retried only when re-sending cannot do a thing twice.
        return lambda exc: (
            isinstance(exc, MemoryClientError) and self.policy.retryable(exc, resend_safe=call.resend_safe)
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r})"


class MemoryClient(_Base):
    """The memory API over HTTP (httpx, one connection pool per client); close() or use `with`."""

    is_async: Literal[False] = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._http = httpx.Client(timeout=self.timeout, follow_redirects=False)

    def execute(self, call: Call[T]) -> T:
        """Run a request spec built elsewhere (an integration's, or `Methods.<name>.build(...)`)."""
        return self._run(call)

    def _run(self, call: Call[T]) -> T:
        def attempt(_budget: float | None) -> T:
            request = self._request(self._http, call)
            try:
                response = self._http.send(request)
            except httpx.TransportError as exc:
                raise self._unreachable(exc) from exc
            return self._read(call, response)

        try:
            return self.policy.call(attempt, retryable=self._retryable(call))
        except RetriesExhausted as exc:
            raise exc.last from None

    def iter_memories(
        self, user_id: str | None, type: str | None = None, status: str | None = None, page_size: int = 100
    ) -> Iterator[MemoryOut]:
        """Every matching memory, following the cursor page by page."""
        first = Methods.list_memories.build(user_id, type, status, page_size)
        call: Call[Any] | None = first
        asked: set[str] = set()
        while call is not None:
            page = self._run(call)
            yield from page.memories
            call = _following(first, page, asked)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncMemoryClient(_Base):
    """The same methods as MemoryClient, as coroutines (httpx.AsyncClient); aclose() or `async with`."""

    is_async: Literal[True] = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._http: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _client(self) -> httpx.AsyncClient:
        # A connection pool belongs to one event loop; a client used from a new loop gets a new pool.
        loop = asyncio.get_running_loop()
        if self._http is None or self._loop is not loop:
            self._http = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
            self._loop = loop
        return self._http

    async def execute(self, call: Call[T]) -> T:
        """Run a request spec built elsewhere (an integration's, or `Methods.<name>.build(...)`)."""
        return await self._run(call)

    async def _run(self, call: Call[T]) -> T:
        http = self._client()

        async def attempt(_budget: float | None) -> T:
            request = self._request(http, call)
            try:
                response = await http.send(request)
            except httpx.TransportError as exc:
                raise self._unreachable(exc) from exc
            return self._read(call, response)

        try:
            return await self.policy.acall(attempt, retryable=self._retryable(call))
        except RetriesExhausted as exc:
            raise exc.last from None

    async def iter_memories(
        self, user_id: str | None, type: str | None = None, status: str | None = None, page_size: int = 100
    ) -> AsyncIterator[MemoryOut]:
        """Every matching memory, following the cursor page by page."""
        first = Methods.list_memories.build(user_id, type, status, page_size)
        call: Call[Any] | None = first
        asked: set[str] = set()
        while call is not None:
            page = await self._run(call)
            for memory in page.memories:
                yield memory
            call = _following(first, page, asked)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _following(first: Call[Any], page: Any, asked: set[str]) -> Call[Any] | None:
    """The call for the page after `page`, noting its cursor in `asked`; the SDK's own error when the API
    answers a cursor already asked with (one that never moves would be followed forever)."""
    after = next_memories_page(first, page)
    if after is not None:
        if page.next_cursor in asked:
            raise MemoryClientError(
                200,
                "invalid_response",
                "the API answered a cursor it was asked with already: the list never ends",
            )
        asked.add(page.next_cursor)
    return after


def sigv4_auth(region: str, service: str = "execute-api", credentials: Any = None) -> Auth:
    """Sign requests with AWS SigV4 for an IAM-authenticated API (needs botocore, imported on use).

    `credentials` is a botocore/boto3 credentials object; default: the standard AWS credential chain.
    """
    from botocore.auth import SigV4Auth  # lazy: 61 ms
    from botocore.awsrequest import AWSRequest  # lazy: 48 ms
    from botocore.session import Session  # lazy: 73 ms

    creds = credentials if credentials is not None else Session().get_credentials()
    if creds is None:
        raise MemoryClientError(None, "no_credentials", "no AWS credentials found to sign API requests")

    def sign(method: str, url: str, headers: dict[str, str], body: bytes | None) -> dict[str, str]:
        request = AWSRequest(method=method, url=url, data=body or b"", headers=dict(headers))
        SigV4Auth(creds.get_frozen_credentials(), service, region).add_auth(request)
        return dict(request.headers.items())

    return sign


def _described(details: Any) -> str:
    """The fields an error names, as `: path: reason; path: reason` (validation details are a list of
    {path, message}; other errors may name one `path` or `field` with a `reason`)."""
    items = details if isinstance(details, list) else [details] if isinstance(details, dict) else []
    parts = []
    for item in items:
        if not isinstance(item, dict):
            continue
        where = item.get("path") or item.get("field") or item.get("parameter")
        why = item.get("message") or item.get("reason")
        if where and why:
            parts.append(f"{where}: {why}")
        elif where:
            parts.append(str(where))
    return f": {'; '.join(parts)}" if parts else ""


def _error_from(response: httpx.Response) -> MemoryClientError:
    status, raw = response.status_code, response.content
    code, message, details = f"http_{status}", raw.decode("utf-8", "replace")[:500] or "", None
    try:
        payload = json.loads(raw) if raw else None
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the decoder recurses
        payload = None
    if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
        error = payload["error"]
        code = str(error.get("code") or code)
        message = str(error.get("message") or message)
        details = error.get("details")
    elif isinstance(payload, dict) and "message" in payload:  # API Gateway's own errors
        message = str(payload["message"])
    retry_after = parse_retry_after(response.headers.get("Retry-After"))
    return MemoryClientError(status, code, message or f"HTTP {status}", details, retry_after)
