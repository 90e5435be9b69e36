"""What every integration shares: batched, idempotent turn recording and the context call."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from mongomem import markers, tools
from mongomem.client import AsyncMemoryClient, MemoryClient
from mongomem.models.recall import ContextResponse, RecallResponse
from mongomem.models.turns import RecordTurnsResponse
from mongomem.models.working_memory import WorkingMemoryState

MAX_BATCH = 100  # the API's memory.limits.max_batch default
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._:@-]")


def safe_id(value: Any, fallback: str = "id") -> str:
    """An identifier the API accepts ([A-Za-z0-9._:@-], 1-128 characters, not `.` or `..`) from a
    framework's id."""
    text = _ID_UNSAFE.sub("-", str(value or ""))[:128]
    if text in (".", ".."):
        text = text.replace(".", "-")
    return text or fallback


def as_text(value: Any) -> str:
    """A tool result or message part as text (JSON for structured values)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def as_arguments(value: Any) -> dict[str, Any]:
    """Tool-call arguments as a JSON object (a JSON string is parsed; anything else is wrapped)."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        try:
            parsed = json.loads(value) if value.strip() else {}
        except ValueError:
            return {"input": value}
        return dict(parsed) if isinstance(parsed, dict) else {"input": parsed}
    return {} if value is None else {"input": value}


class TurnBuffer:
    """Turns waiting to be recorded as one batch.

    A batch gets its client token when it is first sent and keeps it until the API has recorded it,
    so a batch sent again (a retry, or a flush after a failed one) is replayed, never recorded twice.
    """

    def __init__(
        self,
        session_id: str,
        user_id: str | None,
        agent_id: str | None = None,
        *,
        source: str,
        max_batch: int = MAX_BATCH,
        token: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.user_id = user_id
        self.agent_id = agent_id
        self.source = source
        self.max_batch = max(1, min(max_batch, MAX_BATCH))
        self.pending: list[dict[str, Any]] = []
        self._token: str | None = token  # given: the first batch's token (derived from its content)
        self.recorded: list[RecordTurnsResponse] = []

    def add(self, *turns: Mapping[str, Any]) -> None:
        for turn in turns:
            metadata = {"source": self.source, **dict(turn.get("metadata") or {})}
            self.pending.append({**turn, "metadata": metadata})

    def _batch(self) -> tuple[list[dict[str, Any]], str]:
        if self._token is None:
            self._token = f"{self.source}:{uuid.uuid4().hex}"
        return self.pending[: self.max_batch], self._token

    def _done(self, batch: list[dict[str, Any]], result: RecordTurnsResponse) -> None:
        del self.pending[: len(batch)]
        self._token = None
        self.recorded.append(result)

    def flush(self, client: MemoryClient) -> list[RecordTurnsResponse]:
        """Record everything pending, in batches of at most `max_batch` turns, in order."""
        out = []
        while self.pending:
            batch, token = self._batch()
            result = client.record_turns(
                self.session_id, self.user_id, batch, client_token=token, agent_id=self.agent_id
            )
            self._done(batch, result)
            out.append(result)
        return out

    async def aflush(self, client: AsyncMemoryClient) -> list[RecordTurnsResponse]:
        out = []
        while self.pending:
            batch, token = self._batch()
            result = await client.record_turns(
                self.session_id, self.user_id, batch, client_token=token, agent_id=self.agent_id
            )
            self._done(batch, result)
            out.append(result)
        return out


def context_block(response: ContextResponse) -> str:
    """The /v1/context block wrapped in a tag the model can tell apart from the conversation."""
    text = (response.context or "").strip()
    # the service marks its block already (mongomem.markers): extraction never learns from an echo of it
    return text if not text or markers.marked(text) else markers.wrap(text, "context")


def search_text(response: Any) -> str:
    """Search results as lines the model reads: score, type and text."""
    results = getattr(response, "results", None) or []
    if not results:
        return "No matching memories."
    return markers.wrap("\n".join(f"- ({hit.type}, {hit.score:.2f}) {hit.text}" for hit in results), "search")


def recall_text(response: RecallResponse) -> str:
    """Recalled messages grouped by thread, oldest first."""
    lines = []
    for thread in response.threads:
        lines.append(f"## {thread.thread}")
        for turn in thread.turns:
            lines.append(f"- [{turn.role}] {turn.content}")
    return markers.wrap("\n".join(lines), "recall") if lines else "No matching messages."


# The memory tools every integration gives its agent, from mongomem.tools (the MCP server's): their
# parameters are the API request models' fields, bound to the integration's user (no user_id). Only
# the default number of memories differs: five, to keep the model's context small.
AGENT_TOOLS: dict[str, dict[str, Any]] = {
    "search_memories": {"top_k": 5},
    "recall_messages": {},
    "update_working_memory": {},
}


class MemoryTool:
    """One memory tool for an agent framework: its JSON schema, and a run that validates the model's
    arguments, makes the SDK call for the bound user and answers with text the model reads."""

    def __init__(self, name: str, user_id: str | None, defaults: Mapping[str, Any] | None = None) -> None:
        self.spec = tools.BY_NAME[name]
        self.name = name
        self.description = self.spec.doc
        self.user_id = user_id
        self.params = self.spec.params(fixed_user=True, defaults=defaults)
        self.arguments_model = tools.arguments_model(name, self.params)

    @property
    def schema(self) -> dict[str, Any]:
        return self.arguments_model.model_json_schema()

    def arguments(self, given: Any) -> dict[str, Any]:
        """The API call's arguments; ValidationError names what the model got wrong."""
        values = self.arguments_model.model_validate(as_arguments(given))
        args = tools.arguments(dict(values), self.params)
        args[tools.USER] = self.user_id
        return args

    def run(self, client: MemoryClient, given: Any) -> str:
        try:
            args = self.arguments(given)
        except ValidationError as err:
            return invalid(err)
        return self.text(tools.call(self.spec, client, args))

    async def arun(self, client: AsyncMemoryClient, given: Any) -> str:
        try:
            args = self.arguments(given)
        except ValidationError as err:
            return invalid(err)
        return self.text(await tools.call(self.spec, client, args))

    def text(self, answer: Any) -> str:
        if isinstance(answer, RecallResponse):
            return recall_text(answer)
        if isinstance(answer, WorkingMemoryState):
            return f"Working memory updated (version {answer.version})."
        return search_text(answer)


def agent_tools(user_id: str | None) -> list[MemoryTool]:
    return [MemoryTool(name, user_id, defaults) for name, defaults in AGENT_TOOLS.items()]


def invalid(err: ValidationError) -> str:
    """A tool call's refused arguments, as the model reads them (it may call again)."""
    problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(arguments)'}: {e['msg']}" for e in err.errors())
    return f"Invalid arguments: {problems}"
