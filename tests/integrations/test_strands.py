"""Strands Agents: a real strands.Agent with a scripted model, recording into and reading from the local stack."""

from __future__ import annotations

import json
from typing import Any

from strands import Agent

from mongomem.client import MemoryClient
from mongomem.integrations.strands import MongomemPlugin, ScriptedModel
from mongomem.local.stack import LocalStack
from tests.integrations.conftest import contents, eventually, recalled, uid


def all_text(call: dict[str, Any]) -> str:
    return json.dumps(call["messages"])


def test_an_agent_run_records_every_turn_and_sees_context_and_memory_tools(mem: MemoryClient) -> None:
    # Given a user with a known fact and a working memory
    user, session = uid("ana"), uid("chat")
    mem.create_memory(user, "semantic", {"subject": user, "attribute": "home airport", "value": "LIS"})
    mem.update_working_memory(user, content="# User\n- **Name**: Ana\n", replace=True)
    model = ScriptedModel(
        {"tools": [("search_memories", {"query": "home airport"})]},
        {"text": "You fly from LIS."},
    )
    plugin = MongomemPlugin(mem, user_id=user, session_id=session)
    agent = Agent(model=model, plugins=[plugin], callback_handler=None)
    # When the agent answers a question, calling a memory tool on the way
    result = agent("Which airport do I usually fly from?")
    # Then the model was offered the memory tools and saw mongomem's context before each call
    assert str(result).strip() == "You fly from LIS."
    assert {"search_memories", "recall_messages", "update_working_memory"} <= set(model.calls[0]["tools"])
    assert len(model.calls) == 2
    for call in model.calls:
        assert '<mongomem-memory source=\\"context\\" token=' in all_text(call) and "Ana" in all_text(call)
        assert "home airport: LIS" in all_text(call)
    # And the tool answered from mongomem's search
    tool_result = model.calls[1]["messages"][-1]["content"][0]["toolResult"]
    assert "LIS" in json.dumps(tool_result)
    # And every turn was recorded in order: user, assistant tool call, tool result, final answer
    page = mem.list_turns(session, user).turns
    assert [t.role for t in page] == ["user", "assistant", "tool", "assistant"]
    assert page[0].content == "Which airport do I usually fly from?"
    assert page[1].tool_calls and page[1].tool_calls[0].name == "search_memories"
    assert page[1].tool_calls[0].arguments == {"query": "home airport"}
    assert page[2].tool_call_id == page[1].tool_calls[0].id and page[2].name == "search_memories"
    assert "LIS" in page[2].content and page[3].content == "You fly from LIS."
    assert all((t.metadata or {}).get("source") == "strands" for t in page)
    # And the injected context never entered the conversation's own words: Strands before 1.65 kept it out of
    # agent.messages, 1.65 keeps it there as an `injected` block (which readers skip and no later call resends)
    said = [block for message in agent.messages for block in message["content"] if "injected" not in block]
    assert r"<mongomem-memory source=\"context\"" not in json.dumps(said)
    # And the whole invocation went out as one batch
    assert len(plugin.turns.recorded) == 1 and plugin.turns.pending == []


def test_the_working_memory_tool_updates_the_users_scratchpad(mem: MemoryClient) -> None:
    user, session = uid("bo"), uid("chat")
    model = ScriptedModel(
        {"tools": [("update_working_memory", {"memory": "# User\n- **Name**: Bo\n- **Seat**: aisle\n"})]},
        {"text": "Noted."},
    )
    agent = Agent(model=model, plugins=[MongomemPlugin(mem, user, session)], callback_handler=None)
    agent("Remember I prefer aisle seats. I'm Bo.")
    working = mem.get_working_memory(user)
    assert "aisle" in (getattr(working, "content", "") or "")
    # the next run sees it in the injected context
    model.answers.append({"text": "Aisle, as always."})
    agent("Which seat do I like?")
    assert "aisle" in all_text(model.calls[-1])


def test_recall_tool_finds_messages_of_an_earlier_session(mem: MemoryClient, stack: LocalStack) -> None:
    # Given an earlier session recorded through the plugin, then indexed for recall by the scan job
    user = uid("cy")
    first = Agent(
        model=ScriptedModel({"text": "Enjoy the sardines festival!"}),
        plugins=[MongomemPlugin(mem, user, uid("chat"))],
        callback_handler=None,
    )
    first("In June I am going to the sardines festival in Lisbon with my sister Marta.")
    eventually(lambda: recalled(mem, user, "sardines festival Marta"))
    # When a new session's agent recalls it
    model = ScriptedModel(
        {"tools": [("recall_messages", {"query": "sardines festival"})]}, {"text": "With Marta."}
    )
    Agent(model=model, plugins=[MongomemPlugin(mem, user, uid("chat"))], callback_handler=None)(
        "Who was I going to the festival with?"
    )
    # Then the tool result shows the earlier message
    assert "Marta" in json.dumps(model.calls[1]["messages"][-1])


def test_a_batch_is_recorded_once_even_when_flushed_again(mem: MemoryClient) -> None:
    # Given a plugin whose first flush reached the API but whose answer was lost (the client raised)
    user, session = uid("di"), uid("chat")
    plugin = MongomemPlugin(mem, user, session)
    plugin.turns.add({"role": "user", "content": "one"}, {"role": "assistant", "content": "two"})
    batch, token = plugin.turns._batch()
    mem.record_turns(session, user, batch, client_token=token)  # the write that "lost" its answer
    # When the plugin flushes (same batch, same token)
    (result,) = plugin.turns.flush(mem)
    # Then the server replays it instead of recording twice
    assert result.replayed is True
    assert contents(mem, session, user) == [("user", "one"), ("assistant", "two")]
