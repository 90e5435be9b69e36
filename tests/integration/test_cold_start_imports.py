"""The record path imports no OpenSearch, LLM or embedding client (invariant 2), nor the configuration's
models (they load with the first request, which reads the settings)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT

PROBE = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("rec", "functions/record_turns/app.py")
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
print(json.dumps(sorted(sys.modules)))
"""

# botocore's bare package is touched by Powertools' user-agent hook; a client or session is not.
FORBIDDEN = (
    "opensearchpy",
    "openai",
    "numpy",
    "torch",
    "onnxruntime",
    "boto3",
    "botocore.client",
    "botocore.session",
    "aws_xray_sdk",
    "mongomem.vectors",
    "mongomem.providers",
    "mongomem.retrieval",
    "mongomem.extraction",
    "mongomem.config",
    "pydantic_settings",
)


def test_record_handler_imports_no_search_llm_or_embedding_client() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"POWERTOOLS_TRACE_DISABLED": "true", "PATH": "/usr/bin:/bin"},
    )
    modules = json.loads(out.stdout.strip().splitlines()[-1])
    loaded = [m for m in modules if m.split(".")[0] in FORBIDDEN or m.startswith(FORBIDDEN)]
    assert loaded == []
    assert "pymongo" in modules and "mongomem.shortterm.record" in modules
