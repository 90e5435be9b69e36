"""An HTTP front that turns requests into API Gateway HTTP API (v2) events, like `sam local start-api`."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from mongomem.local.lambdas import Handler, LocalContext

# API Gateway's own payload limit; larger requests never reach a function.
MAX_REQUEST_BYTES = 10 * 1024 * 1024


def to_event(
    method: str, target: str, headers: dict[str, str], body: bytes, source_ip: str
) -> dict[str, Any]:
    parts = urlsplit(target)
    query: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        query[key] = f"{query[key]},{value}" if key in query else value
    now = datetime.now(UTC)
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": parts.path,
        "rawQueryString": parts.query,
        "headers": {k.lower(): v for k, v in headers.items()},
        "requestContext": {
            "accountId": "000000000000",
            "apiId": "local",
            "domainName": headers.get("Host", "127.0.0.1"),
            "domainPrefix": "local",
            "http": {
                "method": method,
                "path": parts.path,
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": headers.get("User-Agent", ""),
            },
            "requestId": base64.urlsafe_b64encode(str(time.time_ns()).encode()).decode()[:16],
            "routeKey": "$default",
            "stage": "$default",
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
        },
        "isBase64Encoded": False,
    }
    if query:
        event["queryStringParameters"] = query
    if body:
        try:
            event["body"] = body.decode("utf-8")
        except UnicodeDecodeError:
            event["body"] = base64.b64encode(body).decode()
            event["isBase64Encoded"] = True
    return event


class ApiFront:
    """Routes each request to the function that serves its path (the template's routes)."""

    def __init__(
        self, routes: list[tuple[str, Callable[[], Handler], str]], authorizer: LocalAuthorizer | None = None
    ) -> None:
        # (path prefix, handler loader, function name); first match wins
        self.routes = routes
        self.authorizer = authorizer
        self._loaded: dict[str, Handler] = {}
        self._lock = threading.Lock()
        # Up to CONCURRENT requests per function at once, as Lambda serves a concurrent request in another
        # execution environment: one caller's long request (an import) never holds every other caller's
        # (issue 33's twenty-fifth probe: another user's call waited 30 s behind a 2,000-turn import).
        # Each concurrent request resolves with its own resolver (`mongomem.api.app._Resolver`).
        self._busy: dict[str, threading.BoundedSemaphore] = {}
        self._callers = threading.Condition()
        self._holding: dict[tuple[str, str], int] = {}

    CONCURRENT = 4
    PER_CALLER = 2

    def handler_for(self, path: str) -> tuple[Handler, str] | None:
        for prefix, loader, name in self.routes:
            if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
                with self._lock:
                    if name not in self._loaded:
                        self._loaded[name] = loader()
                        self._busy[name] = threading.BoundedSemaphore(self.CONCURRENT)
                return self._loaded[name], name
        return None

    def invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        found = self.handler_for(event["rawPath"])
        if found is None:
            # as the functions answer a path none of their routes serves (mongomem.api.errors)
            message = (
                f"no route {event['requestContext']['http']['method']} {event['rawPath']}: the routes are "
                "listed at /v1/docs (Swagger UI) and /v1/openapi.json"
            )
            details = {"path": event["rawPath"], "docs": "/v1/docs"}
            return _json_response(
                404, {"error": {"code": "route_not_found", "message": message, "details": details}}
            )
        handler, name = found
        if self.authorizer is not None:
            refused = self.authorizer.check(event)
            if refused is not None:
                return refused
        with self._caller_slot(name, event), self._busy[name]:
            result = handler(event, LocalContext(function_name=name))
        return result if isinstance(result, dict) else _json_response(200, result)

    @contextmanager
    def _caller_slot(self, name: str, event: dict[str, Any]) -> Iterator[None]:
        """At most PER_CALLER of a function's slots for one API key: a caller's further requests wait for
        their own, never taking the slots other callers are served in (issue 33's twenty-eighth probe: four
        imports at once held another user's call 39 s). Requests without a key (an open local stack: one
        caller) share the function's slots alone."""
        headers = event.get("headers") or {}
        key = next((v for k, v in headers.items() if k.lower() == LocalAuthorizer.HEADER), None)
        if not key:
            yield
            return
        held = (name, hashlib.sha256(key.encode()).hexdigest())
        with self._callers:
            while self._holding.get(held, 0) >= self.PER_CALLER:
                self._callers.wait()
            self._holding[held] = self._holding.get(held, 0) + 1
        try:
            yield
        finally:
            with self._callers:
                left = self._holding[held] - 1
                if left:
                    self._holding[held] = left
                else:
                    del self._holding[held]
                self._callers.notify_all()


class LocalAuthorizer:
    """Runs the authorizer function before any API function, like API Gateway's Lambda authorizer.

    Results are cached per x-api-key value for `ttl_seconds` (a revoked key works until its entry
    expires, as in API Gateway). With no key in the store at all the front runs open (default tenant).
    """

    HEADER = "x-api-key"

    def __init__(
        self,
        load: Callable[[], Handler],
        keys_required: Callable[[], bool],
        ttl_seconds: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        public_paths: frozenset[str] = frozenset(),
    ) -> None:
        self._load = load
        self.public_paths = public_paths  # routes deployed with `Authorizer: NONE` (the API docs)
        self._handler: Handler | None = None
        self.keys_required = keys_required
        self.ttl_seconds = ttl_seconds
        self.clock = clock
        self._cache: dict[str, tuple[float, dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self.invocations = 0

    def check(self, event: dict[str, Any]) -> dict[str, Any] | None:
        """None when the request may proceed (with the principal put into its requestContext)."""
        if is_public(event["rawPath"], self.public_paths):
            return None
        key = event.get("headers", {}).get(self.HEADER)
        if not key:
            try:
                required = self.keys_required()
            except Exception:
                return _unavailable()
            return _unauthorized("missing x-api-key header") if required else None
        result = self._result(key, event)
        if result is None:
            return _unavailable()
        if not result.get("isAuthorized"):
            return _unauthorized("invalid or revoked API key")
        event["requestContext"]["authorizer"] = {"lambda": dict(result.get("context") or {})}
        return None

    def _result(self, key: str, event: dict[str, Any]) -> dict[str, Any] | None:
        now = self.clock()
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None and hit[0] > now:
                return hit[1]
            if self._handler is None:
                self._handler = self._load()
            handler = self._handler
        request = {
            "version": "2.0",
            "type": "REQUEST",
            "routeArn": f"arn:aws:execute-api:local:000000000000:local/$default/{event['rawPath']}",
            "identitySource": [key],
            "routeKey": "$default",
            "rawPath": event["rawPath"],
            "rawQueryString": event.get("rawQueryString", ""),
            "headers": dict(event.get("headers") or {}),
            "requestContext": dict(event["requestContext"]),
        }
        try:
            self.invocations += 1
            result = handler(request, LocalContext(function_name="authorizer"))
        except Exception:
            # A failing authorizer (e.g. MongoDB down) is not a denial: nothing is cached.
            return None
        with self._lock:
            self._cache[key] = (now + self.ttl_seconds, result)
        return dict(result)


def is_public(path: str, public_paths: frozenset[str]) -> bool:
    """True for a route deployed with `Authorizer: NONE`; `/x/{proxy+}` stands for every path below /x/."""
    if path in public_paths:
        return True
    if any(part in {".", ".."} for part in path.split("/")):
        return False  # never let a dot segment ride a public prefix
    for route in public_paths:
        if route.endswith("/{proxy+}"):
            prefix = route[: -len("{proxy+}")]
            if path.startswith(prefix) and len(path) > len(prefix):
                return True
    return False


def _unauthorized(message: str) -> dict[str, Any]:
    body = {"error": {"code": "unauthorized", "message": message, "details": None}}
    return {"statusCode": 401, "headers": {"Content-Type": "application/json"}, "body": json.dumps(body)}


def _unavailable() -> dict[str, Any]:
    body = {
        "error": {
            "code": "store_unavailable",
            "message": "the API key could not be verified now; retry shortly",
            "details": {"retry_after_seconds": 2},
        }
    }
    return {
        "statusCode": 503,
        "headers": {"Content-Type": "application/json", "Retry-After": "2"},
        "body": json.dumps(body),
    }


def _json_response(status: int, body: Any) -> dict[str, Any]:
    return {"statusCode": status, "headers": {"Content-Type": "application/json"}, "body": json.dumps(body)}


# API Gateway HTTP APIs refuse a request line and headers over 10 KiB; a longer URL is a 414 here too.
MAX_URL_BYTES = 10 * 1024
# How long the front waits for a body its Content-Length announced (API Gateway waits ~30 s at most).
READ_TIMEOUT_SECONDS = 10.0

_ERROR_CODES = {
    400: "bad_request",
    405: "method_not_allowed",
    408: "request_timeout",
    411: "length_required",
    413: "payload_too_large",
    414: "uri_too_long",
    431: "headers_too_large",
    500: "internal_error",
    505: "http_version_not_supported",
}


def _envelope(status: int, message: str, details: Any = None) -> dict[str, Any]:
    code = _ERROR_CODES.get(status, "bad_request")
    return _json_response(status, {"error": {"code": code, "message": message, "details": details}})


# The methods a route may answer: any other (HEAD, TRACE, CONNECT, an unknown token such as FOO) is a
# 405 naming those of them the target serves in `Allow` (RFC 9110 15.5.6), never a 5xx for what the
# client sent; these all, when the target cannot be asked.
ALLOWED_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS"


_TOKEN = re.compile(r"[A-Z][A-Z0-9_-]{0,31}")  # a method name the functions are shown (RFC 9110 token)


def _not_allowed(method: str) -> dict[str, Any]:
    result = _envelope(405, f"method {method[:32]} is not allowed", {"allow": ALLOWED_METHODS.split(", ")})
    result["headers"]["Allow"] = ALLOWED_METHODS
    return result


RequestLog = Callable[[str, str, int, float, "str | None"], None]  # method, target, status, ms, error code


def _error_code(result: dict[str, Any]) -> str | None:
    status = int(result.get("statusCode", 200))
    if status < 400:
        return None
    try:
        body = result.get("body") or ""
        raw = base64.b64decode(body).decode() if result.get("isBase64Encoded") else str(body)
        error = json.loads(raw).get("error") or {}
        return str(error.get("code")) if error.get("code") else None
    except (ValueError, AttributeError, TypeError):
        return None


class FrontServer(ThreadingHTTPServer):
    """The local front's HTTP server: what its connections share (the front, the read timeout, the log)."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        front: ApiFront,
        read_timeout: float = READ_TIMEOUT_SECONDS,
        on_request: RequestLog | None = None,
    ) -> None:
        self.front = front
        self.read_timeout = read_timeout
        self.on_request = on_request
        super().__init__(address, FrontHandler)


def make_server(
    front: ApiFront,
    host: str,
    port: int,
    read_timeout: float = READ_TIMEOUT_SECONDS,
    on_request: RequestLog | None = None,
) -> ThreadingHTTPServer:
    return FrontServer((host, port), front, read_timeout, on_request)


class FrontHandler(BaseHTTPRequestHandler):
    """One connection to the front: each request becomes an API Gateway event for the server's ApiFront."""

    server: FrontServer
    protocol_version = "HTTP/1.1"
    server_version = "mongomem-local"

    def setup(self) -> None:
        super().setup()
        # Every read from the client (request line, headers, body) gives up after this long.
        self.connection.settimeout(self.server.read_timeout)

    def log_message(self, format: str, *args: Any) -> None:
        return

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Protocol errors (a bad request line, 414, an unknown method ...) in the JSON envelope."""
        if getattr(self, "request_version", "HTTP/1.1") == "HTTP/0.9":
            self.request_version = "HTTP/1.1"  # always answer with a status line and headers
        self.close_connection = True
        if code == HTTPStatus.NOT_IMPLEMENTED:  # http.server's answer to a method it has no do_ for
            # A method no route has (BREW, FOO): the route's 405 with its `Allow`, as for a known
            # method the route lacks; a 404 where no route matches. Never a 5xx for client input.
            if _TOKEN.fullmatch(getattr(self, "command", "") or ""):
                self._serve()
            else:
                self._refuse_method()
            return
        self._send(_envelope(code, message or HTTPStatus(code).phrase), close=True)

    def _length(self) -> int | None:
        """The announced body length, or None after answering a bad or missing one."""
        values = self.headers.get_all("Content-Length") or []
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self._send(
                _envelope(411, "send the body with a Content-Length (no chunked encoding)"), close=True
            )
            return None
        if not values:
            return 0
        text = values[0].strip()
        if len(set(values)) > 1 or not text.isdigit():
            self._send(_envelope(400, "Content-Length is not a number of bytes"), close=True)
            return None
        return int(text)

    def _serve(self) -> None:
        if len(self.path.encode("utf-8", "replace")) > MAX_URL_BYTES:
            self._send(_envelope(414, f"the URL is longer than {MAX_URL_BYTES} bytes"), close=True)
            return
        length = self._length()
        if length is None:
            return
        if length > MAX_REQUEST_BYTES:
            self._send(_envelope(413, "request body over 10 MiB"), close=True)
            return
        try:
            body = self.rfile.read(length) if length else b""
        except TimeoutError:
            body = None
        if body is None or len(body) < length:
            # The client sent less than it announced (or gave up): nothing of it reaches a function.
            self._send(
                _envelope(
                    408 if body is None else 400,
                    "the request body is shorter than its Content-Length",
                    {"content_length": length, "received": len(body or b"")},
                ),
                close=True,
            )
            return
        event = to_event(self.command, self.path, dict(self.headers.items()), body, self.client_address[0])
        started = time.perf_counter()
        try:
            result = self.server.front.invoke(event)
        except Exception:
            result = _envelope(500, "an internal error occurred")  # as API Gateway answers a crashed function
        self._send(result)
        on_request = self.server.on_request
        if on_request is not None:
            took = (time.perf_counter() - started) * 1000
            on_request(self.command, self.path, int(result.get("statusCode", 200)), took, _error_code(result))

    def _refuse_method(self) -> None:
        """A 405 for a method no route may serve (HEAD, TRACE, CONNECT, a lower-case `get`) whose `Allow`
        names the methods the target serves (RFC 9110 15.5.6): the route's own 405 to a method it has
        not, asked without the body (TRACE: no route answers it, and the function never sees the real
        one); its 401 or 404 as it is."""
        method = getattr(self, "command", "") or ""
        target = getattr(self, "path", "") or ""
        result = _not_allowed(method)
        if target.startswith("/") and len(target.encode("utf-8", "replace")) <= MAX_URL_BYTES:
            headers = dict(self.headers.items()) if getattr(self, "headers", None) is not None else {}
            event = to_event("TRACE", target, headers, b"", self.client_address[0])
            try:
                answered = self.server.front.invoke(event)
            except Exception:
                answered = {}
            status = int(answered.get("statusCode", 0))
            allow = {k.lower(): v for k, v in (answered.get("headers") or {}).items()}.get("allow")
            if status == 405 and allow:
                result = _envelope(405, f"method {method[:32]} is not allowed", {"allow": allow.split(", ")})
                result["headers"]["Allow"] = allow
            elif 400 <= status < 500:
                result = answered
        self._send(result, close=True)

    def _send(self, result: dict[str, Any], close: bool = False) -> None:
        body = result.get("body") or ""
        raw = base64.b64decode(body) if result.get("isBase64Encoded") else str(body).encode("utf-8")
        try:
            self.send_response(int(result.get("statusCode", 200)))
            headers = {k.lower(): v for k, v in (result.get("headers") or {}).items()}
            headers.setdefault("content-type", "application/json")
            for key, value in headers.items():
                if key != "content-length":
                    self.send_header(key, str(value))
            for key, values in (result.get("multiValueHeaders") or {}).items():
                for value in values:
                    self.send_header(key, str(value))
            for cookie in result.get("cookies") or []:
                self.send_header("Set-Cookie", cookie)
            self.send_header("Content-Length", str(len(raw)))
            if close:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            if self.command != "HEAD":  # a HEAD answer has the headers of the answer, never a body
                self.wfile.write(raw)
        except OSError:  # the client is gone
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _serve
    # Routes answer GET, not HEAD (as an HTTP API without a HEAD route); TRACE and CONNECT never.
    do_HEAD = do_TRACE = do_CONNECT = _refuse_method
