"""OpenAI Agents SDK: a `Session` kept as a mongomem session's turns, plus memory tools for an Agent.

    from agents import Agent, Runner
    from mongomem.client import AsyncMemoryClient
    from mongomem.integrations.openai_agents import MongomemSession, memory_tools

    mem = AsyncMemoryClient("http://127.0.0.1:3000")
    session = MongomemSession(mem, session_id="chat-1", user_id="ana")
    agent = Agent(name="assistant", tools=memory_tools(mem, user_id="ana"))
    await Runner.run(agent, "Hi", session=session)

Each item the Runner adds becomes one turn (user/system messages, assistant messages, function calls
as assistant tool calls, function outputs as tool turns) carrying the item itself in
`metadata.openai_item`, so get_items returns exactly what was added. add_items records one batch per
call with one client token; pop_item and clear_session delete turns (DELETE /v1/sessions/{id}/turns).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agents import FunctionTool, ModelResponse, Usage
from agents.memory import SessionABC, SessionSettings
from agents.memory.session_settings import resolve_session_limit
from agents.models.interface import Model
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from mongomem.client import AsyncMemoryClient, MemoryClientError
from mongomem.integrations._common import MemoryTool, TurnBuffer, agent_tools, as_arguments, as_text, safe_id
from mongomem.models.turns import TurnOut

SOURCE = "openai-agents"
ITEM_KEY = "openai_item"  # metadata field holding the item as JSON text
PAGE = 200  # the API's largest turn page


def _text_of(content: Any) -> str:
    """Text of a message's content: a string, or the text of its input/output parts."""
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        if isinstance(part, dict):
            text = part.get("text") or part.get("refusal") or part.get("transcript")
            parts.append(str(text) if text else f"[{part.get('type', 'part')}]")
    return "\n".join(parts)


def item_turn(item: Any) -> dict[str, Any]:
    """One Responses input item as one mongomem turn (the item itself rides along in metadata)."""
    data = item if isinstance(item, dict) else json.loads(json.dumps(item, default=str))
    kind = data.get("type") or ("message" if "role" in data else "item")
    metadata = {ITEM_KEY: json.dumps(data, ensure_ascii=False, default=str), "item_type": str(kind)}
    if kind == "function_call":
        call = {
            "id": safe_id(data.get("call_id"), "call"),
            "name": str(data.get("name") or "tool"),
            "arguments": as_arguments(data.get("arguments")),
        }
        return {"role": "assistant", "content": "", "tool_calls": [call], "metadata": metadata}
    if kind == "function_call_output":
        return {
            "role": "tool",
            "content": as_text(data.get("output")) or "(no output)",
            "tool_call_id": safe_id(data.get("call_id"), "call"),
            "metadata": metadata,
        }
    if kind == "message":
        role = {"developer": "system"}.get(str(data.get("role")), str(data.get("role") or "user"))
        role = role if role in ("user", "assistant", "system") else "user"
        return {"role": role, "content": _text_of(data.get("content")) or f"[{kind}]", "metadata": metadata}
    # reasoning, web search, computer calls, ...: kept for replay, with whatever text they carry
    text = _text_of(data.get("content")) or as_text(data.get("summary") or "") or f"[{kind}]"
    return {"role": "assistant", "content": text, "metadata": metadata}


def turn_item(turn: TurnOut) -> Any:
    """The item a turn was recorded from; a turn recorded by other means becomes a plain message."""
    raw = (turn.metadata or {}).get(ITEM_KEY)
    if isinstance(raw, str):
        return json.loads(raw)
    if turn.role == "tool":
        return {"type": "function_call_output", "call_id": turn.tool_call_id, "output": turn.content}
    return {"role": turn.role, "content": turn.content}


class MongomemSession(SessionABC):
    """The OpenAI Agents Session protocol over one mongomem session (get/add/pop/clear)."""

    def __init__(
        self,
        client: AsyncMemoryClient,
        session_id: str,
        user_id: str | None,
        *,
        agent_id: str | None = None,
        session_settings: SessionSettings | None = None,
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.user_id = user_id
        self.agent_id = agent_id
        self.session_settings = session_settings or SessionSettings()

    async def _turns(self, limit: int | None) -> list[TurnOut]:
        """The newest `limit` turns (all of them for None), oldest first."""
        out: list[TurnOut] = []
        before: int | None = None
        try:
            while limit is None or len(out) < limit:
                want = PAGE if limit is None else min(PAGE, limit - len(out))
                page = await self.client.list_turns(
                    self.session_id, self.user_id, limit=want, before_seq=before
                )
                out[:0] = page.turns
                if page.next_before_seq is None or not page.turns:
                    break
                before = page.next_before_seq
        except MemoryClientError as err:
            if err.status == 404:  # nothing recorded yet
                return []
            raise
        return out

    async def get_items(self, limit: int | None = None) -> list[Any]:
        effective = resolve_session_limit(limit, self.session_settings)
        if effective is not None and effective <= 0:
            return []
        return [turn_item(t) for t in await self._turns(effective)]

    async def add_items(self, items: Sequence[Any]) -> None:
        if not items:
            return
        batch = TurnBuffer(self.session_id, self.user_id, self.agent_id, source=SOURCE)
        batch.add(*(item_turn(i) for i in items))
        await batch.aflush(self.client)

    async def pop_item(self) -> Any | None:
        newest = await self._turns(1)
        if not newest:
            return None
        await self.client.delete_turns(self.session_id, self.user_id, from_seq=newest[-1].seq)
        return turn_item(newest[-1])

    async def clear_session(self) -> None:
        try:
            await self.client.delete_turns(self.session_id, self.user_id)
        except MemoryClientError as err:
            if err.status != 404:
                raise


def memory_tools(client: AsyncMemoryClient, user_id: str | None) -> list[FunctionTool]:
    """search_memories, recall_messages and update_working_memory as function tools for an Agent
    (mongomem.tools: their parameters are the API request models' fields, bound to `user_id`)."""
    return [_function_tool(tool, client) for tool in agent_tools(user_id)]


def _function_tool(tool: MemoryTool, client: AsyncMemoryClient) -> FunctionTool:
    async def invoke(context: Any, arguments: str) -> str:
        return await tool.arun(client, arguments)

    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=tool.schema,
        on_invoke_tool=invoke,
        strict_json_schema=False,  # optional parameters stay optional
    )


# -- a model without an LLM ----------------------------------------------------------------------------


class ScriptedModel(Model):
    """An Agents SDK model that replays answers instead of calling an LLM: for examples, demos and tests.

    Each model call gets the next answer: a text (`"Sorry about that."`), a function call
    (`("search_memories", {"query": "order 1234"})`) or the response's output items themselves (a list).
    `inputs` keeps what each call was given. No streaming.
    """

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.inputs: list[Any] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
        self.inputs.append(json.loads(json.dumps(input, default=str)))
        if not self.answers:
            raise RuntimeError("the scripted model has no answer left for this call")
        return ModelResponse(
            output=_output(self.answers.pop(0), len(self.inputs)), usage=Usage(), response_id=None
        )

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("a scripted model does not stream")


def _output(answer: Any, n: int) -> list[Any]:
    if isinstance(answer, list):
        return answer
    if isinstance(answer, tuple):
        name, args = answer
        call_id = f"call_{n}"
        return [
            ResponseFunctionToolCall(
                id=f"fc_{call_id}",
                type="function_call",
                call_id=call_id,
                name=name,
                arguments=json.dumps(args),
            )
        ]
    return [
        ResponseOutputMessage(
            id=f"msg_{n}",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=str(answer), annotations=[])],
        )
    ]
