"""Building providers from memory.providers config, and the readiness report the status endpoint shows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mongomem.config import ConfigError, EmbeddingProviderConfig, LLMProviderConfig, parse_project_config
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.providers.embed_bedrock import BedrockTitanEmbedder
from mongomem.providers.embed_local import LocalEmbedderProvider
from mongomem.providers.embed_openai import OpenAICompatibleEmbedder
from mongomem.providers.embed_voyage import VoyageEmbedder
from mongomem.providers.factory import embedder_from_config, llm_from_config, readiness
from mongomem.providers.llm_bedrock import BedrockLLM
from mongomem.providers.llm_openai import OpenAICompatibleLLM


def test_openai_llm_reads_the_key_from_the_named_variable() -> None:
    # Given a config naming the variable that holds the key
    cfg = LLMProviderConfig(
        kind="openai-compatible",
        model="gpt-4o-mini",
        api_key_env="TEAM_OPENAI_KEY",
        timeout_seconds=12,
        max_retries=5,
    )
    # When built with the variable set
    llm = llm_from_config(cfg, {"TEAM_OPENAI_KEY": "sk-abc"})
    # Then the provider holds the key value and the configured limits
    assert isinstance(llm, OpenAICompatibleLLM)
    assert (llm.api_key, llm.timeout, llm.policy.max_retries, llm.base_url) == (
        "sk-abc",
        12,
        5,
        "https://api.openai.com/v1",
    )
    assert llm.ready() == (True, "") and llm.name == "openai-compatible:gpt-4o-mini"


def test_missing_key_is_not_ready_and_names_the_variable() -> None:
    llm = llm_from_config(
        LLMProviderConfig(kind="openai-compatible", model="gpt-4o-mini", api_key_env="TEAM_OPENAI_KEY"), {}
    )
    report = readiness(llm, HashingEmbedder())
    assert report["ready"] is False
    assert report["llm"] == {
        "kind": "openai-compatible",
        "name": "openai-compatible:gpt-4o-mini",
        "offline": False,
        "ready": False,
        "reason": "API key missing: environment variable TEAM_OPENAI_KEY is not set",
    }
    assert report["reasons"] == ["llm: API key missing: environment variable TEAM_OPENAI_KEY is not set"]
    assert report["embeddings"] == {"model": "hashing-v1", "dim": 256, "ready": True, "reason": ""}


def test_official_openai_defaults_to_openai_api_key_and_a_local_server_needs_none() -> None:
    official = llm_from_config(LLMProviderConfig(kind="openai-compatible", model="gpt-4o-mini"), {})
    assert official.ready() == (False, "API key missing: environment variable OPENAI_API_KEY is not set")
    local = llm_from_config(
        LLMProviderConfig(kind="openai-compatible", model="llama3.1", base_url="http://127.0.0.1:11434/v1/"),
        {},
    )
    assert local.ready() == (True, "")
    assert isinstance(local, OpenAICompatibleLLM) and local.base_url == "http://127.0.0.1:11434/v1"


def test_bad_base_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"memory\.providers\.llm\.base_url: not an http"):
        llm_from_config(
            LLMProviderConfig(kind="openai-compatible", model="m", base_url="file:///etc/passwd"), {}
        )


def test_bedrock_llm_takes_region_from_config_or_the_function_environment() -> None:
    llm = llm_from_config(
        LLMProviderConfig(kind="bedrock", model="amazon.nova-lite-v1:0"), {"AWS_REGION": "eu-west-1"}
    )
    assert (
        isinstance(llm, BedrockLLM)
        and llm.region == "eu-west-1"
        and llm.name == "bedrock:amazon.nova-lite-v1:0"
    )
    pinned = llm_from_config(
        LLMProviderConfig(kind="bedrock", model="m", region="us-east-1"), {"AWS_REGION": "eu-west-1"}
    )
    assert isinstance(pinned, BedrockLLM) and pinned.region == "us-east-1"
    unset = llm_from_config(LLMProviderConfig(kind="bedrock"), {})
    assert unset.ready() == (False, "no Bedrock model id configured (memory.providers.llm.model)")


def test_scripted_llm_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({"semantic": ['{"items": []}']}))
    llm = llm_from_config(LLMProviderConfig(kind="scripted", script_file=str(path)), {})
    assert isinstance(llm, ScriptedLLM) and llm.remaining("semantic") == 1
    with pytest.raises(ConfigError, match="script_file"):
        llm_from_config(LLMProviderConfig(kind="scripted", script_file=str(tmp_path / "nope.json")), {})


def test_offline_llm_is_the_pattern_extractor() -> None:
    pytest.importorskip("mongomem.offline.rules")
    llm = llm_from_config(LLMProviderConfig(kind="offline"), {})
    report = readiness(llm, HashingEmbedder())
    assert report["llm"]["offline"] is True and report["llm"]["kind"] == "offline"


def test_the_proposer_follows_the_llms_declared_capabilities() -> None:
    from mongomem.extraction.proposers import LLMProposer
    from mongomem.kinds import builtin_registry
    from mongomem.offline.rules import RulesProposer
    from mongomem.providers.factory import RefusedLLM, proposer_for

    kinds = builtin_registry()
    # Given the offline setting: it declares it answers nothing, so extraction runs the offline rules
    offline = llm_from_config(LLMProviderConfig(kind="offline"), {})
    assert offline.capabilities == frozenset() and isinstance(proposer_for(offline, kinds), RulesProposer)
    # a provider that answers, even wrapped in the concurrency limit, is asked
    scripted = llm_from_config(LLMProviderConfig(kind="scripted", max_concurrency=2), {})
    assert "answers" in scripted.capabilities and isinstance(proposer_for(scripted, kinds), LLMProposer)
    # a refused provider is not the offline setting: extraction fails with its reason, never the rules
    refused = RefusedLLM("offline", "demo providers are off in this deployment")
    assert isinstance(proposer_for(refused, kinds), LLMProposer)


def test_embedders_from_config() -> None:
    env = {"AWS_REGION": "eu-west-1", "VOYAGE_API_KEY": "pa-1"}
    titan = embedder_from_config(EmbeddingProviderConfig(kind="bedrock-titan-v2", dim=512), env)
    assert isinstance(titan, BedrockTitanEmbedder) and (titan.model, titan.dim, titan.region) == (
        "amazon.titan-embed-text-v2:0",
        512,
        "eu-west-1",
    )
    voyage = embedder_from_config(EmbeddingProviderConfig(kind="voyage"), env)
    assert isinstance(voyage, VoyageEmbedder) and (voyage.model, voyage.dim, voyage.api_key) == (
        "voyage-3.5",
        1024,
        "pa-1",
    )
    openai = embedder_from_config(
        EmbeddingProviderConfig(kind="openai-compatible", api_key_env="K"), {"K": "sk"}
    )
    assert isinstance(openai, OpenAICompatibleEmbedder) and (openai.model, openai.dim) == (
        "text-embedding-3-small",
        1536,
    )
    hashing = embedder_from_config(EmbeddingProviderConfig(kind="hashing", dim=64), {})
    assert isinstance(hashing, HashingEmbedder) and hashing.dim == 64
    local = embedder_from_config(EmbeddingProviderConfig(kind="local", dim=384), {})
    assert isinstance(local, LocalEmbedderProvider)


def test_embedder_config_errors_name_the_field() -> None:
    with pytest.raises(ConfigError, match="256, 512 or 1024"):
        embedder_from_config(EmbeddingProviderConfig(kind="bedrock-titan-v2", dim=768), {})
    with pytest.raises(ConfigError, match=r"uses model amazon\.titan-embed-text-v2:0"):
        embedder_from_config(EmbeddingProviderConfig(kind="bedrock-titan-v2", model="cohere.embed-v4"), {})


def test_embedders_not_ready_without_key_or_dim() -> None:
    voyage = embedder_from_config(EmbeddingProviderConfig(kind="voyage"), {})
    assert voyage.ready() == (False, "API key missing: environment variable VOYAGE_API_KEY is not set")
    unknown = embedder_from_config(
        EmbeddingProviderConfig(
            kind="openai-compatible", model="nomic-embed-text", base_url="http://127.0.0.1:11434/v1"
        ),
        {},
    )
    assert unknown.ready() == (
        False,
        "the dimension of nomic-embed-text is unknown: set memory.providers.embeddings.dim",
    )
    report = readiness(ScriptedLLM({}), unknown)
    assert report["ready"] is False and report["llm"]["ready"] is True
    assert report["reasons"] == [
        "embeddings: the dimension of nomic-embed-text is unknown: set memory.providers.embeddings.dim"
    ]


def test_readiness_is_ready_when_both_are_usable() -> None:
    report = readiness(ScriptedLLM({}), HashingEmbedder(128))
    assert report["ready"] is True and report["reasons"] == []
    assert report["llm"]["kind"] == "scripted" and report["embeddings"]["dim"] == 128


def test_new_provider_fields_parse_from_project_config_with_defaults() -> None:
    cfg = parse_project_config(
        {
            "memory": {
                "providers": {
                    "llm": {"kind": "bedrock", "model": "m", "region": "eu-west-1", "max_retries": 5},
                    "embeddings": {"kind": "voyage", "dim": 512, "batch_size": 64, "timeout_seconds": 10},
                }
            }
        }
    )
    assert cfg.memory.providers.llm.max_retries == 5 and cfg.memory.providers.llm.temperature == 0.0
    assert cfg.memory.providers.embeddings.batch_size == 64
    with pytest.raises(ConfigError, match=r"memory\.providers\.llm\.max_retries"):
        parse_project_config({"memory": {"providers": {"llm": {"max_retries": 99}}}})


def test_llm_max_concurrency_lets_one_call_at_a_time_reach_the_server() -> None:
    import threading
    import time

    from mongomem.config import LLMProviderConfig
    from mongomem.ports import ANSWERS, LLMRequest, LLMResult
    from mongomem.providers.factory import LimitedLLM, llm_from_config

    running, most = [0], [0]
    lock = threading.Lock()

    class Slow:
        name, capabilities = "slow-test-llm", ANSWERS

        def complete_json(self, request: LLMRequest) -> LLMResult:
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
            time.sleep(0.05)
            with lock:
                running[0] -= 1
            return LLMResult(text="{}", model="m")

        def ready(self) -> tuple[bool, str]:
            return True, ""

    limited = LimitedLLM(Slow(), 1)
    request = LLMRequest(task="t", system="s", prompt="p", schema={}, schema_name="n")
    threads = [threading.Thread(target=limited.complete_json, args=(request,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1
    # the configuration builds the limit around the configured provider
    cfg = LLMProviderConfig(
        kind="openai-compatible", model="m", base_url="http://127.0.0.1:9/v1", max_concurrency=2
    )
    built = llm_from_config(cfg, {})
    assert isinstance(built, LimitedLLM) and built.limit == 2 and built.name == "openai-compatible:m"
