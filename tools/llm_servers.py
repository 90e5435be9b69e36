"""Stand-ins for OpenAI-compatible chat servers, each refusing what its documentation says it refuses.

They speak `POST /v1/chat/completions` and `GET /v1/models` over HTTP, keep a request log, and answer
with `answer(request)` (default: an empty items list, or an item valid for the requested schema when
`fill` is set). What differs between the servers (the sources are cited in docs/providers.md):

| dialect | response_format types | json_object + schema | named tool_choice | refusal status |
| --- | --- | --- | --- | --- |
| openai | text, json_object, json_schema | refused (extra field) | honoured | 400 |
| vllm | text, json_object, json_schema | schema ignored | honoured | 400 |
| ollama | text, json_object, json_schema | schema ignored | honoured | 400 |
| lmstudio | text, json_schema | refused (json_object) | refused (only auto/none/required) | 400 |
| llama_cpp | text, json_object, json_schema | honoured | read as "auto" (ignored) | 400 |
| llama_cpp_python | text, json_object | honoured | honoured | 500 |

- OpenAI's JSON mode also refuses a request whose messages never say "json", and its prompt cache
  (prompts of 1,024 tokens and more, in steps of 128) counts tools and a `response_format` schema as part
  of the prefix; it reports `usage.prompt_tokens_details.cached_tokens`.
- llama.cpp's server reuses the longest prefix the slot already holds and reports it as
  `timings.cache_n`; it has `slots` slots and picks, for a request, the slot whose prompt shares the
  most with it (else the one used longest ago).
- A server "ignoring" the named tool choice lets the model pick: the stand-in answers with the first
  tool offered.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIALECTS = ("openai", "vllm", "ollama", "lmstudio", "llama_cpp", "llama_cpp_python")
_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


@dataclass
class Seen:
    path: str
    body: Any
    status: int
    answer: Any = None
    cached: int = 0


@dataclass
class ChatServer:
    dialect: str
    model: str = "test-model"
    slots: int = 1
    # the answer's JSON for a request (None: an empty items list)
    answer: Callable[[dict[str, Any]], Any] | None = None
    log: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {self.dialect!r}")
        self._lock = threading.Lock()
        self._slots: list[tuple[str, float]] = [("", 0.0)] * self.slots  # the prompt each slot holds
        self._prefixes: list[str] = []  # OpenAI: prompts seen (their prefixes are cached)
        server = self
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self) -> ChatServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def chats(self) -> list[Seen]:
        return [s for s in self.log if s.path.endswith("/chat/completions")]

    # -- the API -------------------------------------------------------------------------------------
    def chat(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        refusal = self.refusal(body)
        if refusal is not None:
            return refusal
        fmt = body.get("response_format") or {}
        tools = body.get("tools") or []
        choice = body.get("tool_choice")
        named = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
        if self.dialect == "llama_cpp" and isinstance(choice, dict):
            named = None  # json_value(body, "tool_choice", "auto"): an object is not a string, so "auto"
        value = self.answer(body) if self.answer is not None else {"items": []}
        prompt = self._prompt(body)
        cached = self._cache(prompt)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish = "stop"
        if tools:
            name = named or tools[0]["function"]["name"]
            message["tool_calls"] = [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(value)},
                }
            ]
            finish = "tool_calls"
        else:
            message["content"] = value if isinstance(value, str) else json.dumps(value)
        reply: dict[str, Any] = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": tokens(prompt),
                "completion_tokens": tokens(json.dumps(value)),
                "total_tokens": tokens(prompt) + tokens(json.dumps(value)),
            },
        }
        if self.dialect in ("openai", "vllm"):
            reply["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
        if self.dialect == "llama_cpp":
            reply["timings"] = {"cache_n": cached, "prompt_n": tokens(prompt) - cached}
        self.log[-1].answer = value
        self.log[-1].cached = cached
        _ = fmt
        return 200, reply

    def refusal(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """The error this server answers the request with, or None."""
        fmt = body.get("response_format")
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        d = self.dialect
        if body.get("model") != self.model and d in ("openai", "ollama", "vllm"):
            status = 404
            return status, _error(f"The model `{body.get('model')}` does not exist", "model_not_found")
        if kind is not None:
            allowed = {
                "openai": ("text", "json_object", "json_schema"),
                "vllm": ("text", "json_object", "json_schema", "structural_tag"),
                "ollama": ("text", "json_object", "json_schema"),
                "lmstudio": ("text", "json_schema"),
                "llama_cpp": ("text", "json_object", "json_schema"),
                "llama_cpp_python": ("text", "json_object"),
            }[d]
            if kind not in allowed:
                if d == "llama_cpp_python":
                    # its FastAPI validation error, answered as a 500 by the server's error handler
                    message = f"1 validation error for response_format.type: Input should be 'text' or 'json_object' [input_value='{kind}']"
                    return 500, _error(message, "internal_server_error")
                if d == "llama_cpp":
                    message = f'response_format type must be one of "text" or "json_object", but got: {kind}'
                    return 400, _error(message, "invalid_request_error")
                if d == "lmstudio":
                    return 400, _error(
                        "'response_format.type' must be 'json_schema' or 'text'", "invalid_request_error"
                    )
                return 400, _error(
                    f"Invalid value: '{kind}' for response_format.type", "invalid_request_error"
                )
            if d == "openai" and kind == "json_object" and "schema" in fmt:
                return 400, _error(
                    "Additional properties are not allowed ('schema' was unexpected) - 'response_format'",
                    "invalid_request_error",
                )
            if (
                d == "openai"
                and kind == "json_object"
                and "json" not in json.dumps(body.get("messages")).lower()
            ):
                return 400, _error(
                    "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
                    "invalid_request_error",
                )
            if kind == "json_schema":
                spec = fmt.get("json_schema") or {}
                if not isinstance(spec.get("schema"), dict) or (
                    d == "openai" and not _NAME.fullmatch(str(spec.get("name")))
                ):
                    return 400, _error(
                        "response_format.json_schema needs a name and a schema", "invalid_request_error"
                    )
        tools = body.get("tools") or []
        for tool in tools:
            name = (tool.get("function") or {}).get("name", "")
            if not _NAME.fullmatch(str(name)):
                return 400, _error(f"Invalid tools[].function.name: {name!r}", "invalid_request_error")
        choice = body.get("tool_choice")
        if isinstance(choice, dict):
            if d == "lmstudio":
                return 400, _error(
                    "tool_choice must be one of 'none', 'auto' or 'required'", "invalid_request_error"
                )
            named = (choice.get("function") or {}).get("name")
            if d != "llama_cpp" and named not in [(t.get("function") or {}).get("name") for t in tools]:
                return 400, _error(
                    f"tool_choice names {named!r}, which is not in tools", "invalid_request_error"
                )
        return None

    # -- prefix caches -------------------------------------------------------------------------------
    def _prompt(self, body: dict[str, Any]) -> str:
        """The text the model reads, in the order a chat template renders it."""
        head = ""
        if self.dialect == "openai":
            # tools and a response_format schema are part of OpenAI's cached prefix
            head = json.dumps(body.get("tools") or [], sort_keys=True)
            fmt = body.get("response_format") or {}
            head += json.dumps((fmt.get("json_schema") or {}).get("schema") or {}, sort_keys=True)
        elif body.get("tools"):
            head = json.dumps(body["tools"], sort_keys=True)  # chat templates render tools into the prompt
        messages = "".join(f"<{m.get('role')}>{m.get('content')}" for m in body.get("messages") or [])
        return head + messages

    def _cache(self, prompt: str) -> int:
        """Prompt tokens read from the server's cache, and the cache's new state (under the lock)."""
        with self._lock:
            if self.dialect == "openai":
                best = max((_common(prompt, p) for p in self._prefixes), default=0)
                self._prefixes.append(prompt)
                got = tokens(prompt[:best]) if best else 0
                return (got // 128) * 128 if tokens(prompt) >= 1024 and got >= 1024 else 0
            if self.dialect in ("llama_cpp", "llama_cpp_python", "ollama", "vllm", "lmstudio"):
                shares = [_common(prompt, held) for held, _ in self._slots]
                slot = max(range(len(shares)), key=lambda i: (shares[i], -self._slots[i][1]))
                if shares[slot] == 0:  # no slot shares anything: the one used longest ago
                    slot = min(range(len(self._slots)), key=lambda i: self._slots[i][1])
                common = _common(prompt, self._slots[slot][0])
                self._slots[slot] = (prompt, time.monotonic())
                return tokens(prompt[:common]) if common else 0
            return 0


def _common(a: str, b: str) -> int:
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return n


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def _handler(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                server.log.append(Seen(self.path, None, 200))
                return self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
            self._send(404, _error("not found", "not_found"))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return self._send(400, _error("body is not JSON", "invalid_request_error"))
            seen = Seen(self.path, body, 0)
            server.log.append(seen)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                seen.status = 404
                return self._send(404, _error("not found", "not_found"))
            status, payload = server.chat(body)
            seen.status = status
            self._send(status, payload)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler
