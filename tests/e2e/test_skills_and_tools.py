"""Procedures as skills and the MCP tools, over HTTP against a running local stack: the SDK writes and
discovers procedures, `mongomem memories export --format skills` writes one folder per skill, and the MCP
server (driven by the `mcp` package's own client) offers discover/skill/feedback tools, context sources
and the old names as aliases - every tool name one mongomem never learns from."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp import Client, StdioServerParameters

from mongomem import markers
from mongomem.cli import main
from mongomem.client import MemoryClient
from mongomem.local.stack import LocalStack
from mongomem.mcp_server import ALIASES
from mongomem.models.working_memory import WorkingMemoryState
from tests.helpers import local_stack

CONFIG = """
memory:
  extraction: {enabled: []}
  providers:
    llm: {kind: offline}
    embeddings: {kind: hashing, dim: 64}
"""
PROCEDURES = [
    {
        "name": "Expense a client dinner",
        "when_to_use": "After paying for a meal with a client.",
        "steps": ["Photograph the receipt", "Pick 'Client meal' in Expensify", "Submit to your manager"],
    },
    {
        "name": "Book a flight",
        "when_to_use": "When the user asks to book a flight.",
        "steps": ["Ask for the dates", "Search fares from the home airport", "Confirm the booking"],
    },
]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    yield from local_stack(tmp_path_factory, "skills", CONFIG, scan_seconds=60, poll_seconds=0.5)


def seeded(stack: LocalStack) -> tuple[str, list[str]]:
    user = f"ana-{uuid.uuid4().hex[:6]}"
    client = MemoryClient(stack.url)
    ids = [client.create_memory(user, "procedural", p).memory.memory_id for p in PROCEDURES]
    return user, ids


def test_the_sdk_discovers_and_the_cli_exports_procedures_as_skills(
    stack: LocalStack, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user, (expense, flight) = seeded(stack)
    client = MemoryClient(stack.url)
    client.procedure_feedback(flight, user, "success")
    found = client.discover_procedures(user, "book a flight to Berlin", top_k=1).results
    assert [h.memory_id for h in found] == [flight] and found[0].usage.successes == 1
    assert client.get_skill(expense, user).name == "expense-a-client-dinner"
    # When the procedures are exported as skills
    target = tmp_path / "skills"
    code = main(
        [
            "memories",
            "export",
            "--kind",
            "procedural",
            "--format",
            "skills",
            str(target),
            "--user-id",
            user,
            "--base-url",
            stack.url,
        ]
    )
    assert code == 0, capsys.readouterr().err
    # Then there is one folder per skill, each with a SKILL.md whose front matter names it
    folders = sorted(p.name for p in target.iterdir())
    assert folders == ["book-a-flight", "expense-a-client-dinner"]
    for name in folders:
        text = (target / name / "SKILL.md").read_text()
        meta = yaml.safe_load(text.split("---\n")[1])
        assert meta["name"] == name and meta["description"]
    assert "1. Ask for the dates" in (target / "book-a-flight" / "SKILL.md").read_text()
    # --format skills is for procedures only
    assert (
        main(
            [
                "memories",
                "export",
                "--kind",
                "semantic",
                "--format",
                "skills",
                str(target),
                "--base-url",
                stack.url,
            ]
        )
        == 2
    )


def stdio_server(*args: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH", "LANG")}
    return StdioServerParameters(command=sys.executable, args=["-m", "mongomem.mcp_server", *args], env=env)


def test_mcp_offers_procedure_tools_context_sources_and_aliases(stack: LocalStack) -> None:
    user, (expense, flight) = seeded(stack)
    MemoryClient(stack.url).record_turn("chat-1", user, "user", "I need to book a flight to Berlin.")

    async def scenario() -> dict[str, Any]:
        async with Client(stdio_server("--base-url", stack.url, "--user-id", user)) as client:
            out: dict[str, Any] = {"tools": {t.name for t in (await client.list_tools()).tools}}
            out["discover"] = await client.call_tool(
                "discover_procedures", {"query": "book a flight", "top_k": 1}
            )
            out["skill"] = await client.call_tool("get_procedure_skill", {"memory_id": expense})
            out["feedback"] = await client.call_tool(
                "record_procedure_feedback", {"memory_id": flight, "outcome": "failure"}
            )
            out["context"] = await client.call_tool(
                "build_context",
                {
                    "session_id": "chat-1",
                    "sources": [
                        {"source": "turns", "mode": "text", "top_k": 5},
                        {"source": "procedural", "top_k": 1},
                    ],
                    "format": "openai",
                    "max_tokens": 1000,
                },
            )
            out["alias"] = await client.call_tool(
                "updateWorkingMemory", {"memory": "# User\n- Trip: Berlin\n"}
            )
            return out

    got = asyncio.run(asyncio.wait_for(scenario(), 60))
    expected = {
        "record_turn",
        "build_context",
        "search_memories",
        "recall_messages",
        "get_working_memory",
        "update_working_memory",
        "discover_procedures",
        "get_procedure_skill",
        "record_procedure_feedback",
        "create_thread",
        "list_threads",
        "update_thread",
        "delete_thread",
        "clone_thread",
        "create_memory",
        "list_memories",
        "delete_memory",
    }
    assert got["tools"] == expected  # the deprecated alias is callable, not listed
    assert got["tools"] | set(ALIASES) <= markers.OWN_TOOLS
    assert got["tools"] <= markers.OWN_TOOLS  # their results are never learnt from
    assert got["discover"].structured_content["results"][0]["memory_id"] == flight
    assert got["skill"].structured_content["content"].startswith("---\nname: expense-a-client-dinner\n")
    assert got["feedback"].structured_content["usage"]["failures"] == 1
    # build_context answers with the block itself, as the model reads it
    context = got["context"].content[0].text
    assert got["context"].structured_content is None and context.startswith("<mongomem-memory")
    assert "book a flight to Berlin" in context and '"sources"' not in context
    assert not got["alias"].is_error
    state = MemoryClient(stack.url).get_working_memory(user)
    assert isinstance(state, WorkingMemoryState) and "Berlin" in (state.content or "")
