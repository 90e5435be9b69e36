"""Strands Agents: a plugin that records every turn, puts mongomem's context before each model call
and gives the agent memory tools.

    from strands import Agent
    from mongomem.client import MemoryClient
    from mongomem.integrations.strands import MongomemPlugin

    memory = MongomemPlugin(MemoryClient("http://127.0.0.1:3000"), user_id="ana", session_id="chat-1")
    agent = Agent(plugins=[memory])

Recorded: each message the agent adds (user prompt, assistant text and tool calls, tool results),
batched and sent once per invocation (AfterInvocationEvent) with one client token per batch.
Before each model call the `/v1/context` block (working memory, relevant memories, recalled older
messages; the agent already holds the recent ones) is injected for that call (an `injected` block from
Strands 1.65 on, never recorded), through Strands'
ContextInjector. Tools: search_memories, recall_messages, update_working_memory.
"""

from __future__ import annotations

import json
from typing import Any

from strands.hooks import AfterInvocationEvent, MessageAddedEvent
from strands.injection import InjectionContext
from strands.models import Model
from strands.plugins import Plugin, hook
from strands.tools.tools import PythonAgentTool
from strands.types.tools import ToolResult, ToolSpec, ToolUse
from strands.vended_plugins.context_injector import ContextInjector

from mongomem.client import MemoryClient
from mongomem.integrations._common import (
    MemoryTool,
    TurnBuffer,
    agent_tools,
    as_arguments,
    as_text,
    context_block,
    safe_id,
)
from mongomem.models.recall import ContextResponse

SOURCE = "strands"


