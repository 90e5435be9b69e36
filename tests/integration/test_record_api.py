"""Recording turns through the real handler with API Gateway events, against a real server."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from mongomem.local.queue import local_queue_factory
from mongomem.models.common import utcnow
from tests import helpers
from tests.conftest import load_event, load_function


@pytest.fixture(scope="module")
def record_fn() -> Any:
    return load_function("record_turns")


def call(
    record_fn: Any, ctx: Any, name: str, body: Any = None, raw: str | None = None, **changes: Any
) -> tuple[int, Any]:
    return helpers.call(record_fn, ctx, name, body, raw=raw, **changes)


def post(
    record_fn: Any,
    ctx: Any,
    body: Any = None,
    raw: str | None = None,
    session: str = "sess-42",
    query: str = "",
) -> tuple[int, Any]:
    path = f"/v1/sessions/{session}/turns"
    changes: dict[str, Any] = {"rawPath": path, "rawQueryString": query}
    event = load_event("record_turns_post.json", **changes)
    event["requestContext"]["http"]["path"] = path
    event["body"] = raw if raw is not None else json.dumps(body)
    return helpers.invoke(record_fn, ctx, event)


def turn_count(services: Any) -> int:
    result: int = services.db["turns"].count_documents({})
    return result


def test_batch_gets_consecutive_seqs_and_session_counters(services: Any, record_fn: Any, ctx: Any) -> None:
    # Given the sample event (a batch of two turns with a client token)
    status, body = call(record_fn, ctx, "record_turns_post.json")
    # Then both turns are stored with seqs 1 and 2
    assert status == 201
    assert [t["seq"] for t in body["turns"]] == [1, 2]
    # When a single turn follows
    status, body = call(record_fn, ctx, "record_turn_single.json")
    assert status == 201 and body["turns"][0]["seq"] == 3
    # Then the session reports three turns, none promoted yet
    status, state = call(record_fn, ctx, "get_session.json")
    assert status == 200
    assert state["turn_count"] == 3 and state["unpromoted_count"] == 3 and state["snapshots"] == []
    stored = services.db["turns"].find_one({"seq": 3})
    assert stored["metadata"] == {"channel": "web"} and stored["tenant"] == "default"


def test_retry_with_same_client_token_records_nothing_new(services: Any, record_fn: Any, ctx: Any) -> None:
    first = call(record_fn, ctx, "record_turns_post.json")
    again = call(record_fn, ctx, "record_turns_post.json")
    assert first[0] == 201 and again[0] == 200
    assert again[1]["replayed"] is True
    assert [t["turn_id"] for t in again[1]["turns"]] == [t["turn_id"] for t in first[1]["turns"]]
    assert turn_count(services) == 2
    assert services.db["sessions"].find_one({})["last_seq"] == 2


def test_retry_after_a_partly_failed_insert_completes_the_write(
    services: Any, record_fn: Any, ctx: Any
) -> None:
    # Given a request whose session update landed but one of whose turns was not stored
    call(record_fn, ctx, "record_turns_post.json")
    services.db["turns"].delete_one({"seq": 2})
    # When the client retries with the same token
    status, body = call(record_fn, ctx, "record_turns_post.json")
    # Then the original seqs are filled in, not new ones
    assert status == 200 and [t["seq"] for t in body["turns"]] == [1, 2]
    assert sorted(d["seq"] for d in services.db["turns"].find({})) == [1, 2]


def test_retry_after_a_lost_insert_records_once(services: Any, record_fn: Any, ctx: Any) -> None:
    # Given a request whose session update landed but none of whose turns were stored
    call(record_fn, ctx, "record_turns_post.json")
    services.db["turns"].delete_many({})
    # When the client retries at once, it is told to wait (the first attempt may still be writing)
    status, body = call(record_fn, ctx, "record_turns_post.json")
    assert status == 409 and body["error"]["details"]["retry_after_seconds"] > 0
    assert services.db["turns"].count_documents({}) == 0
    # When it retries after the first attempt is surely over
    services.db["sessions"].update_one({}, {"$set": {"tokens.0.at": utcnow() - timedelta(minutes=1)}})
    status, body = call(record_fn, ctx, "record_turns_post.json")
    # Then the turns are recorded exactly once, under fresh seqs (the abandoned ones become a hole)
    assert status == 200 and [t["seq"] for t in body["turns"]] == [3, 4]
    assert services.db["turns"].count_documents({}) == 2
    again = call(record_fn, ctx, "record_turns_post.json")
    assert again[0] == 200 and [t["seq"] for t in again[1]["turns"]] == [3, 4]


def test_a_client_token_is_honoured_however_many_batches_follow(
    services: Any, record_fn: Any, ctx: Any
) -> None:
    def batch(token: str, content: str, size: int = 1) -> dict[str, Any]:
        return {
            "user_id": "user-7",
            "client_token": token,
            "turns": [{"role": "user", "content": content}] * size,
        }

    # Given a batch recorded with a token, then more batches in the same session than any count window
    first = post(record_fn, ctx, batch("old-1", "A"))
    assert first[0] == 201
    for i in range(250):
        assert post(record_fn, ctx, batch(f"later-{i}", f"n{i}"))[0] == 201
    # and the session promoted meanwhile
    status, flushed = call(record_fn, ctx, "flush_session.json")
    assert status == 200 and flushed["snapshot"]["to_seq"] == 251
    # When the client retries the first request
    status, again = post(record_fn, ctx, batch("old-1", "A"))
    # Then it is a replay with the original seq, and the turn is stored once
    assert status == 200 and again["replayed"] is True
    assert again["turns"] == first[1]["turns"]
    assert services.db["turns"].count_documents({"content": "A"}) == 1
    assert turn_count(services) == 251
    # and reusing a later token for a batch of another size is still a conflict
    status, _ = post(record_fn, ctx, batch("later-3", "x", size=2))
    assert status == 409 and turn_count(services) == 251


def test_token_reused_for_another_batch_is_a_conflict(services: Any, record_fn: Any, ctx: Any) -> None:
    call(record_fn, ctx, "record_turns_post.json")
    status, body = post(
        record_fn,
        ctx,
        {
            "user_id": "user-7",
            "client_token": "req-0001",
            "turns": [{"role": "user", "content": "something else"}],
        },
    )
    assert status == 409 and body["error"]["code"] == "conflict"
    assert turn_count(services) == 2


def test_list_turns_newest_page_in_time_order(services: Any, record_fn: Any, ctx: Any) -> None:
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(25)]
    assert post(record_fn, ctx, {"user_id": "user-7", "turns": turns})[0] == 201
    event = load_event("get_turns.json")
    event["queryStringParameters"] = {"user_id": "user-7", "limit": "10"}
    page = json.loads(record_fn.lambda_handler(event, ctx)["body"])
    assert [t["seq"] for t in page["turns"]] == list(range(16, 26))
    assert page["next_before_seq"] == 16
    event["queryStringParameters"] = {"user_id": "user-7", "limit": "10", "before_seq": "16"}
    older = json.loads(record_fn.lambda_handler(event, ctx)["body"])
    assert [t["seq"] for t in older["turns"]] == list(range(6, 16))


def test_flush_promotes_at_once_and_session_shows_it(services: Any, record_fn: Any, ctx: Any) -> None:
    call(record_fn, ctx, "record_turns_post.json")
    status, body = call(record_fn, ctx, "flush_session.json")
    assert status == 200
    snap = body["snapshot"]
    assert (snap["from_seq"], snap["to_seq"], snap["reason"]) == (1, 2, "manual")
    assert set(snap["extraction"]) == {"semantic", "episodic", "procedural", "taxonomic", "preference"}
    _, state = call(record_fn, ctx, "get_session.json")
    assert state["unpromoted_count"] == 0 and len(state["snapshots"]) == 1
    # a second flush has nothing to do
    status, body = call(record_fn, ctx, "flush_session.json")
    assert status == 200 and body["snapshot"] is None


def test_unknown_session_is_404(services: Any, record_fn: Any, ctx: Any) -> None:
    status, body = call(record_fn, ctx, "get_session.json")
    assert status == 404 and body["error"]["code"] == "not_found"


BAD_BODIES = [
    ("unknown field", {"user_id": "u", "turns": [{"role": "user", "content": "x", "colour": "red"}]}, 422),
    ("unknown top-level field", {"user_id": "u", "turns": [{"role": "user", "content": "x"}], "x": 1}, 422),
    ("wrong role", {"user_id": "u", "turns": [{"role": "robot", "content": "x"}]}, 422),
    ("content not a string", {"user_id": "u", "turns": [{"role": "user", "content": 42}]}, 422),
    ("empty content", {"user_id": "u", "turns": [{"role": "user", "content": "   "}]}, 422),
    ("empty batch", {"user_id": "u", "turns": []}, 422),
    ("operator as user id", {"user_id": {"$gt": ""}, "turns": [{"role": "user", "content": "x"}]}, 422),
    ("operator as content", {"user_id": "u", "turns": [{"role": "user", "content": {"$ne": None}}]}, 422),
    (
        "operator key in metadata",
        {"user_id": "u", "turns": [{"role": "user", "content": "x", "metadata": {"$where": "1"}}]},
        422,
    ),
    (
        "dotted key in metadata",
        {"user_id": "u", "turns": [{"role": "user", "content": "x", "metadata": {"a.b": 1}}]},
        422,
    ),
    ("bad user id chars", {"user_id": "u/../x", "turns": [{"role": "user", "content": "x"}]}, 422),
    ("user id too long", {"user_id": "u" * 129, "turns": [{"role": "user", "content": "x"}]}, 422),
    (
        "bad timestamp",
        {"user_id": "u", "turns": [{"role": "user", "content": "x", "timestamp": "yesterday"}]},
        422,
    ),
    ("batch over 100", {"user_id": "u", "turns": [{"role": "user", "content": "x"}] * 101}, 400),
    (
        "content over 1 MiB",
        {
            "user_id": "u",
            "turns": [{"role": "user", "content": "x"}, {"role": "user", "content": "y" * (1024 * 1024 + 1)}],
        },
        413,
    ),
    (
        "tool_calls on a user turn",
        {
            "user_id": "u",
            "turns": [{"role": "user", "content": "x", "tool_calls": [{"id": "c1", "name": "f"}]}],
        },
        422,
    ),
    ("no user", {"turns": [{"role": "user", "content": "x"}]}, 400),
    ("body is a list", [{"role": "user", "content": "x"}], 400),
]


@pytest.mark.parametrize(("label", "body", "status"), BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
def test_bad_input_gets_a_clear_4xx_and_writes_nothing(
    services: Any, record_fn: Any, ctx: Any, label: str, body: Any, status: int
) -> None:
    got, answer = post(record_fn, ctx, body)
    assert got == status, answer
    assert set(answer["error"]) == {"code", "message", "details"}
    assert answer["error"]["message"]
    assert turn_count(services) == 0
    assert services.db["sessions"].count_documents({}) == 0


@pytest.mark.parametrize("raw", ["{bad json", '{"user_id": "u", "turns": [', "\x00\x01"])
def test_malformed_json_is_400(services: Any, record_fn: Any, ctx: Any, raw: str) -> None:
    status, answer = post(record_fn, ctx, raw=raw)
    assert status in (400, 422) and answer["error"]["code"] in {"invalid_json", "validation_error"}
    assert turn_count(services) == 0


def test_oversized_body_is_refused_before_parsing(services: Any, record_fn: Any, ctx: Any) -> None:
    raw = (
        '{"user_id": "u", "turns": ['
        + ",".join(['{"role":"user","content":"' + "z" * 30000 + '"}'] * 200)
        + "]}"
    )
    status, answer = post(record_fn, ctx, raw=raw)
    assert status == 413 and answer["error"]["code"] == "payload_too_large"
    assert turn_count(services) == 0


@pytest.mark.parametrize("session", ["bad session", "x" * 129, "a$b"])
def test_bad_session_id_is_refused(services: Any, record_fn: Any, ctx: Any, session: str) -> None:
    status, answer = post(
        record_fn,
        ctx,
        {"user_id": "u", "turns": [{"role": "user", "content": "x"}]},
        session=session.replace(" ", "%20"),
    )
    assert 400 <= status < 500, answer
    assert turn_count(services) == 0


def test_tool_calls_are_stored_as_structured_fields(services: Any, record_fn: Any, ctx: Any) -> None:
    body = {
        "user_id": "u",
        "turns": [
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "call_1", "name": "search_flights", "arguments": {"from": "LIS", "to": "JFK"}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "name": "search_flights", "content": "[3 flights]"},
        ],
    }
    assert post(record_fn, ctx, body)[0] == 201
    first = services.db["turns"].find_one({"seq": 1})
    assert first["tool_calls"][0]["arguments"] == {"from": "LIS", "to": "JFK"}
    assert services.db["turns"].find_one({"seq": 2})["tool_call_id"] == "call_1"


def test_store_down_gives_503_with_retry_hint(make_settings: Any, record_fn: Any, ctx: Any) -> None:
    from mongomem.runtime import Services, configure

    dead = make_settings(
        mongodb_uri="mongodb://127.0.0.1:1/?directConnection=true&serverSelectionTimeoutMS=300"
    )
    configure(Services(dead, queue_factory=local_queue_factory))
    try:
        event = load_event("record_turns_post.json")
        response = record_fn.lambda_handler(event, ctx)
    finally:
        configure(None)
    assert response["statusCode"] == 503
    assert response["headers"].get("Retry-After") == "2"
    assert json.loads(response["body"])["error"]["code"] == "store_unavailable"
