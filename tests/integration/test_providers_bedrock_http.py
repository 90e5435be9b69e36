"""Bedrock providers through a real boto3 client against a local Bedrock Runtime look-alike.

The retries are botocore's own (standard mode, `llm_bedrock.client_config`): the provider has no
retry loop of its own, so these tests send real HTTP and count what reached the server.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mongomem.ports import EmbeddingError, LLMError, LLMRequest
from mongomem.providers import llm_bedrock
from mongomem.providers.embed_bedrock import BedrockTitanEmbedder
from mongomem.providers.llm_bedrock import BedrockLLM

MODEL = "eu.anthropic.claude-3-5-haiku-20241022-v1:0"
SCHEMA = {"type": "object", "properties": {"items": {"type": "array"}}, "required": ["items"]}
ANSWER = {"items": [{"subject": "user", "attribute": "home airport", "value": "LHR"}]}


class FakeBedrock:
    """Answers Converse and InvokeModel; a test queues errors (status, error type, message) first."""

    def __init__(self) -> None:
        self.errors: deque[tuple[int, str, str]] = deque()
        self.paths: list[str] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                fake.paths.append(self.path)
                headers = {"Content-Type": "application/json"}
                if fake.errors:
                    status, kind, message = fake.errors.popleft()
                    headers["x-amzn-ErrorType"] = kind
                    payload: Any = {"message": message}
                elif self.path.endswith("/converse"):
                    status = 200
                    payload = {
                        "output": {
                            "message": {
                                "role": "assistant",
                                "content": [{"toolUse": {"toolUseId": "t1", "name": "x", "input": ANSWER}}],
                            }
                        },
                        "stopReason": "tool_use",
                        "usage": {"inputTokens": 11, "outputTokens": 5, "totalTokens": 16},
                        "metrics": {"latencyMs": 3},
                    }
                else:
                    status = 200
                    payload = {"embedding": [1.0] * body["dimensions"], "inputTextTokenCount": 2}
                data = json.dumps(payload).encode()
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

    def fail(self, times: int, status: int, kind: str, message: str = "slow down") -> None:
        self.errors.extend([(status, kind, message)] * times)


@pytest.fixture
def bedrock(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeBedrock]:
    fake = FakeBedrock()
    # The standard AWS SDK settings point boto3 at the look-alike; the code never learns it is a test.
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", fake.url)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "dummy-secret")
    monkeypatch.setattr(llm_bedrock, "_clients", {})
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def request() -> LLMRequest:
    return LLMRequest(task="semantic", system="s", prompt="p", schema=SCHEMA, schema_name="x", max_tokens=100)


def test_throttling_is_retried_by_botocore_then_succeeds(bedrock: FakeBedrock) -> None:
    # Given two throttled calls (ThrottlingException, ServiceUnavailableException), then an answer
    bedrock.fail(1, 429, "ThrottlingException")
    bedrock.fail(1, 503, "ServiceUnavailableException")
    provider = BedrockLLM(MODEL, "eu-west-1", timeout=5, max_retries=2)
    # When a call is made, Then it succeeds on the third request
    result = provider.complete_json(request())
    assert json.loads(result.text) == ANSWER and (result.input_tokens, result.output_tokens) == (11, 5)
    assert provider.attempts == 3 and len(bedrock.paths) == 3


def test_throttling_beyond_the_retries_raises_llm_error(bedrock: FakeBedrock) -> None:
    bedrock.fail(5, 429, "ThrottlingException", "Too many requests")
    provider = BedrockLLM(MODEL, "eu-west-1", timeout=5, max_retries=2)
    with pytest.raises(LLMError, match=r"ThrottlingException: Too many requests.*gave up after 3 attempts"):
        provider.complete_json(request())
    assert provider.attempts == 3 and len(bedrock.paths) == 3


def test_access_denied_is_sent_once(bedrock: FakeBedrock) -> None:
    bedrock.fail(1, 403, "AccessDeniedException", "You don't have access to the model")
    provider = BedrockLLM(MODEL, "eu-west-1", timeout=5, max_retries=3)
    with pytest.raises(LLMError, match=r"AccessDeniedException: You don.t have access to the model$"):
        provider.complete_json(request())
    assert len(bedrock.paths) == 1


def test_a_model_that_is_not_ready_is_retried(bedrock: FakeBedrock) -> None:
    bedrock.fail(1, 429, "ModelNotReadyException", "warming up")
    provider = BedrockLLM(MODEL, "eu-west-1", timeout=5, max_retries=1)
    assert json.loads(provider.complete_json(request()).text) == ANSWER
    assert len(bedrock.paths) == 2


def test_titan_retries_throttling_per_text(bedrock: FakeBedrock) -> None:
    # Given two texts, the second throttled once
    emb = BedrockTitanEmbedder("eu-west-1", dim=256, max_retries=2)
    first = emb.embed(["a"])
    bedrock.fail(1, 429, "ThrottlingException")
    second = emb.embed(["b"])
    assert len(first[0]) == 256 and len(second[0]) == 256 and emb.calls == 2
    assert [p.endswith("/invoke") for p in bedrock.paths] == [True, True, True]


def test_titan_gives_up_after_retries(bedrock: FakeBedrock) -> None:
    bedrock.fail(2, 503, "ServiceUnavailableException", "unavailable")
    emb = BedrockTitanEmbedder("eu-west-1", dim=256, max_retries=1)
    with pytest.raises(EmbeddingError, match=r"unavailable.*gave up after 2 attempts"):
        emb.embed(["a"])
    assert emb.calls == 2 and len(bedrock.paths) == 2


def test_the_client_is_configured_for_botocore_standard_retries() -> None:
    config = llm_bedrock.client_config(timeout=30, max_retries=4)
    assert config.retries == {"mode": "standard", "total_max_attempts": 5}
    assert (config.connect_timeout, config.read_timeout) == (10.0, 30)
