"""Bedrock Converse LLM and Titan v2 embeddings against a real bedrock-runtime client with botocore's Stubber.

Retries are botocore's own (the Stubber answers before them): tests/integration/test_providers_bedrock_http.py.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import botocore.session
import pytest
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from mongomem.observability import metrics
from mongomem.ports import EmbeddingError, LLMAnswerError, LLMConfigError, LLMError, LLMRequest
from mongomem.providers.embed_bedrock import TITAN_V2, BedrockTitanEmbedder
from mongomem.providers.llm_bedrock import BedrockLLM

MODEL = "eu.anthropic.claude-3-5-haiku-20241022-v1:0"
SCHEMA = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "object"}}},
    "required": ["items"],
}
ANSWER = {"items": [{"subject": "user", "attribute": "home airport", "value": "LHR"}]}


@pytest.fixture
def client() -> Any:
    session = botocore.session.Session()
    session.set_credentials("AKIDEXAMPLE", "dummy-secret")  # test only: the stubbed client never calls AWS
    return session.create_client("bedrock-runtime", region_name="eu-west-1")


@pytest.fixture
def stub(client: Any) -> Iterator[Stubber]:
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


def request() -> LLMRequest:
    return LLMRequest(
        task="semantic",
        system="Extract facts.",
        prompt="user: my home airport is LHR",
        schema=SCHEMA,
        schema_name="semantic items",
        max_tokens=700,
    )


def converse_params(tool_choice: dict[str, Any] | None = None) -> dict[str, Any]:
    tool_config: dict[str, Any] = {
        "tools": [
            {
                "toolSpec": {
                    "name": "semantic_items",
                    "description": ANY,
                    "inputSchema": {"json": SCHEMA},
                }
            }
        ],
        "toolChoice": tool_choice or {"tool": {"name": "semantic_items"}},
    }
    return {
        "modelId": MODEL,
        "system": [{"text": "Extract facts."}],
        "messages": [{"role": "user", "content": [{"text": "user: my home airport is LHR"}]}],
        "inferenceConfig": {"maxTokens": 700, "temperature": 0.0},
        "toolConfig": tool_config,
    }


def converse_response(content: list[dict[str, Any]] | None = None, stop: str = "tool_use") -> dict[str, Any]:
    blocks = content or [
        {"text": "Recording."},
        {"toolUse": {"toolUseId": "tu-1", "name": "semantic_items", "input": ANSWER}},
    ]
    return {
        "output": {"message": {"role": "assistant", "content": blocks}},
        "stopReason": stop,
        "usage": {"inputTokens": 321, "outputTokens": 45, "totalTokens": 366},
        "metrics": {"latencyMs": 800},
    }


def llm(client: Any, **kw: Any) -> BedrockLLM:
    return BedrockLLM(
        MODEL,
        "eu-west-1",
        timeout=5,
        max_retries=kw.pop("max_retries", 2),
        client=client,
        **kw,
    )


def test_converse_forces_the_schema_tool_and_returns_its_input(client: Any, stub: Stubber) -> None:
    # Given a model that calls the tool
    stub.add_response("converse", converse_response(), converse_params())
    metrics.clear_metrics()
    # When a structured answer is requested
    result = llm(client).complete_json(request())
    # Then the tool input is the answer, with the usage reported and recorded as metrics
    assert json.loads(result.text) == ANSWER
    assert (result.input_tokens, result.output_tokens, result.model) == (321, 45, MODEL)
    recorded = metrics.metric_set
    assert recorded["LLMInputTokens"]["Value"] == [321.0]
    assert recorded["LLMOutputTokens"]["Value"] == [45.0]
    assert "LLMLatencyMs" in recorded
    metrics.clear_metrics()


def test_access_denied_is_not_retried_and_is_a_configuration_error(client: Any, stub: Stubber) -> None:
    stub.add_client_error(
        "converse",
        service_error_code="AccessDeniedException",
        service_message="You don't have access to the model",
        http_status_code=403,
    )
    # Then the error says the deployment must change (the extraction handler alarms on it at once)
    with pytest.raises(LLMConfigError, match="AccessDeniedException: You don't have access to the model"):
        llm(client).complete_json(request())


def test_throttling_is_a_passing_failure_not_a_configuration_error(client: Any, stub: Stubber) -> None:
    stub.add_client_error(
        "converse",
        service_error_code="ThrottlingException",
        service_message="slow down",
        http_status_code=429,
    )
    with pytest.raises(LLMError) as raised:
        llm(client).complete_json(request())
    assert not isinstance(raised.value, LLMConfigError)


def test_a_model_without_named_tool_choice_is_asked_with_any(client: Any, stub: Stubber) -> None:
    # Given a model that rejects toolChoice.tool
    stub.add_client_error(
        "converse",
        service_error_code="ValidationException",
        http_status_code=400,
        service_message="This model doesn't support the toolConfig.toolChoice.tool field.",
    )
    stub.add_response("converse", converse_response(), converse_params({"any": {}}))
    stub.add_response("converse", converse_response(), converse_params({"any": {}}))
    provider = llm(client)
    # When two calls are made, Then both answer through toolChoice any (the downgrade is remembered)
    assert json.loads(provider.complete_json(request()).text) == ANSWER
    assert json.loads(provider.complete_json(request()).text) == ANSWER


def test_an_answer_in_text_instead_of_the_tool_is_handed_to_the_caller(client: Any, stub: Stubber) -> None:
    # A model that writes its JSON as text (with prose around it): the caller reads the first JSON value
    text = 'Here you go: {"items": []} hope it helps'
    stub.add_response("converse", converse_response([{"text": text}], stop="end_turn"), converse_params())
    assert llm(client).complete_json(request()).text == text


def test_an_empty_answer_without_the_tool_call_is_an_answer_error(client: Any, stub: Stubber) -> None:
    stub.add_response("converse", converse_response([{"text": ""}], stop="end_turn"), converse_params())
    with pytest.raises(LLMAnswerError, match="without calling the tool") as raised:
        llm(client).complete_json(request())
    assert raised.value.reason == "no_answer"


def test_an_answer_cut_off_at_max_tokens_is_an_answer_error(client: Any, stub: Stubber) -> None:
    stub.add_response("converse", converse_response([{"text": "..."}], stop="max_tokens"), converse_params())
    with pytest.raises(LLMAnswerError, match="cut off at max_tokens") as raised:
        llm(client).complete_json(request())
    assert raised.value.reason == "cut_off"


def test_ready_needs_a_model_id_and_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    # Given no credentials anywhere (and no instance metadata lookup)
    for var in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    assert BedrockLLM("", "eu-west-1").ready() == (
        False,
        "no Bedrock model id configured (memory.providers.llm.model)",
    )
    ok, reason = BedrockLLM(MODEL, "eu-west-1").ready()
    assert not ok and "no AWS credentials" in reason
    # When credentials appear in the environment, Then it is ready (without calling AWS)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "dummy-secret")
    assert BedrockLLM(MODEL, "eu-west-1").ready() == (True, "")
    assert BedrockTitanEmbedder("eu-west-1").ready() == (True, "")


# --- Titan v2 embeddings -------------------------------------------------------------------------


def titan_body(vector: list[float]) -> dict[str, Any]:
    data = json.dumps({"embedding": vector, "inputTextTokenCount": 3}).encode()
    return {"body": StreamingBody(io.BytesIO(data), len(data)), "contentType": "application/json"}


def titan_params(text: str, dim: int = 256) -> dict[str, Any]:
    return {
        "modelId": TITAN_V2,
        "contentType": "application/json",
        "accept": "application/json",
        "body": json.dumps({"inputText": text, "dimensions": dim, "normalize": True}),
    }


def test_titan_embeds_one_text_per_call(client: Any, stub: Stubber) -> None:
    # Given two texts
    stub.add_response("invoke_model", titan_body([3.0, 4.0] + [0.0] * 254), titan_params("a"))
    stub.add_response("invoke_model", titan_body([0.0] * 255 + [2.0]), titan_params("b"))
    emb = BedrockTitanEmbedder("eu-west-1", dim=256, client=client)
    # When embedded
    first, second = emb.embed(["a", "b"])
    # Then each is a unit vector of the configured dim, in order
    assert first[:2] == [0.6, 0.8] and second[-1] == 1.0 and len(first) == 256
    assert emb.calls == 2


def test_titan_rejects_a_wrong_dimension_answer(client: Any, stub: Stubber) -> None:
    stub.add_response("invoke_model", titan_body([1.0] * 1024), titan_params("a", 512))
    with pytest.raises(EmbeddingError, match="dimension 1024 but the configured dim is 512"):
        BedrockTitanEmbedder("eu-west-1", dim=512, client=client).embed(["a"])


def test_titan_only_accepts_its_dimensions() -> None:
    with pytest.raises(ValueError, match="256, 512 or 1024"):
        BedrockTitanEmbedder("eu-west-1", dim=768)


def test_a_warm_function_keeps_a_bounded_number_of_bedrock_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import boto3

    from mongomem.providers import llm_bedrock

    made: list[dict[str, Any]] = []

    def fake_client(service: str, **kw: Any) -> object:
        made.append(kw)
        return object()

    monkeypatch.setattr(llm_bedrock, "_clients", {})
    monkeypatch.setattr(boto3, "client", fake_client)
    model = BedrockLLM(MODEL, "eu-west-1", timeout=30, max_retries=3)
    # Given a warm extraction function whose records start with every amount of time left (each deadline
    # gives budget_fit another (timeout, attempts) pair, so another client)
    for left in range(3, 120):
        model._client_within(time.monotonic() + left)
    # Then the process keeps only the newest few clients (issue 21: the cache grew with every pair)
    assert len(made) > llm_bedrock.MAX_CLIENTS
    assert len(llm_bedrock._clients) <= llm_bedrock.MAX_CLIENTS
    # and a client still in the cache is reused, not made again
    before = len(made)
    again = model._client_within(time.monotonic() + 119)
    assert len(made) == before and again in llm_bedrock._clients.values()
