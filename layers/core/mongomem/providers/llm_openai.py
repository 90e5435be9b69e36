"""Any OpenAI-compatible chat-completions server as an LLMProvider (OpenAI, vLLM, Ollama, llama.cpp, ...).

Servers differ in how they hold a model to a JSON Schema, so the provider knows five structured-output
modes and uses the first one the server accepts (docs/providers.md "How structured output is obtained"):

- `json_schema`: `response_format: {type: json_schema, json_schema: {name, schema, strict}}` (OpenAI,
  vLLM, Ollama, LM Studio, llama.cpp's server);
- `json_object_schema`: `response_format: {type: json_object, schema}` (llama.cpp's server and
  llama-cpp-python's, which refuses `json_schema`);
- `tools`: every sibling schema as a function tool, `tool_choice` naming this call's (OpenAI counts a
  structured-output schema as part of the prompt prefix, tools identical across calls keep it shared);
- `json_object`: plain JSON mode, an example answer in the prompt (never the raw schema: small models
  echo it back);
- `prompt`: no `response_format` at all, the example in the prompt (servers that refuse JSON mode).

`memory.providers.llm.structured_output` pins a mode; otherwise the provider starts with the server's
likely best and moves down the list when the server refuses a mode - whatever status the refusal comes
with (400, 422, or a 500 whose body names the refused field) - or ignores it (a named tool choice
answered with another tool or none). What it learns holds for the process (every provider object built
for the same server and model shares it).
"""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Any, Literal

from mongomem.ports import ANSWERS, LLMAnswerError, LLMConfigError, LLMError, LLMRequest, LLMResult
from mongomem.providers import record_llm_metrics
from mongomem.providers.http import HTTPError, HTTPStatusError, check_url, get_json, post_json
from mongomem.retrying import DeadlineExceeded, RetriesExhausted, RetryPolicy

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_HOST = "api.openai.com"

StructuredOutput = Literal["auto", "json_schema", "json_object_schema", "tools", "json_object", "prompt"]
MODES: tuple[str, ...] = ("json_schema", "json_object_schema", "tools", "json_object", "prompt")
# OpenAI itself: tools first (its prompt cache counts a response_format schema as part of the prefix).
OPENAI_MODES: tuple[str, ...] = ("tools", "json_schema", "json_object", "prompt")
# A refusal of a mode names what it refused; a server error that names none of these is a real failure.
_REFUSAL_WORDS = {
    "json_schema": ("response_format", "json_schema"),
    "json_object_schema": ("response_format", "json_object", "schema"),
    "tools": ("tool",),
    "json_object": ("response_format", "json_object"),
    "prompt": (),
}
REFUSAL_STATUSES = frozenset({400, 422, 500, 501})
# Statuses that no retry and no other request shape can fix: the deployment must change.
CONFIG_STATUSES = {401: "the server refused the API key", 403: "access denied", 404: "unknown model or URL"}

# What each server/model pair accepted: (base_url, model) -> index into its mode list. Process-wide.
_learned: dict[tuple[str, str], str] = {}
_learned_lock = threading.Lock()
# Cheap readiness probe results: (base_url, model) -> (checked at, ok, reason).
_probes: dict[tuple[str, str], tuple[float, bool, str]] = {}
PROBE_TTL_SECONDS = 60.0


def schema_name(name: str) -> str:
    """A json_schema / function name as OpenAI accepts it: [a-zA-Z0-9_-], at most 64 characters."""
    return re.sub(r"[^a-zA-Z0-9_-]+", "_", name).strip("_")[:64] or "answer"


def forget_learned() -> None:
    """Forget what servers accepted and the readiness probes (tests)."""
    with _learned_lock:
        _learned.clear()
        _probes.clear()


