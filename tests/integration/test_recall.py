"""POST /v1/recall through the memory_api handler; turns recorded by the record handler, indexed by the scan.

Real servers: SecantusDB (session fixture), the EmbeddedIndex, and one test on the shared OpenSearch node.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mongomem import markers
from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from mongomem.vectors.opensearch import OpenSearchIndex
from mongomem.vectors.port import SearchQuery
from tests import helpers
from tests.conftest import load_event, load_function

DAY = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)

# Recorded out of time order on purpose (s2 first, but it happened after s1).
CONVERSATION: dict[str, tuple[datetime, list[tuple[str, str]]]] = {
    "s2": (
        DAY + timedelta(days=5),
        [
            ("user", "My sister Marta is visiting from Madrid."),
            ("assistant", "How long will she stay?"),
            ("user", "Two weeks, and we plan to cook paella together."),
            ("assistant", "Paella sounds delicious."),
        ],
    ),
    "s1": (
        DAY,
        [
            ("user", "I adopted a puppy named Biscuit last week."),
            ("assistant", "Congratulations! What breed is Biscuit?"),
            ("user", "A golden retriever, very playful."),
            ("assistant", "Golden retrievers love to swim."),
            ("user", "We are going to the lake on Sunday."),
        ],
    ),
    "s3": (
        DAY + timedelta(days=9),
        [
            ("user", "I started a new job as a nurse at the city hospital."),
            ("assistant", "Will you work night shifts?"),
            ("user", "Yes, mostly night shifts on weekends."),
        ],
    ),
}


def _config(enabled: bool = True) -> Any:
    return parse_project_config({"memory": {"extraction": {"enabled": []}, "recall": {"enabled": enabled}}})


def make_services(make_settings: Any, index: Any, enabled: bool = True) -> Services:
    return Services(
        make_settings(project=_config(enabled), enabled_extractions=[]),
        embedder=HashingEmbedder(dim=256),
        vector_index=index,
        queue_factory=local_queue_factory,
    )


@pytest.fixture
def svc(make_settings: Any, tmp_path: Path) -> Iterator[Services]:
    services = make_services(make_settings, EmbeddedIndex(tmp_path / "vectors"))
    configure(services)
    yield services
    configure(None)
    services.database.drop()


@pytest.fixture(scope="module")
def api() -> Any:
    return load_function("memory_api")


@pytest.fixture(scope="module")
def record_fn() -> Any:
    return load_function("record_turns")


@pytest.fixture(scope="module")
def scan_fn() -> Any:
    return load_function("scan_sessions")


def _authorize(event: dict[str, Any], tenant: str | None) -> None:
    helpers.authorize(event, tenant)


def record(
    record_fn: Any, ctx: Any, user: str, session: str, turns: list[dict[str, Any]], tenant: str | None = None
) -> Any:
    event = load_event("record_turns_post.json")
    event["rawPath"] = f"/v1/sessions/{session}/turns"
    event["pathParameters"] = {"session_id": session}
    event["body"] = json.dumps({"user_id": user, "turns": turns})
    _authorize(event, tenant)
    response = record_fn.lambda_handler(event, ctx)
    assert response["statusCode"] == 201, response["body"]
    return json.loads(response["body"])


def record_conversation(record_fn: Any, ctx: Any, user: str, tenant: str | None = None) -> None:
    for session, (start, turns) in CONVERSATION.items():
        body = [
            {"role": role, "content": text, "timestamp": (start + timedelta(minutes=i)).isoformat()}
            for i, (role, text) in enumerate(turns)
        ]
        record(record_fn, ctx, user, session, body, tenant)


def scan(scan_fn: Any, ctx: Any) -> dict[str, Any]:
    result: dict[str, Any] = scan_fn.lambda_handler(load_event("scan_schedule.json"), ctx)
    return result


def call(api: Any, ctx: Any, body: Any, tenant: str | None = None) -> tuple[int, Any]:
    return helpers.call(api, ctx, "recall.json", body, tenant=tenant)


def recall(
    api: Any, ctx: Any, query: str, user: str = "ana", tenant: str | None = None, **options: Any
) -> Any:
    status, body = call(api, ctx, {"user_id": user, "query": query, **options}, tenant)
    assert status == 200, body
    return body


def returned(body: dict[str, Any]) -> list[str]:
    return [t["turn_id"] for g in body["threads"] for t in g["turns"]]


def matched(body: dict[str, Any]) -> list[str]:
    return [t["turn_id"] for g in body["threads"] for t in g["turns"] if t["matched"]]


@pytest.fixture
def ana(svc: Services, record_fn: Any, scan_fn: Any, ctx: Any) -> Services:
    """Ana's three sessions, recorded and indexed by one scan."""
    record_conversation(record_fn, ctx, "ana")
    report = scan(scan_fn, ctx)
    assert report["recall"]["turns"] == 12
    return svc


