"""docs/integrations.md: every example runs as written against the local stack (only the URL is the
stack's): each uses a model that needs no LLM, as the doc shows; the README's Strands lines build a
real agent."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest
from agents import set_tracing_disabled

from mongomem.client import MemoryClient
from mongomem.local.stack import LocalStack

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "integrations.md").read_text()


def examples() -> dict[str, str]:
    """The python blocks of the doc, by the `## ` heading they sit under."""
    out: dict[str, str] = {}
    heading = ""
    for block in re.split(r"(?m)^(## .*)$", DOC):
        if block.startswith("## "):
            heading = block[3:].strip()
            continue
        for code in re.findall(r"```python\n(.*?)```", block, re.DOTALL):
            assert heading not in out, f"one example per framework: {heading}"
            out[heading] = code
    return out


def run(code: str, stack: LocalStack) -> dict[str, Any]:
    source = code.replace("http://127.0.0.1:3000", stack.url)
    namespace: dict[str, Any] = {"__name__": "__doc_example__"}
    exec(compile(source, "docs/integrations.md", "exec"), namespace)
    return namespace


def test_the_doc_has_one_example_per_framework() -> None:
    assert set(examples()) == {"Strands Agents", "LangGraph", "OpenAI Agents SDK", "Pydantic AI"}


def test_strands_example(stack: LocalStack, mem: MemoryClient, capsys: pytest.CaptureFixture[str]) -> None:
    model = run(examples()["Strands Agents"], stack)["model"]
    roles = [t.role for t in mem.list_turns("trip-planning", "ana").turns]
    assert roles[-4:] == ["user", "assistant", "tool", "assistant"]
    assert "home airport: LIS" in str(model.calls[0]["messages"])
    assert "user Which airport do I usually fly from?" in capsys.readouterr().out


def test_langgraph_example(stack: LocalStack, mem: MemoryClient, capsys: pytest.CaptureFixture[str]) -> None:
    run(examples()["LangGraph"], stack)
    out = capsys.readouterr().out
    assert "You like grilled sardines." in out and "[('di', 'preferences')]" in out
    assert [t.role for t in mem.list_turns("dinner", "di").turns][-2:] == ["user", "assistant"]


def test_openai_agents_example(
    stack: LocalStack, mem: MemoryClient, capsys: pytest.CaptureFixture[str]
) -> None:
    set_tracing_disabled(True)
    run(examples()["OpenAI Agents SDK"], stack)
    out = capsys.readouterr().out
    assert "replacement is on its way" in out and "'role': 'user'" in out
    turns = mem.list_turns("support-42", "bo").turns
    assert [t.role for t in turns][-2:] == ["user", "assistant"]


def test_pydantic_ai_example(stack: LocalStack, mem: MemoryClient) -> None:
    run(examples()["Pydantic AI"], stack)
    roles = [t.role for t in mem.list_turns("cooking", "cy").turns]
    assert roles[-4:] == ["user", "assistant", "tool", "assistant"]


def test_readme_strands_lines_build_an_agent_with_memory(stack: LocalStack) -> None:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```python\nfrom strands import Agent")
    snippet = readme[start + len("```python\n") : readme.index("```", start + 10)]
    assert (
        len([line for line in snippet.splitlines() if line and not line.startswith(("from ", "import "))])
        == 3
    )
    namespace: dict[str, Any] = {}
    exec(compile(snippet.replace("http://127.0.0.1:3000", stack.url), "README", "exec"), namespace)
    agent = namespace["agent"]
    assert {"search_memories", "recall_messages", "update_working_memory"} <= set(agent.tool_names)
    assert "strands" in sys.modules  # and the SDK itself never needs it: test_boundaries.py
