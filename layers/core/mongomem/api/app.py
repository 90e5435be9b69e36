"""The resolver: routers built over their services, validation, error mapping and the body guard."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar
from urllib.parse import unquote

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.shared.json_encoder import Encoder

from mongomem.api.body import BodyRefused, parse_json, read_text
from mongomem.api.errors import error_body, failure_response, install_error_handlers
from mongomem.api.identity import USER_HEADER, Caller
from mongomem.budget import API_BUDGET_SECONDS, request_budget
from mongomem.errors import StoreAuthFailed

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent

    from mongomem.config import Settings


class ApiServices(Protocol):
    """What MemoryApi itself reads of the services (each router declares what its routes use)."""

    @property
    def settings(self) -> Settings: ...


S = TypeVar("S", bound=ApiServices)
S_contra = TypeVar("S_contra", contravariant=True)


class RouteBuilder(Protocol[S_contra]):
    """A module's routes, built over the services they use and the caller of the request served."""

    def __call__(self, svc: S_contra, caller: Caller, /) -> APIGatewayHttpRouter: ...


# A route served without the resolver: (model, status), or None to leave the request to the resolver.
FastRoute = Callable[[dict[str, Any]], Any]


class FastBuilder(Protocol[S_contra]):
    def __call__(self, svc: S_contra, caller: Caller, /) -> FastRoute: ...


def _error(status: int, code: str, message: str, details: Any = None) -> dict[str, Any]:
    return {
        "statusCode": status,
        "headers": {"Content-Type": "application/json"},
        "body": error_body(code, message, details),
        "isBase64Encoded": False,
    }


# Bodies keep non-ASCII characters as they are (Powertools escapes them by default: a CJK character's
# 3 bytes become 6, then 7 in Lambda's response): mongomem.wire budgets what is really sent.
_serialize = partial(json.dumps, separators=(",", ":"), cls=Encoder, ensure_ascii=False)


class _Resolver(APIGatewayHttpResolver):
    """Powertools' resolver, reading the body through the guard once, before any route runs, and keeping
    the request it serves on itself.

    Powertools keeps the current request on a class attribute (`BaseRouter.current_event`), one for every
    resolver of the process; a Lambda execution environment serves one request at a time, the local stack
    several at once. Each `_Resolver` serves one request at a time (`MemoryApi` gives each concurrent
    request its own), and it and its routers read the request it resolves from here: concurrent requests
    never read each other's (issue 33's twenty-fifth probe: one user's import held every other caller of
    the memory API while the local stack served one request per function)."""

    def __init__(self) -> None:
        super().__init__(enable_validation=True, json_body_deserializer=parse_json, serializer=_serialize)
        self._serving: BaseProxyEvent | None = None

    @property  # type: ignore[override]
    def current_event(self) -> BaseProxyEvent:
        if self._serving is None:
            raise RuntimeError("no request is being resolved")
        return self._serving

    @current_event.setter
    def current_event(self, value: BaseProxyEvent) -> None:
        self._serving = value

    def _to_proxy_event(self, event: dict[str, Any]) -> BaseProxyEvent:
        proxy = super()._to_proxy_event(event)
        # `json_body` is cached on the request's event: validation reads this very value (raises BodyRefused)
        _ = proxy.json_body
        self._serving = proxy
        return proxy


class _Served(Generic[S]):
    """One resolver with the routers built over one set of services."""

    def __init__(self, svc: S, builders: list[RouteBuilder[S]], fast: list[FastBuilder[S]]) -> None:
        self.svc = svc
        self.caller = Caller(svc.settings)
        self.fast = [build(svc, self.caller) for build in fast]
        self.app = _Resolver()
        install_error_handlers(self.app)
        for build in builders:
            self.app.include_router(build(svc, self.caller))


class _NoServices:
    """Stands for the services where routes are only documented, never run."""

    settings: Any = None

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"routes built for their documentation cannot serve ({name})")


NO_SERVICES: Any = _NoServices()


