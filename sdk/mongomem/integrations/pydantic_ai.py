"""Pydantic AI: mongomem memory as a capability (context instructions, memory toolset, turns recorded
after each run), or as a plain toolset.

    from pydantic_ai import Agent
    from mongomem.client import AsyncMemoryClient
    from mongomem.integrations.pydantic_ai import MongomemMemory

    memory = MongomemMemory(AsyncMemoryClient("http://127.0.0.1:3000"), user_id="ana", session_id="chat-1")
    agent = Agent("openai:gpt-4o", capabilities=[memory])

Before each model request the `/v1/context` block (working memory, relevant memories, recalled older
messages) is part of the instructions; instructions are not message history, so the block is never
recorded. After each run, the run's new messages are recorded as one batch with one client token:
user prompts, assistant text and tool calls, tool returns. Tools: search_memories, recall_messages,
update_working_memory (`memory_toolset` gives them without the rest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.toolsets import FunctionToolset

from mongomem.client import AsyncMemoryClient
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
from mongomem.models.turns import RecordTurnsResponse

SOURCE = "pydantic-ai"


def _prompt_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part if isinstance(part, str) else f"[{type(part).__name__}]" for part in content or [])


def message_turns(messages: list[ModelMessage]) -> list[dict[str, Any]]:
    """Pydantic AI messages as mongomem turns (system prompts and instructions are not conversation)."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart):
                    text = _prompt_text(part.content)
                    if text.strip():
                        turns.append({"role": "user", "content": text})
                elif isinstance(part, ToolReturnPart):
                    turns.append(
                        {
                            "role": "tool",
                            "content": as_text(part.content) or "(no output)",
                            "tool_call_id": safe_id(part.tool_call_id, "call"),
                            "name": part.tool_name,
                        }
                    )
        elif isinstance(message, ModelResponse):
            text = "\n".join(
                p.content for p in message.parts if isinstance(p, TextPart) and p.content.strip()
            )
            calls = [
                {
                    "id": safe_id(p.tool_call_id, "call"),
                    "name": p.tool_name,
                    "arguments": as_arguments(p.args),
                }
                for p in message.parts
                if isinstance(p, ToolCallPart)
            ]
            if text or calls:
                turns.append(
                    {"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})}
                )
    return turns


def memory_toolset(client: AsyncMemoryClient, user_id: str | None) -> FunctionToolset[Any]:
    """search_memories, recall_messages and update_working_memory for one user (mongomem.tools: their
    parameters are the API request models' fields)."""
    return FunctionToolset([_tool(tool, client) for tool in agent_tools(user_id)])


def _tool(tool: MemoryTool, client: AsyncMemoryClient) -> Tool[Any]:
    async def run(**arguments: Any) -> str:
        return await tool.arun(client, arguments)

    return Tool.from_schema(run, name=tool.name, description=tool.description, json_schema=tool.schema)


@dataclass
class MongomemMemory(AbstractCapability[Any]):
    """A Pydantic AI capability: context in the instructions, memory tools, the run recorded after."""

    client: AsyncMemoryClient
    user_id: str | None
    session_id: str
    agent_id: str | None = None
    token_budget: int = 2000
    recorded: list[RecordTurnsResponse] = field(default_factory=list, repr=False)
    last_context: ContextResponse | None = field(default=None, repr=False)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds a client: not spec-serializable

    def get_instructions(self) -> Any:
        return self.context_instructions

    def get_toolset(self) -> Any:
        return memory_toolset(self.client, self.user_id)

    async def context_instructions(self, ctx: RunContext[Any]) -> str:
        """The /v1/context block for this request, keyed on the run's prompt."""
        query = _prompt_text(ctx.prompt) if ctx.prompt is not None else None
        self.last_context = await self.client.build_context(
            self.user_id,
            session_id=self.session_id,
            query=query or None,
            token_budget=self.token_budget,
            recent_turns=0,  # the run's message history is the model's recent context
        )
        return context_block(self.last_context)

    async def after_run(self, ctx: RunContext[Any], *, result: Any) -> Any:
        await self.record(result.new_messages())
        return result

    async def record(self, messages: list[ModelMessage]) -> list[RecordTurnsResponse]:
        """Record messages as one batch (more for over 100 turns), each with its client token."""
        batch = TurnBuffer(self.session_id, self.user_id, self.agent_id, source=SOURCE)
        batch.add(*message_turns(messages))
        out = await batch.aflush(self.client)
        self.recorded.extend(out)
        return out
