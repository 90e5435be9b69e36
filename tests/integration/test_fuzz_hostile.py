"""Property-based fuzz of every endpoint with what BSON or JSON cannot hold faithfully (issue 11, finding 2).

For each route, hypothesis takes a valid request and puts one hostile value somewhere in it: a lone
surrogate, an integer outside int64, NaN/Infinity/1e400, a date-time that leaves years 1-9999 in UTC,
nesting up to 10,000 levels, a key MongoDB reads as an operator or path, an over-long string; or sends the
whole body as invalid UTF-8, UTF-16/32 or with a BOM; or puts a hostile value in a query or path
parameter. Every answer must be below 500, and a refused request (4xx) must change nothing: every
document of every collection, session counters included, is fingerprinted before and after.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mongomem.runtime import Services, configure
from tests.integration.hostile import (
    USER,
    Gateway,
    extreme_datetimes,
    fingerprint,
    hostile_bodies,
    hostile_fragments,
    hostile_services,
)

EXAMPLES_PER_ENDPOINT = 60
MARKER = "\u2063hostile\u2063"


@dataclass
class Endpoint:
    method: str
    path: str  # may hold {param} placeholders, filled from `params`
    params: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    body: Any = None

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"


SEEDED = "{seeded}"  # a path parameter filled with the id of a document the fixture wrote
ENDPOINTS = [
    Endpoint(
        "POST",
        "/v1/sessions/{session_id}/turns",
        {"session_id": "fz"},
        body={
            "user_id": USER,
            "client_token": "fz-1",
            "turns": [
                {
                    "role": "user",
                    "content": "c",
                    "metadata": {"k": "v", "n": 1},
                    "timestamp": "2026-01-01T00:00:00Z",
                },
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c1", "name": "f", "arguments": {"a": [1, "b"]}}],
                },
                {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "ok"},
            ],
        },
    ),
    Endpoint(
        "GET",
        "/v1/sessions/{session_id}/turns",
        {"session_id": "s1"},
        {"user_id": USER, "limit": "5", "before_seq": "3"},
    ),
    Endpoint("GET", "/v1/sessions/{session_id}", {"session_id": "s1"}, {"user_id": USER}),
    Endpoint("POST", "/v1/sessions/{session_id}/flush", {"session_id": SEEDED}, {"user_id": USER}),
    Endpoint(
        "POST",
        "/v1/memories",
        body={
            "user_id": USER,
            "type": "semantic",
            "payload": {
                "subject": "ana",
                "attribute": "phone",
                "value": "+1 555 0100",
                "qualifiers": {"since": "2020"},
                "valid_from": "2026-01-01",
            },
            "expires_at": "2030-01-01T00:00:00Z",
        },
    ),
    Endpoint(
        "POST",
        "/v1/memories",
        body={
            "user_id": USER,
            "type": "episodic",
            "payload": {
                "title": "trip",
                "summary": "went to Porto",
                "occurred_at": "2026-04-02",
                "participants": ["bo"],
            },
        },
    ),
    Endpoint(
        "GET",
        "/v1/memories",
        query={"user_id": USER, "cursor": "2026-01-01T00:00:00+00:00", "limit": "5", "type": "semantic"},
    ),
    Endpoint("GET", "/v1/memories/{memory_id}", {"memory_id": SEEDED}, {"user_id": USER, "history": "true"}),
    Endpoint("DELETE", "/v1/memories/{memory_id}", {"memory_id": SEEDED}, {"user_id": USER}),
    Endpoint(
        "POST",
        "/v1/memories/search",
        body={
            "user_id": USER,
            "query": "phone",
            "top_k": 3,
            "min_score": 0.1,
            "types": ["semantic"],
            "mode": "bm25",
        },
    ),
    Endpoint(
        "POST",
        "/v1/recall",
        body={
            "user_id": USER,
            "query": "Porto",
            "thread": "s1",
            "scope": "thread",
            "top_k": 2,
            "message_range": {"before": 1, "after": 1},
            "exclude_recent": ["s1:1"],
        },
    ),
    Endpoint(
        "POST",
        "/v1/context",
        body={"user_id": USER, "session_id": "s1", "query": "city", "token_budget": 1000},
    ),
    Endpoint("GET", "/v1/working-memory", query={"user_id": USER, "scope": "resource", "if_none_match": "x"}),
    Endpoint(
        "PUT", "/v1/working-memory", query={"user_id": USER}, body={"content": "# User\n- city: Porto\n"}
    ),
    Endpoint(
        "PATCH", "/v1/working-memory", query={"user_id": USER}, body={"memory": "# User\n- city: Braga\n"}
    ),
    Endpoint("DELETE", "/v1/working-memory", query={"user_id": USER, "readOnly": "true"}),
    Endpoint("GET", "/v1/working-memory/tool", query={"user_id": USER, "delivery": "state"}),
    Endpoint(
        "POST",
        "/v1/threads",
        body={
            "user_id": USER,
            "thread_id": "fz-t",
            "title": "t",
            "metadata": {"k": "v", "workingMemory": "# T\n"},
        },
    ),
    Endpoint("GET", "/v1/threads/{thread_id}", {"thread_id": SEEDED}, {"user_id": USER}),
    Endpoint(
        "POST",
        "/v1/import",
        body={
            "user_id": USER,
            "format": "turns",
            "turns": [
                {
                    "session_id": "fz-import",
                    "role": "user",
                    "content": "I moved to Braga",
                    "timestamp": "2023-05-08T10:00:00Z",
                    "metadata": {"k": "v"},
                }
            ],
        },
    ),
    Endpoint(
        "POST",
        "/v1/import",
        body={
            "user_id": USER,
            "format": "jsonl",
            "data": '{"session_id": "fz-jsonl", "role": "user", "content": "hi", "timestamp": "2023-05-08T10:00:00Z"}\n',
        },
    ),
    # issue 22: the LoCoMo shape, the working-memory tool, org writes, feedback, metadata filters
    Endpoint(
        "POST",
        "/v1/import",
        body={
            "user_id": USER,
            "format": "locomo",
            "data": {
                "speaker_a": "Ana",
                "speaker_b": "Bo",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [{"speaker": "Ana", "text": "I moved to Braga", "dia_id": "D1:1"}],
            },
        },
    ),
    Endpoint(
        "POST", "/v1/working-memory/tool", query={"user_id": USER}, body={"memory": "# User\n- seat: aisle\n"}
    ),
    Endpoint(
        "POST",
        "/v1/memories",
        body={
            "user_id": USER,
            "type": "taxonomic",
            "visibility": "org",
            "payload": {"term": "SLO", "definition": "service level objective", "aliases": ["slo"]},
        },
    ),
    Endpoint(
        "POST",
        "/v1/memories/{memory_id}/feedback",
        {"memory_id": SEEDED},
        body={"user_id": USER, "outcome": "success", "used_at": "2026-01-01T00:00:00Z"},
    ),
    Endpoint("GET", "/v1/memories", query={"user_id": USER, "metadata": '{"region": "eu", "n": 1}'}),
    Endpoint("GET", "/v1/status"),
    Endpoint("GET", "/v1/users"),
    Endpoint("GET", "/v1/stats/memories", query={"user_id": USER, "days": "7"}),
    Endpoint("GET", "/v1/pipeline", query={"user_id": USER}),
    Endpoint("DELETE", "/v1/users/{user_id}", {"user_id": "fz-nobody"}),
    Endpoint("GET", "/v1/openapi.json"),
]

# query and path values a client can send: percent-encoded invalid UTF-8, NUL, operators, extremes
QUERY_VALUES = st.one_of(
    extreme_datetimes().map(urllib.parse.quote),
    st.integers(min_value=2**63, max_value=2**90).map(str),
    st.sampled_from(
        [
            "NaN",
            "Infinity",
            "-1",
            "1e400",
            "%ff",
            "%ed%a0%80",
            "%00",
            "%24where",
            "a.b",
            # dot-segments as ids (issue 33): refused with a 422, never stored
            ".",
            "..",
            "%2E",
            "%2E%2E",
            "%7B%22%24gt%22%3A1%7D",
            # JSON filter texts a caller can send (GET /v1/memories?metadata=): values no document holds
            "%7B%22k%22%3A%20Infinity%7D",
            "%7B%22k%22%3A%201e400%7D",
            "%7B%22k%22%3A%20%22%5Cud800%22%7D",
            "%7B%22k%22%3A%20" + "9" * 30 + "%7D",
            "%7B%22%5Cud800%22%3A%201%7D",
        ]
    ),
    st.integers(5_000, 30_000).map(lambda n: "x" * n),
)

FIGURES: dict[str, dict[str, int]] = {}


def paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a JSON value (containers and leaves), and one new key in every object."""
    yield at
    if isinstance(value, dict):
        yield (*at, "\u2063new")
        for key, inner in value.items():
            yield from paths(inner, (*at, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from paths(inner, (*at, i))


def with_marker(value: Any, at: tuple[Any, ...]) -> Any:
    if not at:
        return MARKER
    head, rest = at[0], at[1:]
    if isinstance(value, dict):
        out = dict(value)
        out[head] = with_marker(value.get(head), rest)
        return out
    out_list = list(value)
    out_list[head] = with_marker(value[head], rest)
    return out_list


def target(endpoint: Endpoint, params: dict[str, str], query: dict[str, str]) -> str:
    path = endpoint.path.format(**{k: urllib.parse.quote(v, safe="%") for k, v in params.items()})
    if not query:
        return path
    return path + "?" + "&".join(f"{k}={v}" for k, v in query.items())


def requests_for(endpoint: Endpoint) -> st.SearchStrategy[tuple[str, str, bytes | None]]:
    """(kind, target, body) with one hostile thing in it."""
    plain = target(endpoint, endpoint.params, {k: urllib.parse.quote(v) for k, v in endpoint.query.items()})
    options: list[st.SearchStrategy[tuple[str, str, bytes | None]]] = []
    if endpoint.body is not None:
        spots = list(paths(endpoint.body))
        text = json.dumps(endpoint.body)

        def inject(spot: tuple[Any, ...], fragment: str) -> tuple[str, str, bytes | None]:
            raw = json.dumps(with_marker(endpoint.body, spot), ensure_ascii=False)
            return (
                "value in body",
                plain,
                raw.replace(json.dumps(MARKER, ensure_ascii=False), fragment).encode(),
            )

        options.append(st.builds(inject, st.sampled_from(spots), hostile_fragments()))
        options.append(hostile_bodies(text.encode()).map(lambda raw: ("whole body", plain, raw)))
    else:
        # a body where none is expected is read (and refused) the same way
        options.append(
            hostile_fragments().map(lambda f: ("unexpected body", plain, f'{{"x": {f}}}'.encode()))
        )
    names = list(endpoint.query) + [f"path:{k}" for k in endpoint.params]
    if names:

        def in_url(name: str, value: str) -> tuple[str, str, bytes | None]:
            params, query = (
                dict(endpoint.params),
                {k: urllib.parse.quote(v) for k, v in endpoint.query.items()},
            )
            if name.startswith("path:"):
                params[name[5:]] = value
            else:
                query[name] = value
            body = json.dumps(endpoint.body).encode() if endpoint.body is not None else None
            return "url parameter", target(endpoint, params, query), body

        options.append(st.builds(in_url, st.sampled_from(names), QUERY_VALUES))
    return st.one_of(options)


@pytest.fixture
def world(make_settings: Any, tmp_path: Path) -> Iterator[tuple[Gateway, Services, dict[str, str]]]:
    svc = hostile_services(make_settings, tmp_path)
    configure(svc)
    gw = Gateway()
    ids = gw.seed()
    yield gw, svc, ids
    configure(None)
    svc.database.drop()


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[f"{e.label}#{i}" for i, e in enumerate(ENDPOINTS)])
def test_hostile_values_never_5xx_and_a_refusal_changes_nothing(
    world: tuple[Gateway, Services, dict[str, str]], endpoint: Endpoint
) -> None:
    gw, svc, ids = world
    endpoint = replace(endpoint, params={k: ids[k] if v == SEEDED else v for k, v in endpoint.params.items()})
    figures = FIGURES.setdefault(endpoint.label, {"examples": 0, "refused": 0, "accepted": 0})
    state = {"print": fingerprint(svc)}  # the database as the last answered request left it

    @settings(
        max_examples=EXAMPLES_PER_ENDPOINT,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(request=requests_for(endpoint))
    def run(request: tuple[str, str, bytes | None]) -> None:
        kind, url, body = request
        status, answer = gw.call(endpoint.method, url, body)
        after = fingerprint(svc)
        figures["examples"] += 1
        shown = (body or b"")[:200]
        assert status < 500, (
            f"{endpoint.label} ({kind}) answered {status}: {answer}; url {url[:200]} body {shown!r}"
        )
        if status >= 400:
            figures["refused"] += 1
            assert set(answer["error"]) == {"code", "message", "details"}, answer
            assert after == state["print"], f"{endpoint.label} ({kind}): a {status} changed the database"
        else:
            figures["accepted"] += 1
            state["print"] = after

    run()
    assert figures["examples"] >= EXAMPLES_PER_ENDPOINT


def test_zz_fuzz_figures() -> None:
    total = sum(f["examples"] for f in FIGURES.values())
    print(
        f"\nhostile fuzz: {total} examples over {len(FIGURES)} endpoints, 0 5xx, 0 refusals that wrote anything"
    )
    for label, f in FIGURES.items():
        print(
            f"  {label:<40} {f['examples']:>4} examples, {f['refused']:>4} refused, {f['accepted']:>3} accepted"
        )
    assert len(FIGURES) == len({e.label for e in ENDPOINTS})