# -- indexing ----------------------------------------------------------------------------------------
def test_recording_only_queues_turns_and_the_scan_indexes_two_documents_each(
    svc: Services, record_fn: Any, scan_fn: Any, ctx: Any
) -> None:
    # Given a user turn, an assistant turn, a system prompt and a tool result
    turns = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Book the dentist for Tuesday."},
        {"role": "assistant", "content": "Done, Tuesday at 10."},
        {"role": "tool", "content": '{"ok": true}', "tool_call_id": "call-1"},
    ]
    record(record_fn, ctx, "ana", "chat", turns)
    # Then recording embedded nothing: the conversation turns are only queued
    docs = {d["seq"]: d for d in svc.db["turns"].find({"session_id": "chat"})}
    assert [docs[s].get("recall_indexed") for s in (1, 2, 3, 4)] == [None, False, False, None]
    assert svc.vector_index is not None and svc.vector_index.count(kind="turn") == 0
    # When the scheduled scan runs
    report = scan(scan_fn, ctx)
    # Then each user/assistant turn has an own-text and a context document, and is marked indexed
    assert report["recall"]["turns"] == 2
    assert svc.vector_index.count(tenant="default", user_id="ana", kind="turn") == 4
    assert svc.db["turns"].count_documents({"recall_indexed": False}) == 0
    # and a second scan has nothing left to do
    assert scan(scan_fn, ctx)["recall"]["turns"] == 0


def test_a_new_turn_rewrites_the_previous_turns_context_document(
    svc: Services, record_fn: Any, scan_fn: Any, ctx: Any
) -> None:
    # Given a turn indexed before its reply existed
    record(record_fn, ctx, "ana", "chat", [{"role": "user", "content": "Guess where I went yesterday."}])
    scan(scan_fn, ctx)
    # When the reply is recorded and indexed
    record(record_fn, ctx, "ana", "chat", [{"role": "assistant", "content": "Was it the aquarium?"}])
    report = scan(scan_fn, ctx)
    assert report["recall"] == {"turns": 1, "reindexed": 1, "failed": 0}
    # Then the first turn's context document contains the reply's words
    assert svc.vector_index is not None
    hits = svc.vector_index.search(
        SearchQuery("default", "ana", "turn", "aquarium", None, filters={"channel": "ctx"}, mode="bm25")
    )
    assert {h.id.rsplit("#", 1)[0] for h in hits} == {"default|ana|chat#1", "default|ana|chat#2"}


def test_after_the_index_is_dropped_requeued_turns_are_indexed_again(
    ana: Services, api: Any, scan_fn: Any, ctx: Any
) -> None:
    # Given the index was dropped (mongomem reindex --drop): recall finds nothing
    assert ana.vector_index is not None
    ana.vector_index.drop()
    assert recall(api, ctx, "golden retriever", top_k=1)["matched"] == []
    # When the turns are queued again and the scan runs
    assert ana.turn_indexer.requeue() == 12
    assert scan(scan_fn, ctx)["recall"]["turns"] == 12
    # Then recall answers as before
    assert recall(api, ctx, "golden retriever breed", top_k=1)["matched"] == ["s1:3"]


# -- recall ------------------------------------------------------------------------------------------
def test_a_match_comes_with_its_neighbours_and_says_which_matched(ana: Services, api: Any, ctx: Any) -> None:
    body = recall(api, ctx, "golden retriever breed", top_k=1, message_range=1)
    assert body["matched"] == ["s1:3"]
    assert returned(body) == ["s1:2", "s1:3", "s1:4"]
    turns = {t["turn_id"]: t for t in body["threads"][0]["turns"]}
    assert turns["s1:3"]["matched"] and turns["s1:3"]["rank"] == 1 and turns["s1:3"]["score"] > 0
    assert not turns["s1:2"]["matched"] and turns["s1:2"]["score"] is None
    assert turns["s1:3"]["content"] == "A golden retriever, very playful."


