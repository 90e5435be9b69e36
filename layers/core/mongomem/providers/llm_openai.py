"""Any OpenAI-compatible chat-completions server as an LLMProvider (OpenAI, vLLM, Ollama, LiteLLM, ...).

Structured output asks for `response_format: json_schema`; a server that rejects that (HTTP 400
naming response_format) is asked again with `json_object` and the schema in the system prompt, and
the provider remembers the downgrade for the rest of the process.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from mongomem.ports import LLMError, LLMRequest, LLMResult
from mongomem.providers import record_llm_metrics
from mongomem.providers.http import HTTPError, HTTPStatusError, check_url, post_json
from mongomem.retrying import DeadlineExceeded, RetriesExhausted, RetryPolicy

OPENAI_BASE_URL = "https://api.openai.com/v1"
_FENCE = re.compile(r"^\s*```(?:json)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def schema_name(name: str) -> str:
    """A json_schema name as OpenAI accepts it: [a-zA-Z0-9_-], at most 64 characters."""
    return re.sub(r"[^a-zA-Z0-9_-]+", "_", name).strip("_")[:64] or "answer"


def strip_fences(text: str) -> str:
    """JSON-mode servers sometimes wrap the object in a ```json fence; the caller wants bare JSON."""
    match = _FENCE.match(text)
    return match.group(1).strip() if match else text.strip()


class OpenAICompatibleLLM:
    """Structured JSON answers from POST {base_url}/chat/completions."""

    offline = False

    def __init__(
        self,
        base_url: str = OPENAI_BASE_URL,
        model: str = "",
        api_key: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        *,
        api_key_env: str | None = None,
        require_key: bool = True,
        temperature: float | None = 0.0,
        base_delay: float = 0.5,
        max_delay: float = 8.0,
        max_retry_after: float = 20.0,
    ) -> None:
        self.base_url = check_url(base_url)
        self.model = model
        self.api_key = api_key or None
        self.api_key_env = api_key_env
        self.require_key = require_key
        self.timeout = timeout
        self.temperature = temperature
        self.name = f"openai-compatible:{model}" if model else "openai-compatible"
        self.policy = RetryPolicy(
            max_retries=max_retries,
            base_delay=base_delay,
            max_delay=max_delay,
            max_retry_after=max_retry_after,
        )
        self.json_schema_supported = True  # False once the server rejected response_format json_schema
        self.token_param = "max_tokens"  # newer OpenAI models only accept max_completion_tokens
        self.attempts = 0  # HTTP attempts made by the last call

    def ready(self) -> tuple[bool, str]:
        if not self.model:
            return False, "no model configured (memory.providers.llm.model)"
        if self.require_key and not self.api_key:
            where = f"environment variable {self.api_key_env}" if self.api_key_env else "api_key_env"
            return False, f"API key missing: {where} is not set"
        return True, ""

    def _body(self, request: LLMRequest, structured: bool) -> dict[str, Any]:
        system = request.system
        if structured:
            response_format: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {
                    "name": schema_name(request.schema_name),
                    "schema": request.schema,
                    "strict": False,
                },
            }
        else:
            response_format = {"type": "json_object"}
            system = (
                f"{system}\n\nAnswer with one JSON object only (no prose, no code fence) that "
                f"validates against this JSON Schema:\n{json.dumps(request.schema, separators=(',', ':'))}"
            ).lstrip()
        body: dict[str, Any] = {
            "model": self.model,
            # the shared part first: servers with automatic prefix caching reuse it across the kinds' calls
            "messages": [
                {"role": "system", "content": system},
                {
                    "role": "user",
                    "content": f"{request.shared}\n\n{request.prompt}" if request.shared else request.prompt,
                },
            ],
            "response_format": response_format,
            self.token_param: request.max_tokens,
        }
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    def _post(self, body: dict[str, Any], deadline: float | None) -> Any:
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            response = post_json(
                f"{self.base_url}/chat/completions",
                body,
                headers=headers,
                timeout=self.timeout,
                policy=self.policy,
                what=f"{self.name} chat/completions",
                deadline=deadline,
            )
        except (RetriesExhausted, HTTPError) as exc:
            self.attempts += exc.attempts
            raise
        self.attempts += response.attempts
        return response.data

    def _downgrade(self, exc: HTTPStatusError) -> bool:
        """Adapt to a server that rejected part of the request (HTTP 400); False if nothing to adapt."""
        body = exc.body.lower()
        if exc.status != 400:
            return False
        if "max_completion_tokens" in body and self.token_param == "max_tokens":
            self.token_param = "max_completion_tokens"
            return True
        if self.json_schema_supported and ("response_format" in body or "json_schema" in body):
            self.json_schema_supported = False  # JSON mode, with the schema in the system prompt
            return True
        return False

    def _send(self, request: LLMRequest) -> Any:
        # Each downgrade happens at most once per process, so this loop is bounded.
        while True:
            try:
                return self._post(self._body(request, self.json_schema_supported), request.deadline)
            except HTTPStatusError as exc:
                if not self._downgrade(exc):
                    raise

    def complete_json(self, request: LLMRequest) -> LLMResult:
        ok, reason = self.ready()
        if not ok:
            raise LLMError(f"{self.name}: not ready: {reason}")
        self.attempts = 0
        started = time.perf_counter()
        try:
            data = self._send(request)
        except RetriesExhausted as exc:
            raise LLMError(f"{exc}") from exc.last
        except (HTTPError, DeadlineExceeded) as exc:
            raise LLMError(f"{self.name}: {exc}" if isinstance(exc, DeadlineExceeded) else str(exc)) from exc
        latency_ms = (time.perf_counter() - started) * 1000.0
        text = self._content(data)
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        result = LLMResult(
            text=text,
            model=str(data.get("model") or self.model),
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            latency_ms=latency_ms,
        )
        record_llm_metrics(result)
        return result

    def _content(self, data: Any) -> str:
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise LLMError(
                f"{self.name}: malformed answer (no choices[0].message): {str(data)[:200]!r}"
            ) from None
        content = message.get("content") if isinstance(message, dict) else None
        if not content:
            refusal = message.get("refusal") if isinstance(message, dict) else None
            if refusal:
                raise LLMError(f"{self.name}: the model refused: {str(refusal)[:200]}")
            raise LLMError(f"{self.name}: empty answer (finish_reason={choice.get('finish_reason')})")
        if choice.get("finish_reason") == "length":
            raise LLMError(f"{self.name}: the answer was cut off at max_tokens ({len(content)} characters)")
        return strip_fences(str(content))
