"""CONTRIBUTING.md's four recipes, followed as written on a throwaway copy of the code.

Each recipe's code blocks open with where they go: `# new file <path>`, or `# <path>: after`, `before` or
`instead of the line starting <text>` (the text must start exactly one line of the file). A test applies
its recipe's blocks, in order, to a copy of the repository's code under tmp_path, then runs a child
interpreter whose `mongomem` is that copy (PYTHONPATH comes before the editable install) and checks what
a contributor would see: the kind extracts, the store passes its contract suite and is the one the
composition root builds, the provider is chosen by the config, the endpoint answers and is declared in
the template. A block removed from the recipe leaves its check failing
(`test_the_recipe_works_and_needs_each_of_its_steps`); nothing is written into the checkout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
FENCE = re.compile(r"^```(python|yaml)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
WHERE = re.compile(
    r"^# (?:new file (?P<new>\S+)|(?P<path>\S+): (?P<op>after|before|instead of) the line starting (?P<anchor>.+))$"
)
# what the copy holds: the code, the functions, the tests and their tools, the template, the pytest config
COPIED = ["layers/core/mongomem", "functions", "tests", "tools", "events", "template.yaml", "pyproject.toml"]
RECIPES = {
    "kind": "Add a memory kind",
    "store": "Add a store",
    "provider": "Add a provider",
    "endpoint": "Add an endpoint",
}


@dataclass(frozen=True)
class Step:
    """One code block of a recipe: where it goes and what it holds."""

    line: int
    path: str
    op: str  # "new file", "after", "before", "instead of"
    anchor: str
    body: str


def steps(recipe: str, text: str | None = None) -> list[Step]:
    """The code blocks of the `## <title>` section of CONTRIBUTING.md, each with where it goes."""
    text = CONTRIBUTING.read_text(encoding="utf-8") if text is None else text
    start = text.index(f"\n## {RECIPES[recipe]}")
    end = text.find("\n## ", start + 1)
    out = []
    for match in FENCE.finditer(text, start, end if end != -1 else len(text)):
        first, _, body = match.group(2).partition("\n")
        where = WHERE.match(first)
        line = text.count("\n", 0, match.start()) + 1
        assert where, f"CONTRIBUTING.md:{line}: a recipe block opens with where it goes, not {first!r}"
        if where["new"]:
            out.append(Step(line, where["new"], "new file", "", match.group(2)))
        else:
            out.append(Step(line, where["path"], where["op"], where["anchor"].strip(), body))
    assert out, f"the recipe {RECIPES[recipe]!r} has no code blocks"
    return out


def apply(step: Step, root: Path) -> None:
    """Apply one block to the copy at `root` as a contributor would."""
    target = root / step.path
    if step.op == "new file":
        assert not target.exists(), f"CONTRIBUTING.md:{step.line}: {step.path} exists already"
        target.write_text(step.body, encoding="utf-8")
        return
    lines = target.read_text(encoding="utf-8").splitlines(keepends=True)
    found = [i for i, line in enumerate(lines) if line.strip().startswith(step.anchor)]
    assert len(found) == 1, (
        f"CONTRIBUTING.md:{step.line}: {len(found)} lines of {step.path} start with {step.anchor!r}"
    )
    at = found[0]
    block = step.body.splitlines(keepends=True)
    if step.op == "after":
        lines[at + 1 : at + 1] = block
    elif step.op == "before":
        lines[at:at] = block
    else:
        lines[at : at + 1] = block
    target.write_text("".join(lines), encoding="utf-8")


def copy_of_the_code(root: Path) -> Path:
    for name in COPIED:
        source, target = ROOT / name, root / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return root


def follow(recipe: str, root: Path, mongo_uri: str, leave_out: int | None = None) -> dict[str, Any]:
    """Apply the recipe's blocks (but `leave_out`) to a fresh copy and run its check in a child
    interpreter; the check's findings, or {"failed": why} when the check raised."""
    copy_of_the_code(root)
    for i, step in enumerate(steps(recipe)):
        if i != leave_out:
            apply(step, root)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(root / "layers" / "core"), str(root)]),
        "RECIPE_MONGO_URI": mongo_uri,
        "RECIPE_ROOT": str(root),
    }
    code = f"from tests.integration.recipe_checks import main; main({recipe!r})"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        return {"failed": (done.stdout + done.stderr)[-3000:]}
    findings: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return findings


# What each recipe gives, followed whole (tests/integration/recipe_checks.py finds it out); every recipe's
# added code also names the cost of its imports inside functions (tests/unit/test_lazy_imports.py).
EXPECTED: dict[str, dict[str, Any]] = {
    # the kind is registered like the built-in ones, and its extraction stores the LLM's item as a memory
    "kind": {
        "registered": True,
        "memories": [{"key": "run a marathon", "text": "user wants to run a marathon by next spring"}],
        "unmeasured": [],
    },
    # the store passes the ApiKeyRepository suite, the root builds it, and it caches
    "store": {"contract": "3 passed", "built": "CachedApiKeys", "cached": True, "unmeasured": []},
    # the provider is the one `memory.providers.embeddings.kind` names, and it embeds
    "provider": {
        "built": "LettersEmbedder",
        "model": "letters-v1",
        "vector": [0.6, 0.8],
        "ready": True,
        "unmeasured": [],
    },
    # the memory API function answers the route, the OpenAPI document has it, the template declares it
    "endpoint": {
        "status": 200,
        "body": {"user_id": "ana", "sessions": 2},
        "documented": True,
        "undeclared": [],
        "unmeasured": [],
    },
}


@pytest.mark.parametrize("recipe", list(RECIPES))
def test_the_recipe_works_and_needs_each_of_its_steps(recipe: str, tmp_path: Path, mongo_server: Any) -> None:
    whole = follow(recipe, tmp_path / "whole", mongo_server.uri)
    assert whole == EXPECTED[recipe], whole.get("failed")
    # each block left out in turn: the check no longer finds what the whole recipe gives
    for i, step in enumerate(steps(recipe)):
        without = follow(recipe, tmp_path / f"without-{i}", mongo_server.uri, leave_out=i)
        assert without != EXPECTED[recipe], f"CONTRIBUTING.md:{step.line} ({step.path}) is not needed"


def test_a_block_that_does_not_say_where_it_goes_is_refused() -> None:
    text = "\n## Add a provider\n\n```python\nclass Nowhere: ...\n```\n"
    with pytest.raises(AssertionError, match="opens with where it goes"):
        steps("provider", text)
