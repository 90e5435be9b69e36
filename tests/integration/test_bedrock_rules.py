"""Bedrock Converse's documented limits and prompt-cache semantics, as the twin's stand-in enforces them
(docs/aws-rules.md, "Bedrock Runtime"), and the provider and the extraction fan-out living within them.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import botocore.session
import pytest

from mongomem.extraction.proposal import TurnView
from mongomem.extraction.proposers import LLMProposer
from mongomem.kinds import builtin_registry
from mongomem.providers.llm_bedrock import BedrockLLM

NOVA = "global.amazon.nova-2-lite-v1:0"
HAIKU_45 = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
KINDS = builtin_registry()


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


def turns(n: int) -> list[TurnView]:
    start = datetime(2026, 3, 1, 9, tzinfo=UTC)
    lines = [
        "I moved to Lisbon last spring and my home airport is LIS now; book the window seat please.",
        "Noted: Lisbon, LIS as your home airport, and a window seat on the 9am flight to Porto.",
    ]
    return [
        TurnView(i + 1, ("user", "assistant")[i % 2], lines[i % 2], start + timedelta(minutes=i))
        for i in range(n)
    ]


def raw_converse(bedrock: Any, **changes: Any) -> tuple[int, dict[str, Any]]:
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": [{"text": "hi"}]}],
        "inferenceConfig": {"maxTokens": 100, "temperature": 0.0},
        "toolConfig": {
            "tools": [{"toolSpec": {"name": "answer", "inputSchema": {"json": {"type": "object"}}}}],
            "toolChoice": {"tool": {"name": "answer"}},
        },
    }
    for path, value in changes.items():
        target = body
        keys = path.split(".")
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    result: tuple[int, dict[str, Any]] = bedrock.converse(NOVA, copy.deepcopy(body))
    return result


def test_converse_refuses_what_its_api_reference_refuses(bedrock: Any) -> None:
    assert raw_converse(bedrock)[0] == 200
    assert "between 0 and 1" in raw_converse(bedrock, **{"inferenceConfig.temperature": 1.5})[1]["message"]
    bad_name = [{"toolSpec": {"name": "memories of user", "inputSchema": {"json": {}}}}]
    status, body = raw_converse(
        bedrock, **{"toolConfig.tools": bad_name, "toolConfig.toolChoice": {"any": {}}}
    )
    assert status == 400 and "[a-zA-Z0-9_-]" in body["message"]
    long_name = [{"toolSpec": {"name": "x" * 65, "inputSchema": {"json": {}}}}]
    assert (
        raw_converse(bedrock, **{"toolConfig.tools": long_name, "toolConfig.toolChoice": {"any": {}}})[0]
        == 400
    )
    assert (
        "not one of the tools"
        in raw_converse(bedrock, **{"toolConfig.toolChoice": {"tool": {"name": "other"}}})[1]["message"]
    )
    points = [{"text": "a"}, *([{"cachePoint": {"type": "default"}}] * 5)]
    assert "at most 4" in raw_converse(bedrock, messages=[{"role": "user", "content": points}])[1]["message"]


def test_the_configuration_refuses_a_temperature_converse_would_refuse() -> None:
    from mongomem.config import ConfigError, parse_project_config

    with pytest.raises(ConfigError, match="above 1"):
        parse_project_config(
            {"memory": {"providers": {"llm": {"kind": "bedrock", "model": NOVA, "temperature": 1.2}}}}
        )
    # the OpenAI-compatible servers take up to 2
    parse_project_config(
        {"memory": {"providers": {"llm": {"kind": "openai-compatible", "model": "m", "temperature": 1.2}}}}
    )


def test_a_prefix_below_the_models_minimum_is_not_cached(bedrock: Any) -> None:
    # Claude Haiku 4.5 caches prefixes of 4,096 tokens and more; this snapshot's is about 2,500
    proposer = LLMProposer(BedrockLLM(HAIKU_45, region="eu-west-1"), KINDS)
    for name in ("semantic", "episodic"):
        proposer.propose(KINDS[name], turns(40), "ana", siblings=KINDS.names())
    usage = [c["usage"] for c in bedrock.converses()]
    assert [(u["cacheReadInputTokens"], u["cacheWriteInputTokens"]) for u in usage] == [(0, 0), (0, 0)]
    # while a longer snapshot's prefix is written once and read back
    bedrock.reset()
    for name in ("semantic", "episodic"):
        proposer.propose(KINDS[name], turns(120), "ana", siblings=KINDS.names())
    first, second = (c["usage"] for c in bedrock.converses())
    assert (
        first["cacheWriteInputTokens"] > 4096
        and second["cacheReadInputTokens"] == first["cacheWriteInputTokens"]
    )


def test_an_entry_is_readable_only_after_its_writing_call_completed_and_for_five_minutes(
    bedrock: Any,
) -> None:
    proposer = LLMProposer(BedrockLLM(NOVA, region="eu-west-1"), KINDS)
    names = KINDS.names()
    bedrock.delay_seconds = 0.5
    # When the kinds of one snapshot call at once (five queues delivering together)
    threads = [
        threading.Thread(
            target=proposer.propose, args=(KINDS[n], turns(60), "ana"), kwargs={"siblings": names}
        )
        for n in names
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Then none reads the cache: each started before any writer completed, and each paid for writing
    concurrent = [c["usage"] for c in bedrock.converses()]
    assert all(u["cacheReadInputTokens"] == 0 and u["cacheWriteInputTokens"] > 1000 for u in concurrent)
    # When they call one after another, every call after the first reads the whole shared prefix
    bedrock.reset()
    bedrock.delay_seconds = 0.05
    for n in names:
        proposer.propose(KINDS[n], turns(60), "ana", siblings=names)
    first, *others = (c["usage"] for c in bedrock.converses())
    assert first["cacheWriteInputTokens"] > 1000
    assert all(u["cacheReadInputTokens"] == first["cacheWriteInputTokens"] for u in others)
    # and five minutes after its last use the entry is gone
    now = bedrock.clock()
    bedrock.clock = lambda: now + 301
    proposer.propose(KINDS["semantic"], turns(60), "ana", siblings=names)
    assert bedrock.converses()[-1]["usage"]["cacheReadInputTokens"] == 0


def sdk_without_cache_points(tmp_path: Path) -> Path:
    """A botocore data folder whose bedrock-runtime model predates Converse's cachePoint (an old SDK)."""
    loader = botocore.session.Session().get_component("data_loader")
    model = loader.load_service_model("bedrock-runtime", "service-2")
    for shape in model["shapes"].values():
        shape.get("members", {}).pop("cachePoint", None)
    target = tmp_path / "bedrock-runtime" / model["metadata"]["apiVersion"]
    target.mkdir(parents=True)
    (target / "service-2.json").write_text(json.dumps(model))
    for name in ("endpoint-rule-set-1", "paginators-1"):
        try:
            (target / f"{name}.json").write_text(
                json.dumps(loader.load_service_model("bedrock-runtime", name))
            )
        except Exception:
            pass  # optional in the model folder
    return tmp_path


def test_an_sdk_without_cache_points_falls_back_instead_of_failing_every_call(
    bedrock: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the runtime's older botocore, which refuses a cachePoint block before sending anything
    monkeypatch.setenv("AWS_DATA_PATH", str(sdk_without_cache_points(tmp_path)))
    session = botocore.session.Session()
    client = session.create_client("bedrock-runtime", region_name="eu-west-1", endpoint_url=bedrock.url)
    from botocore.exceptions import ParamValidationError

    with pytest.raises(ParamValidationError, match="cachePoint"):
        client.converse(
            modelId=NOVA, messages=[{"role": "user", "content": [{"cachePoint": {"type": "default"}}]}]
        )
    llm = BedrockLLM(NOVA, client=client)
    proposer = LLMProposer(llm, KINDS)
    # When two kinds are extracted, Then both calls are sent, without cache points (remembered)
    for name in ("semantic", "episodic"):
        assert proposer.propose(KINDS[name], turns(60), "ana", siblings=KINDS.names()).items == []
    sent = [c["body"] for c in bedrock.converses()]
    assert len(sent) == 2 and all("cachePoint" not in json.dumps(b) for b in sent)
