"""The HTTP providers against a real local server that behaves like OpenAI / Voyage, faults included."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from mongomem.extraction.proposers import answer_items
from mongomem.ports import EmbeddingError, LLMError, LLMRequest
from mongomem.providers.embed_openai import OpenAICompatibleEmbedder
from mongomem.providers.embed_voyage import VoyageEmbedder
from mongomem.providers.llm_openai import OpenAICompatibleLLM

SCHEMA = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "object"}}},
    "required": ["items"],
}
ANSWER = {"items": [{"subject": "user", "attribute": "home airport", "value": "LHR"}]}
KEY = "sk-test-secret-key"


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON; str/bytes -> sent as is
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any
    at: float


class FakeAPI:
    """Scripted replies per path (then a default reply); records every request it gets."""

    def __init__(self) -> None:
        self.script: dict[str, deque[Reply]] = {}
        self.default: dict[str, Reply] = {}
        self.seen: list[Seen] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                body = json.loads(raw) if raw else None
                api.seen.append(Seen(self.path, dict(self.headers), body, time.monotonic()))
                queue = api.script.get(self.path)
                reply = queue.popleft() if queue else api.default.get(self.path) or api.auto(self.path, body)
                if reply.delay:
                    time.sleep(reply.delay)
                payload = reply.body
                if payload is None:
                    payload = api.auto(self.path, body).body
                data = (
                    payload
                    if isinstance(payload, bytes)
                    else (payload.encode() if isinstance(payload, str) else json.dumps(payload).encode())
                )
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    def auto(self, path: str, body: Any) -> Reply:
        """A well-formed answer: chat completion with ANSWER, or one embedding per input."""
        if path.endswith("/chat/completions"):
            return Reply(
                body={
                    "id": "c1",
                    "model": body.get("model", "m"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": json.dumps(ANSWER)},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49},
                }
            )
        dim = body.get("dimensions") or body.get("output_dimension") or 8
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": [float(len(t) % 7 + 1)] + [float(i + 1)] * (dim - 1),
            }
            for i, t in enumerate(body["input"])
        ]
        return Reply(body={"object": "list", "data": data, "usage": {"total_tokens": len(body["input"]) * 3}})

    def then(self, path: str, *replies: Reply) -> None:
        self.script.setdefault(f"/v1{path}", deque()).extend(replies)

    def requests(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.path == f"/v1{path}"]


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    fake = FakeAPI()
    fake.thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def request(task: str = "semantic") -> LLMRequest:
    return LLMRequest(
        task=task,
        system="Extract facts.",
        prompt="user: I moved; my home airport is LHR now.",
        schema=SCHEMA,
        schema_name="semantic_items",
        max_tokens=512,
    )


def chat(api: FakeAPI, **kw: Any) -> OpenAICompatibleLLM:
    params: dict[str, Any] = {"timeout": 2.0, "max_retries": 2, "base_delay": 0.001, "max_delay": 0.01}
    params.update(kw)
    return OpenAICompatibleLLM(api.url, "gpt-test", KEY, **params)


# --- chat completions ----------------------------------------------------------------------------


def test_chat_asks_for_json_schema_and_returns_the_answer_with_usage(api: FakeAPI) -> None:
    # Given a healthy server
    llm = chat(api)
    # When a structured answer is requested
    result = llm.complete_json(request())
    # Then the request carries the schema as response_format, both messages and the key
    (seen,) = api.requests("/chat/completions")
    assert seen.headers["Authorization"] == f"Bearer {KEY}"
    assert seen.body["model"] == "gpt-test"
    assert seen.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "semantic_items", "schema": SCHEMA, "strict": False},
    }
    assert [m["role"] for m in seen.body["messages"]] == ["system", "user"]
    assert seen.body["messages"][0]["content"] == "Extract facts."
    assert seen.body["max_tokens"] == 512
    # And the raw JSON text and the token usage come back
    assert json.loads(result.text) == ANSWER
    assert (result.input_tokens, result.output_tokens) == (42, 7)
    assert result.latency_ms > 0 and llm.attempts == 1


def test_chat_honours_retry_after_on_429_then_succeeds(api: FakeAPI) -> None:
    # Given a server that throttles once and asks for a 0.3 s pause
    api.then("/chat/completions", Reply(429, {"error": {"message": "rate limited"}}, {"Retry-After": "0.3"}))
    llm = chat(api)
    # When a call is made
    result = llm.complete_json(request())
    # Then it is retried once, after at least the server's pause (not the 1 ms backoff)
    first, second = api.requests("/chat/completions")
    assert second.at - first.at >= 0.28
    assert llm.attempts == 2 and json.loads(result.text) == ANSWER


def test_chat_gives_up_after_bounded_retries_on_500_with_a_clear_error(api: FakeAPI) -> None:
    # Given a server that keeps failing
    api.default["/v1/chat/completions"] = Reply(500, {"error": {"message": "upstream exploded"}})
    llm = chat(api, max_retries=2)
    # When a call is made, Then it fails after 1 + 2 attempts, naming the status and the server's reason
    with pytest.raises(LLMError) as err:
        llm.complete_json(request())
    assert len(api.requests("/chat/completions")) == 3
    message = str(err.value)
    assert "HTTP 500" in message and "upstream exploded" in message and "after 3 attempts" in message
    assert KEY not in message


@pytest.mark.parametrize("status", [502, 503, 504])
def test_chat_retries_gateway_errors(api: FakeAPI, status: int) -> None:
    api.then("/chat/completions", Reply(status, "<html>bad gateway</html>"), Reply(status, ""))
    llm = chat(api)
    assert json.loads(llm.complete_json(request()).text) == ANSWER
    assert len(api.requests("/chat/completions")) == 3


def test_chat_times_out_on_a_slow_server_and_retries(api: FakeAPI) -> None:
    # Given a server slower than the timeout, then a fast answer
    api.then("/chat/completions", Reply(delay=1.0))
    llm = chat(api, timeout=0.2)
    # When a call is made, Then the slow attempt is abandoned and the retry succeeds
    started = time.monotonic()
    result = llm.complete_json(request())
    assert time.monotonic() - started < 0.9
    assert llm.attempts == 2 and json.loads(result.text) == ANSWER


def test_chat_reports_timeouts_after_the_last_retry(api: FakeAPI) -> None:
    api.default["/v1/chat/completions"] = Reply(delay=0.6)
    llm = chat(api, timeout=0.15, max_retries=1)
    with pytest.raises(LLMError, match=r"timed out after 0.15s.*after 2 attempts"):
        llm.complete_json(request())
    assert len(api.requests("/chat/completions")) == 2


def test_chat_retries_never_outlive_the_request_deadline(api: FakeAPI) -> None:
    # Given a server that throttles and asks for a 5 s pause, and a call with 1 s of budget left
    api.default["/v1/chat/completions"] = Reply(
        429, {"error": {"message": "slow down"}}, {"Retry-After": "5"}
    )
    llm = chat(api, max_retries=5, max_retry_after=20)
    req = request()
    req.deadline = time.monotonic() + 1.0
    # When a call is made, Then it gives up at once rather than sleeping past the budget
    started = time.monotonic()
    with pytest.raises(
        LLMError, match=r"HTTP 429: slow down \(gave up after 1 attempts: the time budget ran out\)"
    ):
        llm.complete_json(req)
    assert time.monotonic() - started < 0.5 and len(api.requests("/chat/completions")) == 1


def test_chat_attempt_timeout_is_cut_to_the_deadline(api: FakeAPI) -> None:
    # Given a server slower than the remaining budget (but faster than the per-attempt timeout)
    api.default["/v1/chat/completions"] = Reply(delay=1.5)
    llm = chat(api, timeout=10.0, max_retries=3)
    req = request()
    req.deadline = time.monotonic() + 0.4
    # When a call is made, Then it stops at the deadline (not after 10 s), without a second attempt
    started = time.monotonic()
    with pytest.raises(LLMError, match="timed out"):
        llm.complete_json(req)
    assert time.monotonic() - started < 1.0 and len(api.requests("/chat/completions")) == 1


def test_chat_switches_to_max_completion_tokens_when_max_tokens_is_rejected(api: FakeAPI) -> None:
    # Given a model that only accepts max_completion_tokens (newer OpenAI reasoning models)
    message = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
    api.then("/chat/completions", Reply(400, {"error": {"message": message}}))
    llm = chat(api)
    # When a call is made, Then it is sent again with max_completion_tokens and the schema kept
    assert json.loads(llm.complete_json(request()).text) == ANSWER
    rejected, accepted = (s.body for s in api.requests("/chat/completions"))
    assert rejected["max_tokens"] == 512 and "max_tokens" not in accepted
    assert accepted["max_completion_tokens"] == 512 and accepted["response_format"]["type"] == "json_schema"


def test_chat_does_not_retry_other_client_errors(api: FakeAPI) -> None:
    api.then("/chat/completions", Reply(401, {"error": {"message": "Incorrect API key provided"}}))
    llm = chat(api)
    with pytest.raises(LLMError, match="HTTP 401: Incorrect API key provided") as err:
        llm.complete_json(request())
    assert len(api.requests("/chat/completions")) == 1
    assert KEY not in str(err.value)


def test_chat_rejects_a_malformed_body_without_retrying(api: FakeAPI) -> None:
    api.then("/chat/completions", Reply(200, "this is not json {"))
    llm = chat(api)
    with pytest.raises(LLMError, match="not JSON"):
        llm.complete_json(request())
    assert len(api.requests("/chat/completions")) == 1


def test_chat_reports_an_answer_without_choices(api: FakeAPI) -> None:
    api.then("/chat/completions", Reply(200, {"object": "chat.completion", "choices": []}))
    with pytest.raises(LLMError, match=r"malformed answer \(no choices\[0\].message\)"):
        chat(api).complete_json(request())


def test_chat_reports_a_truncated_answer(api: FakeAPI) -> None:
    truncated = {"choices": [{"message": {"content": '{"items": [{"sub'}, "finish_reason": "length"}]}
    api.then("/chat/completions", Reply(200, truncated))
    with pytest.raises(LLMError, match="cut off at max_tokens"):
        chat(api).complete_json(request())


def test_chat_answer_in_a_code_fence_is_read(api: FakeAPI) -> None:
    fenced = {
        "choices": [
            {"message": {"content": "```json\n" + json.dumps(ANSWER) + "\n```"}, "finish_reason": "stop"}
        ]
    }
    api.then("/chat/completions", Reply(200, fenced))
    result = chat(api).complete_json(request())
    # the provider hands the text on; extraction reads the first JSON value in it
    assert answer_items("semantic", result.text) == ANSWER["items"]
    assert (result.input_tokens, result.output_tokens) == (0, 0)


def test_chat_does_not_follow_redirects_with_the_key(api: FakeAPI) -> None:
    api.then("/chat/completions", Reply(307, "", {"Location": "http://127.0.0.1:9/steal"}))
    with pytest.raises(LLMError, match="HTTP 307"):
        chat(api).complete_json(request())


def test_chat_without_key_against_a_local_server(api: FakeAPI) -> None:
    # Given a local server that needs no key (vLLM, Ollama)
    llm = OpenAICompatibleLLM(api.url, "llama3", None, require_key=False)
    assert llm.ready() == (True, "")
    llm.complete_json(request())
    (seen,) = api.requests("/chat/completions")
    assert "Authorization" not in seen.headers


# --- embeddings ----------------------------------------------------------------------------------


def norm(v: list[float]) -> float:
    result: float = sum(x * x for x in v) ** 0.5
    return result


def test_openai_embeddings_batch_and_normalise(api: FakeAPI) -> None:
    # Given 300 texts and a batch size of 128
    emb = OpenAICompatibleEmbedder(api.url, "text-embedding-3-small", KEY, dim=16, batch_size=128)
    texts = [f"text number {i}" for i in range(300)]
    # When they are embedded
    vectors = emb.embed(texts)
    # Then three requests carry 128 + 128 + 44 inputs with the requested dimensions
    sent = [s.body for s in api.requests("/embeddings")]
    assert [len(b["input"]) for b in sent] == [128, 128, 44]
    assert all(b["model"] == "text-embedding-3-small" and b["dimensions"] == 16 for b in sent)
    assert sent[2]["input"][-1] == "text number 299"
    # And every vector has the dim and unit length
    assert len(vectors) == 300 and all(len(v) == 16 and abs(norm(v) - 1) < 1e-9 for v in vectors)
    assert emb.total_tokens == 900


def test_openai_embeddings_follow_the_index_not_the_list_order(api: FakeAPI) -> None:
    reply = {"data": [{"index": 1, "embedding": [0.0, 2.0]}, {"index": 0, "embedding": [3.0, 0.0]}]}
    api.then("/embeddings", Reply(200, reply))
    emb = OpenAICompatibleEmbedder(api.url, "nomic-embed-text", None, dim=2, require_key=False)
    assert emb.embed(["first", "second"]) == [[1.0, 0.0], [0.0, 1.0]]
    # A model other than text-embedding-3-* is not sent "dimensions" (servers reject it)
    assert "dimensions" not in api.requests("/embeddings")[0].body


def test_embeddings_with_the_wrong_dimension_fail_clearly(api: FakeAPI) -> None:
    api.then("/embeddings", Reply(200, {"data": [{"index": 0, "embedding": [1.0, 2.0, 3.0]}]}))
    emb = OpenAICompatibleEmbedder(api.url, "nomic-embed-text", None, dim=768, require_key=False)
    with pytest.raises(EmbeddingError, match="dimension 3 but the configured dim is 768"):
        emb.embed(["hello"])


def test_embeddings_malformed_answer_fails_clearly(api: FakeAPI) -> None:
    api.then("/embeddings", Reply(200, {"result": "ok"}))
    emb = OpenAICompatibleEmbedder(api.url, "m", None, dim=8, require_key=False)
    with pytest.raises(EmbeddingError, match="malformed answer"):
        emb.embed(["hello"])


def test_voyage_sends_input_type_and_output_dimension_and_retries_429(api: FakeAPI) -> None:
    # Given a Voyage-like server that throttles the first request
    api.then("/embeddings", Reply(429, {"detail": "rate limit"}, {"Retry-After": "0"}))
    emb = VoyageEmbedder(KEY, dim=256, base_url=api.url, base_delay=0.001)
    # When a query and then documents are embedded
    (query,) = emb.embed(["where do I fly from?"], purpose="query")
    docs = emb.embed(["home airport: LHR", "likes tea"])
    # Then the query request was retried and each request says what it embeds
    sent = [s.body for s in api.requests("/embeddings")]
    assert [b["input_type"] for b in sent] == ["query", "query", "document"]
    assert all(b["model"] == "voyage-3.5" and b["output_dimension"] == 256 for b in sent)
    assert api.requests("/embeddings")[0].headers["Authorization"] == f"Bearer {KEY}"
    assert len(query) == 256 and len(docs) == 2 and abs(norm(docs[1]) - 1) < 1e-9


def test_voyage_gives_up_after_retries(api: FakeAPI) -> None:
    api.default["/v1/embeddings"] = Reply(503, {"detail": "overloaded"})
    emb = VoyageEmbedder(KEY, dim=256, base_url=api.url, max_retries=1, base_delay=0.001)
    with pytest.raises(EmbeddingError, match=r"HTTP 503: overloaded \(gave up after 2 attempts\)"):
        emb.embed(["x"])
    assert emb.attempts == 2


def test_unreachable_server_is_retried_then_reported() -> None:
    # Given a port nobody listens on
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    emb = OpenAICompatibleEmbedder(
        f"http://127.0.0.1:{port}/v1", "m", None, dim=8, require_key=False, max_retries=2, base_delay=0.001
    )
    with pytest.raises(EmbeddingError, match=r"cannot connect.*after 3 attempts"):
        emb.embed(["x"])
    assert emb.attempts == 3
