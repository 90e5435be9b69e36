"""What MCP clients and agent frameworks see of the memory tools is mongomem.tools' parameters
(tests/unit/test_api_surface.py holds those to the API request models): the same names, descriptions
and required ones, with user_id only when the MCP server serves more than one user. No server needed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mongomem import tools
from mongomem.client import AsyncMemoryClient, MemoryClient
from mongomem.integrations._common import AGENT_TOOLS

NOWHERE = "http://127.0.0.1:9"  # no call is made: only the schemas are read


def described(schema: dict[str, Any]) -> tuple[dict[str, str | None], set[str]]:
    return {k: v.get("description") for k, v in schema["properties"].items()}, set(schema.get("required", []))


def expected(
    name: str, fixed_user: bool, defaults: dict[str, Any] | None = None
) -> tuple[dict[str, str], set[str]]:
    params = tools.BY_NAME[name].params(fixed_user=fixed_user, defaults=defaults)
    return {p.name: p.description for p in params}, {p.name for p in params if p.required}


@pytest.mark.parametrize("user_id", [None, "ana"])
def test_mcp_clients_see_each_tool_with_the_request_models_fields(user_id: str | None) -> None:
    from mongomem.mcp_server import build_server

    server = build_server(MemoryClient(NOWHERE), user_id=user_id)
    listed = {t.name: t.input_schema for t in asyncio.run(server.list_tools())}
    assert set(listed) == {spec.name for spec in tools.TOOLS}
    for name, schema in listed.items():
        assert described(schema) == expected(name, fixed_user=user_id is not None), name


def test_the_integrations_offer_the_same_tools_bound_to_their_user() -> None:
    from mongomem.integrations.openai_agents import memory_tools
    from mongomem.integrations.pydantic_ai import memory_toolset
    from mongomem.integrations.strands import MongomemPlugin

    amem = AsyncMemoryClient(NOWHERE)
    plugin = MongomemPlugin(MemoryClient(NOWHERE), "ana", "s")
    offered = {
        "strands": {t.tool_name: t.tool_spec["inputSchema"]["json"] for t in plugin.tools},
        "openai-agents": {t.name: t.params_json_schema for t in memory_tools(amem, "ana")},
        "pydantic-ai": {
            n: t.tool_def.parameters_json_schema for n, t in memory_toolset(amem, "ana").tools.items()
        },
    }
    for framework, schemas in offered.items():
        assert set(schemas) == set(AGENT_TOOLS), framework
        for name, schema in schemas.items():
            assert described(schema) == expected(name, True, AGENT_TOOLS[name]), (framework, name)


def test_arguments_the_model_got_wrong_come_back_as_the_tools_answer() -> None:
    from mongomem.integrations._common import MemoryTool

    # Given the search tool bound to a user, When the model asks for 0 memories (the API's minimum is 1)
    answer = MemoryTool("search_memories", "ana").run(MemoryClient(NOWHERE), {"query": "x", "top_k": 0})
    # Then it reads why, from the request model's own limit, and no call was made (nothing listens there)
    assert answer.startswith("Invalid arguments: top_k: Input should be greater than or equal to 1"), answer