def message_turns(message: dict[str, Any], tool_names: dict[str, str]) -> list[dict[str, Any]]:
    """A Strands message as mongomem turns: text and tool calls in one turn, one turn per tool result.

    `tool_names` maps toolUseIds seen so far to tool names, so tool turns carry their tool's name."""
    role = message.get("role")
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for block in message.get("content") or []:
        if "text" in block:
            texts.append(str(block["text"]))
        elif "toolUse" in block:
            use = block["toolUse"]
            call_id = safe_id(use.get("toolUseId"), "call")
            tool_names[call_id] = str(use.get("name") or "tool")
            calls.append(
                {"id": call_id, "name": tool_names[call_id], "arguments": as_arguments(use.get("input"))}
            )
        elif "toolResult" in block:
            result = block["toolResult"]
            call_id = safe_id(result.get("toolUseId"), "call")
            parts = [
                p.get("text") if "text" in p else as_text(p.get("json")) for p in result.get("content") or []
            ]
            turn: dict[str, Any] = {
                "role": "tool",
                "content": "\n".join(str(p) for p in parts if p) or str(result.get("status") or "done"),
                "tool_call_id": call_id,
                "metadata": {"status": str(result.get("status") or "")},
            }
            if call_id in tool_names:
                turn["name"] = tool_names[call_id]
            results.append(turn)
    text = "\n".join(t for t in texts if t.strip())
    turns: list[dict[str, Any]] = []
    if role == "assistant" and (text or calls):
        turns.append({"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})})
    elif role == "user" and text:
        turns.append({"role": "user", "content": text})
    return turns + results


def latest_user_text(messages: list[Any]) -> str | None:
    for message in reversed(messages):
        if message.get("role") == "user":
            text = " ".join(str(b["text"]) for b in message.get("content") or [] if "text" in b).strip()
            if text:
                return text
    return None


class MongomemPlugin(Plugin):
    """mongomem memory for one Strands agent: turns recorded, context injected, memory tools."""

    name = "mongomem"

    def __init__(
        self,
        client: MemoryClient,
        user_id: str | None,
        session_id: str,
        *,
        agent_id: str | None = None,
        token_budget: int = 2000,
        inject_context: bool = True,
        trigger: Any = "everyTurn",
        max_batch: int = 100,
    ) -> None:
        self.client = client
        self.user_id = user_id
        self.session_id = session_id
        self.token_budget = token_budget
        self.inject_context = inject_context
        self.trigger = trigger
        self.turns = TurnBuffer(session_id, user_id, agent_id, source=SOURCE, max_batch=max_batch)
        self._tool_names: dict[str, str] = {}
        self.last_context: ContextResponse | None = None  # the last /v1/context answer (diagnostics)
        # The memory tools (mongomem.tools), given here instead of discovered from @tool methods.
        self._tools = [_agent_tool(t, client) for t in agent_tools(user_id)]  # type: ignore[misc]
        super().__init__()

    def init_agent(self, agent: Any) -> None:
        if self.inject_context:
            injector = ContextInjector(self.render_context, name="mongomem:context", trigger=self.trigger)
            injector.init_agent(agent)

    # -- recording -------------------------------------------------------------------------------------

    @hook  # type: ignore[call-overload]  # strands types @hook for functions, not methods
    def on_message_added(self, event: MessageAddedEvent) -> None:
        self.turns.add(*message_turns(dict(event.message), self._tool_names))
        if len(self.turns.pending) >= self.turns.max_batch:
            self.turns.flush(self.client)

    @hook  # type: ignore[call-overload]
    def on_after_invocation(self, event: AfterInvocationEvent) -> None:
        self.turns.flush(self.client)

    # -- context before each model call ------------------------------------------------------------------

    def render_context(self, context: InjectionContext) -> str:
        """The `/v1/context` block for this call (working memory, memories, recalled messages)."""
        self.last_context = self.client.build_context(
            self.user_id,
            session_id=self.session_id,
            query=latest_user_text(list(context.messages)),
            token_budget=self.token_budget,
            recent_turns=0,  # the agent holds the conversation itself
        )
        return context_block(self.last_context)


def _agent_tool(tool: MemoryTool, client: MemoryClient) -> PythonAgentTool:
    """A memory tool of mongomem.tools as a Strands tool (its parameters: the API request model's fields)."""

    def run(tool_use: ToolUse, **_: Any) -> ToolResult:
        text = tool.run(client, tool_use.get("input"))
        return {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": text}]}

    spec: ToolSpec = {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": {"json": tool.schema},
    }
    return PythonAgentTool(tool.name, spec, run)


# -- a model without an LLM ----------------------------------------------------------------------------

Answer = str | tuple[str, dict[str, Any]] | list[tuple[str, dict[str, Any]]] | dict[str, Any]


class ScriptedModel(Model):
    """A Strands model that replays answers instead of calling an LLM: for examples, demos and tests.

    Each model call gets the next answer: a text (`"You fly from LIS."`), a tool call
    (`("search_memories", {"query": "home airport"})`) or several (a list of them). `calls` keeps what
    each call was given (`messages`, the `tools` offered), so a test can see the injected context.
    """

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.calls: list[dict[str, Any]] = []

    def update_config(self, **model_config: Any) -> None:
        return None

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("a scripted model gives no structured output")

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: str | None = None, **kwargs: Any
    ) -> Any:
        self.calls.append(
            {
                "messages": json.loads(json.dumps(messages, default=str)),
                "tools": [t["name"] for t in tool_specs or []],
                "system_prompt": system_prompt,
            }
        )
        if not self.answers:
            raise RuntimeError("the scripted model has no answer left for this call")
        text, tools = _parts(self.answers.pop(0))
        yield {"messageStart": {"role": "assistant"}}
        if text:
            yield {"contentBlockStart": {"start": {}}}
            yield {"contentBlockDelta": {"delta": {"text": text}}}
            yield {"contentBlockStop": {}}
        for i, (name, args) in enumerate(tools):
            start = {"toolUse": {"toolUseId": f"tooluse_{len(self.calls)}_{i}", "name": name}}
            yield {"contentBlockStart": {"start": start}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(args)}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use" if tools else "end_turn"}}
        yield {
            "metadata": {
                "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
                "metrics": {"latencyMs": 1},
            }
        }


def _parts(answer: Answer) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """(text, tool calls) of one scripted answer."""
    if isinstance(answer, str):
        return answer, []
    if isinstance(answer, tuple):
        return "", [answer]
    if isinstance(answer, list):
        return "", list(answer)
    return str(answer.get("text") or ""), list(answer.get("tools") or [])
