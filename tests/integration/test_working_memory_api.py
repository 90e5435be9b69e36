"""Working-memory routes in-process through MemoryApi, with HTTP API v2 events, against SecantusDB."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mongomem.adapters.mongo.working_memory import MongoWorkingMemoryRepository
from mongomem.api.app import MemoryApi
from mongomem.api.threads import routes as threads_routes
from mongomem.api.working_memory import routes as working_memory_routes
from mongomem.config import settings_from_env
from mongomem.local.mongod import EmbeddedMongo
from mongomem.local.queue import local_queue_factory
from mongomem.models.common import Principal
from mongomem.models.working_memory import WorkingMemoryWrite
from mongomem.runtime import Services
from mongomem.workingmemory.config import DEFAULT_TEMPLATE, WorkingMemoryConfig
from mongomem.workingmemory.service import WorkingMemoryService, resolve_key
from tests import helpers

PROFILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "preferences": {
            "type": "object",
            "properties": {"seat": {"enum": ["aisle", "window"]}, "meal": {"type": "string"}},
        },
        "airports": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name"],
}


@pytest.fixture(scope="module")
def mongo(mongo_server: EmbeddedMongo) -> Iterator[Services]:
    """The session's SecantusDB server (tests/conftest.py), a fresh database for this module."""
    env = {"MONGOMEM_MONGODB_URI": mongo_server.uri, "MONGOMEM_DB_NAME": f"wm_test_{uuid.uuid4().hex[:12]}"}
    with helpers.installed(Services(settings_from_env(env), queue_factory=local_queue_factory)) as svc:
        yield svc


class WorkingMemoryApi:
    """The working-memory routes in a MemoryApi, served with services on the module's database."""

    def __init__(self, mongo: Services) -> None:
        self.mongo = mongo
        self.api = MemoryApi[Any](working_memory_routes, threads_routes)
        self.use(None)

    def use(self, config: WorkingMemoryConfig | None) -> None:
        """Serve with this working-memory config from now on (None: the project config's, the default)."""
        self.svc = Services(self.mongo.settings, working_memory_config=config)

    def handle(self, event: dict[str, Any]) -> dict[str, Any]:
        return self.api.handle(event, None, self.svc)


@pytest.fixture
def api(mongo: Services) -> WorkingMemoryApi:
    return WorkingMemoryApi(mongo)


@pytest.fixture
def schema_mode(api: WorkingMemoryApi) -> WorkingMemoryApi:
    api.use(WorkingMemoryConfig(json_schema=PROFILE_SCHEMA))
    return api


@pytest.fixture
def user() -> str:
    return f"user-{uuid.uuid4().hex[:10]}"


def call(
    api: WorkingMemoryApi,
    method: str,
    path: str,
    query: dict[str, str] | None = None,
    body: Any = None,
    tenant: str | None = None,
) -> tuple[int, Any]:
    """Send an API Gateway HTTP API (v2) event built from the recorded sample; return (status, JSON body)."""
    response = api.handle(helpers.route_event(method, path, query, body, tenant))
    return response["statusCode"], json.loads(response["body"])


WM = "/v1/working-memory"


def test_template_mode_put_replaces_and_get_returns_it(api: WorkingMemoryApi, user: str) -> None:
    status, empty = call(api, "GET", WM, {"user_id": user})
    assert (status, empty["mode"], empty["content"], empty["version"]) == (200, "template", None, 0)

    status, put = call(
        api, "PUT", WM, {"user_id": user}, {"content": "# User\n- Name: Ada\n- Location: Lisbon"}
    )
    assert (status, put["version"]) == (200, 1)
    status, patched = call(api, "PATCH", WM, {"user_id": user}, {"content": "# User\n- Name: Ada"})
    assert (status, patched["content"], patched["version"]) == (200, "# User\n- Name: Ada", 2)

    status, got = call(api, "GET", WM, {"user_id": user})
    assert got["content"] == "# User\n- Name: Ada" and got["updated_at"] == patched["updated_at"]


def test_an_empty_template_over_content_is_refused_and_nothing_changes(
    api: WorkingMemoryApi, user: str
) -> None:
    call(api, "PUT", WM, {"user_id": user}, {"content": "- **Location**: Lisbon"})

    status, body = call(api, "PATCH", WM, {"user_id": user}, {"content": DEFAULT_TEMPLATE})

    assert (status, body["error"]["code"]) == (409, "empty_template_refused")
    _, got = call(api, "GET", WM, {"user_id": user})
    assert (got["content"], got["version"]) == ("- **Location**: Lisbon", 1)


