"""Bedrock Converse as an LLMProvider: structured output through one forced tool call.

The request's JSON Schema becomes the input schema of a single tool and `toolChoice` forces the
model to call it, so the answer is the tool-use input (a JSON object), never free text.
"""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Any

from mongomem.budget import request_deadline
from mongomem.ports import ANSWERS, LLMAnswerError, LLMConfigError, LLMError, LLMRequest, LLMResult
from mongomem.providers import record_llm_metrics

_clients: dict[tuple[str | None, float, int, str], Any] = {}
_clients_lock = threading.Lock()
# budget_fit's (timeout, attempts) pairs vary with the time left; the client cache keeps the newest few
MAX_CLIENTS = 8
# Errors no retry fixes: the account, role or model must change (surfaced at once, never retried blindly).
CONFIG_ERRORS = frozenset(
    {
        "AccessDeniedException",
        "UnrecognizedClientException",
        "ResourceNotFoundException",
        "ValidationException",  # one the provider cannot adapt to (tool choice and cache points it can)
        "ExpiredTokenException",
        "InvalidSignatureException",
    }
)


def client_config(timeout: float, max_retries: int) -> Any:
    """botocore's own retries serve Bedrock: standard mode (throttling, 5xx, ModelNotReady, timeouts and
    dropped connections, exponential backoff with jitter, a retry quota) for 1 + max_retries attempts."""
    from botocore.config import Config  # lazy: 90 ms

    return Config(
        connect_timeout=min(timeout, 10.0),
        read_timeout=timeout,
        retries={"mode": "standard", "total_max_attempts": max_retries + 1},
    )


def bedrock_runtime_client(region: str | None, timeout: float, max_retries: int = 3) -> Any:
    """One bedrock-runtime client per (region, timeout, retries) per process, created on first use."""
    key = (region, timeout, max_retries, "bedrock-runtime")
    with _clients_lock:
        client = _clients.pop(key, None)
        if client is None:
            import boto3  # lazy: 138 ms

            config = client_config(timeout, max_retries)
            client = boto3.client("bedrock-runtime", region_name=region, config=config)
        _clients[key] = client  # the newest last: the oldest goes first when the cache is full
        while len(_clients) > MAX_CLIENTS:
            del _clients[next(iter(_clients))]
    return client


# Below this much time left, an LLM call is not started (it could not finish and would only time out).
MIN_CALL_SECONDS = 2.0


def budget_fit(remaining: float, timeout: float, attempts: int) -> tuple[float, int]:
    """(per-attempt timeout, attempts) whose worst case - every attempt timing out, with botocore's
    standard backoff (at most min(20, 2^i) s) between them - fits in `remaining` seconds."""
    if remaining < MIN_CALL_SECONDS:
        raise LLMError(f"no time left for an LLM call ({remaining:.1f}s of the budget remain)")
    room = remaining - 1.0
    # an attempt may spend its connect timeout (min(read, 10) s, client_config) and then its read timeout
    per = min(timeout, room / 2 if room <= 20 else room - 10.0)
    worst = per + min(per, 10.0)
    fit = 1
    for k in range(2, attempts + 1):
        backoff = sum(min(20.0, 2.0**i) for i in range(1, k))
        if k * worst + backoff > room:
            break
        fit = k
    return max(0.5, round(per, 1)), fit


def attempts_made(response: Any) -> int:
    """How many requests botocore sent for one call (its retries included), from the response metadata."""
    meta = response.get("ResponseMetadata") if isinstance(response, dict) else None
    retries = meta.get("RetryAttempts") if isinstance(meta, dict) else None
    return 1 + int(retries) if isinstance(retries, int) else 1


def aws_error_message(exc: BaseException) -> str:
    """`Code: message`, plus how many attempts botocore made when it retried before giving up."""
    from botocore.exceptions import ClientError  # lazy: 8.3 ms

    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        text = f"{err.get('Code', 'error')}: {err.get('Message', '')}"
        attempts = attempts_made(exc.response)
        return f"{text} (gave up after {attempts} attempts)" if attempts > 1 else text
    return f"{type(exc).__name__}: {exc}"


