"""Issue 11, finding 2: everything BSON or JSON cannot hold faithfully is a 4xx with the error envelope, and
nothing is written (session counters included), on every endpoint that takes the value."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.runtime import Services, configure
from tests.integration.hostile import (
    SESSION,
    USER,
    Gateway,
    assert_refused,
    fingerprint,
    hostile_services,
    session_counters,
)

DEEP = "[" * 10_000 + "]" * 10_000
TURNS = f"/v1/sessions/{SESSION}/turns"


def turn(**fields: Any) -> str:
    """A record body with one turn; values are raw JSON text, so they can be what json.dumps never writes."""
    extra = "".join(f', "{k}": {v}' for k, v in fields.items())
    return f'{{"user_id": "{USER}", "turns": [{{"role": "user", "content": "x"{extra}}}]}}'


def fact(payload: str, extra: str = "") -> str:
    return f'{{"user_id": "{USER}", "type": "semantic", "payload": {payload}{extra}}}'


PAYLOAD = '{"subject": "ana", "attribute": "phone", "value": "+1 555 0100"'

# (label, method, target, raw body). Each answered 500 or stored an unfaithful value before the fix.
CASES: list[tuple[str, str, str, str | bytes]] = [
    ("int beyond int64 in metadata", "POST", TURNS, turn(metadata='{"n": 1180591620717411303424}')),
    ("int below int64 in metadata", "POST", TURNS, turn(metadata='{"n": -9223372036854775809}')),
    (
        "int beyond int64 in tool arguments",
        "POST",
        TURNS,
        f'{{"user_id": "{USER}", "turns": [{{"role": "assistant", "tool_calls": '
        '[{"id": "c1", "name": "f", "arguments": {"n": 1180591620717411303424}}]}]}',
    ),
    ("a 5000-digit integer", "POST", TURNS, turn(metadata='{"n": ' + "9" * 5000 + "}")),
    ("lone surrogate in content", "POST", TURNS, turn().replace('"content": "x"', '"content": "\\ud800"')),
    (
        "lone low surrogate in content",
        "POST",
        TURNS,
        turn().replace('"content": "x"', '"content": "a\\udc00b"'),
    ),
    ("lone surrogate in metadata", "POST", TURNS, turn(metadata='{"k": "\\ud800"}')),
    ("lone surrogate in a metadata key", "POST", TURNS, turn(metadata='{"\\ud800": 1}')),
    ("NaN in metadata", "POST", TURNS, turn(metadata='{"x": NaN}')),
    ("Infinity in metadata", "POST", TURNS, turn(metadata='{"x": Infinity}')),
    ("-Infinity in metadata", "POST", TURNS, turn(metadata='{"x": -Infinity}')),
    ("1e400 in metadata", "POST", TURNS, turn(metadata='{"x": 1e400}')),
    ("timestamp before year 1 in UTC", "POST", TURNS, turn(timestamp='"0001-01-01T00:00:00+14:00"')),
    ("timestamp after year 9999 in UTC", "POST", TURNS, turn(timestamp='"9999-12-31T23:59:59-14:00"')),
    ("10,000 levels of nesting in a turn", "POST", TURNS, turn(metadata=f'{{"a": {DEEP}}}')),
    (
        "a metadata string over 64 Ki characters",
        "POST",
        TURNS,
        turn(metadata='{"a": "' + "z" * 70_000 + '"}'),
    ),
    ("invalid UTF-8 body", "POST", TURNS, turn().encode().replace(b'"x"', b'"\xff\xfe"')),
    ("UTF-16 body", "POST", TURNS, turn().encode("utf-16")),
    ("10,000 levels of nesting in a memory", "POST", "/v1/memories", fact(PAYLOAD + f', "extra": {DEEP}}}')),
    ("qualifier key $where", "POST", "/v1/memories", fact(PAYLOAD + ', "qualifiers": {"$where": "1"}}')),
    ("qualifier key with a dot", "POST", "/v1/memories", fact(PAYLOAD + ', "qualifiers": {"a.b": "1"}}')),
    ("empty qualifier key", "POST", "/v1/memories", fact(PAYLOAD + ', "qualifiers": {"": "1"}}')),
    ("NUL in a qualifier key", "POST", "/v1/memories", fact(PAYLOAD + ', "qualifiers": {"a\\u0000b": "1"}}')),
    (
        "valid_from of 100,000 characters",
        "POST",
        "/v1/memories",
        fact(PAYLOAD + ', "valid_from": "' + "2" * 100_000 + '"}'),
    ),
    (
        "valid_from before year 1 in UTC",
        "POST",
        "/v1/memories",
        fact(PAYLOAD + ', "valid_from": "0001-01-01T00:00:00+14:00"}'),
    ),
    (
        "lone surrogate in a memory value",
        "POST",
        "/v1/memories",
        fact(PAYLOAD.replace("+1 555 0100", "\\ud800") + "}"),
    ),
    (
        "expires_at after year 9999 in UTC",
        "POST",
        "/v1/memories",
        fact(PAYLOAD + "}", ', "expires_at": "9999-12-31T23:59:59-14:00"'),
    ),
    (
        "occurred_at before year 1 in UTC",
        "POST",
        "/v1/memories",
        f'{{"user_id": "{USER}", "type": "episodic", "payload": {{"title": "trip", "summary": "went", '
        '"occurred_at": "0001-01-01T00:00:00+14:00"}}',
    ),
    (
        "cursor before year 1 in UTC",
        "GET",
        f"/v1/memories?user_id={USER}&cursor=0001-01-01T00:00:00%2B14:00",
        "",
    ),
    (
        "cursor after year 9999 in UTC",
        "GET",
        f"/v1/memories?user_id={USER}&cursor=9999-12-31T23:59:59-14:00",
        "",
    ),
    (
        "10,000 levels of nesting in working memory",
        "PUT",
        f"/v1/working-memory?user_id={USER}",
        f'{{"data": {{"a": {DEEP}}}}}',
    ),
    (
        "lone surrogate in working memory",
        "PUT",
        f"/v1/working-memory?user_id={USER}",
        '{"content": "\\ud800"}',
    ),
    (
        "int beyond int64 in working memory",
        "PATCH",
        f"/v1/working-memory?user_id={USER}",
        '{"memory": {"n": 36893488147419103232}}',
    ),
    (
        "NaN in thread metadata",
        "POST",
        "/v1/threads",
        f'{{"user_id": "{USER}", "thread_id": "t2", "metadata": {{"x": NaN}}}}',
    ),
    (
        "10,000 levels of nesting in search",
        "POST",
        "/v1/memories/search",
        f'{{"user_id": "{USER}", "query": {DEEP}}}',
    ),
    (
        "lone surrogate in a search query",
        "POST",
        "/v1/memories/search",
        f'{{"user_id": "{USER}", "query": "\\ud800"}}',
    ),
    (
        "1e400 as search min_score",
        "POST",
        "/v1/memories/search",
        f'{{"user_id": "{USER}", "query": "x", "min_score": 1e400}}',
    ),
    (
        "10,000 levels of nesting in recall",
        "POST",
        "/v1/recall",
        f'{{"user_id": "{USER}", "query": "x", "x": {DEEP}}}',
    ),
    (
        "10,000 levels of nesting in context",
        "POST",
        "/v1/context",
        f'{{"user_id": "{USER}", "session_id": "s1", "q": {DEEP}}}',
    ),
]


def imported(*turns: dict[str, Any], fmt: str = "turns") -> str:
    body: dict[str, Any] = {"user_id": USER, "format": fmt}
    body["turns" if fmt == "turns" else "data"] = list(turns) if fmt == "turns" else turns[0]
    return json.dumps(body)


def past(
    session: str, content: str = "I live in Lisbon", when: Any = "2024-03-01T10:00:00Z"
) -> dict[str, Any]:
    return {"session_id": session, "role": "user", "content": content, "timestamp": when}


def locomo(session_1: Any, when: str = "1:56 pm on 8 May, 2023") -> dict[str, Any]:
    return {"speaker_a": "Ana", "speaker_b": "Bo", "session_1_date_time": when, "session_1": session_1}


LOCOMO_TURN = {"speaker": "Ana", "text": "I moved to Lisbon", "dia_id": "D1:1"}
WM_TOOL = f"/v1/working-memory/tool?user_id={USER}"
MEMORIES = f"/v1/memories?user_id={USER}&metadata="

# Issue 22: each answered 500 (some after writing part of the request) or was stored against the rules.
CASES += [
    (
        "import: a whitespace-only turn in the second session (the first was written before)",
        "POST",
        "/v1/import",
        imported(past("imp-a"), past("imp-b", content="   ")),
    ),
    ("import: a numeric timestamp", "POST", "/v1/import", imported(past("imp-c", when=1709287200))),
    ("import: a numeric timestamp as text", "POST", "/v1/import", imported(past("imp-c", when="1709287200"))),
    (
        "import: turns older than the session's (seq order would break time order)",
        "POST",
        "/v1/import",
        imported(past(SESSION, when="2020-01-01T00:00:00Z")),
    ),
    ("import: LoCoMo session_1 is a string", "POST", "/v1/import", imported(locomo("hello"), fmt="locomo")),
    (
        "import: LoCoMo session_1 is a list of strings",
        "POST",
        "/v1/import",
        imported(locomo(["hello", "there"]), fmt="locomo"),
    ),
    (
        "import: LoCoMo turns spaced past the year 9999",
        "POST",
        "/v1/import",
        imported(locomo([LOCOMO_TURN] * 12, when="11:59 pm on 31 December, 9999"), fmt="locomo"),
    ),
    ("working-memory tool: memory null", "POST", WM_TOOL, '{"memory": null}'),
    ("working-memory tool: memory a number", "POST", WM_TOOL, '{"memory": 5}'),
    ("working-memory tool: memory a boolean", "POST", WM_TOOL, '{"memory": true}'),
    ("working-memory tool: memory a list", "POST", WM_TOOL, '{"memory": ["a"]}'),
    ("working-memory tool: fields in template mode", "POST", WM_TOOL, '{"seat": "aisle"}'),
    ("metadata filter: Infinity", "GET", MEMORIES + "%7B%22region%22%3A%20Infinity%7D", ""),
    ("metadata filter: 1e400", "GET", MEMORIES + "%7B%22region%22%3A%201e400%7D", ""),
    ("metadata filter: a lone surrogate", "GET", MEMORIES + "%7B%22region%22%3A%20%22%5Cud800%22%7D", ""),
    ("metadata filter: an int beyond int64", "GET", MEMORIES + "%7B%22n%22%3A%20" + "9" * 30 + "%7D", ""),
    (
        "a batch naming another agent than its session's",
        "POST",
        TURNS,
        f'{{"user_id": "{USER}", "agent_id": "other-agent", "turns": [{{"role": "user", "content": "hi"}}]}}',
    ),
]


@pytest.fixture
def gateway(make_settings: Any, tmp_path: Path) -> Iterator[tuple[Gateway, Services]]:
    svc = hostile_services(make_settings, tmp_path)
    configure(svc)
    gw = Gateway()
    gw.seed()
    yield gw, svc
    configure(None)
    svc.database.drop()


@pytest.mark.parametrize(("label", "method", "target", "raw"), CASES, ids=[c[0] for c in CASES])
def test_unstorable_input_is_a_4xx_and_writes_nothing(
    gateway: tuple[Gateway, Services], label: str, method: str, target: str, raw: str | bytes
) -> None:
    gw, svc = gateway
    before, counters = fingerprint(svc), session_counters(svc)
    body = raw.encode() if isinstance(raw, str) else raw
    status, answer = gw.call(method, target, body or None)
    assert_refused(status, answer)
    assert session_counters(svc) == counters
    assert fingerprint(svc) == before, f"{label}: the refused request changed the database"


def test_a_refused_batch_moves_no_counter_even_when_only_its_last_turn_is_bad(
    gateway: tuple[Gateway, Services],
) -> None:
    gw, svc = gateway
    counters = session_counters(svc)
    good = ", ".join(['{"role": "user", "content": "fine"}'] * 5)
    raw = f'{{"user_id": "{USER}", "turns": [{good}, {{"role": "user", "content": "x", "timestamp": "0001-01-01T00:00:00+14:00"}}]}}'
    assert_refused(*gw.call("POST", TURNS, raw.encode()))
    assert session_counters(svc) == counters
    # and the next good batch continues the numbering without a hole
    status, body = gw.json("POST", TURNS, {"user_id": USER, "turns": [{"role": "user", "content": "next"}]})
    assert status == 201 and [t["seq"] for t in body["turns"]] == [counters["last_seq"] + 1]


def test_what_can_be_stored_faithfully_still_is(gateway: tuple[Gateway, Services]) -> None:
    """The limits refuse only what cannot be kept: the edges of every range are accepted and read back."""
    gw, svc = gateway
    metadata = {"max": 2**63 - 1, "min": -(2**63), "float": 1.7976931348623157e308, "emoji": "\U0001f600"}
    batch = {
        "user_id": USER,
        "turns": [
            {
                "role": "user",
                "content": "caf\u00e9 \U0001f600",
                "metadata": metadata,
                "timestamp": "0001-01-01T00:00:00Z",
            },
            {"role": "user", "content": "late", "timestamp": "9999-12-31T23:59:59+00:00"},
        ],
    }
    assert gw.json("POST", TURNS, batch)[0] == 201
    status, page = gw.call("GET", f"{TURNS}?user_id={USER}&limit=2")
    assert status == 200
    first, last = page["turns"]
    assert first["content"] == "caf\u00e9 \U0001f600" and first["metadata"] == metadata
    assert first["timestamp"].startswith("0001-01-01T00:00:00") and last["timestamp"].startswith("9999-12-31")
    # a UTF-8 body sent as bytes API Gateway base64-encodes (non-text) is read the same way
    raw = json.dumps({"user_id": USER, "role": "user", "content": "na\u00efve"}, ensure_ascii=False).encode()
    status, _ = gw.call("POST", TURNS, raw)
    assert status == 201
    fact = {
        "user_id": USER,
        "type": "semantic",
        "payload": {
            "subject": "ana",
            "attribute": "phone",
            "value": "+1",
            "qualifiers": {"since": "2026"},
            "valid_from": "2026-04",
        },
    }
    assert gw.json("POST", "/v1/memories", fact)[0] == 201
    assert svc.db["turns"].count_documents({}) == 5
