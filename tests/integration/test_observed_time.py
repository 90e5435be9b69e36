"""The right dates: relative dates resolve against the turn that says them, every memory records when it
was observed (its evidence's turn time) besides when it was stored, an older statement never replaces a
newer one whatever order the snapshots are extracted in, and search, list and context filter by observed
time. Conversations are recorded with historical timestamps; extraction is the offline extractor through
the extract handler, reads go through the memory API handler, on the real MongoDB-compatible server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.models.common import Scope
from mongomem.models.turns import RecordTurnsRequest
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.offline.llm_offline import OfflineLLM
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from tests.conftest import load_event, load_function

ANA = Scope(tenant="default", user_id="user-7")
MAY_2023 = datetime(2023, 5, 8, 9, 30, tzinfo=UTC)  # a Monday
MARCH_2024 = datetime(2024, 3, 4, 18, 0, tzinfo=UTC)


@pytest.fixture
def svc(make_settings: Any, tmp_path: Path) -> Iterator[Services]:
    cfg = parse_project_config({"memory": {"extraction": {"enabled": ["semantic", "episodic"]}}})
    services = Services(
        make_settings(project=cfg, enabled_extractions=["semantic", "episodic"]),
        llm=OfflineLLM(),
        embedder=HashingEmbedder(dim=128),
        vector_index=EmbeddedIndex(tmp_path / "v"),
        queue_factory=local_queue_factory,
    )
    configure(services)
    yield services
    configure(None)
    services.db.client.drop_database(services.db.name)


@pytest.fixture(scope="module")
def fns() -> Any:
    return {name: load_function(name) for name in ("memory_api", "extract")}


def converse(svc: Services, session: str, when: datetime, *lines: str) -> Any:
    turns = [{"role": "user", "content": line, "timestamp": when.isoformat()} for line in lines]
    svc.recorder.record(ANA, session, RecordTurnsRequest.model_validate({"turns": turns}))
    return svc.promoter.flush(ANA, session)[0]


def extract(fns: dict[str, Any], ctx: Any, snap: Any, *kinds: str) -> None:
    record = load_event("extract_sqs.json")["Records"][0]
    for kind in kinds:
        body = json.dumps({"snapshot_id": snap.snapshot_id, "type": kind})
        assert fns["extract"].lambda_handler({"Records": [dict(record, body=body)]}, ctx) == {
            "batchItemFailures": []
        }


def api(fns: dict[str, Any], ctx: Any, event: str, body: dict[str, Any] | None = None, **query: str) -> Any:
    request = load_event(event)
    if body is not None:
        request["body"] = json.dumps(body)
    if query:
        request["queryStringParameters"] = {"user_id": "user-7", **query}
    response = fns["memory_api"].lambda_handler(request, ctx)
    return response["statusCode"], json.loads(response["body"])


def values(memories: list[dict[str, Any]]) -> set[str]:
    return {m["payload"].get("value") or m["payload"].get("title") for m in memories}


def test_relative_dates_and_observed_time_come_from_the_turn_not_the_clock(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given a conversation recorded in May 2023 (extracted today)
    snap = converse(
        svc,
        "s1",
        MAY_2023,
        "Last Saturday I ran the Porto half marathon with my brother Rui.",
        "I moved to Lisbon yesterday.",
    )
    extract(fns, ctx, snap, "semantic", "episodic")
    docs = {d["payload"].get("value") or d["payload"]["title"]: d for d in svc.memory_store.coll.find({})}
    # Then "last Saturday" and "yesterday" are days before the turn, not before today
    assert docs["Ran the Porto half marathon"]["payload"]["occurred_at"] == "2023-05-06"
    assert docs["Lisbon"]["valid_from"] == "2023-05-07"
    # and every memory was observed when it was said, stored now
    for doc in docs.values():
        assert doc["observed_at"].replace(tzinfo=UTC) == MAY_2023
        assert doc["evidence"][0]["observed_at"].replace(tzinfo=UTC) == MAY_2023
        assert doc["created_at"].year >= 2026
    code, body = api(fns, ctx, "memory_list.json", type="semantic")
    assert code == 200 and {m["observed_at"] for m in body["memories"]} == {"2023-05-08T09:30:00Z"}


def test_an_older_statement_extracted_late_never_replaces_the_newer_one(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given Ana lived in Lisbon in 2023 and in Porto in 2024, and the 2024 snapshot is extracted first
    old = converse(svc, "s1", MAY_2023, "I live in Lisbon.")
    new = converse(svc, "s2", MARCH_2024, "I live in Porto now.")
    extract(fns, ctx, new, "semantic")
    extract(fns, ctx, old, "semantic")
    # Then Porto is the current value and Lisbon its history, in the order the values held
    homes = {d["payload"]["value"]: d for d in svc.memory_store.coll.find({"payload.attribute": "home city"})}
    assert {v: d["status"] for v, d in homes.items()} == {"Porto": "active", "Lisbon": "superseded"}
    assert homes["Lisbon"]["superseded_by"] == homes["Porto"]["_id"]
    assert homes["Lisbon"]["lineage_id"] == homes["Porto"]["lineage_id"]
    assert "stated earlier" in homes["Lisbon"]["decisions"][0]["reason"]
    memory = svc.memories.get(ANA, homes["Porto"]["_id"], history=True)
    assert [m.payload["value"] for m in memory.history or []] == ["Lisbon", "Porto"]
    # and redelivering the late snapshot changes nothing
    svc.db["snapshots"].update_one(
        {"_id": old.snapshot_id}, {"$set": {"extraction.semantic.status": "queued"}}
    )
    before = sorted((d["_id"], d["status"]) for d in svc.memory_store.coll.find({}))
    extract(fns, ctx, old, "semantic")
    assert sorted((d["_id"], d["status"]) for d in svc.memory_store.coll.find({})) == before


def test_search_list_and_context_filter_by_observed_time(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given memories observed in 2023 (a home and a race) and in 2024 (a new home)
    extract(
        fns,
        ctx,
        converse(svc, "s1", MAY_2023, "I live in Lisbon.", "Last Saturday I ran a marathon."),
        "semantic",
        "episodic",
    )
    extract(fns, ctx, converse(svc, "s2", MARCH_2024, "I live in Porto now."), "semantic")
    in_2023: dict[str, Any] = {
        "observed_after": "2023-01-01T00:00:00Z",
        "observed_before": "2024-01-01T00:00:00Z",
    }
    # search: what was known in 2023 (history included), and what was learnt since 2024
    search = {"user_id": "user-7", "query": "where does the user live, what did they run", "top_k": 10}
    code, body = api(
        fns, ctx, "memory_search.json", {**search, **in_2023, "include_superseded": True, "types": None}
    )
    assert code == 200 and values(body["results"]) == {"Lisbon", "Ran a marathon"}, body
    code, body = api(
        fns, ctx, "memory_search.json", {**search, "observed_after": "2024-01-01T00:00:00Z", "types": None}
    )
    assert code == 200 and values(body["results"]) == {"Porto"}
    # list
    code, body = api(fns, ctx, "memory_list.json", status="superseded", **in_2023)
    assert code == 200 and values(body["memories"]) == {"Lisbon"}
    code, body = api(fns, ctx, "memory_list.json", observed_before="2024-01-01T00:00:00Z", status="active")
    assert code == 200 and values(body["memories"]) == {"Ran a marathon"}
    # context: only memories of the range reach the block
    code, body = api(
        fns,
        ctx,
        "context.json",
        {
            "user_id": "user-7",
            "session_id": "s2",
            "query": "where do I live",
            "observed_after": "2024-01-01T00:00:00Z",
        },
    )
    assert code == 200
    memories = next(s for s in body["sections"] if s["name"] == "memories")["text"]
    assert "Porto" in memories and "Lisbon" not in memories and "marathon" not in memories
    # a reversed range is a 422 / 400 naming the field, everywhere
    bad: dict[str, Any] = {
        "observed_after": "2024-01-01T00:00:00Z",
        "observed_before": "2023-01-01T00:00:00Z",
    }
    assert api(fns, ctx, "memory_search.json", {**search, **bad})[0] == 422
    code, body = api(fns, ctx, "memory_list.json", **bad)
    assert code in (400, 422) and body["error"]["details"]["path"] == "observed_after"
    code, body = api(fns, ctx, "memory_list.json", observed_after="last tuesday")
    assert code in (400, 422) and body["error"]["details"]["path"] == "observed_after"
