"""Pydantic AI: the MongomemMemory capability with TestModel and FunctionModel, on the local stack."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from mongomem.client import AsyncMemoryClient, MemoryClient
from mongomem.integrations.pydantic_ai import MongomemMemory, memory_toolset
from mongomem.local.stack import LocalStack
from tests.integrations.conftest import uid


@pytest.fixture
def amem(stack: LocalStack) -> AsyncMemoryClient:
    return AsyncMemoryClient(stack.url, retries=2, backoff=0.01)


def test_context_before_the_run_tools_during_and_turns_recorded_after(
    amem: AsyncMemoryClient, mem: MemoryClient
) -> None:
    # Given a user with a fact and a working memory
    user, session = uid("ana"), uid("chat")
    mem.create_memory(user, "semantic", {"subject": user, "attribute": "home airport", "value": "LIS"})
    mem.update_working_memory(user, content="# User\n- **Name**: Ana\n", replace=True)
    seen: list[dict[str, Any]] = []

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append({"instructions": info.instructions or "", "tools": [t.name for t in info.function_tools]})
        returns = [
            p
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        ]
        if not returns:
            return ModelResponse(
                parts=[ToolCallPart("search_memories", {"query": "home airport"}, tool_call_id="c1")]
            )
        return ModelResponse(parts=[TextPart(f"From memory: {returns[0].content}")])

    memory = MongomemMemory(amem, user_id=user, session_id=session)
    agent = Agent(FunctionModel(script), capabilities=[memory], instructions="Be brief.")
    # When the agent runs
    result = asyncio.run(agent.run("Where do I fly from?"))
    # Then each model request had mongomem's context in its instructions and the memory tools
    assert len(seen) == 2
    for request in seen:
        assert (
            '<mongomem-memory source="context" token=' in request["instructions"]
            and "Ana" in request["instructions"]
        )
        assert "home airport: LIS" in request["instructions"] and "Be brief." in request["instructions"]
        assert {"search_memories", "recall_messages", "update_working_memory"} <= set(request["tools"])
    assert "LIS" in result.output
    # And the run was recorded after it ended, in order, with the tool call and its return
    turns = mem.list_turns(session, user).turns
    assert [t.role for t in turns] == ["user", "assistant", "tool", "assistant"]
    assert turns[0].content == "Where do I fly from?"
    assert turns[1].tool_calls and turns[1].tool_calls[0].arguments == {"query": "home airport"}
    assert (turns[2].tool_call_id, turns[2].name) == ("c1", "search_memories") and "LIS" in turns[2].content
    assert turns[3].content == result.output
    assert r"<mongomem-memory source=\"context\"" not in json.dumps(
        [t.content for t in turns]
    )  # instructions are never recorded
    assert len(memory.recorded) == 1 and not memory.recorded[0].replayed


def test_a_second_run_records_only_its_new_messages(amem: AsyncMemoryClient, mem: MemoryClient) -> None:
    user, session = uid("bo"), uid("chat")
    memory = MongomemMemory(amem, user_id=user, session_id=session)
    agent = Agent(TestModel(call_tools=[]), capabilities=[memory])

    async def scenario() -> None:
        first = await agent.run("Hello there")
        await agent.run("And again", message_history=first.all_messages())

    asyncio.run(scenario())
    turns = mem.list_turns(session, user).turns
    assert [(t.role, t.content) for t in turns if t.role == "user"] == [
        ("user", "Hello there"),
        ("user", "And again"),
    ]
    assert [t.role for t in turns] == ["user", "assistant", "user", "assistant"]


def test_test_model_calls_every_memory_tool_against_the_stack(
    amem: AsyncMemoryClient, mem: MemoryClient
) -> None:
    # TestModel calls each tool once with arguments generated from its schema
    user = uid("cy")
    agent = Agent(TestModel(), toolsets=[memory_toolset(amem, user)])
    result = asyncio.run(agent.run("anything"))
    returns = {
        p.tool_name: p.content
        for m in result.all_messages()
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    }
    assert set(returns) == {"search_memories", "recall_messages", "update_working_memory"}
    assert returns["search_memories"] == "No matching memories."
    assert str(returns["update_working_memory"]).startswith("Working memory updated (version ")
    assert mem.get_working_memory(user).model_dump().get("version", 0) >= 1
