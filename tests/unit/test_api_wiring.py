"""Routes receive the services they use: the API serves with the services it is handed, no runtime.

Database-free: the routers are built over stand-in services, the auth retry runs on a Runtime whose
handler fails as MongoDB refusing the credentials would.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from typing import Any

import pytest

import mongomem.api as api_package
from mongomem.api.app import MemoryApi
from mongomem.api.identity import Caller, scope_for
from mongomem.api.sessions import routes as sessions
from mongomem.config import settings_from_env
from mongomem.errors import StoreAuthFailed
from mongomem.models.common import Principal
from mongomem.models.turns import RecordedTurn, RecordTurnsResponse
from mongomem.runtime import Runtime, Services
from tests.conftest import Ctx, load_event


class Recorder:
    """Records what the route asked for and answers as the real recorder would."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, str]] = []

    def record(self, scope: Any, session_id: str, request: Any) -> RecordTurnsResponse:
        self.calls.append((scope, session_id))
        turns = [RecordedTurn(turn_id=f"{session_id}#{len(self.calls)}", seq=len(self.calls))]
        return RecordTurnsResponse(session_id=session_id, user_id=scope.user_id, turns=turns)


class Fake:
    def __init__(self) -> None:
        self.settings = settings_from_env({})
        self.recorder = Recorder()
        self.history: Any = None


def record_event(user: str = "ann", session: str = "s-1") -> dict[str, Any]:
    event = load_event("record_turn_single.json")
    event["rawPath"] = event["requestContext"]["http"]["path"] = f"/v1/sessions/{session}/turns"
    event["body"] = json.dumps({"user_id": user, "role": "user", "content": "hello"})
    return event


def test_the_api_serves_with_the_services_it_is_handed_and_reports_the_acting_user() -> None:
    # Given one API and two sets of services (a config reload builds new ones)
    api: MemoryApi[Any] = MemoryApi(sessions)
    first, second = Fake(), Fake()
    # When a request is served with each
    one = api.handle(record_event("ann", "s-1"), Ctx(), first)
    two = api.handle(record_event("bob", "s-2"), Ctx(), second)
    # Then each went to the recorder of the services it was served with, as the user it named
    assert one["statusCode"] == 201 and two["statusCode"] == 201
    assert [(s.user_id, sid) for s, sid in first.recorder.calls] == [("ann", "s-1")]
    assert [(s.user_id, sid) for s, sid in second.recorder.calls] == [("bob", "s-2")]
    assert one["headers"]["x-mongomem-user-id"] == "ann" and two["headers"]["x-mongomem-user-id"] == "bob"


def test_a_refused_request_reports_no_acting_user_from_the_one_before() -> None:
    api: MemoryApi[Any] = MemoryApi(sessions)
    svc = Fake()
    assert api.handle(record_event("ann"), Ctx(), svc)["headers"]["x-mongomem-user-id"] == "ann"
    # a request naming no user is refused (400) and acted as nobody
    event = record_event()
    event["body"] = json.dumps({"role": "user", "content": "hello"})
    refused = api.handle(event, Ctx(), svc)
    assert refused["statusCode"] == 400 and "x-mongomem-user-id" not in refused["headers"]


def test_scope_for_only_returns_the_scope() -> None:
    caller = Caller(settings_from_env({}))
    caller.begin(record_event())
    scope_for(Principal(tenant="t1"), "someone")
    assert caller.acted_as() is None  # computing a scope is not acting as its user
    assert caller.scope("ann").user_id == "ann" and caller.acted_as() == "ann"


def test_a_bad_body_is_refused_before_any_route_runs() -> None:
    api: MemoryApi[Any] = MemoryApi(sessions)
    svc = Fake()
    event = record_event()
    event["body"] = '{"user_id": "ann", "role": "user", "content": "x", "n": 1e999}'
    refused = api.handle(event, Ctx(), svc)
    assert refused["statusCode"] == 422 and json.loads(refused["body"])["error"]["code"] == "validation_error"
    assert svc.recorder.calls == []


def route_modules() -> list[Any]:
    found = []
    for info in pkgutil.iter_modules(api_package.__path__):
        module = importlib.import_module(f"mongomem.api.{info.name}")
        if callable(getattr(module, "routes", None)):
            found.append(module)
    return found


@pytest.mark.parametrize("module", route_modules(), ids=lambda m: m.__name__)
def test_the_root_provides_everything_a_router_declares_it_uses(module: Any) -> None:
    # each router names what it uses in a Protocol (its `routes` builder's first parameter)
    wanted = inspect.signature(module.routes).parameters["svc"].annotation
    protocol = getattr(module, wanted)
    assert getattr(protocol, "_is_protocol", False), f"{wanted} is not a Protocol"
    members = [n for n in vars(protocol) if not n.startswith("_")]
    assert members, protocol
    root = Services(settings_from_env({}))  # builds nothing until an attribute is read
    assert [n for n in members if n not in vars(root) and not hasattr(Services, n)] == []


class FailingStore:
    """A handler whose every MongoDB call is refused for bad credentials."""

    def __init__(self) -> None:
        self.runs = 0

    def __call__(self, event: Any, context: Any, svc: Any) -> Any:
        self.runs += 1
        raise StoreAuthFailed("authentication failed")


def runtime() -> Runtime:
    return Runtime(environ={}, build=lambda settings: Services(settings))


def test_an_api_function_answers_503_after_the_second_auth_failure() -> None:
    handler = FailingStore()
    wrapped = runtime().api_handler(handler)
    response = wrapped(record_event(), Ctx())
    assert handler.runs == 2  # run again once (after refetching the secret), then answered
    assert response["statusCode"] == 503
    assert json.loads(response["body"])["error"]["code"] == "store_unavailable"


def test_another_function_raises_after_the_second_auth_failure() -> None:
    handler = FailingStore()
    with pytest.raises(StoreAuthFailed):
        runtime().handler(handler)({"Records": []}, Ctx())
    assert handler.runs == 2


def test_a_second_attempt_that_succeeds_is_the_answer() -> None:
    runs: list[int] = []

    def flaky(event: Any, context: Any, svc: Any) -> Any:
        runs.append(1)
        if len(runs) == 1:
            raise StoreAuthFailed("authentication failed")
        return {"statusCode": 200}

    assert runtime().api_handler(flaky)(record_event(), Ctx()) == {"statusCode": 200}