def test_delete_clears_on_purpose(api: WorkingMemoryApi, user: str) -> None:
    call(api, "PUT", WM, {"user_id": user}, {"content": "- Name: Ada"})
    status, cleared = call(api, "DELETE", WM, {"user_id": user})
    assert (status, cleared["content"]) == (200, None)
    assert call(api, "PUT", WM, {"user_id": user}, {"content": DEFAULT_TEMPLATE})[0] == 200


def test_schema_mode_patch_deep_merges_deletes_with_null_and_replaces_arrays(
    schema_mode: WorkingMemoryApi, user: str
) -> None:
    q = {"user_id": user}
    status, _ = call(schema_mode, "PUT", WM, q, {"data": {"name": "Ada", "airports": ["LHR", "LIS"]}})
    assert status == 200

    status, body = call(
        schema_mode,
        "PATCH",
        WM,
        q,
        {"data": {"preferences": {"seat": "aisle", "meal": "veg"}, "airports": ["OPO"]}},
    )
    assert status == 200
    status, body = call(schema_mode, "PATCH", WM, q, {"data": {"preferences": {"meal": None}}})

    assert body["data"] == {"name": "Ada", "airports": ["OPO"], "preferences": {"seat": "aisle"}}
    assert call(schema_mode, "GET", WM, q)[1]["data"] == body["data"]


def test_an_invalid_merge_is_refused_with_the_failing_path(schema_mode: WorkingMemoryApi, user: str) -> None:
    q = {"user_id": user}
    call(schema_mode, "PUT", WM, q, {"data": {"name": "Ada"}})

    status, body = call(schema_mode, "PATCH", WM, q, {"data": {"preferences": {"seat": "middle"}}})

    assert (status, body["error"]["code"]) == (422, "working_memory_invalid")
    assert body["error"]["details"]["path"] == "preferences.seat"
    _, got = call(schema_mode, "GET", WM, q)
    assert (got["data"], got["version"]) == ({"name": "Ada"}, 1)


def test_a_write_that_does_not_fit_the_mode_is_a_clear_error(
    schema_mode: WorkingMemoryApi, user: str
) -> None:
    status, body = call(schema_mode, "PUT", WM, {"user_id": user}, {"content": "# notes"})
    assert (status, body["error"]["code"]) == (400, "working_memory_mode_mismatch")


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"content": "x", "data": {"a": 1}}, 422, "validation_error"),
        ({"data": {"$set": {"a": 1}}}, 422, "validation_error"),
        ({}, 422, "validation_error"),
        ("{not json", 400, "invalid_json"),
    ],
)
def test_bad_bodies_get_a_clear_error_and_write_nothing(
    api: WorkingMemoryApi, user: str, body: Any, status: int, code: str
) -> None:
    answer = call(api, "PUT", WM, {"user_id": user}, body)
    assert (answer[0], answer[1]["error"]["code"]) == (status, code)
    assert call(api, "GET", WM, {"user_id": user})[1]["version"] == 0


def test_resource_scope_without_a_user_is_refused(api: WorkingMemoryApi) -> None:
    status, body = call(api, "GET", WM, {"scope": "resource"})
    assert status == 400 and "resource-scoped working memory needs a user" in body["error"]["message"]
    status, body = call(api, "PUT", WM, {"scope": "thread", "user_id": "u1"}, {"content": "x"})
    assert (status, body["error"]["details"]["path"]) == (400, "thread_id")


def test_threads_seed_their_own_memory_and_scopes_do_not_see_each_other(
    api: WorkingMemoryApi, user: str
) -> None:
    api.use(WorkingMemoryConfig(scope="thread"))  # in thread scope a thread's seed is its own memory
    seed = {
        "thread_id": "trip-1",
        "user_id": user,
        "title": "Trip",
        "metadata": {"workingMemory": "- Topic: Porto"},
    }
    status, thread = call(api, "POST", "/v1/threads", body=seed)
    assert (status, thread["metadata"]["workingMemory"]) == (201, "- Topic: Porto")
    assert call(api, "POST", "/v1/threads", body=seed)[0] == 409
    assert call(api, "GET", "/v1/threads/trip-1", {"user_id": user})[1]["title"] == "Trip"
    assert call(api, "GET", "/v1/threads/trip-1", {"user_id": "someone-else"})[0] == 404

    call(api, "PUT", WM, {"user_id": user, "scope": "resource"}, {"content": "- Name: Ada"})
    thread_q = {"scope": "thread", "user_id": user, "thread_id": "trip-1"}
    assert call(api, "GET", WM, thread_q)[1]["content"] == "- Topic: Porto"
    assert call(api, "GET", WM, {**thread_q, "thread_id": "trip-2"})[1]["content"] is None
    resource_q = {"user_id": user, "thread_id": "trip-1", "scope": "resource"}
    assert call(api, "GET", WM, resource_q)[1]["content"] == "- Name: Ada"

    # Writing a thread's memory creates the thread, as recording its first message would.
    call(api, "PATCH", WM, {**thread_q, "thread_id": "trip-2"}, {"content": "- Topic: Lisbon"})
    got = call(api, "GET", "/v1/threads/trip-2", {"user_id": user})[1]
    assert got["metadata"] == {"workingMemory": "- Topic: Lisbon"}


