"""Shared fixtures: a real MongoDB-compatible server (SecantusDB) for the whole session."""

from __future__ import annotations

import importlib.util
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
EVENTS = ROOT / "events"
TOOLS = ROOT / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

from opensearch_node import OpenSearchNode, OpenSearchNodeError  # noqa: E402

from mongomem.local.queue import local_queue_factory  # noqa: E402
from tests.helpers import figure_lines, installed, load_event  # noqa: E402

# Powertools reads these itself; tests want quiet, local behaviour.
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mongomem")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "mongomem-test")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")


@pytest.fixture(scope="session")
def mongo_server() -> Iterator[Any]:
    from mongomem.local.mongod import EmbeddedMongo

    server = EmbeddedMongo(None).start()
    yield server
    server.stop()


@pytest.fixture
def db_name() -> str:
    return f"t_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def make_settings(mongo_server: Any, db_name: str) -> Any:
    from mongomem.config import settings_from_env
    from mongomem.kindnames import BuiltinKind

    def build(**overrides: Any) -> Any:
        env = {"MONGOMEM_MONGODB_URI": mongo_server.uri, "MONGOMEM_DB_NAME": db_name}
        for t in BuiltinKind:
            env[f"MONGOMEM_QUEUE_URL_{t.value.upper()}"] = f"local:extract-{t.value}"
        return settings_from_env(env, **overrides)

    return build


@pytest.fixture
def services(make_settings: Any) -> Iterator[Any]:
    """Process services bound to a fresh database, installed as the handlers' runtime."""
    from mongomem.runtime import Services

    with installed(Services(make_settings(), queue_factory=local_queue_factory)) as svc:
        yield svc


__all__ = ["ROOT", "Ctx", "load_event", "load_function", "start_opensearch"]


def load_function(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"fn_{name}", ROOT / "functions" / name / "app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Ctx:
    function_name = "test"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:test"
    aws_request_id = "req-test"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


@pytest.fixture(scope="session")
def ctx() -> Ctx:
    return Ctx()


def start_opensearch(data_dir: Path) -> OpenSearchNode:
    """A real OpenSearch 2.19 + k-NN node; a start failure fails the test (never skips it)."""
    node = OpenSearchNode()
    try:
        node.start(data_dir=data_dir, heap="1g")
    except OpenSearchNodeError as exc:
        message = str(exc)
        tail = node.log_tail()
        if tail not in message:
            message += f"\n--- node log tail ---\n{tail}"
        pytest.fail(f"OpenSearch node did not start: {message}", pytrace=False)
    return node


@pytest.fixture(scope="session")
def opensearch_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenSearchNode]:
    """One node shared by the session's tests (engine lucene; production uses faiss, same query JSON)."""
    node = start_opensearch(tmp_path_factory.mktemp("opensearch"))
    yield node
    node.stop()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The figures the test modules gathered (tests/helpers.report_figures), after every test ran."""
    lines = figure_lines()
    if lines:
        terminalreporter.section("figures")
        for line in lines:
            terminalreporter.write_line(line)
