"""A small JSON-over-HTTP client for the providers: stdlib urllib, timeouts, mongomem.retrying's policy.

Redirects are not followed (a redirect must not carry an Authorization header to another host), and
only http/https URLs are accepted.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mongomem.retrying import RetryPolicy, TransportFailure, parse_retry_after
from mongomem.retrying import RetryPolicy as _Policy

MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_SNIPPET = 300


class HTTPError(Exception):
    """A JSON HTTP call failed; the message never contains request headers (API keys)."""

    attempts: int = 1  # set by post_json: how many requests were made


class HTTPStatusError(HTTPError):
    def __init__(self, what: str, status: int, body: str, retry_after: float | None) -> None:
        super().__init__(f"{what}: HTTP {status}: {_error_message(body)}")
        self.status = status
        self.body = body
        self.retry_after = retry_after


class HTTPTransportError(HTTPError, TransportFailure):
    """Timeout, refused or reset connection, truncated response: worth retrying."""


class HTTPBodyError(HTTPError):
    """A 2xx answer whose body is not JSON."""


@dataclass
class JsonResponse:
    status: int
    data: Any
    attempts: int
    elapsed_ms: float


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # surfaces as an HTTPError with the 3xx status


_opener = urllib.request.build_opener(_NoRedirect)


def check_url(url: str) -> str:
    """`url` without a trailing slash; ValueError unless it is an absolute http(s) URL."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"not an http(s) URL: {url!r}")
    return url.rstrip("/")


def _error_message(body: str) -> str:
    """The server's own error message when the body is the usual {"error": {"message": ...}}."""
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data.get("message")))
        if isinstance(err, dict):
            err = err.get("message", err)
        if err:
            return str(err)[:_SNIPPET]
    text = " ".join(body.split())
    return text[:_SNIPPET] or "(empty body)"


def _attempt(
    url: str, payload: bytes | None, headers: dict[str, str], timeout: float, what: str
) -> tuple[int, Any]:
    req = urllib.request.Request(
        url, data=payload, headers=headers, method="POST" if payload is not None else "GET"
    )
    try:
        with _opener.open(req, timeout=timeout) as resp:
            raw = resp.read(MAX_RESPONSE_BYTES + 1)
            status = int(resp.status)
    except urllib.error.HTTPError as exc:
        try:
            body = exc.read(64 * 1024).decode("utf-8", "replace")
        except (OSError, http.client.HTTPException):
            body = ""
        raise HTTPStatusError(
            what, exc.code, body, parse_retry_after(exc.headers.get("Retry-After"))
        ) from None
    except TimeoutError as exc:
        raise HTTPTransportError(f"{what}: timed out after {timeout:g}s") from exc
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise HTTPTransportError(f"{what}: timed out after {timeout:g}s") from exc
        raise HTTPTransportError(f"{what}: cannot connect ({reason})") from exc
    except (OSError, http.client.HTTPException) as exc:
        raise HTTPTransportError(f"{what}: connection failed ({type(exc).__name__}: {exc})") from exc
    if len(raw) > MAX_RESPONSE_BYTES:
        raise HTTPBodyError(f"{what}: response larger than {MAX_RESPONSE_BYTES} bytes")
    try:
        return status, json.loads(raw)
    except ValueError as exc:
        snippet = raw[:_SNIPPET].decode("utf-8", "replace")
        raise HTTPBodyError(f"{what}: HTTP {status} answer is not JSON: {snippet!r}") from exc


def post_json(
    url: str,
    body: Mapping[str, Any] | None,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float,
    policy: RetryPolicy,
    what: str = "POST",
    deadline: float | None = None,
    retryable: Callable[[BaseException], bool] | None = None,
) -> JsonResponse:
    """POST `body` as JSON and return the parsed JSON answer.

    Retries what `policy` retries (honouring Retry-After), never past `deadline` (a time.monotonic()
    value); raises HTTPStatusError, HTTPTransportError, HTTPBodyError, or RetriesExhausted /
    DeadlineExceeded from mongomem.retrying. `retryable` overrides the policy's choice of what to retry
    (e.g. a server error whose body says the request itself was refused)."""
    check_url(url)
    payload = json.dumps(body, ensure_ascii=False).encode("utf-8") if body is not None else None
    all_headers = {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "User-Agent": "mongomem",
        **(headers or {}),
    }
    attempts = 0

    def once(budget: float | None) -> tuple[int, Any]:
        nonlocal attempts
        attempts += 1
        return _attempt(url, payload, all_headers, timeout if budget is None else budget, what)

    def on_retry(n: int, exc: BaseException, delay: float) -> None:
        from mongomem.observability import logger  # lazy: 17 ms

        logger.warning(
            "provider call failed; retrying",
            extra={"call": what, "retry": n, "error": str(exc), "delay_s": round(delay, 3)},
        )

    started = time.perf_counter()
    try:
        status, data = policy.call(
            once, timeout=timeout, deadline=deadline, on_retry=on_retry, retryable=retryable
        )
    except HTTPError as exc:
        exc.attempts = attempts
        raise
    return JsonResponse(status, data, attempts, (time.perf_counter() - started) * 1000.0)


def get_json(url: str, *, headers: Mapping[str, str] | None = None, timeout: float, what: str = "GET") -> Any:
    """GET `url` once (no retries: a readiness probe reports, it does not wait) and return its JSON."""

    return post_json(
        url, None, headers=headers, timeout=timeout, policy=_Policy(max_retries=0), what=what
    ).data
