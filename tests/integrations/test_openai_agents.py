"""OpenAI Agents SDK: MongomemSession's Session contract and a real Runner with a fake model, on the local stack."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agents import Agent, Runner, set_tracing_disabled
from agents.memory import SessionSettings
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from mongomem.client import AsyncMemoryClient, MemoryClient
from mongomem.integrations.openai_agents import MongomemSession, ScriptedModel, memory_tools
from mongomem.local.stack import LocalStack
from tests.integrations.conftest import uid

set_tracing_disabled(True)  # no trace export: this suite reaches only the local stack


def say(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=f"msg_{abs(hash(text)) % 10**8}",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


def call(name: str, args: dict[str, Any], call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id=f"fc_{call_id}", type="function_call", call_id=call_id, name=name, arguments=json.dumps(args)
    )


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def amem(stack: LocalStack) -> AsyncMemoryClient:
    return AsyncMemoryClient(stack.url, retries=2, backoff=0.01)


# --- the Session contract ------------------------------------------------------------------------


def test_session_contract_add_get_limit_pop_clear(amem: AsyncMemoryClient, mem: MemoryClient) -> None:
    session = MongomemSession(amem, uid("chat"), uid("ana"))
    items: list[Any] = [
        {"role": "user", "content": "Hello"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Hi!", "annotations": []}],
        },
        {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": '{"q": "x"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "found x"},
        {"role": "user", "content": "Thanks"},
    ]

    async def scenario() -> None:
        # an unknown session is empty, and popping or clearing it is harmless
        assert await session.get_items() == [] and await session.pop_item() is None
        await session.clear_session()
        # items come back exactly as added, oldest first
        await session.add_items(items[:3])
        await session.add_items(items[3:])
        assert await session.get_items() == items
        # limit: the latest N, in chronological order
        assert await session.get_items(limit=2) == items[3:]
        assert await session.get_items(limit=0) == []
        # pop_item: the most recent item, removed
        assert await session.pop_item() == items[4]
        assert await session.get_items() == items[:4]
        # clear_session: nothing left; the session can be used again
        await session.clear_session()
        assert await session.get_items() == []
        await session.add_items([items[0]])
        assert await session.get_items() == [items[0]]

    run(scenario())
    # And the turns are real mongomem turns: roles, tool calls, tool results
    turns = mem.list_turns(session.session_id, session.user_id).turns
    assert [t.role for t in turns] == ["user"]
    assert turns[0].metadata and turns[0].metadata["source"] == "openai-agents"


def test_items_map_to_turns_with_roles_tool_calls_and_results(
    amem: AsyncMemoryClient, mem: MemoryClient
) -> None:
    session = MongomemSession(amem, uid("chat"), uid("bo"))
    run(
        session.add_items(
            [
                {"role": "developer", "content": "Be brief."},
                {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
                {
                    "type": "function_call",
                    "call_id": "call_9",
                    "name": "weather",
                    "arguments": '{"city": "Porto"}',
                },
                {"type": "function_call_output", "call_id": "call_9", "output": "sunny"},
            ]
        )
    )
    turns = mem.list_turns(session.session_id, session.user_id).turns
    assert [(t.role, t.content) for t in turns] == [
        ("system", "Be brief."),
        ("user", "Weather?"),
        ("assistant", ""),
        ("tool", "sunny"),
    ]
    assert turns[2].tool_calls and (turns[2].tool_calls[0].name, turns[2].tool_calls[0].arguments) == (
        "weather",
        {"city": "Porto"},
    )
    assert turns[3].tool_call_id == "call_9"


def test_session_settings_limit_is_the_default(amem: AsyncMemoryClient) -> None:
    session = MongomemSession(amem, uid("chat"), uid("cy"), session_settings=SessionSettings(limit=2))

    async def scenario() -> list[Any]:
        await session.add_items([{"role": "user", "content": f"m{i}"} for i in range(5)])
        return [await session.get_items(), await session.get_items(limit=4)]

    default, explicit = run(scenario())
    assert [i["content"] for i in default] == ["m3", "m4"]
    assert [i["content"] for i in explicit] == ["m1", "m2", "m3", "m4"]


def test_long_sessions_page_through_every_turn(amem: AsyncMemoryClient) -> None:
    session = MongomemSession(amem, uid("chat"), uid("di"))

    async def scenario() -> list[Any]:
        await session.add_items([{"role": "user", "content": f"m{i}"} for i in range(250)])
        return await session.get_items()

    items = run(scenario())
    assert len(items) == 250 and items[0]["content"] == "m0" and items[-1]["content"] == "m249"


# --- a Runner with memory -----------------------------------------------------------------------


def test_runner_keeps_history_in_the_session_and_uses_memory_tools(
    amem: AsyncMemoryClient, mem: MemoryClient
) -> None:
    user, chat = uid("ed"), uid("chat")
    mem.create_memory(user, "semantic", {"subject": user, "attribute": "home airport", "value": "OPO"})
    model = ScriptedModel(
        [call("search_memories", {"query": "home airport", "top_k": 3}, "call_a")],
        [say("You fly from OPO.")],
        [say("Porto, as I said.")],
    )
    agent = Agent(name="assistant", model=model, tools=[*memory_tools(amem, user)])
    session = MongomemSession(amem, chat, user)

    async def scenario() -> tuple[Any, Any]:
        first = await Runner.run(agent, "Where do I fly from?", session=session)
        second = await Runner.run(agent, "And which city is that?", session=session)
        return first, second

    first, second = run(scenario())
    # Then the tool answered from mongomem and the model saw its output
    assert first.final_output == "You fly from OPO." and second.final_output == "Porto, as I said."
    tool_output = [i for i in model.inputs[1] if i.get("type") == "function_call_output"]
    assert tool_output and "home airport: OPO" in tool_output[0]["output"]
    # And the second run started from the history the session kept in mongomem
    assert model.inputs[2][0] == {"content": "Where do I fly from?", "role": "user"}
    assert any(i.get("type") == "function_call" for i in model.inputs[2])
    turns = mem.list_turns(chat, user).turns
    assert [t.role for t in turns] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert turns[-1].content == "Porto, as I said." and turns[2].tool_call_id == "call_a"


def test_working_memory_tool_through_the_runner(amem: AsyncMemoryClient, mem: MemoryClient) -> None:
    user = uid("fa")
    model = ScriptedModel(
        [call("update_working_memory", {"memory": "# User\n- **Diet**: vegetarian\n"}, "call_w")],
        [say("Saved.")],
    )
    agent = Agent(name="assistant", model=model, tools=[*memory_tools(amem, user)])
    run(Runner.run(agent, "I'm vegetarian.", session=MongomemSession(amem, uid("chat"), user)))
    assert "vegetarian" in (getattr(mem.get_working_memory(user), "content", "") or "")
