"""POST /v1/context with `sources` through the memory_api handler: each source (turns, working memory, one
memory kind - a custom type too - or all of them) with its own mode, top_k, min_score and metadata filter;
formats text, markdown, openai and anthropic, always inside mongomem's marker, within max_tokens; the
response says per source what was chosen and why the rest was dropped, and how long each stage took."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from mongomem import markers
from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.retrieval.block.items import MARKER_TOKENS
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from tests.conftest import load_function
from tests.integration.test_context import CURRENT, OLD, START, memory_api_call
from tests.integration.test_recall import record, scan

TICKET = {
    "name": "ticket",
    "schema": {
        "type": "object",
        "properties": {"ticket_id": {"type": "string"}, "summary": {"type": "string"}},
        "required": ["ticket_id", "summary"],
    },
    "match_key": ["ticket_id"],
    "prompt": "Extract TICKETS only.",
}


class SlowIndex:
    """The embedded index, each search taking a while and noting when it ran (to see sources overlap)."""

    def __init__(self, inner: EmbeddedIndex) -> None:
        self.inner = inner
        self.searches: list[tuple[float, float]] = []
        self.lock = threading.Lock()

    def search(self, query: Any) -> Any:
        started = time.monotonic()
        time.sleep(0.2)
        try:
            return self.inner.search(query)
        finally:
            with self.lock:
                self.searches.append((started, time.monotonic()))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


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
def index(tmp_path: Path) -> SlowIndex:
    return SlowIndex(EmbeddedIndex(tmp_path / "vectors"))


@pytest.fixture
def history(
    make_settings: Any, index: SlowIndex, api: Any, record_fn: Any, scan_fn: Any, ctx: Any
) -> Iterator[Services]:
    cfg = parse_project_config({"memory": {"extraction": {"enabled": []}, "custom_types": [TICKET]}})
    svc = Services(
        make_settings(project=cfg, enabled_extractions=[]),
        embedder=HashingEmbedder(dim=256),
        vector_index=index,
        queue_factory=local_queue_factory,
    )
    configure(svc)
    for session, turns, start in (("old", OLD, START), ("now", CURRENT, START + timedelta(days=30))):
        body = [
            {
                "role": r,
                "content": c,
                "timestamp": (start + timedelta(minutes=i)).isoformat(),
                "metadata": {"channel": "web" if i % 2 else "app"},
            }
            for i, (r, c) in enumerate(turns)
        ]
        record(record_fn, ctx, "ana", session, body)
    scan(scan_fn, ctx)
    memory_api_call(api, ctx, "PUT", "/v1/working-memory", {"content": "# User\n- Name: Ana"}, "user_id=ana")
    for type_, payload in (
        ("semantic", {"subject": "user", "attribute": "preferred seat", "value": "aisle seat on flights"}),
        (
            "semantic",
            {"subject": "user", "attribute": "allergy", "value": "peanuts, no peanut snacks on flights"},
        ),
        ("ticket", {"ticket_id": "TRV-9", "summary": "Book the Berlin flight with an aisle seat"}),
    ):
        status, body = memory_api_call(
            api, ctx, "POST", "/v1/memories", {"user_id": "ana", "type": type_, "payload": payload}
        )
        assert status in (200, 201), body
    index.searches.clear()
    yield svc
    configure(None)
    svc.database.drop()


def context(api: Any, ctx: Any, status: int = 200, **body: Any) -> Any:
    got, result = memory_api_call(
        api, ctx, "POST", "/v1/context", {"user_id": "ana", "session_id": "now", **body}
    )
    assert got == status, result
    return result


SOURCES = [
    {"source": "working_memory"},
    {"source": "turns", "mode": "text", "top_k": 3},
    {"source": "semantic", "mode": "hybrid", "top_k": 2, "filter": {"attribute": "allergy"}},
    {"source": "ticket", "mode": "semantic", "top_k": 1},
    {"source": "turns", "mode": "semantic", "top_k": 2},
]


def test_each_source_gives_its_items_and_says_why_others_were_dropped(
    history: Services, index: SlowIndex, api: Any, ctx: Any
) -> None:
    result = context(
        api, ctx, query="seat and snacks for the flight", sources=SOURCES, max_tokens=4000, format="markdown"
    )
    reports = {(r["source"], r["mode"]): r for r in result["sources"]}
    assert [s["name"] for s in result["sections"]] == [
        "working_memory",
        "turns",
        "semantic",
        "ticket",
        "recalled",
    ]
    # the filter keeps the allergy fact and says the seat fact was dropped by it
    semantic = reports[("semantic", "hybrid")]
    assert semantic["chosen"] == 1 and semantic["dropped"]["filter"] >= 1 and semantic["found"] >= 2
    assert "peanuts" in result["context"]
    # the custom type is a source like any kind
    assert reports[("ticket", "semantic")]["chosen"] == 1 and "TRV-9" in result["context"]
    # recent turns are the session's latest; recall never repeats them
    recent = reports[("turns", "text")]["ids"]
    assert recent == ["now:11", "now:12", "now:13"]
    recalled = reports[("turns", "semantic")]["ids"]
    assert recalled and not set(recalled) & set(recent) and all(i.startswith("old:") for i in recalled)
    # markdown, inside the marker, within the budget; the timing of every stage
    assert re.match(
        r'<mongomem-memory source="context" token="(\w+)">\n\[mongomem-memory source=context token=\1: [^\]\n]*\]'
        r"\n# Context\n\n## Working memory",
        result["context"],
    ), result["context"][:300]
    assert markers.strip(result["context"])[0] == ""
    assert result["tokens"] <= 4000 and result["token_budget"] == 4000
    assert set(result["timings_ms"]) == {"fetch", "fit", "render", "total"}
    assert all(r["ms"] >= 0 for r in result["sources"])
    # the three ranked sources (semantic, ticket, recall) searched the index at the same time: each one's
    # first search started before any search had ended (recall then runs its other rankings)
    spans = sorted(index.searches)
    assert len(spans) >= 3 and spans[2][0] < min(e for _, e in spans)


def test_the_budget_drops_the_last_sources_first_and_counts_it(history: Services, api: Any, ctx: Any) -> None:
    sources = [
        {"source": "working_memory"},
        {"source": "turns", "mode": "text", "top_k": 13},
        {"source": "memories", "top_k": 5},
    ]
    budget = MARKER_TOKENS + 274  # 274 tokens of content: every source found fits only in part
    result = context(api, ctx, query="flight seat", sources=sources, max_tokens=budget)
    reports = {r["source"]: r for r in result["sources"]}
    assert result["tokens"] <= budget
    assert reports["working_memory"]["chosen"] == 1 and reports["working_memory"]["dropped"]["budget"] == 0
    # memories (last) went first, then the oldest recent turns
    assert (
        reports["memories"]["chosen"] == 0
        and reports["memories"]["dropped"]["budget"] == reports["memories"]["found"] > 0
    )
    turns = reports["turns"]
    assert turns["dropped"]["budget"] > 0 and turns["chosen"] + turns["dropped"]["budget"] == 13
    assert turns["ids"][-1] == "now:13"  # the newest turn stays


def test_min_score_and_turn_metadata_filters(history: Services, api: Any, ctx: Any) -> None:
    result = context(
        api,
        ctx,
        query="seat",
        sources=[
            {"source": "turns", "mode": "text", "top_k": 4, "filter": {"channel": "web"}},
            {"source": "semantic", "mode": "text", "top_k": 5, "min_score": 1000.0},
        ],
    )
    turns, semantic = result["sources"]
    assert turns["found"] == 4 and turns["chosen"] == 2 and turns["dropped"]["filter"] == 2
    assert semantic["chosen"] == 0 and semantic["dropped"]["score"] == semantic["found"] > 0


@pytest.mark.parametrize("with_sources", [True, False])
def test_openai_and_anthropic_formats(history: Services, api: Any, ctx: Any, with_sources: bool) -> None:
    extra: dict[str, Any] = {"sources": SOURCES[:3]} if with_sources else {}
    openai = context(api, ctx, query="seat", format="openai", **extra)
    assert openai["format"] == "openai" and openai["messages"] == [
        {"role": "system", "content": openai["context"]}
    ]
    anthropic = context(api, ctx, query="seat", format="anthropic", **extra)
    blocks = anthropic["system"]
    assert len(blocks) == len([s for s in anthropic["sections"] if s["ids"]]) >= 2
    assert all(
        b["type"] == "text" and b["text"].startswith('<mongomem-memory source="context" token=')
        for b in blocks
    )
    assert "## Working memory" in blocks[0]["text"]


def test_bad_sources_are_refused(history: Services, api: Any, ctx: Any) -> None:
    unknown = context(api, ctx, 422, sources=[{"source": "tickets"}])
    assert "tickets" in unknown["error"]["message"] and "ticket" in unknown["error"]["details"]["allowed"]
    context(api, ctx, 422, sources=[{"source": "semantic", "mode": "vector"}])
    context(api, ctx, 422, sources=[{"source": "semantic", "top_k": 0}])
    both = context(api, ctx, 422, max_tokens=500, token_budget=600)
    assert "max_tokens and token_budget" in str(both["error"])


@pytest.mark.parametrize("with_sources", [True, False])
def test_named_sources_apply_the_filters_the_default_block_applies(
    history: Services, api: Any, ctx: Any, with_sources: bool
) -> None:
    """`sources` changes priorities and limits, never which filters apply: the agent's view, the
    relevance floor and the "not yet" figures hold whether the request names its sources or not."""
    # Given a memory another agent of the user keeps for itself
    status, body = memory_api_call(
        api,
        ctx,
        "POST",
        "/v1/memories",
        {
            "user_id": "ana",
            "type": "semantic",
            "agent_id": "bot-b",
            "payload": {"subject": "user", "attribute": "seat on trains", "value": "window seat on trains"},
        },
    )
    assert status in (200, 201), body
    extra: dict[str, Any] = {"sources": [{"source": "memories", "top_k": 10}]} if with_sources else {}
    # When agent bot-a asks for its context about seats
    mine = context(api, ctx, query="which seat on flights and trains", agent_id="bot-a", **extra)
    # Then bot-b's own memory is not in it, the shared ones are
    assert "window seat on trains" not in mine["context"] and "aisle seat" in mine["context"]
    # ... and the block says what is not yet extracted or indexed
    assert mine["pending"] is not None
    # When the query shares no word and little meaning with any memory
    off = context(api, ctx, query="quantum chromodynamics lecture", **extra)
    # Then no memory fills the block, and the response says they were below the floor
    assert not off["ids"].get("memories") and off["left_out"]["below_floor"] > 0
