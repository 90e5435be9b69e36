"""Changing the embedding model: status says so and what to run, writes keep working (reconciled by key,
index pending, never a second lineage), `mongomem reindex --re-embed` moves every memory to the new model.

The service and the CLI read their settings the way a deployment does (project config and MONGOMEM_*
variables); the vector index is the embedded one and the real OpenSearch node.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.cli import main
from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from mongomem.vectors.opensearch import OpenSearchIndex
from tests.conftest import load_event, load_function

FACTS = [
    ("home airport", "OPO"),
    ("diet", "vegetarian"),
    ("pet name", "Tofu"),
    ("favourite band", "Radiohead"),
]


@pytest.fixture(params=["embedded", pytest.param("opensearch", marks=pytest.mark.opensearch)])
def index_env(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, Any]:
    if request.param == "embedded":
        path = tmp_path / "vectors"
        monkeypatch.setenv("MONGOMEM_VECTOR_INDEX_PATH", str(path))
        # the local stack's in-process index reloads its file on start: restart after the CLI rebuilt it
        return {"make": lambda: EmbeddedIndex(path), "restart_after_cli": True}
    url, name = request.getfixturevalue("opensearch_node").url, f"t-reembed-{uuid.uuid4().hex[:10]}"
    monkeypatch.setenv("MONGOMEM_OPENSEARCH_ENDPOINT", url)
    monkeypatch.setenv("MONGOMEM_OPENSEARCH_ENGINE", "lucene")
    monkeypatch.setenv("MONGOMEM_OPENSEARCH_INDEX", name)
    request.addfinalizer(lambda: OpenSearchIndex(url, name).drop())
    # a warm function notices the rebuilt index by itself
    return {
        "make": lambda: OpenSearchIndex(url, name, engine="lucene", refresh=True),
        "restart_after_cli": False,
    }


@pytest.fixture
def deploy(
    make_settings: Any, mongo_server: Any, db_name: str, index_env: dict[str, Any], monkeypatch: Any
) -> Iterator[Any]:
    """(Re)start the service with an embedding dimension, as a deployment with that config would."""
    monkeypatch.setenv("MONGOMEM_MONGODB_URI", mongo_server.uri)
    monkeypatch.setenv("MONGOMEM_DB_NAME", db_name)
    monkeypatch.setenv("MONGOMEM_EMBEDDING_PROVIDER", "hashing")
    made: list[Services] = []

    def start(dim: int) -> Services:
        monkeypatch.setenv("MONGOMEM_EMBEDDING_DIM", str(dim))  # what the CLI reads
        cfg = parse_project_config({"memory": {"providers": {"embeddings": {"kind": "hashing", "dim": dim}}}})
        svc = Services(
            make_settings(project=cfg), vector_index=index_env["make"](), queue_factory=local_queue_factory
        )
        configure(svc)
        made.append(svc)
        return svc

    yield start
    configure(None)
    made[0].db.client.drop_database(db_name)


@pytest.fixture(scope="module")
def api() -> Any:
    return load_function("memory_api")


def call(api: Any, ctx: Any, name: str, body: Any = None, path: str | None = None) -> tuple[int, Any]:
    event = load_event(name)
    if body is not None:
        event["body"] = json.dumps(body)
    if path is not None:
        event["rawPath"] = event["requestContext"]["http"]["path"] = path
        event.pop("queryStringParameters", None)
    response = api.lambda_handler(event, ctx)
    return response["statusCode"], json.loads(response["body"])


def write(api: Any, ctx: Any, attribute: str, value: str) -> dict[str, Any]:
    payload = {"subject": "user", "attribute": attribute, "value": value}
    body_in = {"user_id": "user-7", "type": "semantic", "payload": payload}
    status, body = call(api, ctx, "memory_create.json", body_in)
    assert status in (200, 201), body
    result: dict[str, Any] = body
    return result


def search(api: Any, ctx: Any, query: str) -> tuple[int, Any]:
    return call(
        api, ctx, "memory_search.json", {"user_id": "user-7", "query": query, "mode": "knn", "top_k": 3}
    )


def test_a_new_embedding_model_is_reported_writes_go_on_and_re_embed_moves_everything(
    deploy: Any, index_env: dict[str, Any], api: Any, ctx: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given memories embedded with a 64-dimension model
    svc = deploy(64)
    for attribute, value in FACTS:
        write(api, ctx, attribute, value)
    assert call(api, ctx, "memory_list.json", path="/v1/status")[1]["ready"] is True
    # When the service restarts with a 96-dimension model
    svc = deploy(96)
    # Then status is not ready, says why and what to run
    status = call(api, ctx, "memory_list.json", path="/v1/status")[1]
    assert status["ready"] is False
    reason = next(r for r in status["reasons"] if r.startswith("embeddings:"))
    assert "4 memory versions were embedded with hashing-v1 (64 dims)" in reason
    assert "hashing-v1 (96 dims)" in reason and "mongomem reindex --re-embed" in reason
    assert status["embeddings"]["versions_to_re_embed"] == 4
    # and writes still succeed: a correction is a new version of the same lineage, a restatement is counted
    updated = write(api, ctx, "home airport", "LIS")
    assert updated["decision"] == "UPDATE" and updated["memory"]["version"] == 2
    assert updated["memory"]["index_state"] == "pending"  # the index still holds the old dimension
    assert write(api, ctx, "diet", " vegetarian ")["decision"] == "REINFORCE"
    airports = list(svc.memory_store.coll.find({"payload.attribute": "home airport"}))
    assert len({d["lineage_id"] for d in airports}) == 1
    assert sorted((d["payload"]["value"], d["status"]) for d in airports) == [
        ("LIS", "active"),
        ("OPO", "superseded"),
    ]
    # while search by meaning says what to run instead of mixing two models' vectors
    code, body = search(api, ctx, "which airport does the user fly from")
    assert code == 503 and "reindex --re-embed" in body["error"]["message"]
    # When the operator re-embeds
    capsys.readouterr()
    assert main(["reindex", "--re-embed"]) == 0
    out = capsys.readouterr().out
    # Then it shows its progress and what it did: the four versions of the old model, the superseded one
    # included (the correction was embedded with the new model when it was written)
    assert "re-embedding memories with hashing-v1 (96 dims)" in out
    assert "re-embedded 0 of 4 memory versions (0 %)" in out and "re-embedded 4 of 4 memory versions" in out
    assert "done: 5 memory versions indexed" in out
    # and status is ready again, search answers, and nothing is left pending
    if index_env["restart_after_cli"]:
        svc = deploy(96)
    else:  # the CLI writes without refresh, as deployed: make its writes visible to the next search
        svc.vector_index.client.indices.refresh(index=svc.vector_index.index_name)
    status = call(api, ctx, "memory_list.json", path="/v1/status")[1]
    assert status["ready"] is True, status["reasons"]
    code, body = search(api, ctx, "home airport")
    assert code == 200 and body["results"][0]["payload"]["value"] == "LIS"
    assert svc.memory_store.coll.count_documents({"index_state": "pending"}) == 0
    assert svc.memory_store.embedding_models() == {("hashing-v1", 96)}
    # a second run has nothing to do
    assert main(["reindex", "--re-embed"]) == 0
    assert "re-embedded 0 memory versions" in capsys.readouterr().out