@pytest.mark.parametrize(
    ("query", "match", "expected"),
    [
        ("adopted a puppy named Biscuit", "s1:1", ["s1:1", "s1:2", "s1:3"]),  # first turn of a session
        ("going to the lake on Sunday", "s1:5", ["s1:3", "s1:4", "s1:5"]),  # last turn of a session
    ],
)
def test_ranges_stop_at_the_edges_of_the_thread(
    ana: Services, api: Any, ctx: Any, query: str, match: str, expected: list[str]
) -> None:
    body = recall(api, ctx, query, top_k=1, message_range=2)
    assert body["matched"] == [match]
    assert returned(body) == expected  # no seq 0 or -1, nothing borrowed from another session


def test_message_range_before_and_after(ana: Services, api: Any, ctx: Any) -> None:
    body = recall(
        api, ctx, "sister Marta visiting from Madrid", top_k=1, message_range={"before": 0, "after": 2}
    )
    assert body["matched"] == ["s2:1"]
    assert returned(body) == ["s2:1", "s2:2", "s2:3"]
    body = recall(api, ctx, "how long will she stay", top_k=1, message_range={"before": 2, "after": 0})
    assert body["matched"] == ["s2:2"]
    assert returned(body) == ["s2:1", "s2:2"]


def test_results_are_grouped_by_thread_in_time_order_without_duplicates(
    ana: Services, api: Any, ctx: Any
) -> None:
    # Matches in all three sessions, two of them next to each other in s1 (shared neighbours)
    body = recall(api, ctx, "golden retriever swim paella nurse night shifts", top_k=6, message_range=1)
    ids = returned(body)
    assert len(ids) == len(set(ids))
    threads = [g["thread"] for g in body["threads"]]
    assert threads == sorted(threads, key=lambda t: CONVERSATION[t][0])  # s1 (day 0), s2 (day 5), s3 (day 9)
    assert len(threads) == len(set(threads))
    for group in body["threads"]:
        seqs = [t["seq"] for t in group["turns"]]
        assert seqs == sorted(seqs)
        times = [t["timestamp"] for t in group["turns"]]
        assert times == sorted(times)
    assert sorted(body["matched"]) == sorted(matched(body)) and len(body["matched"]) == 6
    assert body["turn_ids"] == ids


def test_order_time_returns_the_messages_in_time_order_across_threads(
    svc: Services, api: Any, record_fn: Any, scan_fn: Any, ctx: Any
) -> None:
    # Given two threads held at the same time, their messages interleaved in time
    at = DAY + timedelta(days=30)
    talks = {
        "kitchen": ["The oven timer says the lasagna needs ten minutes.", "Add basil to the lasagna now."],
        "garage": ["The bike chain needs oil before the ride.", "Pump the bike tyres to four bar."],
    }
    for offset, (thread, lines) in enumerate(talks.items()):
        turns = [
            {
                "role": "user",
                "content": text,
                "timestamp": (at + timedelta(minutes=2 * i + offset)).isoformat(),
            }
            for i, text in enumerate(lines)
        ]
        record(record_fn, ctx, "ana", thread, turns)
    scan(scan_fn, ctx)
    query = "lasagna basil oven bike chain tyres"
    # When recall is asked for time order
    body = recall(api, ctx, query, top_k=4, message_range=0, order="time")
    # Then `messages` lists every returned message by time, alternating threads as they were said ...
    stamps = [m["timestamp"] for m in body["messages"]]
    assert stamps == sorted(stamps) and len(stamps) == 4
    assert [m["thread"] for m in body["messages"]] == ["kitchen", "garage", "kitchen", "garage"]
    assert body["turn_ids"] == [m["turn_id"] for m in body["messages"]]
    # ... the prompt text follows that order, naming each message's thread, inside the marker
    # (inside the marker's tags and its tag-free sentinel lines)
    assert markers.strip(body["text"])[1] == 1
    lines = [line for line in body["text"].splitlines()[2:-2] if line]  # a blank line before the end
    assert [line.split("(thread ")[1].split(")")[0] for line in lines] == [
        "kitchen",
        "garage",
        "kitchen",
        "garage",
    ]
    # ... and the grouping by thread is still there
    assert [g["thread"] for g in body["threads"]] == ["kitchen", "garage"]
    # By default nothing changes: grouped by thread, no `messages`
    default = recall(api, ctx, query, top_k=4, message_range=0)
    assert default["messages"] is None and "(thread " not in default["text"]
    assert default["turn_ids"] == [t["turn_id"] for g in default["threads"] for t in g["turns"]]