class OpenAICompatibleLLM:
    """Structured JSON answers from POST {base_url}/chat/completions."""

    capabilities = ANSWERS

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
        structured_output: StructuredOutput = "auto",
    ) -> None:
        self.base_url = check_url(base_url)
        self.model = model
        self.api_key = api_key or None
        self.api_key_env = api_key_env
        self.require_key = require_key
        self.timeout = timeout
        self.temperature = temperature
        self.structured_output = structured_output
        self.name = f"openai-compatible:{model}" if model else "openai-compatible"
        self.policy = RetryPolicy(
            max_retries=max_retries,
            base_delay=base_delay,
            max_delay=max_delay,
            max_retry_after=max_retry_after,
        )
        self.token_param = "max_tokens"  # newer OpenAI models only accept max_completion_tokens
        self.attempts = 0  # HTTP attempts made by the last call

    # -- modes -------------------------------------------------------------------------------------
    @property
    def modes(self) -> tuple[str, ...]:
        if self.structured_output != "auto":
            return (self.structured_output,)
        return OPENAI_MODES if OPENAI_HOST in self.base_url else MODES

    @property
    def mode(self) -> str:
        """The structured-output mode the next call uses."""
        if self.structured_output != "auto":
            return self.structured_output
        with _learned_lock:
            return _learned.get((self.base_url, self.model), self.modes[0])

    def _step_down(self, mode: str, why: str) -> bool:
        """Move to the mode after `mode` for this server and model; False when there is none."""
        modes = self.modes
        if mode not in modes or modes.index(mode) + 1 >= len(modes):
            return False
        nxt = modes[modes.index(mode) + 1]
        with _learned_lock:
            if _learned.get((self.base_url, self.model), modes[0]) == mode:
                _learned[(self.base_url, self.model)] = nxt
        from mongomem.observability import logger  # lazy: 16 ms

        logger.warning(
            "LLM server refused a structured-output mode; using the next one from now on",
            extra={"llm": self.name, "refused": mode, "now": nxt, "why": why[:300]},
        )
        return True

    # -- readiness ---------------------------------------------------------------------------------
    def ready(self) -> tuple[bool, str]:
        if not self.model:
            return False, "no model configured (memory.providers.llm.model)"
        if self.require_key and not self.api_key:
            where = f"environment variable {self.api_key_env}" if self.api_key_env else "api_key_env"
            return False, f"API key missing: {where} is not set"
        return True, ""

    def answers(self) -> tuple[bool, str]:
        """Whether the server answers a models list (GET {base_url}/models), asked at most once a minute."""
        key = (self.base_url, self.model)
        now = time.monotonic()
        with _learned_lock:
            seen = _probes.get(key)
        if seen is not None and now - seen[0] < PROBE_TTL_SECONDS:
            return seen[1], seen[2]
        try:
            get_json(f"{self.base_url}/models", headers=self._headers(), timeout=min(self.timeout, 5.0))
            ok, reason = True, ""
        except HTTPStatusError as exc:
            # a server without the models route still answers: it is up
            ok, reason = (exc.status in (404, 405)), f"the LLM server answers {exc}"
            if exc.status in (401, 403):
                ok, reason = False, f"the LLM server refuses the key: {exc}"
        except (HTTPError, RetriesExhausted) as exc:
            ok, reason = False, f"the LLM server does not answer: {exc}"
        with _learned_lock:
            _probes[key] = (now, ok, "" if ok else reason)
        return ok, "" if ok else reason

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    # -- the request -------------------------------------------------------------------------------
    def _body(self, request: LLMRequest, mode: str) -> dict[str, Any]:
        system = request.system
        tail = request.prompt
        name = schema_name(request.schema_name)
        body: dict[str, Any] = {"model": self.model}
        if mode == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                # strict off: strict mode forbids optional fields, and the item schemas have them
                "json_schema": {"name": name, "schema": request.schema, "strict": False},
            }
        elif mode == "json_object_schema":
            body["response_format"] = {"type": "json_object", "schema": request.schema}
        elif mode == "tools":
            siblings = request.siblings or {request.schema_name: request.schema}
            if request.schema_name not in siblings:
                siblings = {**siblings, request.schema_name: request.schema}
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": schema_name(n),
                        "description": "Record the answer as JSON matching the schema.",
                        "parameters": s,
                    },
                }
                for n, s in siblings.items()
            ]
            body["tool_choice"] = {"type": "function", "function": {"name": name}}
        else:
            # plain JSON mode or none: an example of the answer, after the shared part
            if mode == "json_object":
                body["response_format"] = {"type": "json_object"}
            example = request.example or "an object with an items list"
            tail = (
                f"{tail}\n\nAnswer with one JSON object only, no prose and no code fence, shaped like "
                f"this example (its values are placeholders, not facts):\n{example}"
            )
        body["messages"] = [
            {"role": "system", "content": system},
            # the shared part first: servers with automatic prefix caching reuse it across the kinds' calls
            {"role": "user", "content": f"{request.shared}\n\n{tail}" if request.shared else tail},
        ]
        body[self.token_param] = request.max_tokens
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    def _retryable(self, mode: str) -> Any:
        def retryable(exc: BaseException) -> bool:
            if isinstance(exc, HTTPStatusError) and self._refusal(exc, mode):
                return False  # the request itself was refused: a retry gets the same answer
            return self.policy.retryable(exc)

        return retryable

    def _refusal(self, exc: HTTPStatusError, mode: str) -> bool:
        if exc.status not in REFUSAL_STATUSES:
            return False
        body = exc.body.lower()
        if "max_completion_tokens" in body and self.token_param == "max_tokens":
            return True
        return any(word in body for word in _REFUSAL_WORDS.get(mode, ()))

    def _post(self, body: dict[str, Any], mode: str, deadline: float | None) -> Any:
        try:
            response = post_json(
                f"{self.base_url}/chat/completions",
                body,
                headers=self._headers(),
                timeout=self.timeout,
                policy=self.policy,
                what=f"{self.name} chat/completions",
                deadline=deadline,
                retryable=self._retryable(mode),
            )
        except (RetriesExhausted, HTTPError) as exc:
            self.attempts += getattr(exc, "attempts", 1)
            raise
        self.attempts += response.attempts
        return response.data

    def _send(self, request: LLMRequest) -> tuple[Any, str]:
        # Every step moves down a finite list (or switches the token parameter once): the loop is bounded.
        while True:
            mode = self.mode
            try:
                data = self._post(self._body(request, mode), mode, request.deadline)
            except HTTPStatusError as exc:
                body = exc.body.lower()
                if (
                    exc.status in REFUSAL_STATUSES
                    and "max_completion_tokens" in body
                    and self.token_param == "max_tokens"
                ):
                    self.token_param = "max_completion_tokens"
                    continue
                if self._refusal(exc, mode) and self._step_down(mode, str(exc)):
                    continue
                raise
            # a server that ignored the named tool choice (answered in text, or with another tool)
            if (
                mode == "tools"
                and not self._called(data, request)
                and self._step_down(mode, "the named tool choice was not honoured")
            ):
                continue
            return data, mode

    @staticmethod
    def _called(data: Any, request: LLMRequest) -> bool:
        try:
            calls = data["choices"][0]["message"].get("tool_calls") or []
        except (KeyError, IndexError, TypeError, AttributeError):
            return True  # malformed: reported by _content
        names = [((c or {}).get("function") or {}).get("name") for c in calls if isinstance(c, dict)]
        return schema_name(request.schema_name) in names

    def complete_json(self, request: LLMRequest) -> LLMResult:
        ok, reason = self.ready()
        if not ok:
            raise LLMConfigError(f"{self.name}: not ready: {reason}")
        self.attempts = 0
        started = time.perf_counter()
        try:
            data, mode = self._send(request)
        except RetriesExhausted as exc:
            raise LLMError(f"{exc}") from exc.last
        except HTTPStatusError as exc:
            if exc.status in CONFIG_STATUSES:
                raise LLMConfigError(f"{exc} ({CONFIG_STATUSES[exc.status]})") from exc
            raise LLMError(str(exc)) from exc
        except (HTTPError, DeadlineExceeded) as exc:
            raise LLMError(f"{self.name}: {exc}" if isinstance(exc, DeadlineExceeded) else str(exc)) from exc
        latency_ms = (time.perf_counter() - started) * 1000.0
        text = self._content(data, request, mode)
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        details = usage.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        timings = data.get("timings") if isinstance(data, dict) else None  # llama.cpp's server
        if cached is None and isinstance(timings, dict):
            cached = timings.get("cache_n")
        result = LLMResult(
            text=text,
            model=str(data.get("model") or self.model),
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            latency_ms=latency_ms,
            cached_tokens=int(cached or 0),
        )
        record_llm_metrics(result)
        return result

    def _content(self, data: Any, request: LLMRequest, mode: str) -> str:
        try:
            choice = data["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            raise LLMError(
                f"{self.name}: malformed answer (no choices[0].message): {str(data)[:200]!r}"
            ) from None
        message = message if isinstance(message, dict) else {}
        content = message.get("content")
        if mode == "tools":
            for call in message.get("tool_calls") or []:
                function = (call or {}).get("function") or {}
                if function.get("name") == schema_name(request.schema_name):
                    arguments = function.get("arguments")
                    content = arguments if isinstance(arguments, str) else json.dumps(arguments)
                    break
        cut = choice.get("finish_reason") == "length"
        if not content:
            refusal = message.get("refusal")
            if refusal:
                raise LLMAnswerError(f"{self.name}: the model refused: {str(refusal)[:200]}", "refused")
            if cut:
                raise LLMAnswerError(f"{self.name}: the answer was cut off at max_tokens", "cut_off")
            raise LLMAnswerError(
                f"{self.name}: empty answer (finish_reason={choice.get('finish_reason')})", "no_answer"
            )
        if cut:
            raise LLMAnswerError(
                f"{self.name}: the answer was cut off at max_tokens ({len(content)} characters)",
                "cut_off",
                str(content),
            )
        return str(content)
