"""Recording a turn answers the same through the record fast path as through Powertools' resolver.

The record function serves POST /v1/sessions/{id}/turns without the resolver (mongomem.api.sessions
.fast_record); every request it is not sure of goes to the resolver. Each case here is sent to an API with
the fast path and to one without, on sessions of their own: status, headers and body must be the same.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from mongomem.api.app import MemoryApi
from mongomem.api.sessions import fast_record, routes
from tests.conftest import load_event

TURN = {"role": "user", "content": "I'd like a window seat on the 9am flight. 日本語 ok"}
BATCH = {"turns": [TURN, {"role": "assistant", "content": "Noted."}], "client_token": "tok-1"}


def event(
    session: str, body: Any, query: dict[str, str] | None = None, raw: str | None = None
) -> dict[str, Any]:
    e = load_event("record_turn_single.json")
    e["rawPath"] = e["requestContext"]["http"]["path"] = f"/v1/sessions/{session}/turns"
    e["body"] = raw if raw is not None else json.dumps(body)
    if query:
        e["queryStringParameters"] = query
        e["rawQueryString"] = "&".join(f"{k}={v}" for k, v in query.items())
    return e


def normalized(response: dict[str, Any], session: str) -> dict[str, Any]:
    text = json.dumps(response).replace(session, "SESSION")
    return dict(json.loads(text))


CASES: dict[str, tuple[Any, dict[str, str] | None, str | None]] = {
    "one turn": ({"user_id": "ann", **TURN}, None, None),
    "a batch with a token": ({"user_id": "ann", **BATCH}, None, None),
    "user in the query": (TURN, {"user_id": "bob"}, None),
    "no user": (TURN, None, None),
    "a bad user id": (TURN, {"user_id": "not ok!"}, None),
    "an unknown field": ({"user_id": "ann", **TURN, "colour": "red"}, None, None),
    "a bad role": ({"user_id": "ann", "role": "robot", "content": "x"}, None, None),
    "no body": (None, None, ""),
    "not JSON": (None, None, "{"),
    "a number too big": (None, None, '{"user_id": "ann", "role": "user", "content": "x", "n": 1e999}'),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_fast_path_answers_as_the_resolver(case: str, services: Any, ctx: Any) -> None:
    body, query, raw = CASES[case]
    answers = []
    for api in (MemoryApi[Any](routes), MemoryApi[Any](routes, fast=(fast_record,))):
        session = f"fp-{uuid.uuid4().hex[:12]}"
        answers.append(normalized(api.handle(event(session, body, query, raw), ctx, services), session))
    assert answers[0] == answers[1]


def test_a_retry_answers_200_with_the_original_seqs_on_both_paths(services: Any, ctx: Any) -> None:
    session = f"fp-{uuid.uuid4().hex[:12]}"
    first = MemoryApi[Any](routes).handle(event(session, {"user_id": "ann", **BATCH}), ctx, services)
    again = MemoryApi[Any](routes, fast=(fast_record,)).handle(
        event(session, {"user_id": "ann", **BATCH}), ctx, services
    )
    assert (first["statusCode"], again["statusCode"]) == (201, 200)
    assert json.loads(again["body"])["turns"] == json.loads(first["body"])["turns"]
    assert json.loads(again["body"])["replayed"] is True