def test_the_configured_scope_is_the_default(api: WorkingMemoryApi, user: str) -> None:
    api.use(WorkingMemoryConfig(scope="thread"))
    call(api, "PUT", WM, {"user_id": user, "thread_id": "t-9"}, {"content": "- thread note"})
    assert call(api, "GET", WM, {"user_id": user, "scope": "resource"})[1]["content"] is None
    assert call(api, "GET", WM, {"user_id": user, "thread_id": "t-9"})[1]["scope"] == "thread"


def test_read_only_requests_read_but_cannot_write(api: WorkingMemoryApi, user: str) -> None:
    call(api, "PUT", WM, {"user_id": user}, {"content": "- Name: Ada"})
    ro = {"user_id": user, "readOnly": "true"}

    status, body = call(api, "PUT", WM, ro, {"content": "- Name: Grace"})
    assert (status, body["error"]["code"]) == (403, "working_memory_read_only")
    status, got = call(api, "GET", WM, ro)
    assert (status, got["content"], got["read_only"]) == (200, "- Name: Ada", True)
    status, context = call(api, "GET", f"{WM}/tool", ro)
    assert status == 200 and context["tool"] is None and "- Name: Ada" in context["instructions"]


def test_the_tool_route_describes_the_template_tool_and_shows_current_memory(
    api: WorkingMemoryApi, user: str
) -> None:
    call(api, "PUT", WM, {"user_id": user}, {"content": "- Name: Ada"})

    status, context = call(api, "GET", f"{WM}/tool", {"user_id": user})

    assert status == 200 and context["delivery"] == "system" and context["state"] is None
    assert context["tool"]["name"] == "updateWorkingMemory"
    assert context["tool"]["input_schema"]["properties"]["memory"]["type"] == "string"
    assert "<working_memory_template>" in context["instructions"] and "- Name: Ada" in context["instructions"]


def test_the_schema_tool_accepts_partial_updates_that_patch_then_applies(
    schema_mode: WorkingMemoryApi, user: str
) -> None:
    _, context = call(schema_mode, "GET", f"{WM}/tool", {"user_id": user})
    memory_schema = context["tool"]["input_schema"]["properties"]["memory"]
    assert "required" not in memory_schema
    assert '"airports": []' in context["instructions"]

    # The agent's tool arguments go to PATCH as they are.
    call(schema_mode, "PUT", WM, {"user_id": user}, {"data": {"name": "Ada"}})
    status, body = call(schema_mode, "PATCH", WM, {"user_id": user}, {"memory": {"airports": ["LIS"]}})
    assert (status, body["data"]) == (200, {"name": "Ada", "airports": ["LIS"]})


def test_a_schema_tool_call_is_applied_with_or_without_the_memory_wrapper(
    schema_mode: WorkingMemoryApi, user: str
) -> None:
    # Given the stored memory, and the tool call's arguments as three models might send them
    call(schema_mode, "PUT", WM, {"user_id": user}, {"data": {"name": "Ada"}})
    q = {"user_id": user}
    # the wrapper the tool's schema asks for
    status, wrapped = call(schema_mode, "POST", f"{WM}/tool", q, {"memory": {"airports": ["LIS"]}})
    assert (status, wrapped["data"]) == (200, {"name": "Ada", "airports": ["LIS"]})
    # the fields alone (the wrapper omitted)
    status, bare = call(schema_mode, "POST", f"{WM}/tool", q, {"preferences": {"seat": "aisle"}})
    assert (status, bare["data"]["preferences"], bare["version"]) == (200, {"seat": "aisle"}, 3)
    # the wrapper holding a JSON string
    status, text = call(schema_mode, "POST", f"{WM}/tool", q, {"memory": '{"preferences": {"meal": "veg"}}'})
    assert (status, text["data"]["preferences"]) == (200, {"seat": "aisle", "meal": "veg"})
    # Fields the schema refuses change nothing, wrapped or not
    for body in ({"preferences": {"seat": "roof"}}, {"memory": {"preferences": {"seat": "roof"}}}):
        status, refused = call(schema_mode, "POST", f"{WM}/tool", q, body)
        assert (status, refused["error"]["code"]) == (422, "working_memory_invalid")
    assert call(schema_mode, "GET", WM, q)[1]["version"] == 4


