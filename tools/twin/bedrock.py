"""A Bedrock Runtime stand-in that speaks the real wire format, with deterministic answers.

- POST /model/{modelId}/converse: the Converse API. Answers with a tool call to the request's (only)
  tool: the first scripted rule whose `tool` matches and whose `contains` strings all occur in the
  prompt, else an empty answer ({"items": []}, or ADD for reconciliation). Usage is counted the way
  Converse reports it (input, output, cache read/write tokens around `cachePoint` blocks).
- POST /model/{modelId}/invoke: Titan Text Embeddings v2 ({"inputText", "dimensions", "normalize"}),
  a deterministic feature-hashing vector (similar texts get similar vectors).
Functions reach it through AWS_ENDPOINT_URL_BEDROCK_RUNTIME; they sign with SigV4 as for the real
service (the signature is not checked). Every request is recorded for assertions.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

TITAN_V2 = "amazon.titan-embed-text-v2:0"
TITAN_DIMS = (256, 512, 1024)


@dataclass
class Rule:
    tool: str  # the tool name the request offers (e.g. semantic_memories, reconcile)
    answer: dict[str, Any]
    contains: list[str] = field(default_factory=list)


def tokens(text: str) -> int:
    """A token count like Bedrock's meters report (about 4 characters a token)."""
    return max(1, math.ceil(len(text) / 4))


def embed(text: str, dim: int) -> list[float]:
    vec = [0.0] * dim
    words = re.findall(r"[a-z0-9]+", text.lower())
    features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
    for feature in features:
        digest = hashlib.sha256(feature.encode()).digest()
        slot = int.from_bytes(digest[:4], "big") % dim
        vec[slot] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class BedrockStandIn:
    def __init__(self, rules: list[Rule] | None = None, host: str = "127.0.0.1") -> None:
        self.rules = list(rules or [])
        self.delay_seconds = 0.0  # a slow model (budget tests)
        self.calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer((host, 0), _handler(self))
        self.server.daemon_threads = True
        self.url = f"http://{host}:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, name="bedrock", daemon=True)

    def start(self) -> BedrockStandIn:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def script(self, tool: str, answer: dict[str, Any], *contains: str) -> None:
        with self._lock:
            self.rules.insert(0, Rule(tool, answer, list(contains)))

    def converses(self) -> list[dict[str, Any]]:
        return [c for c in self.calls if c["api"] == "converse"]

    # -- the APIs ------------------------------------------------------------------------------------
    def converse(self, model: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        tools = ((body.get("toolConfig") or {}).get("tools")) or []
        if not body.get("messages"):
            return 400, {"message": "messages is required"}
        if not tools:
            return 400, {"message": "this stand-in answers tool-use requests only"}
        tool = tools[0]["toolSpec"]["name"]
        if self.delay_seconds:
            import time

            time.sleep(self.delay_seconds)
        system_text = " ".join(b.get("text", "") for b in body.get("system") or [] if isinstance(b, dict))
        blocks = [b for m in body["messages"] for b in m.get("content") or []]
        prompt = " ".join(b.get("text", "") for b in blocks if isinstance(b, dict))
        answer: dict[str, Any] = {"items": []}
        if tool == "reconcile":
            answer = {"decision": "ADD", "target_id": None, "reason": "stand-in: no rule matched"}
        with self._lock:
            for rule in self.rules:
                if rule.tool == tool and all(c in prompt for c in rule.contains):
                    answer = rule.answer
                    break
        usage = _usage(body, system_text, blocks, answer)
        with self._lock:
            self.calls.append(
                {"api": "converse", "model": model, "tool": tool, "prompt": prompt, "usage": usage}
            )
        return 200, {
            "output": {
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "toolUse": {
                                "toolUseId": f"tooluse_{len(self.calls)}",
                                "name": tool,
                                "input": answer,
                            }
                        }
                    ],
                }
            },
            "stopReason": "tool_use",
            "usage": usage,
            "metrics": {"latencyMs": 5},
        }

    def invoke(self, model: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if model != TITAN_V2:
            return 400, {"message": f"the stand-in serves {TITAN_V2} only, not {model}"}
        text = body.get("inputText")
        dim = int(body.get("dimensions") or 1024)
        if not isinstance(text, str) or not text:
            return 400, {"message": "inputText is required"}
        if dim not in TITAN_DIMS:
            return 400, {"message": f"dimensions must be one of {TITAN_DIMS}"}
        with self._lock:
            self.calls.append({"api": "invoke", "model": model, "chars": len(text)})
        return 200, {"embedding": embed(text, dim), "inputTextTokenCount": tokens(text)}


def _usage(body: dict[str, Any], system: str, blocks: list[Any], answer: Any) -> dict[str, int]:
    """inputTokens = what was billed at the input price; text before a cachePoint counts as cache write."""
    cached_prefix = 0
    seen = 0
    for block in [*(body.get("system") or []), *blocks]:
        if not isinstance(block, dict):
            continue
        if "cachePoint" in block:
            cached_prefix = seen
        seen += tokens(block.get("text", "")) if "text" in block else 0
    output = tokens(json.dumps(answer))
    return {
        "inputTokens": seen - cached_prefix,
        "outputTokens": output,
        "totalTokens": seen + output,
        "cacheWriteInputTokens": cached_prefix,
        "cacheReadInputTokens": 0,
    }


def _handler(stand_in: BedrockStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            match = re.fullmatch(r"/model/([^/]+)/(converse|invoke)", self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if match is None:
                return self._send(404, {"message": f"unknown path {self.path}"}, "UnknownOperationException")
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                return self._send(400, {"message": "body is not JSON"}, "ValidationException")
            model, api = unquote(match.group(1)), match.group(2)
            status, payload = (stand_in.converse if api == "converse" else stand_in.invoke)(model, body)
            self._send(status, payload, None if status == 200 else "ValidationException")

        def _send(self, status: int, payload: dict[str, Any], error: str | None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if error:
                self.send_header("x-amzn-ErrorType", error)
            self.end_headers()
            self.wfile.write(data)

    return Handler
