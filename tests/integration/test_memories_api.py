"""The memories API through the memory_api handler: direct writes, history, lists, deletes, bad input."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.runtime import Services
from mongomem.vectors.embedded import EmbeddedIndex
from tests import helpers
from tests.conftest import load_function


@pytest.fixture
def svc(make_settings: Any, tmp_path: Path) -> Iterator[Services]:
    # semantic extraction is switched off: the API must still accept semantic memories
    cfg = parse_project_config({"memory": {"extraction": {"enabled": ["episodic"]}}})
    services = Services(
        make_settings(project=cfg, enabled_extractions=["episodic"]),
        llm=ScriptedLLM({}),
        embedder=HashingEmbedder(dim=128),
        vector_index=EmbeddedIndex(tmp_path / "v"),
        queue_factory=local_queue_factory,
    )
    with helpers.installed(services):
        yield services


@pytest.fixture(scope="module")
def api() -> Any:
    return load_function("memory_api")


def call(
    api: Any,
    ctx: Any,
    name: str,
    body: Any = None,
    memory_id: str | None = None,
    query: dict[str, str] | None = None,
) -> tuple[int, Any]:
    if memory_id is None:
        return helpers.call(api, ctx, name, body, query=query)
    path = f"/v1/memories/{memory_id}"
    return helpers.call(
        api, ctx, name, body, path=path, path_parameters={"memory_id": memory_id}, query=query
    )


def fact(value: str, user: str = "user-7", **extra: Any) -> dict[str, Any]:
    return {
        "user_id": user,
        "type": "semantic",
        "payload": {"subject": "user", "attribute": "home airport", "value": value},
        **extra,
    }


def test_write_restate_update_history_list_delete(svc: Any, api: Any, ctx: Any) -> None:
    status, first = call(api, ctx, "memory_create.json")
    assert status == 201 and first["decision"] == "ADD" and first["memory"]["index_state"] == "indexed"
    status, again = call(api, ctx, "memory_create.json")
    assert status == 200 and again["decision"] == "REINFORCE"
    assert again["memory"]["memory_id"] == first["memory"]["memory_id"]
    assert again["memory"]["reinforcement_count"] == 2
    status, moved = call(api, ctx, "memory_create.json", fact("OPO"))
    assert status == 201 and moved["decision"] == "UPDATE" and moved["memory"]["version"] == 2
    status, chain = call(api, ctx, "memory_get.json", memory_id=moved["memory"]["memory_id"])
    assert status == 200
    assert [(m["version"], m["payload"]["value"], m["status"]) for m in chain["history"]] == [
        (1, "LIS", "superseded"),
        (2, "OPO", "active"),
    ]
    assert [d["decision"] for d in chain["history"][0]["decisions"]] == ["ADD", "REINFORCE"]
    status, page = call(api, ctx, "memory_list.json")
    assert status == 200 and [m["payload"]["value"] for m in page["memories"]] == ["OPO", "LIS"]
    status, page = call(api, ctx, "memory_list.json", query={"user_id": "user-7", "status": "active"})
    assert [m["payload"]["value"] for m in page["memories"]] == ["OPO"]
    status, deleted = call(api, ctx, "memory_delete.json", memory_id=moved["memory"]["memory_id"])
    assert status == 200 and deleted["deleted_versions"] == 2
    status, page = call(api, ctx, "memory_list.json")
    assert page["memories"] == []
    assert svc.vector_index.count(tenant="default", user_id="user-7") == 0


def test_reconcile_false_always_adds(svc: Any, api: Any, ctx: Any) -> None:
    call(api, ctx, "memory_create.json")
    status, body = call(api, ctx, "memory_create.json", fact("LIS", reconcile=False))
    assert status == 201 and body["decision"] == "ADD"
    assert svc.memory_store.coll.count_documents({"status": "active"}) == 2


def test_other_users_memory_is_not_found(svc: Any, api: Any, ctx: Any) -> None:
    _, created = call(api, ctx, "memory_create.json")
    status, body = call(
        api,
        ctx,
        "memory_get.json",
        memory_id=created["memory"]["memory_id"],
        query={"user_id": "someone-else"},
    )
    assert status == 404 and body["error"]["code"] == "not_found"
    status, _ = call(
        api,
        ctx,
        "memory_delete.json",
        memory_id=created["memory"]["memory_id"],
        query={"user_id": "someone-else"},
    )
    assert status == 404
    assert svc.memory_store.coll.count_documents({"status": "active"}) == 1


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"user_id": "u", "type": "semantic", "payload": {"subject": "user"}}, 400),
        ({"user_id": "u", "type": "gossip", "payload": {}}, 422),
        (
            {"user_id": "u", "type": "procedural", "payload": {"name": "x", "when_to_use": "y", "steps": []}},
            400,
        ),
        ({"user_id": {"$gt": ""}, "type": "semantic", "payload": {}}, 422),
        ({"user_id": "u", "type": "semantic", "payload": {}, "extra": 1}, 422),
        ("{not json", 400),
        (
            {
                "user_id": "u",
                "type": "semantic",
                "payload": {"subject": "user", "attribute": "phone", "value": "n/a"},
            },
            400,
        ),
        ({"user_id": "u", "type": "taxonomic", "payload": {"term": "Hello", "definition": "Hi there!"}}, 400),
    ],
    ids=[
        "missing-fields",
        "unknown-type",
        "no-steps",
        "operator-user",
        "unknown-field",
        "malformed",
        "placeholder-value",
        "greeting",
    ],
)
def test_bad_memory_writes_are_refused_and_write_nothing(
    svc: Any, api: Any, ctx: Any, body: Any, status: int
) -> None:
    got, answer = call(api, ctx, "memory_create.json", body)
    assert got == status, answer
    assert set(answer["error"]) == {"code", "message", "details"}
    if isinstance(body, dict) and body["type"] in ("semantic", "taxonomic") and len(body["payload"]) > 1:
        # junk: the details name the refused field and why
        assert any(d["path"].startswith("payload.") for d in answer["error"]["details"]), answer
    assert svc.memory_store.coll.count_documents({}) == 0


def test_bad_memory_id_is_refused(svc: Any, api: Any, ctx: Any) -> None:
    status, _ = call(api, ctx, "memory_get.json", memory_id="not-a-memory-id")
    assert 400 <= status < 500
