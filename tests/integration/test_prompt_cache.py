"""Every kind's extraction call for one snapshot reads the snapshot's transcript from Bedrock's prompt cache.

Bedrock Converse over its real wire format (the twin's Bedrock Runtime stand-in, which keys a cache
point by everything before it: tool definitions, system text, earlier message blocks, toolChoice).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mongomem.extraction.proposal import TurnView
from mongomem.extraction.proposers import LLMProposer
from mongomem.kinds import builtin_registry

MODEL = "global.amazon.nova-2-lite-v1:0"


@pytest.fixture
def bedrock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from twin.bedrock import BedrockStandIn

    from mongomem.providers import llm_bedrock

    llm_bedrock._clients.clear()  # clients remember the endpoint they were made for
    stand_in = BedrockStandIn().start()
    for key, value in {
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": stand_in.url,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_REGION": "eu-west-1",
    }.items():
        monkeypatch.setenv(key, value)
    yield stand_in
    stand_in.stop()


def snapshot(turns: int) -> list[TurnView]:
    start = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    lines = [
        "I moved to Lisbon last spring and my home airport is LIS now; book the window seat please.",
        "Noted: Lisbon, LIS as your home airport, and a window seat on the 9am flight to Porto.",
    ]
    return [
        TurnView(i + 1, "user" if i % 2 == 0 else "assistant", lines[i % 2], start + timedelta(minutes=i))
        for i in range(turns)
    ]


def test_the_kinds_of_one_snapshot_share_one_cached_prefix(bedrock: Any) -> None:
    from mongomem.providers.llm_bedrock import BedrockLLM

    kinds = builtin_registry()
    proposer = LLMProposer(BedrockLLM(MODEL, region="eu-west-1"), kinds)
    turns = snapshot(60)  # about 1,800 transcript tokens: above Nova's 1,000-token cache minimum
    # When every built-in kind is extracted from the same snapshot, one call after another
    names = kinds.names()
    for name in names:
        proposer.propose(kinds[name], turns, "user-7", siblings=names)
    calls = bedrock.converses()
    # each call names its kind's answer tool, whose schema is the kind's item model, among every kind's tools
    assert [c["tool"] for c in calls] == [f"{n}_memories" for n in names]
    for call in calls:
        offered = {
            t["toolSpec"]["name"]: t["toolSpec"]["inputSchema"]["json"]
            for t in call["body"]["toolConfig"]["tools"]
        }
        assert list(offered) == [f"{n}_memories" for n in names]
        item = offered[call["tool"]]["properties"]["items"]["items"]
        assert set(item["required"]) <= set(item["properties"]) and item["required"]
    first, *others = calls
    # Then the first call writes the shared prefix (tools, instructions, transcript) to the cache
    assert first["usage"]["cacheWriteInputTokens"] > 1500
    assert first["usage"]["cacheReadInputTokens"] == 0
    # and every other kind reads all of it back, paying the full input price only for its own part
    for call in others:
        assert call["usage"]["cacheReadInputTokens"] == first["usage"]["cacheWriteInputTokens"]
        assert call["usage"]["cacheWriteInputTokens"] == 0
        assert call["usage"]["inputTokens"] < 500
