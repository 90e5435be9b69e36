"""The MCP server driven by the `mcp` package's own client, against a running local stack."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import (  # type: ignore[attr-defined]  # re-exported by mcp, not in __all__
    create_mcp_http_client,
    streamable_http_client,
)

from mongomem import markers
from mongomem.client import MemoryClient
from mongomem.local.stack import LocalStack
from mongomem.models.working_memory import WorkingMemoryState
from tests.helpers import local_stack

CONFIG = """
memory:
  extraction: {enabled: [semantic]}
  providers:
    llm: {kind: offline}
    embeddings: {kind: hashing, dim: 64}
"""

TOOLS = {
    "record_turn",
    "search_memories",
    "recall_messages",
    "get_working_memory",
    "update_working_memory",
    "build_context",
    "create_thread",
    "list_threads",
    "update_thread",
    "delete_thread",
    "clone_thread",
}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    yield from local_stack(tmp_path_factory, "mcp", CONFIG, scan_seconds=60, poll_seconds=0.5)


def stdio_server(*args: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH", "LANG")}
    return StdioServerParameters(command=sys.executable, args=["-m", "mongomem.mcp_server", *args], env=env)


def test_stdio_lists_tools_records_a_turn_and_reads_working_memory(stack: LocalStack) -> None:
    user, session = f"ana-{uuid.uuid4().hex[:6]}", f"chat-{uuid.uuid4().hex[:6]}"
    MemoryClient(stack.url).update_working_memory(user, content="# User\n- **City**: Porto\n", replace=True)

    async def scenario() -> tuple[set[str], Any, Any, Any]:
        async with Client(stdio_server("--base-url", stack.url)) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            recorded = await client.call_tool(
                "record_turn",
                {"session_id": session, "user_id": user, "role": "user", "content": "I live in Porto."},
            )
            memory = await client.call_tool("get_working_memory", {"user_id": user})
            refused = await client.call_tool(
                "record_turn", {"session_id": session, "role": "user", "content": "no user given"}
            )
            return tools, recorded, memory, refused

    tools, recorded, memory, refused = asyncio.run(asyncio.wait_for(scenario(), 30))
    # Then every memory tool is offered, and calls reach the API for real
    assert tools >= TOOLS
    assert not recorded.is_error and recorded.structured_content["turns"][0]["seq"] == 1
    turns = MemoryClient(stack.url).list_turns(session, user).turns
    assert [t.content for t in turns] == ["I live in Porto."]
    assert not memory.is_error and "Porto" in memory.structured_content["content"]
    # A call the server cannot serve is a tool error the model can read, not a crash
    assert refused.is_error and "user_id" in refused.content[0].text


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_streamable_http_with_a_fixed_user_updates_working_memory(stack: LocalStack) -> None:
    # Given the server on streamable HTTP, serving one user's memory, with the token its clients must send
    user, port, token = f"bo-{uuid.uuid4().hex[:6]}", free_port(), f"t-{uuid.uuid4().hex}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mongomem.mcp_server",
            "--transport",
            "http",
            "--port",
            str(port),
            "--base-url",
            stack.url,
            "--user-id",
            user,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MONGOMEM_MCP_TOKEN": token},
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)

        url = f"http://127.0.0.1:{port}/mcp"

        async def scenario() -> Any:
            auth = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
            async with Client(streamable_http_client(url, http_client=auth)) as client:
                await client.call_tool("update_working_memory", {"memory": "# User\n- **Pet**: a cat\n"})
                return await client.call_tool("get_working_memory", {})

        # A client without the token (or with another) is refused before any tool runs
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": token}):
            request = urllib.request.Request(
                url, data=b"{}", headers={"content-type": "application/json", **headers}
            )
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=10)
            assert refused.value.code == 401 and refused.value.headers["www-authenticate"].startswith(
                "Bearer"
            )
        result = asyncio.run(asyncio.wait_for(scenario(), 30))
        # Then the tools act for that user without being told who it is
        assert not result.is_error and "a cat" in result.structured_content["content"]
        assert "a cat" in (MemoryClient(stack.url).get_working_memory(user).content or "")  # type: ignore[union-attr]
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_keys_never_come_from_the_command_line(tmp_path: Path) -> None:
    # An upstream key on argv is refused (any local user reads it with ps); a file or the environment works
    refused = subprocess.run(
        [sys.executable, "-m", "mongomem.mcp_server", "--api-key", "mm_secret"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "MONGOMEM_API_KEY" in refused.stderr
    empty = tmp_path / "key"
    empty.write_text("\n")
    refused = subprocess.run(
        [sys.executable, "-m", "mongomem.mcp_server", "--api-key-file", str(empty)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "holds no API key" in refused.stderr


def test_thread_tools_and_a_double_wrapped_working_memory_update(stack: LocalStack) -> None:
    user = f"cy-{uuid.uuid4().hex[:6]}"
    MemoryClient(stack.url).record_turn("t1", user, "user", "Remember the blue suitcase.")

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(stdio_server("--base-url", stack.url, "--user-id", user)) as client:
            for name, args in (
                ("create_thread", {"thread_id": "t1", "title": "Packing", "metadata": {"trip": "Porto"}}),
                ("update_thread", {"thread_id": "t1", "title": "Packing for Porto"}),
                ("clone_thread", {"thread_id": "t1", "new_thread_id": "t1-copy"}),
                ("list_threads", {}),
                ("delete_thread", {"thread_id": "t1-copy"}),
                # a model that wrapped the memory twice: the tool-call route unwraps it
                ("update_working_memory", {"memory": {"memory": "# User\n- **Bag**: blue\n"}}),
            ):
                out[name] = await client.call_tool(name, args)
        return out

    out = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert not any(r.is_error for r in out.values()), {k: r.content for k, r in out.items() if r.is_error}
    assert out["clone_thread"].structured_content["turns"] == 1
    assert [t["thread_id"] for t in out["list_threads"].structured_content["threads"]] == ["t1-copy", "t1"]
    assert out["delete_thread"].structured_content["deleted"]["turns"] == 1
    client = MemoryClient(stack.url)
    assert client.get_thread("t1", user).title == "Packing for Porto"
    assert [t.thread_id for t in client.list_threads(user).threads] == ["t1"]
    state = client.get_working_memory(user)
    assert isinstance(state, WorkingMemoryState) and state.content == "# User\n- **Bag**: blue\n"
    # the new tools' results are mongomem's own output: never extracted
    assert set(out) <= markers.OWN_TOOLS


def test_search_memories_takes_the_scope_and_filters_of_the_api(stack: LocalStack) -> None:
    user = f"di-{uuid.uuid4().hex[:6]}"
    sdk = MemoryClient(stack.url)
    # Given a private fact of one agent and an org-wide term (terms are shared by the tenant by default)
    fact = {"subject": "user", "attribute": "home city", "value": "Porto"}
    sdk.create_memory(user, "semantic", fact, agent_id="planner")
    sdk.create_memory(user, "taxonomic", {"term": "OPO", "definition": "Porto airport", "domain": "travel"})

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(stdio_server("--base-url", stack.url, "--user-id", user)) as client:
            for name, args in (
                ("org", {"query": "Porto", "visibility": "org"}),
                ("private", {"query": "Porto", "visibility": "private"}),
                ("other-agent", {"query": "Porto", "agent_id": "booker", "visibility": "private"}),
                ("travel", {"query": "Porto", "domain": "travel"}),
            ):
                out[name] = await client.call_tool("search_memories", args)
        return out

    out = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert not any(r.is_error for r in out.values()), {k: r.content for k, r in out.items() if r.is_error}
    types = {k: [h["type"] for h in r.structured_content["results"]] for k, r in out.items()}
    # Then each filter is applied by the service, as over HTTP
    assert types["org"] == ["taxonomic"] and types["private"] == ["semantic"]
    assert types["other-agent"] == []  # another agent does not see the planner's private fact
    assert types["travel"] == ["taxonomic"]


def test_tools_describe_every_parameter_and_a_fixed_user_removes_user_id(stack: LocalStack) -> None:
    """Issue 25: no parameter had a description; --user-id still exposed user_id and silently overrode it;
    the deprecated alias was listed; the server reported an empty version."""
    user = f"eve-{uuid.uuid4().hex[:6]}"

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(stdio_server("--base-url", stack.url)) as client:
            out["open"] = (await client.list_tools()).tools
            out["version"] = client.server_info.version if client.server_info else ""
        async with Client(stdio_server("--base-url", stack.url, "--user-id", user)) as client:
            out["fixed"] = (await client.list_tools()).tools
            out["other"] = await client.call_tool("get_working_memory", {"user_id": "mallory"})
            out["alias"] = await client.call_tool("updateWorkingMemory", {"memory": "# User\n- x\n"})
        return out

    out = asyncio.run(asyncio.wait_for(scenario(), 40))
    undescribed = [
        f"{t.name}.{name}"
        for t in out["open"]
        for name, schema in t.input_schema["properties"].items()
        if not schema.get("description")
    ]
    assert not undescribed
    assert all(t.description for t in out["open"])
    assert "updateWorkingMemory" not in {t.name for t in out["open"]} | {t.name for t in out["fixed"]}
    assert out["version"] and out["version"][0].isdigit()
    # a fixed user: no tool asks for user_id, and naming another user is refused, not ignored
    assert not [t.name for t in out["fixed"] if "user_id" in t.input_schema["properties"]]
    assert out["other"].is_error and "leave user_id out" in out["other"].content[0].text
    assert not out["alias"].is_error  # the alias still answers for one release


def test_memory_tools_write_list_and_delete_and_build_context_answers_with_the_block(
    stack: LocalStack,
) -> None:
    user = f"fay-{uuid.uuid4().hex[:6]}"
    MemoryClient(stack.url).record_turn("trip", user, "user", "Book me a window seat to Lisbon.")

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(stdio_server("--base-url", stack.url, "--user-id", user)) as client:
            fact = {"subject": "user", "attribute": "seat", "value": "window"}
            out["create"] = await client.call_tool("create_memory", {"type": "semantic", "payload": fact})
            out["list"] = await client.call_tool("list_memories", {"type": "semantic"})
            out["context"] = await client.call_tool("build_context", {"session_id": "trip", "query": "seat"})
            memory_id = out["create"].structured_content["memory"]["memory_id"]
            out["delete"] = await client.call_tool("delete_memory", {"memory_id": memory_id})
            out["after"] = await client.call_tool("list_memories", {"status": "active", "type": "semantic"})
            out["bad"] = await client.call_tool("create_memory", {"type": "semantic", "payload": {"x": 1}})
        return out

    out = asyncio.run(asyncio.wait_for(scenario(), 40))
    assert out["create"].structured_content["decision"] == "ADD"
    assert [m["text"] for m in out["list"].structured_content["memories"]] == ["user seat: window"]
    # every answer a model reads is marked: the stored words inside mongomem's block (issue 33's
    # twenty-fifth probe: lists, search and working memory reached the model unmarked), the JSON kept whole
    for name in ("create", "list", "delete", "after"):
        text = out[name].content[0].text
        assert text.startswith("<mongomem-memory source=") and markers.strip(text) == ("", 1), text
    listed = out["list"].content[0].text
    assert (
        json.loads(listed.split("]\n", 1)[1].rsplit("\n[/mongomem-memory", 1)[0])
        == out["list"].structured_content
    )
    # the block, not the JSON around it: what the model should read
    block = out["context"].content[0].text
    assert "user seat: window" in block and "Book me a window seat" in block and '"sections"' not in block
    assert out["delete"].structured_content["deleted_versions"] == 1
    assert out["after"].structured_content["memories"] == []
    # an API refusal names the field
    assert out["bad"].is_error and "payload" in out["bad"].content[0].text