class MemoryApi(Generic[S]):
    """Our routers in an APIGatewayHttpResolver; `handle` refuses bad bodies before any route runs.

    Each route module's `routes(svc, caller)` builds its router over the services it uses: the resolver is
    built for the services of the request (once per set: a new config or a reconnect builds new ones).
    The body guard (mongomem.api.body) refuses what cannot be stored faithfully (oversized, not UTF-8,
    too deeply nested, numbers outside 64-bit, NaN/Infinity, lone surrogates) and parses the rest once.
    """

    def __init__(self, *builders: RouteBuilder[S], fast: tuple[FastBuilder[S], ...] = ()) -> None:
        self.builders: list[RouteBuilder[S]] = list(builders)
        self.fast = list(fast)
        # Resolvers (and their callers) not serving a request: each holds the request it serves
        # (`_Resolver`), so a request takes one of its own. Lambda serves one request at a time and keeps
        # using the same one; the local stack, serving several at once, builds one more per concurrent
        # request (~1.5 ms), never one per request.
        self._idle: list[_Served[S]] = []
        self._lock = threading.Lock()

    def add(self, builder: RouteBuilder[S]) -> None:
        """Serve more routes (the docs, the console) from this function."""
        self.builders.append(builder)
        with self._lock:
            self._idle.clear()

    def _take(self, svc: S) -> _Served[S]:
        """An idle resolver built over `svc` (those over older services are dropped), or a new one."""
        with self._lock:
            while self._idle:
                served = self._idle.pop()
                if served.svc is svc:
                    return served
        return _Served(svc, self.builders, self.fast)

    def _give(self, served: _Served[S]) -> None:
        with self._lock:
            self._idle.append(served)

    @property
    def app(self) -> APIGatewayHttpResolver:
        """A resolver of these routes for their OpenAPI document (its routes cannot serve)."""
        return _Served(NO_SERVICES, self.builders, []).app

    def handle(self, event: dict[str, Any], context: Any, svc: S) -> dict[str, Any]:
        """Serve one API Gateway event with these services; a MongoDB authentication failure propagates
        (the runtime refetches the secret and runs the request again)."""
        body = event.get("body") or ""
        limit = svc.settings.memory.limits.max_body_bytes
        # base64 grows the body by 4/3; compare the decoded size without decoding
        size = (
            len(body) * 3 // 4 if event.get("isBase64Encoded") else len(body.encode("utf-8", "surrogatepass"))
        )
        if size > limit:
            return _error(
                413,
                "payload_too_large",
                f"the request body is larger than {limit} bytes",
                {"max_body_bytes": limit},
            )
        if body:
            try:
                read_text(event)  # base64 decoded, UTF-8 checked: Powertools reads the text
            except BodyRefused as refused:
                return _error(refused.status, refused.code, refused.message, refused.details)
            # The API speaks JSON only: a body sent without a JSON content type (curl -d) is read as JSON.
            headers = event.setdefault("headers", {})
            ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
            if "json" not in ctype.lower():
                for key in [k for k in headers if k.lower() == "content-type"]:
                    del headers[key]
                headers["content-type"] = "application/json"
        _decode_path(event)
        served = self._take(svc)
        try:
            return self._serve(served, event, context)
        finally:
            self._give(served)

    def _serve(self, served: _Served[S], event: dict[str, Any], context: Any) -> dict[str, Any]:
        served.caller.begin(event)
        left = (
            context.get_remaining_time_in_millis() / 1000
            if hasattr(context, "get_remaining_time_in_millis")
            else None
        )
        budget = API_BUDGET_SECONDS if left is None else min(API_BUDGET_SECONDS, left - 2.0)
        try:
            with request_budget(budget):
                response = _fast(served.fast, event)
                if response is None:
                    response = served.app.resolve(event, context)
        except BodyRefused as refused:
            return _error(refused.status, refused.code, refused.message, refused.details)
        # Tell the caller which memory identity served the request (a service account's user_id is ignored).
        user = served.caller.acted_as()
        if user and isinstance(response, dict):
            response.setdefault("headers", {})[USER_HEADER] = user
        return response


def _decode_path(event: dict[str, Any]) -> None:
    """The event's path with each segment percent-decoded once, as routes and ids read it: an id a client
    encoded ("chat%3A42", "ana%40x.com": what `quote` and `encodeURIComponent` send) is the id it names
    (issue 33's twenty-first probe). A segment decodes only into id characters (`[A-Za-z0-9._:@-]`): one
    that would decode to anything else ("/", "#", "?", a space, a control, a character outside ASCII) stays
    as sent and fails the id pattern (422; the twenty-third probe). A path that came decoded already (API
    Gateway's HTTP API may decode it) holds no "%" an id allows, and is unchanged."""
    raw = event.get("rawPath")
    if not isinstance(raw, str) or "%" not in raw:
        return
    decoded = "/".join(_segment(s) for s in raw.split("/"))
    event["rawPath"] = decoded
    http = event.get("requestContext", {}).get("http")
    if isinstance(http, dict) and "path" in http:
        http["path"] = decoded


def _segment(segment: str) -> str:
    if "%" not in segment:
        return segment
    try:
        decoded = unquote(segment, errors="strict")
    except UnicodeDecodeError:  # not UTF-8: no id (the pattern refuses it as sent)
        return segment
    # only what an id may hold (`ID_PATTERN`'s characters) is decoded: a segment decoding to anything else
    # stays as sent, and fails the pattern (422), never another route (issue 33's twenty-third probe)
    return decoded if _ID_CHARACTERS.fullmatch(decoded) else segment


_ID_CHARACTERS = re.compile(r"[A-Za-z0-9._:@-]+")


def _fast(routes: list[FastRoute], event: dict[str, Any]) -> dict[str, Any] | None:
    """The answer of the first fast route that takes the request, as the resolver would give it."""
    for route in routes:
        try:
            answer = route(event)
        except StoreAuthFailed:
            raise  # the runtime retries with a refetched secret
        except BodyRefused:
            raise
        except Exception as exc:  # answered as the resolver's error handlers answer it
            return _as_event_response(failure_response(exc))
        if answer is not None:
            model, status = answer
            body = _serialize(model.model_dump(mode="json", by_alias=True))
            return _as_event_response(Response(status, "application/json", body))
    return None


def _as_event_response(response: Response[Any]) -> dict[str, Any]:
    """An HTTP API (payload 2.0) response, shaped as Powertools builds it."""
    headers = {k: ", ".join(v) if isinstance(v, list) else v for k, v in response.headers.items()}
    return {
        "statusCode": response.status_code,
        "body": response.body,
        "isBase64Encoded": False,
        "headers": headers,
        "cookies": [],
    }