def test_the_recent_window_is_never_returned(ana: Services, api: Any, ctx: Any) -> None:
    # Given the caller already holds the newest two turns of s3
    body = recall(api, ctx, "night shifts at the hospital", thread="s3", exclude_recent=2, message_range=2)
    # Then neither is returned, as a match or as context
    assert "s3:2" not in returned(body) and "s3:3" not in returned(body)
    assert "s3:1" in body["matched"]
    # And explicit turn ids work the same way
    body = recall(api, ctx, "golden retriever", exclude_recent=["s1:3", "s1:4"], message_range=1)
    assert "s1:3" not in returned(body) and "s1:4" not in returned(body)
    assert body["matched"]


def test_a_user_never_recalls_another_users_messages(
    ana: Services, api: Any, record_fn: Any, scan_fn: Any, ctx: Any
) -> None:
    # Given Ben, with a turn about a puppy called Biscuit in a session with the same id as Ana's
    record(record_fn, ctx, "ben", "s1", [{"role": "user", "content": "My puppy Biscuit chewed my shoes."}])
    # and Ana again in another tenant
    record(
        record_fn, ctx, "ana", "s1", [{"role": "user", "content": "Biscuit the puppy is a secret."}], "acme"
    )
    scan(scan_fn, ctx)
    # When Ana and Ben ask about Biscuit
    mine = recall(api, ctx, "puppy Biscuit", top_k=10, message_range=5)
    bens = recall(api, ctx, "puppy Biscuit", user="ben", top_k=10, message_range=5)
    other_tenant = recall(api, ctx, "puppy Biscuit", tenant="acme", top_k=10, message_range=5)
    # Then each sees only their own turns
    contents = [t["content"] for g in mine["threads"] for t in g["turns"]]
    assert "My puppy Biscuit chewed my shoes." not in contents
    assert "Biscuit the puppy is a secret." not in contents
    assert [t["content"] for g in bens["threads"] for t in g["turns"]] == [
        "My puppy Biscuit chewed my shoes."
    ]
    assert [t["content"] for g in other_tenant["threads"] for t in g["turns"]] == [
        "Biscuit the puppy is a secret."
    ]


def test_thread_scope_returns_only_that_thread(ana: Services, api: Any, ctx: Any) -> None:
    body = recall(api, ctx, "puppy Biscuit golden retriever", scope="thread", thread="s2", top_k=4)
    assert {g["thread"] for g in body["threads"]} == {"s2"}
    body = recall(api, ctx, "puppy Biscuit golden retriever", top_k=4)  # resource scope: s1 ranks first
    assert body["matched"][0].startswith("s1:")


def test_the_sample_event_recalls(svc: Services, api: Any, record_fn: Any, scan_fn: Any, ctx: Any) -> None:
    # Given user-7's chat-42, whose newest two turns the sample excludes
    turns = [
        {"role": "user", "content": "I usually fly from Lisbon airport, LIS."},
        {"role": "assistant", "content": "Noted: you fly from LIS."},
        {"role": "user", "content": "Which airport is closest to the beach?"},
        {"role": "assistant", "content": "Faro airport."},
    ]
    record(record_fn, ctx, "user-7", "chat-42", turns)
    scan(scan_fn, ctx)
    # When the sample event is sent unchanged
    status, body = call(api, ctx, load_event("recall.json")["body"])
    # Then the older airport turn is recalled and the recent window is left out
    assert status == 200, body
    assert body["matched"][0] == "chat-42:1"
    assert "chat-42:3" not in body["turn_ids"] and "chat-42:4" not in body["turn_ids"]
    assert body["took_ms"] >= 0


# -- errors ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"user_id": "ana"}, 422, "validation_error"),
        ({"user_id": "ana", "query": "   "}, 422, "validation_error"),
        ({"user_id": "ana", "query": "x", "top_k": 0}, 422, "validation_error"),
        ({"user_id": "ana", "query": "x", "message_range": -1}, 422, "validation_error"),
        (
            {"user_id": "ana", "query": "x", "message_range": {"before": 1, "later": 2}},
            422,
            "validation_error",
        ),
        ({"user_id": "ana", "query": "x", "scope": "everything"}, 422, "validation_error"),
        ({"user_id": "ana", "query": "x", "unknown": 1}, 422, "validation_error"),
        ({"user_id": {"$gt": ""}, "query": "x"}, 422, "validation_error"),
        ({"query": "x"}, 400, "invalid_request"),
        ({"user_id": "ana", "query": "x", "scope": "thread"}, 400, "invalid_request"),
        ({"user_id": "ana", "query": "x", "exclude_recent": 3}, 400, "invalid_request"),
        ({"user_id": "ana", "query": "x", "exclude_recent": ["no-seq-here"]}, 400, "invalid_request"),
        ("{not json", 400, "invalid_json"),
    ],
)
def test_bad_input_gets_a_clear_4xx_json_error(
    ana: Services, api: Any, ctx: Any, body: Any, status: int, code: str
) -> None:
    got, error = call(api, ctx, body)
    assert (got, error["error"]["code"]) == (status, code), error
    assert set(error["error"]) == {"code", "message", "details"}


