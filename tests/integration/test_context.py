"""POST /v1/context through the memory_api handler: labelled sections within the token budget."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mongomem.retrieval.context import TITLES, estimate_tokens
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from tests.conftest import load_event, load_function
from tests.integration.test_recall import call as recall_call
from tests.integration.test_recall import make_services, record, scan

START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
OLD = [
    ("user", "My home airport is Lisbon and I always book aisle seats."),
    ("assistant", "Noted, Lisbon and an aisle seat."),
    ("user", "Also, I am allergic to peanuts, so no peanut snacks on flights."),
    ("assistant", "Understood, no peanuts."),
]
# Small talk long enough that the budgets below cannot hold everything.
FILLER = [
    (
        "user" if i % 2 == 0 else "assistant",
        f"Small talk number {i}: " + "the weather in town was mild and grey. " * 4,
    )
    for i in range(8)
]
CURRENT = [
    *FILLER,
    ("user", "Hi again!"),
    ("assistant", "Hello! How can I help?"),
    ("user", "I need a flight to Berlin next Friday."),
    ("assistant", "Sure. Any preference for the seat?"),
    ("user", "Please book the flight and remember my usual seat and snacks."),
]


@pytest.fixture(scope="module")
def api() -> Any:
    return load_function("memory_api")


@pytest.fixture(scope="module")
def record_fn() -> Any:
    return load_function("record_turns")


@pytest.fixture(scope="module")
def scan_fn() -> Any:
    return load_function("scan_sessions")


@pytest.fixture
def svc(make_settings: Any, tmp_path: Path) -> Iterator[Services]:
    services = make_services(make_settings, EmbeddedIndex(tmp_path / "vectors"))
    configure(services)
    yield services
    configure(None)
    services.database.drop()


def memory_api_call(
    api: Any, ctx: Any, method: str, path: str, body: Any, query: str = ""
) -> tuple[int, Any]:
    event = load_event("context.json")
    event["routeKey"] = event["requestContext"]["routeKey"] = f"{method} {path}"
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["requestContext"]["http"]["method"] = method
    event["rawQueryString"] = query
    event["queryStringParameters"] = dict(p.split("=", 1) for p in query.split("&")) if query else {}
    event["body"] = body if isinstance(body, str) else json.dumps(body)
    response = api.lambda_handler(event, ctx)
    return response["statusCode"], json.loads(response["body"])


def context(api: Any, ctx: Any, **body: Any) -> Any:
    status, result = memory_api_call(api, ctx, "POST", "/v1/context", {"user_id": "ana", **body})
    assert status == 200, result
    return result


@pytest.fixture
def history(svc: Services, api: Any, record_fn: Any, scan_fn: Any, ctx: Any) -> Services:
    """Ana: an old session, the current one, a working memory and two long-term memories."""
    for session, turns, start in (("old", OLD, START), ("now", CURRENT, START + timedelta(days=30))):
        body = [
            {"role": r, "content": c, "timestamp": (start + timedelta(minutes=i)).isoformat()}
            for i, (r, c) in enumerate(turns)
        ]
        record(record_fn, ctx, "ana", session, body)
    scan(scan_fn, ctx)
    status, _ = memory_api_call(
        api,
        ctx,
        "PUT",
        "/v1/working-memory",
        {"content": "# User\n- Name: Ana\n- Trip: Berlin"},
        "user_id=ana",
    )
    assert status == 200
    for fact in (
        {"subject": "user", "attribute": "preferred seat", "value": "aisle seat on flights"},
        {"subject": "user", "attribute": "allergy", "value": "peanuts"},
    ):
        status, body = memory_api_call(
            api, ctx, "POST", "/v1/memories", {"user_id": "ana", "type": "semantic", "payload": fact}
        )
        assert status in (200, 201), body
    return svc


def test_a_generous_budget_gets_every_section_labelled_in_priority_order(
    history: Services,
    api: Any,
    ctx: Any,
) -> None:
    result = context(
        api, ctx, session_id="now", query="seat and snacks for the flight", token_budget=4000, recent_turns=3
    )
    names = [s["name"] for s in result["sections"]]
    assert names == ["working_memory", "recent_turns", "memories", "recalled"]
    block = result["context"]
    positions = [block.index(TITLES[n]) for n in names]
    assert positions == sorted(positions)  # every section is labelled, in priority order
    assert "- Name: Ana" in block
    assert result["ids"]["recent_turns"] == ["now:11", "now:12", "now:13"]
    assert result["ids"]["working_memory"] and result["ids"]["memories"]
    # recalled older messages: the old session's seat and snack turns, never the recent window
    recalled = result["ids"]["recalled"]
    assert "old:1" in recalled and "old:3" in recalled
    assert not set(recalled) & set(result["ids"]["recent_turns"])
    assert result["tokens"] == estimate_tokens(block) <= 4000
    assert all(s["dropped"] == 0 for s in result["sections"])


@pytest.mark.parametrize("budget", [256, 400, 500, 2000])
def test_the_budget_is_filled_and_what_is_left_out_did_not_fit(
    history: Services,
    api: Any,
    ctx: Any,
    budget: int,
) -> None:
    full = context(api, ctx, session_id="now", query="seat and snacks for the flight", token_budget=32000)
    result = context(api, ctx, session_id="now", query="seat and snacks for the flight", token_budget=budget)
    assert result["tokens"] <= budget and estimate_tokens(result["context"]) <= budget
    every = {item["id"]: item for item in full["items"]}
    kept = {item["id"] for item in result["items"]}
    assert kept <= set(every)  # nothing comes in that the full block does not hold
    assert (kept < set(every)) == (full["tokens"] > budget)  # only a budget too small leaves items out
    # what was left out did not fit in what remains of the budget: a small budget is filled, not wasted
    for left in set(every) - kept:
        assert every[left]["tokens"] >= budget - result["tokens"] - 2, (left, result["tokens"])
    # the working memory always comes first, the session's latest turn is kept at these budgets
    sections = {s["name"]: s for s in result["sections"]}
    assert sections["working_memory"]["ids"]
    assert full["ids"]["recent_turns"][-1] in sections["recent_turns"]["ids"]
    # every item says why it is there
    assert all(item["reason"] for item in result["items"])


def test_a_working_memory_larger_than_the_budget_is_truncated_to_fit(
    history: Services,
    api: Any,
    ctx: Any,
) -> None:
    big = "# Notes\n" + "".join(f"- note {i}: the user likes quiet hotels near parks\n" for i in range(200))
    status, _ = memory_api_call(api, ctx, "PUT", "/v1/working-memory", {"content": big}, "user_id=ana")
    assert status == 200
    result = context(api, ctx, session_id="now", query="hotels", token_budget=256)
    sections = {s["name"]: s for s in result["sections"]}
    assert result["tokens"] <= 256
    assert sections["working_memory"]["truncated"] and sections["working_memory"]["text"].startswith(
        "# Notes"
    )
    assert all(not sections[n]["ids"] for n in ("recent_turns", "memories", "recalled"))


def test_without_a_query_the_latest_user_turn_is_used(history: Services, api: Any, ctx: Any) -> None:
    result = context(api, ctx, session_id="now", token_budget=2000, recent_turns=2)
    assert result["query"] == CURRENT[-1][1]
    assert result["ids"]["recalled"]


def test_with_recall_disabled_the_context_still_builds(
    make_settings: Any,
    tmp_path: Path,
    api: Any,
    record_fn: Any,
    ctx: Any,
) -> None:
    services = make_services(make_settings, EmbeddedIndex(tmp_path / "vectors"), enabled=False)
    configure(services)
    try:
        record(record_fn, ctx, "ana", "now", [{"role": "user", "content": "Book me a flight to Berlin."}])
        result = context(api, ctx, session_id="now", token_budget=1000)
        recalled = next(s for s in result["sections"] if s["name"] == "recalled")
        assert recalled["ids"] == [] and "disabled" in recalled["note"]
        assert result["ids"]["recent_turns"] == ["now:1"]
        status, _ = recall_call(api, ctx, {"user_id": "ana", "query": "flight"})
        assert status == 409
    finally:
        configure(None)
        services.database.drop()


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"user_id": "ana", "token_budget": 1000}, 422),  # no session_id
        ({"user_id": "ana", "session_id": "now", "token_budget": 100}, 422),
        ({"user_id": "ana", "session_id": "now", "token_budget": 64000}, 422),
        ({"user_id": "ana", "session_id": "bad id!", "token_budget": 1000}, 422),
        ({"session_id": "now", "token_budget": 1000}, 400),  # no user
    ],
)
def test_bad_input_gets_a_clear_4xx(svc: Services, api: Any, ctx: Any, body: Any, status: int) -> None:
    got, error = memory_api_call(api, ctx, "POST", "/v1/context", body)
    assert got == status and set(error["error"]) == {"code", "message", "details"}


def test_the_sample_event_builds_a_context(svc: Services, api: Any, ctx: Any) -> None:
    response = api.lambda_handler(load_event("context.json"), ctx)
    assert response["statusCode"] == 200, response["body"]
    body = json.loads(response["body"])
    assert body["token_budget"] == 2000 and body["tokens"] <= 2000


def test_the_sources_are_read_at_the_same_time_not_one_after_another(
    history: Services, api: Any, ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    # Given working memory, memory search and recall that each wait until the other two have started
    # (read one after another, the first would wait in vain and the barrier would break)
    started = threading.Barrier(3, timeout=20)

    def meeting(real: Any) -> Any:
        def wait_then_call(*args: Any, **kwargs: Any) -> Any:
            started.wait()
            return real(*args, **kwargs)

        return wait_then_call

    monkeypatch.setattr(history.working_memory, "get", meeting(history.working_memory.get))
    monkeypatch.setattr(history.search, "search", meeting(history.search.search))
    monkeypatch.setattr(history.recall, "recall", meeting(history.recall.recall))
    # When an agent asks for its context
    result = context(api, ctx, session_id="now", query="seat and snacks for the flight", recent_turns=3)
    # Then every source answered, in the same block and order as ever
    assert [s["name"] for s in result["sections"] if s["ids"]] == [
        "working_memory",
        "recent_turns",
        "memories",
        "recalled",
    ]
    assert not started.broken


def test_the_block_reads_only_the_recalled_turns_its_budget_can_hold(
    history: Services,
    api: Any,
    record_fn: Any,
    scan_fn: Any,
    ctx: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a long history of turns that all match the query (each turn read costs the request time)
    trips = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"Trip {i}: the flight to city {i} had a window seat, and snacks were "
            + "served late because the plane waited for a gate. " * 3,
            "timestamp": (START + timedelta(days=2, minutes=i)).isoformat(),
        }
        for i in range(40)
    ]
    record(record_fn, ctx, "ana", "trips", trips)
    scan(scan_fn, ctx)
    read: list[int] = []
    real = history.turns.by_ids

    def counting(scope: Any, ids: list[str]) -> Any:
        read.append(len(ids))
        return real(scope, ids)

    monkeypatch.setattr(history.turns, "by_ids", counting)
    query = "seat and snacks for the flight"
    # When the block of a small budget is built with the defaults, and with recall's depth asked for
    small = context(api, ctx, session_id="now", query=query, token_budget=400)
    by_default, read = sum(read), []
    asked = context(api, ctx, session_id="now", query=query, token_budget=400, recall_top_k=16)
    # Then the default reads fewer turns than the depth it may go to, and the block is the same
    assert small["items"] and small["ids"]["recalled"] == asked["ids"]["recalled"]
    assert by_default < sum(read), (by_default, read)


def test_the_not_yet_figures_are_counted_once_per_block(
    history: Services, api: Any, ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the "not yet" figures (each count is a few database reads)
    counted: list[str] = []
    real = history.pending.of

    def counting(scope: Any) -> Any:
        counted.append(scope.user_id)
        return real(scope)

    monkeypatch.setattr(history.pending, "of", counting)
    # When an agent asks for its context (which searches the memories on the way)
    result = context(api, ctx, session_id="now", query="seat and snacks for the flight")
    # Then the block says them, counted once for the whole block
    assert result["pending"] is not None and result["ids"]["memories"]
    assert counted == ["ana"]


def test_as_of_the_date_asked_hides_what_came_after_and_dates_the_block_from_it(
    history: Services, api: Any, ctx: Any, record_fn: Any, scan_fn: Any
) -> None:
    # Given Ana moved her home airport a week after the old session, in words and as a fact
    later = START + timedelta(days=7)
    record(
        record_fn,
        ctx,
        "ana",
        "later",
        [
            {
                "role": "user",
                "content": "I moved, my home airport is Porto now, not Lisbon.",
                "timestamp": later.isoformat(),
            }
        ],
    )
    scan(scan_fn, ctx)
    for value, when, decision in (("Lisbon", START, "ADD"), ("Porto", later, "UPDATE")):
        status, body = memory_api_call(
            api,
            ctx,
            "POST",
            "/v1/memories",
            {
                "user_id": "ana",
                "type": "semantic",
                "payload": {"subject": "user", "attribute": "home airport", "value": value},
                "observed_at": when.isoformat(),
            },
        )
        assert status in (200, 201) and body["decision"] == decision, body
    query = "which home airport do I fly from?"
    # When the question is asked on day 3 (before the change)
    asked = START + timedelta(days=3)
    then = context(api, ctx, session_id="ask-1", query=query, as_of=asked.isoformat(), token_budget=2000)
    block = then["context"]
    # Then the block opens with that date, hides the later turn and fact, and says how long before each
    # item was said
    assert block.index("## Asked on") < block.index("## What is known about the user")
    assert "4 March 2024" in block and "Porto" not in block
    assert "home airport: Lisbon" in block and "superseded" not in block
    assert ", 3 days before]" in block
    got = recall_call(api, ctx, {"user_id": "ana", "query": "home airport Porto", "as_of": asked.isoformat()})
    assert got[0] == 200 and all(not t.startswith("later:") for t in got[1]["turn_ids"])
    # When it is asked after the change
    now = context(api, ctx, session_id="ask-2", query=query, token_budget=2000)["context"]
    # Then the current value comes first and the old one is marked superseded
    memories = now[now.index("## What is known about the user") :]
    assert memories.index("home airport: Porto") < memories.index("home airport: Lisbon")
    assert "superseded on 8 March 2024) " in memories
    assert "later:1" in str(
        recall_call(api, ctx, {"user_id": "ana", "query": "home airport Porto"})[1]["turn_ids"]
    )