def test_a_template_tool_call_is_applied_with_or_without_the_memory_wrapper(
    api: WorkingMemoryApi, user: str
) -> None:
    q = {"user_id": user}
    status, wrapped = call(api, "POST", f"{WM}/tool", q, {"memory": "# User\n- Name: Ada"})
    assert (status, wrapped["content"]) == (200, "# User\n- Name: Ada")
    # a model that named the Markdown field itself, or sent the text alone
    status, named = call(api, "POST", f"{WM}/tool", q, {"markdown": "# User\n- Name: Ada L."})
    assert (status, named["content"]) == (200, "# User\n- Name: Ada L.")
    status, alone = call(api, "POST", f"{WM}/tool", q, json.dumps("# User\n- Name: Ada Lovelace"))
    assert (status, alone["content"]) == (200, "# User\n- Name: Ada Lovelace")
    # an object in template mode is refused with the call to make instead
    status, refused = call(api, "POST", f"{WM}/tool", q, {"name": "Ada", "city": "Lisbon"})
    assert status == 400 and '{"memory": "<Markdown>"}' in refused["error"]["message"]
    # ... and so is one field that is not the text: {"seat": "aisle"} never replaces the profile with "aisle"
    status, refused = call(api, "POST", f"{WM}/tool", q, {"seat": "aisle"})
    assert (status, refused["error"]["code"]) == (400, "working_memory_mode_mismatch")
    # a wrapped value that is not text is a 422, as for PUT and PATCH
    for bad in (None, 5, True, ["# User"]):
        status, refused = call(api, "POST", f"{WM}/tool", q, {"memory": bad})
        assert status == 422 and refused["error"]["details"]["path"] == "memory", (bad, refused)
    assert call(api, "GET", WM, q)[1]["content"] == "# User\n- Name: Ada Lovelace"


def test_state_delivery_sends_a_snapshot_once_until_it_changes(
    schema_mode: WorkingMemoryApi, user: str
) -> None:
    q = {"user_id": user, "delivery": "state"}
    call(schema_mode, "PUT", WM, {"user_id": user}, {"data": {"name": "Ada"}})

    _, first = call(schema_mode, "GET", f"{WM}/tool", q)
    assert first["tool"]["name"] == "setWorkingMemory"
    assert first["state"] == {
        "stateId": "working-memory",
        "mode": "schema",
        "content": None,
        "data": {"name": "Ada"},
        "cache_key": first["cache_key"],
    }
    status, again = call(schema_mode, "GET", f"{WM}/tool", {**q, "if_none_match": first["cache_key"]})
    assert (status, again) == (200, {"unchanged": True, "cache_key": first["cache_key"]})

    call(schema_mode, "PATCH", WM, {"user_id": user}, {"data": {"name": "Ada L."}})
    _, changed = call(schema_mode, "GET", f"{WM}/tool", {**q, "if_none_match": first["cache_key"]})
    assert changed["state"]["data"] == {"name": "Ada L."}


def test_tenants_are_isolated_and_every_document_carries_its_identity(
    api: WorkingMemoryApi, mongo: Services
) -> None:
    user = f"user-{uuid.uuid4().hex[:10]}"
    call(api, "PUT", WM, {"user_id": user}, {"content": "- tenant A"}, tenant="tenant-a")
    call(
        api,
        "PUT",
        WM,
        {"user_id": user, "scope": "thread", "thread_id": "t"},
        {"content": "x"},
        tenant="tenant-a",
    )

    assert call(api, "GET", WM, {"user_id": user}, tenant="tenant-b")[1]["content"] is None
    assert call(api, "GET", WM, {"user_id": user}, tenant="tenant-a")[1]["content"] == "- tenant A"
    db = mongo.db
    for collection in (db["resources"], db["threads"]):
        docs = list(collection.find({"user_id": user}))
        assert docs and all(d["tenant"] == "tenant-a" and d["user_id"] == user for d in docs)


def test_two_writers_patching_different_fields_fifty_times_each_both_survive(mongo: Services) -> None:
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    service = WorkingMemoryService(
        MongoWorkingMemoryRepository(mongo.database), WorkingMemoryConfig(json_schema=schema)
    )
    key = resolve_key(Principal(tenant="t1"), "resource", f"user-{uuid.uuid4().hex[:10]}", None)
    errors: list[BaseException] = []

    def writer(field: str) -> None:
        try:
            for i in range(1, 51):
                service.merge(key, WorkingMemoryWrite(data={field: i, f"{field}-{i}": i}))
        except BaseException as exc:  # surfaced below; a thread's exception is otherwise lost
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(f,)) for f in ("left", "right")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert errors == []
    state = service.get(key)
    # A lost update would drop one of the 100 per-write fields.
    expected = {f"{side}-{i}": i for side in ("left", "right") for i in range(1, 51)}
    assert state.data == {"left": 50, "right": 50, **expected} and state.version == 100