def test_disabled_recall_embeds_nothing_and_answers_409(
    make_settings: Any, tmp_path: Path, api: Any, record_fn: Any, scan_fn: Any, ctx: Any
) -> None:
    # Given a project with memory.recall.enabled: false
    index = EmbeddedIndex(tmp_path / "vectors")
    services = make_services(make_settings, index, enabled=False)
    configure(services)
    try:
        # When turns are recorded and the scan runs
        record_conversation(record_fn, ctx, "ana")
        report = scan(scan_fn, ctx)
        # Then nothing is queued or embedded
        assert "recall" not in report
        assert services.db["turns"].count_documents({"recall_indexed": {"$exists": True}}) == 0
        assert index.count() == 0
        # And recall says clearly that it is disabled
        status, body = call(api, ctx, {"user_id": "ana", "query": "puppy"})
        assert status == 409
        assert body["error"]["code"] == "recall_disabled"
        assert "memory.recall.enabled" in body["error"]["message"]
    finally:
        configure(None)
        services.database.drop()


# -- OpenSearch --------------------------------------------------------------------------------------
@pytest.mark.opensearch
def test_recall_on_opensearch(
    request: pytest.FixtureRequest, make_settings: Any, api: Any, record_fn: Any, scan_fn: Any, ctx: Any
) -> None:
    # Given the shared OpenSearch node (engine lucene) as the vector index
    node = request.getfixturevalue("opensearch_node")
    index = OpenSearchIndex(node.url, f"t-recall-{uuid.uuid4().hex[:10]}", engine="lucene", refresh=True)
    request.addfinalizer(index.drop)
    services = make_services(make_settings, index)
    configure(services)
    try:
        record_conversation(record_fn, ctx, "ana")
        record(
            record_fn, ctx, "ben", "s1", [{"role": "user", "content": "My puppy Biscuit chewed my shoes."}]
        )
        assert scan(scan_fn, ctx)["recall"]["turns"] == 13
        assert index.count(tenant="default", user_id="ana", kind="turn") == 24
        # When Ana recalls with neighbours
        body = recall(api, ctx, "golden retriever breed", top_k=1, message_range=1)
        # Then the same turns come back as on the embedded index, and never Ben's
        assert body["matched"] == ["s1:3"]
        assert returned(body) == ["s1:2", "s1:3", "s1:4"]
        everything = recall(api, ctx, "puppy Biscuit", top_k=12, message_range=0)
        contents = [t["content"] for g in everything["threads"] for t in g["turns"]]
        assert "My puppy Biscuit chewed my shoes." not in contents
        edge = recall(api, ctx, "going to the lake on Sunday", top_k=1, message_range=2)
        assert edge["matched"] == ["s1:5"] and returned(edge) == ["s1:3", "s1:4", "s1:5"]
    finally:
        configure(None)
        services.database.drop()


def test_each_ranking_is_read_deep_before_the_rankings_are_fused(
    ana: Services, api: Any, ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A turn ranked 150th by its words and high by its meaning is fused with both ranks (dev split:
    # R@10 0.791 when every ranking was cut at 100, 0.802 at 400)
    from mongomem.retrieval import recall as recall_module

    asked: list[int] = []
    real = recall_module.search_all  # type: ignore[attr-defined]

    def capture(index: Any, queries: list[Any]) -> Any:
        asked.extend(q.top_k for q in queries)
        return real(index, queries)

    monkeypatch.setattr(recall_module, "search_all", capture)
    body = recall(api, ctx, "golden retriever breed", top_k=5, message_range=0)
    assert body["matched"][0] == "s1:3"
    assert len(asked) == 4 and min(asked) >= recall_module.FUSION_DEPTH >= 400
