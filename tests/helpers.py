"""Helpers the tests share: API Gateway events for the handlers, calling them, installing services.

Every helper builds the same kind of event the deployed stack receives (API Gateway HTTP API payload
2.0, from the samples in events/ or from a method and a path as the local HTTP front makes them), so a
test drives the real handler with the real event shape.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
EVENTS = ROOT / "events"

_SAMPLES: dict[str, dict[str, Any]] = {}


def load_event(name: str, **changes: Any) -> dict[str, Any]:
    """A fresh copy of a sample event from events/, with top-level keys replaced by `changes`."""
    if name not in _SAMPLES:
        _SAMPLES[name] = json.loads((EVENTS / name).read_text())
    event = copy.deepcopy(_SAMPLES[name])
    event.update(changes)
    return event


def authorize(
    event: dict[str, Any],
    tenant: str | None,
    kind: str = "memory_service",
    key_id: str | None = "key-test",
    fixed_user: str | None = None,
) -> dict[str, Any]:
    """Give the event a Lambda authorizer's context (None: leave the sample's as it is)."""
    if tenant is None:
        return event
    context: dict[str, Any] = {"tenant": tenant, "kind": kind}
    if key_id is not None:
        context["key_id"] = key_id
    if fixed_user is not None:
        context.update(kind="service_account", fixed_user_id=fixed_user)
    event["requestContext"]["authorizer"] = {"lambda": context}
    return event


def sample_event(
    name: str,
    body: Any = None,
    *,
    raw: str | None = None,
    path: str | None = None,
    path_parameters: dict[str, str] | None = None,
    query: dict[str, str] | None = None,
    tenant: str | None = None,
    fixed_user: str | None = None,
    **changes: Any,
) -> dict[str, Any]:
    """A sample event with its body (JSON-encoded unless a string or `raw`), path, query and caller changed."""
    event = load_event(name, **changes)
    if raw is not None:
        event["body"] = raw
    elif body is not None:
        event["body"] = body if isinstance(body, str) else json.dumps(body)
    if path is not None:
        event["rawPath"] = event["requestContext"]["http"]["path"] = path
    if path_parameters is not None:
        event["pathParameters"] = path_parameters
    if query is not None:
        event["queryStringParameters"] = query
        event["rawQueryString"] = urlencode(query)
    return authorize(event, tenant, fixed_user=fixed_user)


def route_event(
    method: str,
    path: str,
    query: dict[str, str] | None = None,
    body: Any = None,
    tenant: str | None = None,
    key_id: str | None = None,
) -> dict[str, Any]:
    """Any route's event, built from the recorded sample of GET /v1/sessions/{id} (no path parameters)."""
    event = load_event("get_session.json")
    event["routeKey"] = event["requestContext"]["routeKey"] = f"{method} {path}"
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["requestContext"]["http"]["method"] = method
    event["queryStringParameters"] = query or {}
    event["rawQueryString"] = "&".join(f"{k}={v}" for k, v in (query or {}).items())
    event.pop("pathParameters", None)
    if body is not None:
        event["body"] = body if isinstance(body, str) else json.dumps(body)
    return authorize(event, tenant, key_id=key_id)


def http_event(
    method: str,
    target: str,
    body: Any = None,
    tenant: str | None = None,
    key_id: str = "k",
    headers: dict[str, str] | None = None,
    fixed_user: str | None = None,
) -> dict[str, Any]:
    """The event the local HTTP front makes of `method target` (a path with its query string); with
    `fixed_user`, as a one-user (service-account) key of that user sends it."""
    from mongomem.local.http import to_event

    raw = body if isinstance(body, bytes) else json.dumps(body).encode() if body else b""
    event = to_event(method, target, headers or {"content-type": "application/json"}, raw, "203.0.113.10")
    return authorize(event, tenant, key_id=key_id, fixed_user=fixed_user)


def invoke(function: Any, ctx: Any, event: dict[str, Any]) -> tuple[int, Any]:
    """Run a function module's handler on an API event: (status, JSON body, None when empty)."""
    response = function.lambda_handler(event, ctx)
    text = response.get("body") or ""
    return int(response["statusCode"]), json.loads(text) if text else None


def call(function: Any, ctx: Any, name: str, body: Any = None, **options: Any) -> tuple[int, Any]:
    """Invoke a handler with a sample event (see `sample_event` for the options)."""
    return invoke(function, ctx, sample_event(name, body, **options))


@contextmanager
def installed(services: Any) -> Iterator[Any]:
    """Install services as the process's (every handler's Runtime serves with them); drop their database after."""
    from mongomem.runtime import configure

    configure(services)
    try:
        yield services
    finally:
        configure(None)
        services.database.drop()


# Every extraction queue of the local stack: a snapshot's kinds pass it on from one to the next.
EXTRACT_QUEUES = [
    "extract-semantic",
    "extract-episodic",
    "extract-procedural",
    "extract-taxonomic",
    "extract-preference",
    "extract-custom",
]


# -- the local stack ------------------------------------------------------------------------------------
def local_stack(factory: Any, name: str, config: str, **options: Any) -> Iterator[Any]:
    """A running `LocalStack` over a fresh data dir with `config` as its project-config.yaml, stopped
    after the fixture that yields from it (`yield from local_stack(tmp_path_factory, "sdk", CONFIG, ...)`)."""
    from mongomem.local.stack import LocalStack

    data = factory.mktemp(name)
    (data / "project-config.yaml").write_text(config)
    stack = LocalStack(data_dir=data, port=0, config_file=data / "project-config.yaml", **options).start()
    try:
        yield stack
    finally:
        stack.stop()


# -- figures a run reports ------------------------------------------------------------------------------
# Figures a test module gathers while its tests run (probes made, places checked) are printed once, in
# the run's summary (tests/conftest.py's pytest_terminal_summary): a report, not a test that cannot fail.
_FIGURES: dict[str, Callable[[], str]] = {}


def report_figures(name: str, line: Callable[[], str]) -> None:
    """Print `name: line()` in the summary of every run that collects the module."""
    _FIGURES[name] = line


def figure_lines() -> list[str]:
    return [f"{name}: {line()}" for name, line in sorted(_FIGURES.items())]
