"""Custom memory types on the real servers: declared in the project config, fanned out to the shared custom
queue, extracted by the custom extraction function, reconciled, written, listed and searched through the
memory API like the built-in kinds; a created type's schema cannot change incompatibly."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.cli import main
from mongomem.config import ConfigError, parse_project_config
from mongomem.local.queue import LocalQueue, QueuePolicy, local_queue_factory
from mongomem.models.common import Scope
from mongomem.models.turns import RecordTurnsRequest
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from mongomem.vectors.opensearch import OpenSearchIndex
from tests import helpers
from tests.conftest import load_event, load_function

ANA = Scope(tenant="default", user_id="ana")
TICKET: dict[str, Any] = {
    "name": "ticket",
    "schema": {
        "type": "object",
        "properties": {
            "ticket_id": {"type": "string", "description": "the ticket's id, e.g. OPS-12"},
            "status": {"type": "string", "enum": ["open", "blocked", "done"]},
            "summary": {"type": "string", "minLength": 1},
        },
        "required": ["ticket_id", "status", "summary"],
    },
    "match_key": ["ticket_id"],
    "prompt": "Extract TICKETS only: work items the user mentions, with their id, status and a summary.",
}


def answer(*items: dict[str, Any]) -> str:
    return json.dumps({"items": list(items)})


def build(
    make_settings: Any, index: Any, answers: dict[str, list[str]], types: list[dict[str, Any]]
) -> Services:
    cfg = parse_project_config({"memory": {"custom_types": types}})
    return Services(
        # the deployed custom extraction function: MONGOMEM_EXTRACTION_TYPE=custom
        make_settings(project=cfg, enabled_extractions=["ticket", "semantic"], extraction_type="custom"),
        llm=ScriptedLLM(answers),
        embedder=HashingEmbedder(dim=128),
        vector_index=index,
        queue_factory=local_queue_factory,
    )


@pytest.fixture(params=["embedded", pytest.param("opensearch", marks=pytest.mark.opensearch)])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "embedded":
        return EmbeddedIndex(tmp_path / "vectors")
    node = request.getfixturevalue("opensearch_node")
    found = OpenSearchIndex(node.url, f"t-custom-{uuid.uuid4().hex[:10]}", engine="lucene", refresh=True)
    request.addfinalizer(found.drop)
    return found


@pytest.fixture(scope="module")
def extract_fn() -> Any:
    return load_function("extract")


@pytest.fixture(scope="module")
def api() -> Any:
    return load_function("memory_api")


@pytest.fixture
def made() -> Iterator[list[Services]]:
    services: list[Services] = []
    yield services
    configure(None)
    for svc in services:
        svc.database.drop()


def promote(svc: Services, session: str, turns: list[tuple[str, str]]) -> str:
    req = RecordTurnsRequest.model_validate({"turns": [{"role": r, "content": c} for r, c in turns]})
    svc.recorder.record(ANA, session, req)
    return svc.promoter.flush(ANA, session)[0].snapshot_id


def deliver(svc: Services, extract_fn: Any, ctx: Any) -> dict[str, Any]:
    """What SQS hands the custom extraction function: the messages of the shared custom queue."""
    received = LocalQueue(svc.db).receive("extract-custom", QueuePolicy(), max_messages=10)
    template = load_event("extract_sqs.json")["Records"][0]
    records = [dict(template, messageId=r["messageId"], body=r["body"]) for r in received]
    assert records, "nothing reached the custom queue"
    result: dict[str, Any] = extract_fn.lambda_handler({"Records": records}, ctx)
    return result


def test_a_custom_type_is_extracted_reconciled_listed_and_searched(
    make_settings: Any, index: Any, extract_fn: Any, api: Any, ctx: Any, made: list[Services]
) -> None:
    # Given a project declaring `ticket`, and the LLM's answers for two conversations about OPS-12
    svc = build(
        make_settings,
        index,
        {
            "ticket": [
                answer(
                    {
                        "ticket_id": "OPS-12",
                        "status": "open",
                        "summary": "Rotate the TLS certificates",
                        "evidence_seqs": [1],
                    },
                    {"ticket_id": "OPS-13", "status": "open", "summary": "N/A", "evidence_seqs": [1]},
                ),
                answer(
                    {
                        "ticket_id": "ops-12",
                        "status": "done",
                        "summary": "certificates rotated",
                        "evidence_seqs": [1],
                    }
                ),
            ]
        },
        [TICKET],
    )
    made.append(svc)
    configure(svc)
    # When a session is promoted, the ticket message goes to the shared custom queue, naming the type
    first = promote(svc, "s1", [("user", "I opened OPS-12 to rotate the TLS certificates.")])
    body = json.loads(LocalQueue(svc.db).bodies("extract-custom")[0])
    assert body["type"] == "ticket" and body["snapshot_id"] == first
    assert svc.db["snapshots"].find_one(first)["extraction"]["ticket"]["status"] == "queued"
    # and the custom extraction function extracts it: the placeholder item is refused, the real one kept
    assert deliver(svc, extract_fn, ctx) == {"batchItemFailures": []}
    assert svc.db["snapshots"].find_one(first)["extraction"]["ticket"]["status"] == "done"
    # then passes the snapshot on to the next kind's queue
    passed = [json.loads(b) for b in LocalQueue(svc.db).bodies("extract-semantic")]
    assert [(b["snapshot_id"], b["type"]) for b in passed] == [(first, "semantic")]
    status, page = helpers.call(api, ctx, "memory_list.json", query={"user_id": "ana", "type": "ticket"})
    assert status == 200
    assert [(m["type"], m["payload"]["ticket_id"], m["version"]) for m in page["memories"]] == [
        ("ticket", "OPS-12", 1)
    ]
    # When a later conversation changes the ticket's status (the same match key, spelled differently)
    promote(svc, "s2", [("user", "OPS-12 is done now, certificates rotated.")])
    assert deliver(svc, extract_fn, ctx) == {"batchItemFailures": []}
    # Then it is an UPDATE: a new version, the old one kept as history
    status, page = helpers.call(api, ctx, "memory_list.json", query={"user_id": "ana", "type": "ticket"})
    assert [(m["payload"]["status"], m["version"], m["status"]) for m in page["memories"]] == [
        ("done", 2, "active"),
        ("open", 1, "superseded"),
    ]
    status, found = helpers.call(
        api,
        ctx,
        "memory_search.json",
        {"user_id": "ana", "query": "TLS certificates ticket", "types": ["ticket"], "mode": "hybrid"},
    )
    assert status == 200, found
    assert [(r["type"], r["payload"]["status"]) for r in found["results"]] == [("ticket", "done")]


def test_the_custom_function_refuses_a_built_in_kinds_message(
    make_settings: Any, extract_fn: Any, ctx: Any, made: list[Services], tmp_path: Path
) -> None:
    svc = build(make_settings, EmbeddedIndex(tmp_path / "v"), {}, [TICKET])
    made.append(svc)
    configure(svc)
    snap = promote(svc, "s1", [("user", "hello there, OPS-1 is open")])
    record = load_event("extract_sqs.json")["Records"][0]
    event = {"Records": [dict(record, body=json.dumps({"snapshot_id": snap, "type": "semantic"}))]}
    assert extract_fn.lambda_handler(event, ctx) == {
        "batchItemFailures": [{"itemIdentifier": record["messageId"]}]
    }


def test_direct_writes_are_checked_by_the_declared_schema(
    make_settings: Any, api: Any, ctx: Any, made: list[Services], tmp_path: Path
) -> None:
    svc = build(make_settings, EmbeddedIndex(tmp_path / "v"), {}, [TICKET])
    made.append(svc)
    configure(svc)
    good = {"ticket_id": "OPS-7", "status": "blocked", "summary": "Waiting on the vendor"}
    status, bad = helpers.call(
        api,
        ctx,
        "memory_create.json",
        {"user_id": "ana", "type": "ticket", "payload": {**good, "status": "stuck"}},
    )
    assert status == 400 and bad["error"]["details"][0]["path"] == "payload.status"
    status, unknown = helpers.call(
        api, ctx, "memory_create.json", {"user_id": "ana", "type": "tickets", "payload": good}
    )
    assert status == 422 and "ticket" in unknown["error"]["details"]["allowed"]
    assert svc.memory_store.coll.count_documents({}) == 0
    status, written = helpers.call(
        api, ctx, "memory_create.json", {"user_id": "ana", "type": "ticket", "payload": good}
    )
    assert status == 201 and written["memory"]["type"] == "ticket" and written["decision"] == "ADD"
    status, again = helpers.call(
        api, ctx, "memory_create.json", {"user_id": "ana", "type": "ticket", "payload": good}
    )
    assert status == 200 and again["decision"] == "REINFORCE" and again["memory"]["reinforcement_count"] == 2
    status, _ = helpers.call(api, ctx, "memory_list.json", query={"user_id": "ana", "type": "tickets"})
    assert status == 422


def test_a_created_types_schema_cannot_change_incompatibly(
    make_settings: Any, made: list[Services], tmp_path: Path, mongo_server: Any, db_name: str, capsys: Any
) -> None:
    # Given a deployment that created `ticket`
    svc = build(make_settings, None, {}, [TICKET])
    made.append(svc)
    svc.check_custom_types()
    assert [d["_id"] for d in svc.db["kind_schemas"].find({})] == ["ticket"]
    props = TICKET["schema"]["properties"]
    # a compatible change (a new optional field) runs and is recorded
    grown = {**TICKET, "schema": {**TICKET["schema"], "properties": {**props, "owner": {"type": "string"}}}}
    build(make_settings, None, {}, [grown]).check_custom_types()
    assert "owner" in json.loads(svc.db["kind_schemas"].find_one("ticket")["schema_json"])["properties"]
    # an incompatible one (a field's type changes) is refused, naming the type and the change
    retyped = {**grown, "schema": {**grown["schema"], "properties": {**props, "status": {"type": "integer"}}}}
    with pytest.raises(ConfigError) as err:
        build(make_settings, None, {}, [retyped]).check_custom_types()
    assert "custom type 'ticket'" in str(err.value) and "field 'status' changes type" in str(err.value)
    # and `mongomem memory configure` against the local stack's MongoDB refuses it before uploading
    data = tmp_path / "data"
    data.mkdir()
    (data / "stack.json").write_text(
        json.dumps({"mongodb_uri": mongo_server.uri, "db_name": db_name, "api": "http://127.0.0.1:9"})
    )
    import yaml

    path = tmp_path / "project-config.yaml"
    path.write_text(yaml.safe_dump({"memory": {"custom_types": [retyped]}}))
    code = main(["memory", "configure", "--local", "--data-dir", str(data), "--config", str(path)])
    err_text = capsys.readouterr().err
    assert code == 2 and "field 'status' changes type" in err_text
    assert not (data / "project-config.yaml").exists()


@pytest.mark.timeout(60)  # with Python's backtracking `re` this request never finished
def test_a_pattern_runs_in_linear_time_whatever_the_payload(
    make_settings: Any, api: Any, ctx: Any, made: list[Services], tmp_path: Path
) -> None:
    # Given a type whose pattern backtracks catastrophically under a backtracking engine
    ticket = {**TICKET, "schema": {**TICKET["schema"]}}
    ticket["schema"]["properties"] = {
        **TICKET["schema"]["properties"],
        "ticket_id": {"type": "string", "pattern": "^(a+)+$"},
    }
    svc = build(make_settings, EmbeddedIndex(tmp_path / "v"), {}, [ticket])
    made.append(svc)
    configure(svc)

    def write(ticket_id: str) -> tuple[int, Any]:
        body = {
            "user_id": "ana",
            "type": "ticket",
            "payload": {"ticket_id": ticket_id, "status": "open", "summary": "x"},
        }
        return helpers.call(api, ctx, "memory_create.json", body)

    # When a payload made to trigger it arrives (a thousand a's and a mismatch)
    status, refused = write("a" * 1000 + "!")
    # Then it is refused at once, naming the field, and a matching one is stored
    assert status == 400 and refused["error"]["details"][0]["path"] == "payload.ticket_id", refused
    assert write("a" * 1000)[0] == 201
