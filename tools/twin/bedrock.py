"""A Bedrock Runtime stand-in that speaks the real wire format, with deterministic answers.

- POST /model/{modelId}/converse: the Converse API. Answers with a tool call to the request's (only)
  tool: the first scripted rule whose `tool` matches and whose `contains` strings all occur in the
  prompt, else an empty answer ({"items": []}, or ADD for reconciliation). Usage is counted the way
  Converse reports it (input, output, cache read/write tokens around `cachePoint` blocks).
- POST /model/{modelId}/invoke: Titan Text Embeddings v2 ({"inputText", "dimensions", "normalize"}),
  a deterministic feature-hashing vector (similar texts get similar vectors).
Functions reach it through AWS_ENDPOINT_URL_BEDROCK_RUNTIME; they sign with SigV4 as for the real
service (the signature is not checked). Every request is recorded for assertions.

Tokens and prompt caching (what bench/llm_cost.py measures with):
- A text block counts ceil(characters / 4) tokens; a tool definition counts its toolSpec's JSON. The
  prompt is read in Bedrock's order: tool definitions, system blocks, then the messages' blocks.
- A `{"cachePoint": {"type": "default"}}` block marks a checkpoint: everything before it is a prefix
  that later requests can read from the cache. The prefix of a checkpoint is keyed by the model, the
  tool definitions, the system blocks and message blocks before it, and (for checkpoints in the
  messages) `toolChoice`; any difference before the checkpoint is a miss, as on Bedrock.
- A checkpoint whose prefix is shorter than the model's minimum (Nova 1,000 tokens, Claude Sonnet 1,024,
  Claude Haiku 2,048) caches nothing; at most 4 checkpoints per request; Nova models refuse a
  cachePoint among the tools (tools caching is Claude-only). Entries live 5 minutes after their last
  use (`clock` is injectable). Models of other families ignore cache points.
- usage: `cacheReadInputTokens` = the longest cached prefix, `cacheWriteInputTokens` = the tokens from
  there to the last checkpoint that qualifies, `inputTokens` = the rest (billed at the input price),
  `totalTokens` = input + read + write + output. Each recorded call keeps these figures, the tokens of
  each part (tools, system, messages) and the checkpoint keys it read and wrote.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

TITAN_V2 = "amazon.titan-embed-text-v2:0"
TITAN_DIMS = (256, 512, 1024)
CACHE_TTL_SECONDS = 300.0
MAX_CHECKPOINTS = 4


@dataclass(frozen=True)
class CacheRules:
    min_tokens: int  # a checkpoint's whole prefix must reach this to be cached
    tools: bool  # may a cachePoint stand among the tool definitions


def cache_rules(model: str) -> CacheRules | None:
    """Prompt-caching rules of a model family (None: the model does not cache)."""
    name = model.lower()
    if "amazon.nova" in name:
        return CacheRules(min_tokens=1000, tools=False)
    if "anthropic.claude" in name:
        return CacheRules(min_tokens=2048 if "haiku" in name else 1024, tools=True)
    return None


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
        # Answers for requests no scripted rule matched: responder(tool, body, prompt) -> answer or None.
        self.responder: Callable[[str, dict[str, Any], str], dict[str, Any] | None] | None = None
        self.clock: Callable[[], float] = time.monotonic
        self._cache: dict[str, float] = {}  # prefix key -> last use (clock seconds)
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

    def reset(self) -> None:
        """Forget the recorded calls and the prompt cache."""
        with self._lock:
            self.calls.clear()
            self._cache.clear()

    def script(self, tool: str, answer: dict[str, Any], *contains: str) -> None:
        with self._lock:
            self.rules.insert(0, Rule(tool, answer, list(contains)))

    def converses(self) -> list[dict[str, Any]]:
        return [c for c in self.calls if c["api"] == "converse"]

    # -- the APIs ------------------------------------------------------------------------------------
    def converse(self, model: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        tool_config = body.get("toolConfig") or {}
        tools = [t for t in tool_config.get("tools") or [] if isinstance(t, dict) and "toolSpec" in t]
        if not body.get("messages"):
            return 400, {"message": "messages is required"}
        if not tools:
            return 400, {"message": "this stand-in answers tool-use requests only"}
        rules = cache_rules(model)
        if (
            rules is not None
            and not rules.tools
            and any("cachePoint" in t for t in tool_config.get("tools") or [])
        ):
            return 400, {"message": f"The model {model} does not support prompt caching of tools"}
        chosen = ((tool_config.get("toolChoice") or {}).get("tool") or {}).get("name")
        tool = chosen or tools[0]["toolSpec"]["name"]
        if self.delay_seconds:
            time.sleep(self.delay_seconds)
        blocks = [b for m in body["messages"] for b in m.get("content") or []]
        prompt = " ".join(b.get("text", "") for b in blocks if isinstance(b, dict))
        answer: dict[str, Any] | None = None
        with self._lock:
            for rule in self.rules:
                if rule.tool == tool and all(c in prompt for c in rule.contains):
                    answer = rule.answer
                    break
        if answer is None and self.responder is not None:
            answer = self.responder(tool, body, prompt)
        if answer is None:
            answer = {"items": []}
            if tool == "reconcile":
                answer = {"decision": "ADD", "target_id": None, "reason": "stand-in: no rule matched"}
        with self._lock:
            usage, detail = self._usage(model, body, answer)
            self.calls.append(
                {
                    "api": "converse",
                    "model": model,
                    "tool": tool,
                    "prompt": prompt,
                    "usage": usage,
                    "body": body,
                    **detail,
                }
            )
            n = len(self.calls)
        return 200, {
            "output": {
                "message": {
                    "role": "assistant",
                    "content": [{"toolUse": {"toolUseId": f"tooluse_{n}", "name": tool, "input": answer}}],
                }
            },
            "stopReason": "tool_use",
            "usage": usage,
            "metrics": {"latencyMs": 5},
        }

    def _usage(self, model: str, body: dict[str, Any], answer: Any) -> tuple[dict[str, int], dict[str, Any]]:
        """Converse's usage for this request, and what the cache did (called under the lock)."""
        parts = prompt_parts(body)
        total = sum(n for _, n, _ in parts)
        rules = cache_rules(model)
        checkpoints: list[tuple[int, str]] = []  # (prefix tokens, prefix key)
        digest = hashlib.sha256(model.encode())
        seen = 0
        for section, n, content in parts:
            if content is CACHE_POINT:
                if section == "messages":
                    choice = json.dumps((body.get("toolConfig") or {}).get("toolChoice"), sort_keys=True)
                    key = _fork(digest, f"toolChoice:{choice}")
                else:
                    key = digest.hexdigest()
                checkpoints.append((seen, key))
                continue
            digest.update(f"{section}:{content}\x00".encode())
            seen += n
        read = write = 0
        read_key: str | None = None
        written: list[str] = []
        if rules is not None:
            now = self.clock()
            for key, used in list(self._cache.items()):
                if now - used > CACHE_TTL_SECONDS:
                    del self._cache[key]
            usable = [(n, k) for n, k in checkpoints[:MAX_CHECKPOINTS] if n >= rules.min_tokens]
            for n, key in usable:
                if key in self._cache:
                    read, read_key = n, key
            for n, key in usable:
                if n > read:
                    write = n - read
                    written.append(key)
            for n, key in usable:
                if n <= read + write:
                    self._cache[key] = now
        output = tokens(json.dumps(answer))
        usage = {
            "inputTokens": total - read - write,
            "outputTokens": output,
            "totalTokens": total + output,
            "cacheReadInputTokens": read,
            "cacheWriteInputTokens": write,
        }
        by_part: dict[str, int] = {}
        for section, n, _ in parts:
            by_part[section] = by_part.get(section, 0) + n
        detail = {"parts": by_part, "cache_read_key": read_key, "cache_write_keys": written}
        return usage, detail

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


CACHE_POINT = object()


def prompt_parts(body: dict[str, Any]) -> list[tuple[str, int, Any]]:
    """(section, tokens, content) in Bedrock's prompt order; a cachePoint's content is CACHE_POINT."""
    out: list[tuple[str, int, Any]] = []
    sections = [
        ("tools", (body.get("toolConfig") or {}).get("tools") or []),
        ("system", body.get("system") or []),
        ("messages", [b for m in body.get("messages") or [] for b in m.get("content") or []]),
    ]
    for section, blocks in sections:
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if "cachePoint" in block:
                out.append((section, 0, CACHE_POINT))
            elif "toolSpec" in block:
                spec = json.dumps(block["toolSpec"], sort_keys=True)
                out.append((section, tokens(spec), spec))
            elif "text" in block:
                out.append((section, tokens(block["text"]), block["text"]))
    return out


def _fork(digest: Any, extra: str) -> str:
    copy = digest.copy()
    copy.update(extra.encode())
    return str(copy.hexdigest())


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
