"""The integrations stay out of the runtime: no layer or function imports them, and neither the
integrations package nor the SDK imports a framework on its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FRAMEWORKS = ("strands", "langgraph", "langchain_core", "agents", "pydantic_ai", "openai")


def test_no_runtime_or_function_source_mentions_the_integrations() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("layers", "functions")
        for path in (ROOT / folder).rglob("*.py")
        if "mongomem.integrations" in path.read_text()
        or any(
            f"import {name}" in path.read_text() or f"from {name} " in path.read_text()
            for name in FRAMEWORKS[:5]
        )
    ]
    assert offenders == []
    assert not (ROOT / "layers" / "core" / "mongomem" / "integrations").exists()


def test_importing_the_sdk_and_the_integrations_package_loads_no_framework() -> None:
    code = (
        "import sys, mongomem.client, mongomem.integrations, mongomem.integrations._common\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r})\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_the_layer_requirements_carry_no_http_client_or_framework() -> None:
    layer = (ROOT / "layers" / "core" / "requirements.txt").read_text() + (
        ROOT / "layers" / "pyproject.toml"
    ).read_text()
    for name in ("httpx", "anyio", "strands", "langgraph", "openai-agents", "pydantic-ai"):
        assert name not in layer, name
    assert "tenacity" in layer