def aws_credentials_ready(region: str | None) -> tuple[bool, str]:
    """Whether boto3 could sign a call here: a region and credentials resolvable (no AWS API call)."""
    try:
        import botocore.session  # lazy: 121 ms

        session = botocore.session.get_session()
        if not (region or session.get_config_variable("region")):
            return False, "no AWS region configured (set providers region or AWS_REGION)"
        if session.get_credentials() is None:
            return False, "no AWS credentials found (role, environment or profile)"
    except Exception as exc:
        return False, f"AWS credentials cannot be resolved: {type(exc).__name__}: {exc}"
    return True, ""


def tool_name(schema_name: str) -> str:
    """A Converse tool name ([a-zA-Z0-9_-], at most 64 characters) from the schema's name."""
    name = re.sub(r"[^a-zA-Z0-9_-]+", "_", schema_name).strip("_")[:64]
    return name or "answer"


class BedrockLLM:
    """Structured JSON answers from a Bedrock model (any model that supports Converse tool use)."""

    capabilities = ANSWERS

    def __init__(
        self,
        model_id: str,
        region: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        client: Any = None,
        *,
        temperature: float | None = 0.0,
    ) -> None:
        self.model_id = model_id
        self.region = region
        self.timeout = timeout
        self.max_retries = max_retries
        self.temperature = temperature
        self.name = f"bedrock:{model_id}" if model_id else "bedrock"
        self._client = client  # a client passed in brings its own retry configuration
        self._credentials_ok = False
        # Models that reject a named tool choice still honour "any" when there is only one tool.
        self._tool_choice: str = "tool"
        # Prompt caching (cachePoint blocks); switched off for a model that refuses them.
        self._cache_points = True
        self.attempts = 0  # attempts made by the last call (for diagnostics and tests)

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = bedrock_runtime_client(self.region, self.timeout, self.max_retries)
        return self._client

    def ready(self) -> tuple[bool, str]:
        if not self.model_id:
            return False, "no Bedrock model id configured (memory.providers.llm.model)"
        if self._client is not None or self._credentials_ok:
            return True, ""
        ok, reason = aws_credentials_ready(self.region)
        self._credentials_ok = ok
        return ok, reason

    def _request(self, request: LLMRequest) -> dict[str, Any]:
        """Converse's prompt order is tools, system, messages. Every call for one snapshot offers the same
        tools (every kind's answer tool) and the same system blocks (the instructions, the transcript and a
        cache point after them), so the first call's cache entry serves the others; `toolChoice` names the
        kind's tool (a changed tool choice invalidates only the messages' cache) and the kind's part is the
        user message."""
        name = tool_name(request.schema_name)
        named = self._tool_choice == "tool"
        schemas = request.siblings if named and request.siblings else {}
        if request.schema_name not in schemas:
            schemas = {**schemas, request.schema_name: request.schema}
        tools = [
            {
                "toolSpec": {
                    "name": tool_name(n),
                    # the same for every tool: a task-specific word in the prefix would split the cache
                    "description": "Record the answer as JSON matching the schema.",
                    "inputSchema": {"json": schema},
                }
            }
            for n, schema in schemas.items()
        ]
        tool_config: dict[str, Any] = {"tools": tools}
        if named:
            tool_config["toolChoice"] = {"tool": {"name": name}}
        elif self._tool_choice == "any":
            tool_config["toolChoice"] = {"any": {}}
        inference: dict[str, Any] = {"maxTokens": request.max_tokens}
        if self.temperature is not None:
            inference["temperature"] = self.temperature
        system: list[dict[str, Any]] = [{"text": request.system}] if request.system else []
        if request.shared:
            system.append({"text": request.shared})
            if self._cache_points:
                system.append({"cachePoint": {"type": "default"}})
        params: dict[str, Any] = {
            "modelId": self.model_id,
            "messages": [{"role": "user", "content": [{"text": request.prompt}]}],
            "inferenceConfig": inference,
            "toolConfig": tool_config,
        }
        if system:
            params["system"] = system
        return params

    def _converse(self, request: LLMRequest) -> dict[str, Any]:
        from botocore.exceptions import ClientError, ParamValidationError  # lazy: 7.6 ms

        while True:
            params = self._request(request)
            try:
                return dict(self._call(params, request.deadline))
            except ParamValidationError as exc:
                # an SDK older than Converse's cachePoint refuses the block before sending anything
                if "cachepoint" in str(exc).replace(" ", "").lower() and self._cache_points:
                    self._cache_points = False
                    _log_downgrade(self.name, "cache points", "this SDK does not know cachePoint")
                    continue
                raise LLMConfigError(f"{self.name}: the SDK refused the request: {exc}") from exc
            except ClientError as exc:
                self.attempts += attempts_made(exc.response)
                err = exc.response.get("Error", {})
                code = str(err.get("Code", ""))
                message = str(err.get("Message", ""))
                if (
                    code == "ValidationException"
                    and "toolchoice" in message.replace(" ", "").lower()
                    and self._tool_choice != "auto"
                ):
                    self._tool_choice = "any" if self._tool_choice == "tool" else "auto"
                    _log_downgrade(self.name, "tool choice", message)
                    continue
                if code == "ValidationException" and "cach" in message.lower() and self._cache_points:
                    self._cache_points = False  # a model without prompt caching: ask without cache points
                    _log_downgrade(self.name, "cache points", message)
                    continue
                error = LLMConfigError if code in CONFIG_ERRORS else LLMError
                raise error(f"{self.name}: {aws_error_message(exc)}") from exc

    def _call(self, params: dict[str, Any], deadline: float | None = None) -> Any:
        # botocore retries inside this one call (client_config); with a deadline, the client's timeouts
        # and attempts are cut so that even every retry (and its backoff) ends before it.
        deadline = deadline if deadline is not None else request_deadline()  # an API request's budget
        client = self.client if deadline is None else self._client_within(deadline)
        response = client.converse(**params)
        self.attempts += attempts_made(response)
        return response

    def _client_within(self, deadline: float) -> Any:
        if self._client is not None:  # an injected client (tests) keeps its own settings
            return self._client
        timeout, attempts = budget_fit(deadline - time.monotonic(), self.timeout, self.max_retries + 1)
        return bedrock_runtime_client(self.region, timeout, attempts - 1)

    def complete_json(self, request: LLMRequest) -> LLMResult:
        if not self.model_id:
            raise LLMError("bedrock: no model id configured")
        self.attempts = 0
        started = time.perf_counter()
        try:
            response = self._converse(request)
        except LLMError:
            raise
        except Exception as exc:
            raise LLMError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        latency_ms = (time.perf_counter() - started) * 1000.0
        text = self._answer(response)
        usage = response.get("usage") or {}
        read = int(usage.get("cacheReadInputTokens") or 0)
        result = LLMResult(
            text=text,
            model=self.model_id,
            # everything the call read: uncached input, cache reads and writes
            input_tokens=int(usage.get("inputTokens") or 0)
            + read
            + int(usage.get("cacheWriteInputTokens") or 0),
            output_tokens=int(usage.get("outputTokens") or 0),
            latency_ms=latency_ms,
            cached_tokens=read,
        )
        record_llm_metrics(result)
        return result

    def _answer(self, response: dict[str, Any]) -> str:
        stop = response.get("stopReason")
        content = ((response.get("output") or {}).get("message") or {}).get("content") or []
        for block in content:
            tool_use = block.get("toolUse") if isinstance(block, dict) else None
            if tool_use is not None and "input" in tool_use:
                value = tool_use["input"]
                return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        texts = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict)).strip()
        if stop == "max_tokens":
            raise LLMAnswerError(
                f"{self.name}: the answer was cut off at max_tokens before the tool call", "cut_off", texts
            )
        if stop in ("guardrail_intervened", "content_filtered"):
            raise LLMAnswerError(f"{self.name}: the model refused ({stop})", "refused")
        if texts:
            return texts  # a model that answered in text instead of the tool: the caller reads its JSON
        raise LLMAnswerError(
            f"{self.name}: the model answered without calling the tool (stopReason={stop})", "no_answer"
        )


def _log_downgrade(name: str, what: str, why: str) -> None:
    from mongomem.observability import logger  # lazy: 26 ms

    logger.warning(
        "Bedrock model refused part of the request; asking without it from now on",
        extra={"llm": name, "dropped": what, "why": why[:300]},
    )
