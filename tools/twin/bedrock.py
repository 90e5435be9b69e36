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
- A checkpoint whose prefix is shorter than the model's minimum (CACHE_MINIMUMS: Nova 1,000 tokens,
  Claude 3.7 Sonnet and Sonnet/Opus 4 1,024, Claude 3.5 Haiku 2,048, Claude Haiku 4.5 and Opus 4.5 4,096)
  caches nothing; more than 4 checkpoints in a request is refused; Nova models refuse a cachePoint among
  the tools (tools caching is Claude-only). Models of other families ignore cache points.
- An entry is readable only once the call that writes it has completed: a call that starts while the
  writer is still running misses and writes the same prefix again (billed again). Each call takes
  `latency(call)` seconds (default `delay_seconds`), so calls made at once overlap as on Bedrock.
  Entries live 5 minutes after their last use (`clock` is injectable).
- Converse's documented limits are refused with a ValidationException (docs/aws-rules.md, Bedrock
  Runtime): `inferenceConfig.temperature` and `topP` outside [0, 1], `maxTokens` below 1, a tool name
  outside `[a-zA-Z0-9_-]{1,64}` or used twice, a `toolChoice` naming no offered tool, more than 4 cache
  points.
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
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
# Minimum tokens of a cache checkpoint's prefix, per model (the prompt-caching page's table of supported
# models); the first pattern a model id contains wins.
CACHE_MINIMUMS: tuple[tuple[str, int], ...] = (
    ("claude-haiku-4-5", 4096),
    ("claude-opus-4-5", 4096),
    ("claude-3-5-haiku", 2048),
    ("claude-3-7-sonnet", 1024),
    ("claude-sonnet-4", 1024),
    ("claude-opus-4", 1024),
    ("amazon.nova", 1000),
)


@dataclass(frozen=True)
class CacheRules:
    min_tokens: int  # a checkpoint's whole prefix must reach this to be cached
    tools: bool  # may a cachePoint stand among the tool definitions


def cache_rules(model: str) -> CacheRules | None:
    """Prompt-caching rules of a model family (None: the model does not cache)."""
    name = model.lower()
    for pattern, minimum in CACHE_MINIMUMS:
        if pattern in name:
            return CacheRules(min_tokens=minimum, tools="anthropic.claude" in name)
    if "anthropic.claude" in name:  # another Claude with caching: the most common minimum
        return CacheRules(min_tokens=1024, tools=True)
    return None


def converse_refusal(model: str, body: dict[str, Any]) -> str | None:
    """Why Converse refuses this request (its documented limits), or None."""
    inference = body.get("inferenceConfig") or {}
    for field_name in ("temperature", "topP"):
        value = inference.get(field_name)
        if value is not None and not 0 <= float(value) <= 1:
            return f"inferenceConfig.{field_name} must be between 0 and 1 (got {value})"
    if inference.get("maxTokens") is not None and int(inference["maxTokens"]) < 1:
        return "inferenceConfig.maxTokens must be at least 1"
    tool_config = body.get("toolConfig") or {}
    names = [t["toolSpec"].get("name", "") for t in tool_config.get("tools") or [] if "toolSpec" in t]
    for name in names:
        if not TOOL_NAME.fullmatch(str(name)):
            return f"tool name {name!r} must match [a-zA-Z0-9_-]+ and be 1 to 64 characters long"
    if len(set(names)) != len(names):
        return "the tool names must be unique"
    chosen = ((tool_config.get("toolChoice") or {}).get("tool") or {}).get("name")
    if chosen is not None and chosen not in names:
        return f"toolChoice names {chosen!r}, which is not one of the tools"
    points = sum(1 for _, _, c in prompt_parts(body) if c is CACHE_POINT)
    if points > MAX_CHECKPOINTS:
        return f"a request may have at most {MAX_CHECKPOINTS} cache points (got {points})"
    rules = cache_rules(model)
    if (
        rules is not None
        and not rules.tools
        and any("cachePoint" in t for t in tool_config.get("tools") or [])
    ):
        return f"The model {model} does not support prompt caching of tools"
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
        # seconds one call takes (default: delay_seconds), from the recorded call's figures
        self.latency: Callable[[dict[str, Any]], float] | None = None
        self.clock: Callable[[], float] = time.monotonic
        # prefix key -> (readable from, last use) in clock seconds: readable once its writer completed
        self._cache: dict[str, tuple[float, float]] = {}
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
        refusal = converse_refusal(model, body)
        if refusal is not None:
            return 400, {"message": refusal}
        chosen = ((tool_config.get("toolChoice") or {}).get("tool") or {}).get("name")
        tool = chosen or tools[0]["toolSpec"]["name"]
        # what the model reads: the system blocks (the transcript is one) and the messages
        blocks = [*(body.get("system") or []), *(b for m in body["messages"] for b in m.get("content") or [])]
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
            started = self.clock()
            usage, detail = self._usage(model, body, answer, started)
            call = {
                "api": "converse",
                "model": model,
                "tool": tool,
                "prompt": prompt,
                "usage": usage,
                "body": body,
                "started": started,
                **detail,
            }
        pause = self.latency(call) if self.latency is not None else self.delay_seconds
        if pause:
            time.sleep(pause)
        with self._lock:
            # the call completes: what it wrote becomes readable now, what it read was used now
            done = self.clock()
            for key in detail["cache_write_keys"]:
                self._cache[key] = (done, done)
            if detail["cache_read_key"] in self._cache:
                since, _ = self._cache[detail["cache_read_key"]]
                self._cache[detail["cache_read_key"]] = (since, done)
            call["completed"] = done
            self.calls.append(call)
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
            "metrics": {"latencyMs": int(pause * 1000) or 5},
        }

    def _usage(
        self, model: str, body: dict[str, Any], answer: Any, now: float
    ) -> tuple[dict[str, int], dict[str, Any]]:
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
            for key, (_, used) in list(self._cache.items()):
                if now - used > CACHE_TTL_SECONDS:
                    del self._cache[key]
            usable = [(n, k) for n, k in checkpoints[:MAX_CHECKPOINTS] if n >= rules.min_tokens]
            for n, key in usable:
                entry = self._cache.get(key)
                if entry is not None and entry[0] <= now:  # written by a call that has completed
                    read, read_key = n, key
            for n, key in usable:
                if n > read:
                    write = n - read
                    written.append(key)
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
