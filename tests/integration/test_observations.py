"""Observational memory (ADR 0050) through the functions, on SecantusDB: a snapshot's extraction writes the
user's dated observations (offline rules here); POST /v1/context with the source `observations` opens the
block with them, byte-identical from call to call until the log changes; the reflector keeps the log within
`memory.observations.max_tokens`; `as_of` hides what was said later; erasure removes the log; no other
user or tenant ever reads it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mongomem.config import parse_project_config
from mongomem.local.queue import LocalQueue, QueuePolicy, local_queue_factory
from mongomem.local.worker import drain_all
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.runtime import Services
from mongomem.tokens import estimate_tokens
from mongomem.vectors.embedded import EmbeddedIndex
from tests import helpers
from tests.conftest import load_function
from tests.helpers import EXTRACT_QUEUES

DAY1 = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
DAY2 = DAY1 + timedelta(days=3)
OBSERVATIONS = [{"source": "observations"}, {"source": "turns", "mode": "text", "top_k": 4}]


@pytest.fixture(scope="module")
def fns() -> dict[str, Any]:
    return {name: load_function(name) for name in ("record_turns", "memory_api", "extract")}


def stack(make_settings: Any, tmp_path: Path, **observations: Any) -> Services:
    memory: dict[str, Any] = {"extraction": {"enabled": ["semantic"]}}
    if observations:
        memory["observations"] = observations
    cfg = parse_project_config({"memory": memory})
    return Services(
        make_settings(project=cfg, enabled_extractions=["semantic"]),
        embedder=HashingEmbedder(dim=64),
        vector_index=EmbeddedIndex(tmp_path / "v"),
        queue_factory=local_queue_factory,
    )


@pytest.fixture
def svc(make_settings: Any, tmp_path: Path) -> Iterator[Services]:
    with helpers.installed(stack(make_settings, tmp_path)) as services:
        yield services


def call(
    fns: dict[str, Any], ctx: Any, method: str, target: str, body: Any = None, tenant: str = "default"
) -> Any:
    fn = fns["record_turns"] if target.startswith("/v1/sessions") else fns["memory_api"]
    return helpers.invoke(fn, ctx, helpers.http_event(method, target, body, tenant))


def converse(
    fns: dict[str, Any],
    ctx: Any,
    svc: Services,
    user: str,
    session: str,
    said: list[str],
    start: datetime,
    tenant: str = "default",
) -> None:
    """`said` by the user (each answered), then the session flushed and its snapshot extracted."""
    turns = []
    for i, text in enumerate(said):
        at = start + timedelta(minutes=2 * i)
        turns += [
            {"role": "user", "content": text, "timestamp": at.isoformat()},
            {
                "role": "assistant",
                "content": "Good to know.",
                "timestamp": (at + timedelta(minutes=1)).isoformat(),
            },
        ]
    target = f"/v1/sessions/{session}/turns"
    assert call(fns, ctx, "POST", target, {"user_id": user, "turns": turns}, tenant)[0] == 201
    assert call(fns, ctx, "POST", f"/v1/sessions/{session}/flush?user_id={user}", None, tenant)[0] == 200
    policy = QueuePolicy(visibility_timeout=0.0, max_receive_count=3)
    drain_all(LocalQueue(svc.db), EXTRACT_QUEUES, fns["extract"].lambda_handler, policy)


def context(
    fns: dict[str, Any], ctx: Any, user: str, session: str, tenant: str = "default", **extra: Any
) -> dict[str, Any]:
    body = {
        "user_id": user,
        "session_id": session,
        "query": "what do I do?",
        "sources": OBSERVATIONS,
        **extra,
    }
    status, result = call(fns, ctx, "POST", "/v1/context", body, tenant)
    assert status == 200, result
    return dict(result)


def observed(result: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in result["sections"] if s["name"] == "observations")


def test_the_block_opens_with_the_observations_once_a_snapshot_is_extracted(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given nothing observed yet: the source says so, and the block has no observations
    before = context(fns, ctx, "ana", "s1")
    assert observed(before)["text"] == "" and observed(before)["note"] == "nothing observed yet"
    # When a session is recorded, flushed and extracted
    converse(fns, ctx, svc, "ana", "s1", ["I adopted a cat named Luna yesterday.", "What time is it?"], DAY1)
    # Then the block opens with the dated observation (its relative date resolved), not the question
    result = context(fns, ctx, "ana", "s1")
    section = observed(result)
    assert section["text"] == "8 May 2023:\n- User: I adopted a cat named Luna yesterday [7 May 2023]."
    assert result["context"].split("\n")[2] == "## Observations"
    assert result["sections"][0]["name"] == "observations" and section["version"] == 1
    assert result["sources"][0]["source"] == "observations" and result["sources"][0]["version"] == 1


def test_the_block_is_byte_identical_until_the_log_changes(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    converse(
        fns, ctx, svc, "ana", "s1", ["I work as a nurse in Porto.", "My sister Eva lives in Lyon."], DAY1
    )
    # When the agent asks for its context twice, with a new turn recorded between the calls
    first = context(fns, ctx, "ana", "s1")
    turn = {"role": "user", "content": "Anything new?", "timestamp": (DAY1 + timedelta(hours=1)).isoformat()}
    assert call(fns, ctx, "POST", "/v1/sessions/s1/turns", {"user_id": "ana", "turns": [turn]})[0] == 201
    second = context(fns, ctx, "ana", "s1")
    # Then the observations (the block's prefix) are the same bytes and the same version
    head = first["context"].split("## Recent messages")[0]
    assert second["context"].startswith(head) and "Nurse" not in head and "nurse in Porto" in head
    assert observed(first) == observed(second)
    # When another snapshot is observed, the block and its version change
    converse(fns, ctx, svc, "ana", "s2", ["I started learning the cello."], DAY2)
    third = context(fns, ctx, "ana", "s2")
    assert observed(third)["version"] == observed(first)["version"] + 1
    assert observed(third)["text"].startswith(observed(first)["text"] + "\n11 May 2023:\n- User: I started")


def test_a_redelivered_snapshot_is_observed_once(svc: Services, fns: dict[str, Any], ctx: Any) -> None:
    converse(fns, ctx, svc, "ana", "s1", ["I moved to Berlin last month."], DAY1)
    version = observed(context(fns, ctx, "ana", "s1"))["version"]
    snapshot = svc.db["snapshots"].find_one({"user_id": "ana"})
    assert snapshot is not None and svc.observations is not None
    # When the snapshot's extraction runs again (an SQS redelivery), nothing is added
    assert svc.observations.observe(snapshot["_id"]) is None
    again = context(fns, ctx, "ana", "s1")
    assert observed(again)["version"] == version and observed(again)["text"].count("Berlin") == 1


def test_the_reflector_keeps_the_log_within_its_budget(
    make_settings: Any, tmp_path: Path, fns: dict[str, Any], ctx: Any
) -> None:
    with helpers.installed(stack(make_settings, tmp_path, max_tokens=120)) as svc:
        # Given five days of sessions, each saying more than the budget holds over the week
        for day in range(5):
            said = [
                f"I visited museum number {day}{n} with my friend Ada and loved the old paintings."
                for n in range(3)
            ]
            converse(fns, ctx, svc, "ana", f"s{day}", said, DAY1 + timedelta(days=day))
        # Then the log stays within 120 tokens, the newest day verbatim, the oldest merged or dropped
        text = observed(context(fns, ctx, "ana", "s4", token_budget=4000))["text"]
        assert estimate_tokens(text) <= 120
        assert text.endswith(
            "12 May 2023:\n- User: I visited museum number 40 with my friend Ada and loved the old paintings.\n"
            "- User: I visited museum number 41 with my friend Ada and loved the old paintings.\n"
            "- User: I visited museum number 42 with my friend Ada and loved the old paintings."
        )
        assert "8 May 2023" not in text


def test_as_of_hides_what_was_said_after_the_question(svc: Services, fns: dict[str, Any], ctx: Any) -> None:
    converse(fns, ctx, svc, "ana", "s1", ["I live in Porto with my parents."], DAY1)
    converse(fns, ctx, svc, "ana", "s2", ["I moved to Lisbon with my partner."], DAY2)
    asked = context(fns, ctx, "ana", "s2", as_of=(DAY1 + timedelta(days=1)).isoformat())
    text = observed(asked)["text"]
    assert "Porto" in text and "Lisbon" not in text
    # ... and a thread-scoped log holds this session's observations only
    sources = [{"source": "observations", "scope": "thread"}]
    only = observed(context(fns, ctx, "ana", "s2", sources=sources))["text"]
    assert "Lisbon" in only and "Porto" not in only


def test_another_user_or_tenant_never_reads_the_log(svc: Services, fns: dict[str, Any], ctx: Any) -> None:
    converse(fns, ctx, svc, "ana", "s1", ["My passport number ends in 4471, I keep it in my desk."], DAY1)
    converse(fns, ctx, svc, "bob", "s1", ["I play chess every Sunday with my uncle."], DAY1)
    bob = context(fns, ctx, "bob", "s1")
    other_tenant = context(fns, ctx, "ana", "s1", tenant="tenant-b")
    assert "4471" not in bob["context"] and "chess" in observed(bob)["text"]
    assert observed(other_tenant)["text"] == "" and "4471" not in other_tenant["context"]


def test_erasing_the_user_removes_the_log(svc: Services, fns: dict[str, Any], ctx: Any) -> None:
    converse(fns, ctx, svc, "user-7", "s1", ["I am allergic to penicillin, my doctor said."], DAY1)
    converse(fns, ctx, svc, "neighbour", "s1", ["I am allergic to pollen in spring."], DAY1)
    assert "penicillin" in observed(context(fns, ctx, "user-7", "s1"))["text"]
    # When the user is erased through the API
    status, result = call(fns, ctx, "DELETE", "/v1/users/user-7")
    assert status == 200, result
    # Then the log is gone (counted), the block has none, and the neighbour's log is kept
    assert result["erased"]["observations"] == 1
    assert svc.db["observations"].count_documents({"user_id": "user-7"}) == 0
    assert observed(context(fns, ctx, "user-7", "s1"))["text"] == ""
    assert "pollen" in observed(context(fns, ctx, "neighbour", "s1"))["text"]


def test_scope_on_another_source_is_a_clear_error(svc: Services, fns: dict[str, Any], ctx: Any) -> None:
    body = {"user_id": "ana", "session_id": "s1", "sources": [{"source": "memories", "scope": "thread"}]}
    status, result = call(fns, ctx, "POST", "/v1/context", body)
    assert status == 422 and "observations source" in str(result), result
