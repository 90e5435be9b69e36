"""docs/providers.md: each local server's recipe, as written, extracts through that server's stand-in.

The block's base_url is replaced by the stand-in's; everything else (model, timeouts, concurrency, the
structured-output mode left to auto) is the recipe's.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from mongomem.config import parse_project_config
from mongomem.extraction.proposal import TurnView
from mongomem.extraction.proposers import LLMProposer
from mongomem.kinds import builtin_registry
from mongomem.providers.factory import llm_from_config
from mongomem.providers.llm_openai import forget_learned

DOC = (Path(__file__).resolve().parents[2] / "docs" / "providers.md").read_text()
RECIPES = {"Ollama": "ollama", "vLLM": "vllm", "llama.cpp": "llama_cpp", "LM Studio": "lmstudio"}
ITEM = {"subject": "user", "attribute": "home airport", "value": "LIS", "evidence_seqs": [1]}


def recipe(heading: str) -> dict[str, object]:
    section = DOC.split(f"\n### {heading}\n", 1)[1].split("\n### ", 1)[0]
    (block,) = re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)
    result: dict[str, object] = yaml.safe_load(block)
    return result


@pytest.mark.parametrize("heading", list(RECIPES))
def test_the_recipe_extracts_through_its_server(heading: str) -> None:
    from llm_servers import ChatServer

    forget_learned()
    config = recipe(heading)
    llm_cfg = config["memory"]["providers"]["llm"]  # type: ignore[index]
    srv = ChatServer(RECIPES[heading], model=llm_cfg["model"], answer=lambda body: {"items": [ITEM]}).start()
    try:
        llm_cfg["base_url"] = srv.url
        cfg = parse_project_config(config).memory.providers.llm
        kinds = builtin_registry()
        start = datetime(2026, 3, 1, 9, tzinfo=UTC)
        turns = [
            TurnView(1, "user", "My home airport is LIS now.", start),
            TurnView(2, "assistant", "Noted.", start + timedelta(minutes=1)),
        ]
        proposal = LLMProposer(llm_from_config(cfg, {}), kinds).propose(kinds["semantic"], turns, "ana")
        assert proposal.items == [ITEM]
        assert [c.status for c in srv.chats()] == [200]  # the first request is one the server accepts
    finally:
        srv.stop()
        forget_learned()
