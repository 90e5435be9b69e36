"""Bedrock Converse as an LLMProvider: structured output through one forced tool call.

The request's JSON Schema becomes the input schema of a single tool and `toolChoice` forces the
model to call it, so the answer is the tool-use input (a JSON object), never free text.
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from typing import Any

from mongomem.ports import LLMError, LLMRequest, LLMResult
from mongomem.providers import record_llm_metrics
from mongomem.providers.retry import RetriesExhausted, RetryPolicy, call_with_retries

# Transient Bedrock error codes worth another attempt (the SDK's own retries come first).
RETRYABLE_CODES = frozenset(
    {
        "ThrottlingException",
        "ServiceUnavailableException",
        "ModelNotReadyException",
        "InternalServerException",
        "ModelTimeoutException",
        "TooManyRequestsException",
    }
)

_clients: dict[tuple[str | None, float, str], Any] = {}
_clients_lock = threading.Lock()


def bedrock_runtime_client(region: str | None, timeout: float) -> Any:
    """One bedrock-runtime client per (region, timeout) per process, created on first use."""
    key = (region, timeout, "bedrock-runtime")
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            import boto3
            from botocore.config import Config

            config = Config(
                connect_timeout=min(timeout, 10.0),
                read_timeout=timeout,
                # The SDK retries once with adaptive client-side rate limiting; the provider's own
                # bounded, jittered retries sit on top and end in a clear LLMError/EmbeddingError.
                retries={"mode": "adaptive", "total_max_attempts": 2},
            )
            client = boto3.client("bedrock-runtime", region_name=region, config=config)
            _clients[key] = client
    return client


def aws_credentials_ready(region: str | None) -> tuple[bool, str]:
    """Whether boto3 could sign a call here: a region and credentials resolvable (no AWS API call)."""
    try:
        import botocore.session

        session = botocore.session.get_session()
        if not (region or session.get_config_variable("region")):
            return False, "no AWS region configured (set providers region or AWS_REGION)"
        if session.get_credentials() is None:
            return False, "no AWS credentials found (role, environment or profile)"
    except Exception as exc:
        return False, f"AWS credentials cannot be resolved: {type(exc).__name__}: {exc}"
    return True, ""


def is_retryable_aws_error(exc: BaseException) -> bool:
    """Throttling, unavailable or not-ready model, and timeouts / dropped connections."""
    from botocore.exceptions import ClientError, HTTPClientError
    from botocore.exceptions import ConnectionError as BotoConnectionError

    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return code in RETRYABLE_CODES or status in (429, 503)
    return isinstance(exc, BotoConnectionError | HTTPClientError)


def tool_name(schema_name: str) -> str:
    """A Converse tool name ([a-zA-Z0-9_-], at most 64 characters) from the schema's name."""
    name = re.sub(r"[^a-zA-Z0-9_-]+", "_", schema_name).strip("_")[:64]
    return name or "answer"


class BedrockLLM:
    """Structured JSON answers from a Bedrock model (any model that supports Converse tool use)."""

    offline = False

    def __init__(
        self,
        model_id: str,
        region: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        client: Any = None,
        *,
        temperature: float | None = 0.0,
        base_delay: float = 0.5,
        max_delay: float = 8.0,
    ) -> None:
        self.model_id = model_id
        self.region = region
        self.timeout = timeout
        self.temperature = temperature
        self.name = f"bedrock:{model_id}" if model_id else "bedrock"
        self.policy = RetryPolicy(max_retries=max_retries, base_delay=base_delay, max_delay=max_delay)
        self._client = client
        self._credentials_ok = False
        # Models that reject a named tool choice still honour "any" when there is only one tool.
        self._tool_choice: str = "tool"
        self.attempts = 0  # attempts made by the last call (for diagnostics and tests)

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = bedrock_runtime_client(self.region, self.timeout)
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
        name = tool_name(request.schema_name)
        tool_config: dict[str, Any] = {
            "tools": [
                {
                    "toolSpec": {
                        "name": name,
                        "description": f"Record the {request.task} answer as JSON matching the schema.",
                        "inputSchema": {"json": request.schema},
                    }
                }
            ]
        }
        if self._tool_choice == "tool":
            tool_config["toolChoice"] = {"tool": {"name": name}}
        elif self._tool_choice == "any":
            tool_config["toolChoice"] = {"any": {}}
        inference: dict[str, Any] = {"maxTokens": request.max_tokens}
        if self.temperature is not None:
            inference["temperature"] = self.temperature
        params: dict[str, Any] = {
            "modelId": self.model_id,
            "messages": [{"role": "user", "content": [{"text": request.prompt}]}],
            "inferenceConfig": inference,
            "toolConfig": tool_config,
        }
        if request.system:
            params["system"] = [{"text": request.system}]
        return params

    def _converse(self, request: LLMRequest) -> dict[str, Any]:
        from botocore.exceptions import ClientError

        while True:
            params = self._request(request)
            try:
                return dict(
                    call_with_retries(
                        functools.partial(self._call, params),
                        self.policy,
                        is_retryable_aws_error,
                    )
                )
            except ClientError as exc:
                err = exc.response.get("Error", {})
                message = str(err.get("Message", ""))
                if (
                    err.get("Code") == "ValidationException"
                    and "toolchoice" in message.replace(" ", "").lower()
                    and self._tool_choice != "auto"
                ):
                    self._tool_choice = "any" if self._tool_choice == "tool" else "auto"
                    continue
                raise LLMError(f"{self.name}: {err.get('Code', 'error')}: {message}") from exc

    def _call(self, params: dict[str, Any]) -> Any:
        self.attempts += 1
        return self.client.converse(**params)

    def complete_json(self, request: LLMRequest) -> LLMResult:
        if not self.model_id:
            raise LLMError("bedrock: no model id configured")
        self.attempts = 0
        started = time.perf_counter()
        try:
            response = self._converse(request)
        except LLMError:
            raise
        except RetriesExhausted as exc:
            raise LLMError(f"{self.name}: {exc}") from exc.last
        except Exception as exc:
            raise LLMError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
        latency_ms = (time.perf_counter() - started) * 1000.0
        text = self._answer(response)
        usage = response.get("usage") or {}
        result = LLMResult(
            text=text,
            model=self.model_id,
            input_tokens=int(usage.get("inputTokens") or 0),
            output_tokens=int(usage.get("outputTokens") or 0),
            latency_ms=latency_ms,
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
        if stop == "max_tokens":
            raise LLMError(f"{self.name}: the answer was cut off at max_tokens before the tool call")
        if stop in ("guardrail_intervened", "content_filtered"):
            raise LLMError(f"{self.name}: the model refused ({stop})")
        texts = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict)).strip()
        raise LLMError(
            f"{self.name}: the model answered without calling the tool (stopReason={stop}): {texts[:200]!r}"
        )
