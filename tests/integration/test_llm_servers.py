"""The OpenAI-compatible provider against stand-ins for the servers users run (tools/llm_servers.py), each
refusing what its documentation (or, for llama.cpp, its source) says it refuses: docs/providers.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mongomem.errors import ExtractionFailed
from mongomem.extraction.proposal import TurnView
from mongomem.extraction.proposers import LLMProposer
from mongomem.kinds import builtin_registry
from mongomem.ports import LLMConfigError
from mongomem.providers.llm_openai import OpenAICompatibleLLM, forget_learned

KINDS = builtin_registry()
ITEM = {"subject": "user", "attribute": "home airport", "value": "LIS", "evidence_seqs": [1]}


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_learned()
    yield
    forget_learned()


def server(dialect: str, **kw: Any) -> Any:
    from llm_servers import ChatServer

    return ChatServer(dialect, **kw).start()


def turns(n: int = 4) -> list[TurnView]:
    start = datetime(2026, 3, 1, 9, tzinfo=UTC)
    lines = ["My home airport is LIS now, I moved to Lisbon.", "Noted: LIS."]
    return [
        TurnView(i + 1, ("user", "assistant")[i % 2], lines[i % 2], start + timedelta(minutes=i))
        for i in range(n)
    ]


def llm(srv: Any, **kw: Any) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(srv.url, srv.model, require_key=False, max_retries=3, base_delay=0.01, **kw)


def test_llama_cpp_python_refusing_json_schema_with_a_500_is_asked_once_more_not_retried() -> None:
    # Given llama-cpp-python's server: response_format is text or json_object (+ schema), a refusal is a 500
    srv = server("llama_cpp_python", answer=lambda body: {"items": [ITEM]})
    try:
        proposer = LLMProposer(llm(srv), KINDS)
        # When two kinds are extracted
        first = proposer.propose(KINDS["semantic"], turns(), "ana")
        proposer.propose(KINDS["episodic"], turns(), "ana")
        # Then the 500 naming response_format is not retried: the next mode (json_object + schema) follows
        # at once and is remembered, so the second kind sends one request
        sent = [(s.status, (s.body.get("response_format") or {}).get("type")) for s in srv.chats()]
        assert sent == [(500, "json_schema"), (200, "json_object"), (200, "json_object")]
        assert first.items == [ITEM]
        # and the schema the server holds the model to is the kind's own item schema, not {type: object}
        schema = srv.chats()[1].body["response_format"]["schema"]
        item = schema["properties"]["items"]["items"]
        assert {"subject", "attribute", "value"} <= set(item["required"])
        episodic = srv.chats()[2].body["response_format"]["schema"]["properties"]["items"]["items"]
        assert "summary" in episodic["properties"] and "attribute" not in episodic["properties"]
    finally:
        srv.stop()


@pytest.mark.parametrize("dialect", ["vllm", "ollama", "lmstudio", "llama_cpp"])
def test_servers_with_json_schema_get_the_kinds_schema_in_one_request(dialect: str) -> None:
    srv = server(dialect, answer=lambda body: {"items": [ITEM]})
    try:
        result = LLMProposer(llm(srv), KINDS).propose(KINDS["semantic"], turns(), "ana")
        (chat,) = srv.chats()
        assert chat.status == 200 and result.items == [ITEM]
        fmt = chat.body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is False
        assert "cardinality" in fmt["json_schema"]["schema"]["properties"]["items"]["items"]["properties"]
    finally:
        srv.stop()


def test_openai_gets_every_kinds_tool_and_a_named_choice_so_the_calls_share_their_prefix() -> None:
    # Given OpenAI, whose prompt cache counts tools and a response_format schema as part of the prefix
    srv = server("openai", answer=lambda body: {"items": []})
    try:
        # (the stand-in is not api.openai.com, for which tools is the first mode: pinned here)
        assert OpenAICompatibleLLM(model="gpt-4o-mini", api_key="k").modes[0] == "tools"
        proposer = LLMProposer(llm(srv, structured_output="tools"), KINDS)
        names = KINDS.names()
        long = turns(120)  # over OpenAI's 1,024-token caching minimum
        for name in names:
            proposer.propose(KINDS[name], long, "ana", siblings=names)
        chats = srv.chats()
        # Then every call offers the same tools and names its kind's one
        assert {json.dumps(c.body["tools"], sort_keys=True) for c in chats} == {
            json.dumps(chats[0].body["tools"], sort_keys=True)
        }
        assert [c.body["tool_choice"]["function"]["name"] for c in chats] == [f"{n}_memories" for n in names]
        # and every call after the first reads most of its prompt from the cache
        assert chats[0].cached == 0
        assert all(c.cached >= 1024 for c in chats[1:])
    finally:
        srv.stop()


def test_a_server_that_ignores_the_named_tool_choice_is_asked_in_the_next_mode() -> None:
    # Given llama.cpp's server, which reads a tool_choice object as "auto" (the model picks any tool)
    srv = server("llama_cpp", answer=lambda body: {"items": [ITEM]})
    try:
        # pinned to tools, the wrong tool's answer is not taken for the kind's
        pinned = llm(srv, structured_output="tools")
        proposer = LLMProposer(pinned, KINDS)
        with pytest.raises(ExtractionFailed, match="no_answer"):
            proposer.propose(KINDS["episodic"], turns(), "ana", siblings=KINDS.names())
        # left to choose, a tools answer naming another tool moves the provider to the next mode
        auto = llm(srv)
        forget_learned()
        from mongomem.providers import llm_openai

        llm_openai._learned[(auto.base_url, auto.model)] = "tools"
        assert (
            LLMProposer(auto, KINDS).propose(KINDS["episodic"], turns(), "ana", siblings=KINDS.names()).items
        )
        assert auto.mode == "json_object" and "tools" not in srv.chats()[-1].body
    finally:
        srv.stop()


def test_lm_studio_refuses_json_mode_a_pinned_mode_it_refuses_is_an_error_not_a_retry_loop() -> None:
    from mongomem.ports import LLMError

    srv = server("lmstudio", answer=lambda body: {"items": [ITEM]})
    try:
        # pinned to JSON mode, which LM Studio refuses: one request, an error naming the refusal
        with pytest.raises(LLMError, match="json_schema' or 'text'"):
            LLMProposer(llm(srv, structured_output="json_object"), KINDS).propose(
                KINDS["semantic"], turns(), "ana"
            )
        assert [c.status for c in srv.chats()] == [400]
        # left to choose, it asks with json_schema, which LM Studio supports
        assert LLMProposer(llm(srv), KINDS).propose(KINDS["semantic"], turns(), "ana").items == [ITEM]
    finally:
        srv.stop()


def test_json_mode_shows_an_example_answer_never_the_raw_schema() -> None:
    srv = server("openai", answer=lambda body: {"items": [ITEM]})
    try:
        result = LLMProposer(llm(srv, structured_output="json_object"), KINDS).propose(
            KINDS["semantic"], turns(), "ana"
        )
        (chat,) = srv.chats()
        prompt = chat.body["messages"][1]["content"]
        assert chat.body["response_format"] == {"type": "json_object"} and result.items == [ITEM]
        assert '"<attribute>"' in prompt and '"properties"' not in prompt and "maxLength" not in prompt
    finally:
        srv.stop()


def test_an_unknown_model_is_a_configuration_error_said_at_once() -> None:
    srv = server("ollama")
    try:
        provider = OpenAICompatibleLLM(
            srv.url, "llama9:70b", require_key=False, max_retries=3, base_delay=0.01
        )
        with pytest.raises(LLMConfigError, match="404"):
            LLMProposer(provider, KINDS).propose(KINDS["semantic"], turns(), "ana")
        assert len(srv.chats()) == 1  # not retried
    finally:
        srv.stop()


def test_readiness_asks_the_server_and_remembers_the_answer() -> None:
    from mongomem.ports import EmbeddingProvider
    from mongomem.providers.factory import readiness

    class Embedder(EmbeddingProvider):
        model, dim = "e", 8

        def embed(self, texts: list[str], purpose: str = "document") -> list[list[float]]:
            raise AssertionError("readiness never embeds")

        def ready(self) -> tuple[bool, str]:
            return True, ""

    srv = server("vllm")
    provider = llm(srv)
    report = readiness(provider, Embedder())
    assert report["ready"] is True
    models = [s for s in srv.log if s.path.endswith("/models")]
    assert len(models) == 1
    readiness(provider, Embedder())
    assert len([s for s in srv.log if s.path.endswith("/models")]) == 1  # cached
    srv.stop()
    forget_learned()
    down = readiness(provider, Embedder())
    assert down["ready"] is False and "does not answer" in down["llm"]["reason"]
