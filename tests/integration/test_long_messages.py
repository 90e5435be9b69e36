"""Long messages: turns up to limits.max_content_bytes (1 MiB by default) are recorded as they are,
recall embeds them in chunks and returns the whole message, and no answer outgrows Lambda's payload limit.

Through the record_turns, scan_sessions and memory_api handlers; SecantusDB and the embedded index, and
the shared OpenSearch node for the chunked documents.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.models.common import Scope
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from mongomem.vectors.opensearch import OpenSearchIndex
from tests import helpers
from tests.conftest import load_event, load_function

WORDS = "the of and to in is was for on with as by at from that this it are be or an".split()


def filler(chars: int, seed: int) -> str:
    """Text of common words (no word a query here asks for)."""
    rng = random.Random(seed)
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:chars]


def make(make_settings: Any, index: Any, **memory: Any) -> Services:
    project = parse_project_config({"memory": {"extraction": {"enabled": []}, **memory}})
    return Services(
        make_settings(project=project, enabled_extractions=[]),
        embedder=HashingEmbedder(dim=256),
        vector_index=index,
        queue_factory=local_queue_factory,
    )


# A project that searches long pastes whole raises the chunk cap (docs/recall.md "Long turns": by default a
# long turn is embedded by its head and tail, 16 chunks).
WHOLE = {"recall": {"max_chunks": 1024}}


@pytest.fixture
def svc(make_settings: Any, tmp_path: Path) -> Iterator[Services]:
    services = make(make_settings, EmbeddedIndex(tmp_path / "vectors"), **WHOLE)
    configure(services)
    yield services
    configure(None)
    services.database.drop()


@pytest.fixture(scope="module")
def fns() -> dict[str, Any]:
    return {name: load_function(name) for name in ("record_turns", "scan_sessions", "memory_api")}


def record(fns: dict[str, Any], ctx: Any, session: str, turns: list[dict[str, Any]]) -> tuple[int, Any]:
    body = {"user_id": "ana", "turns": turns}
    return helpers.call(
        fns["record_turns"],
        ctx,
        "record_turns_post.json",
        body,
        path=f"/v1/sessions/{session}/turns",
        path_parameters={"session_id": session},
    )


def scan(fns: dict[str, Any], ctx: Any) -> dict[str, Any]:
    result: dict[str, Any] = fns["scan_sessions"].lambda_handler(load_event("scan_schedule.json"), ctx)
    return result


def recall(fns: dict[str, Any], ctx: Any, query: str, **options: Any) -> dict[str, Any]:
    status, body = helpers.call(
        fns["memory_api"], ctx, "recall.json", {"user_id": "ana", "query": query, **options}
    )
    assert status == 200, body
    return dict(body)


def test_a_turn_up_to_a_mebibyte_is_recorded_whole_and_one_byte_more_is_refused(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    # Given a tool result just under the default limit (1 MiB of UTF-8), multi-byte characters included
    big = ("é" * 1000 + filler(1000, 1))[:2000] * 500
    big = big[: (1024 * 1024 - 4) // 2]
    assert len(big.encode("utf-8")) <= 1024 * 1024
    status, body = record(fns, ctx, "s1", [{"role": "tool", "content": big, "tool_call_id": "call-1"}])
    # Then it is stored exactly as sent
    assert status == 201, body
    assert svc.db["turns"].find_one({"session_id": "s1"})["content"] == big
    # A turn one byte over the limit is refused with the limit named, and nothing of its batch is stored
    over = "y" * (1024 * 1024 + 1)
    status, body = record(
        fns, ctx, "s2", [{"role": "user", "content": "hi"}, {"role": "user", "content": over}]
    )
    assert status == 413 and body["error"]["details"]["max_content_bytes"] == 1024 * 1024
    assert svc.db["turns"].count_documents({"session_id": "s2"}) == 0


def _long_turn_session(fns: dict[str, Any], ctx: Any) -> str:
    # a 300 000-character assistant answer whose only mention of the rare words is deep inside it
    long_text = filler(150_000, 2) + " the harbour crane manifest lists zinc ingots " + filler(150_000, 3)
    turns = [
        {"role": "user", "content": "Summarise the shipping log for me."},
        {"role": "assistant", "content": long_text},
        {"role": "user", "content": "Thanks, that helps."},
    ]
    status, body = record(fns, ctx, "log", turns)
    assert status == 201, body
    return long_text


def test_recall_finds_a_long_turn_by_words_deep_inside_and_returns_the_whole_message(
    svc: Services, fns: dict[str, Any], ctx: Any
) -> None:
    long_text = _long_turn_session(fns, ctx)
    # When the scan indexes it
    report = scan(fns, ctx)
    assert report["recall"]["turns"] == 3
    # Then the long turn is indexed in chunks (its own text), each a bounded document
    index = svc.vector_index
    assert isinstance(index, EmbeddedIndex)
    assert index.count(kind="turn") > 150 + 2 * 2  # ~2 000-character chunks of 300 000 characters
    # and recall by words found only in its middle returns it whole, once
    body = recall(fns, ctx, "harbour crane zinc ingots manifest", top_k=1, message_range=0)
    assert body["matched"] == ["log:2"]
    (turn,) = body["threads"][0]["turns"]
    assert turn["content"] == long_text


@pytest.mark.opensearch
def test_long_turns_are_chunked_on_opensearch_too(
    make_settings: Any, opensearch_node: Any, fns: dict[str, Any], ctx: Any
) -> None:
    index = OpenSearchIndex(
        opensearch_node.url, f"t-long-{uuid.uuid4().hex[:8]}", engine="lucene", refresh=True
    )
    services = make(make_settings, index, **WHOLE)
    configure(services)
    try:
        long_text = _long_turn_session(fns, ctx)
        scan(fns, ctx)
        body = recall(fns, ctx, "harbour crane zinc ingots manifest", top_k=1, message_range=0)
        assert body["matched"] == ["log:2"] and body["threads"][0]["turns"][0]["content"] == long_text
        # and deleting the thread takes every chunk out of the index
        assert index.count(kind="turn") > 150
        services.threads.delete(Scope(tenant="default", user_id="ana"), "log")
        assert index.count(kind="turn") == 0
    finally:
        configure(None)
        index.drop()
        services.database.drop()


def test_a_recall_answer_stays_within_the_response_budget(
    make_settings: Any, tmp_path: Path, fns: dict[str, Any], ctx: Any
) -> None:
    # Given a budget of 200 KiB per answer and three matching turns of 40 KiB each (each is in the answer
    # twice: as its turn and in the prompt text)
    services = make(make_settings, EmbeddedIndex(tmp_path / "v"), limits={"max_response_bytes": 200 * 1024})
    configure(services)
    try:
        turns = [
            {"role": "user", "content": f"pelican report {i} " + filler(40 * 1024, 10 + i)} for i in range(3)
        ]
        assert record(fns, ctx, "birds", turns)[0] == 201
        scan(fns, ctx)
        # When recall would return all three
        body = recall(fns, ctx, "pelican report", top_k=3, message_range=0)
        # Then the best two are returned whole, the third is left out and counted
        returned = [t for g in body["threads"] for t in g["turns"]]
        assert len(returned) == 2 and body["omitted"] == 1
        assert all(t["content"].startswith("pelican report") for t in returned)
        assert len(json.dumps(body).encode()) < 200 * 1024
        assert body["matched"] == [t["turn_id"] for t in sorted(returned, key=lambda t: t["rank"])]
    finally:
        configure(None)
        services.database.drop()


def test_a_page_of_long_turns_stays_within_the_response_budget_and_pages_on(
    make_settings: Any, tmp_path: Path, fns: dict[str, Any], ctx: Any
) -> None:
    # Given five turns of 300 KiB and a budget of 1 MiB per answer
    services = make(make_settings, None, limits={"max_response_bytes": 1024 * 1024})
    configure(services)
    try:
        turns = [
            {"role": "tool", "content": f"{i} " + filler(300 * 1024, i), "tool_call_id": f"c{i}"}
            for i in range(5)
        ]
        assert record(fns, ctx, "tools", turns)[0] == 201
        # When the session's turns are listed
        status, page = helpers.call(
            fns["record_turns"],
            ctx,
            "get_turns.json",
            path="/v1/sessions/tools/turns",
            path_parameters={"session_id": "tools"},
            query={"user_id": "ana", "limit": "20"},
        )
        # Then the newest three fit and the page says where to go on
        assert status == 200 and [t["seq"] for t in page["turns"]] == [3, 4, 5]
        assert page["next_before_seq"] == 3
        status, older = helpers.call(
            fns["record_turns"],
            ctx,
            "get_turns.json",
            path="/v1/sessions/tools/turns",
            path_parameters={"session_id": "tools"},
            query={"user_id": "ana", "limit": "20", "before_seq": "3"},
        )
        assert [t["seq"] for t in older["turns"]] == [1, 2] and older["next_before_seq"] is None
        assert all(len(t["content"]) > 300 * 1000 for t in page["turns"] + older["turns"])
    finally:
        configure(None)
        services.database.drop()
