"""`mongomem memory configure | apply | status` against a real local stack (deployed stacks: tests/twin)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mongomem.cli import main
from mongomem.cli.config_files import APPLIED, REQUEST, STAGED
from mongomem.cli.memory_local import LocalControl
from mongomem.client import MemoryClient
from mongomem.local.queue import LocalQueue
from mongomem.local.stack import LocalStack
from mongomem.models.common import Scope
from mongomem.models.turns import RecordTurnsRequest

BASE = """
memory:
  snapshot: {{max_messages: 50, idle_seconds: 3600}}
  extraction: {{enabled: [{enabled}]}}
  providers:
    llm: {llm}
    embeddings: {{kind: hashing, dim: 64}}
"""


def config(tmp: Path, name: str, enabled: str = "semantic", llm: str = "{kind: offline}") -> Path:
    path = tmp / name
    path.write_text(BASE.format(enabled=enabled, llm=llm))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    # the in-process stack's functions print their EMF metrics to the same stdout
    out = "\n".join(line for line in captured.out.splitlines() if not line.startswith('{"_aws"'))
    return code, out, captured.err


@pytest.fixture
def local(tmp_path: Path) -> Iterator[tuple[LocalStack, Path]]:
    data = tmp_path / "data"
    stack = LocalStack(
        data_dir=data, port=0, scan_seconds=60, poll_seconds=0.2, config_file=config(tmp_path, "initial.yaml")
    ).start()
    control = LocalControl(stack, interval=0.1).start()  # what `mongomem dev` runs beside its stack
    yield stack, data
    control.stop()
    stack.stop()


def test_local_configure_rejects_bad_fields_then_apply_waits_until_ready(
    local: tuple[LocalStack, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack, data = local
    where = ["--local", "--base-url", stack.url, "--data-dir", str(data)]
    # Given a config with two bad fields
    bad = tmp_path / "bad.yaml"
    bad.write_text("memory:\n  snapshot: {max_messages: 0}\n  extraction: {enabled: [semantic, dreams]}\n")
    # When it is configured, then both are named by path and nothing is uploaded
    code, _, err = run(capsys, "memory", "configure", *where, "--config", str(bad))
    assert code == 2 and "memory.snapshot.max_messages" in err and "memory.extraction.enabled" in err
    assert not (data / STAGED).exists()
    # When a valid config is configured, it is uploaded but not yet applied
    good = config(tmp_path, "good.yaml", enabled="semantic, episodic")
    code, out, _ = run(capsys, "memory", "configure", *where, "--config", str(good))
    assert code == 0 and (data / STAGED).read_text() == good.read_text()
    code, out, _ = run(capsys, "memory", "status", *where, "--json")
    report = json.loads(out)
    assert report["config"]["pending_apply"] is True and report["service"]["extraction"]["enabled"] == [
        "semantic"
    ]
    # When it is applied with --wait
    code, out, err = run(capsys, "memory", "apply", *where, "--wait", "--timeout", "30")
    # Then the running stack serves it, with a poller for the newly enabled type
    assert code == 0, err
    assert "service: ready" in out
    assert MemoryClient(stack.url).status()["extraction"]["enabled"] == ["semantic", "episodic"]
    assert "poll-episodic" in {t.thread.name for t in stack.threads}
    code, out, _ = run(capsys, "memory", "status", *where, "--json")
    assert json.loads(out)["config"]["pending_apply"] is False


def test_local_apply_refuses_an_llm_without_its_key_and_changes_nothing(
    request: pytest.FixtureRequest,
    local: tuple[LocalStack, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from llm_servers import ChatServer

    stack, data = local
    where = ["--base-url", stack.url, "--data-dir", str(data)]
    monkeypatch.delenv("MONGOMEM_TEST_LLM_KEY", raising=False)
    # an OpenAI-like server on this machine: ready means the key is set and the server answers
    server = ChatServer("openai", model="gpt-4o-mini").start()
    request.addfinalizer(server.stop)
    llm = f"{{kind: openai-compatible, base_url: '{server.url}', model: gpt-4o-mini, api_key_env: MONGOMEM_TEST_LLM_KEY}}"
    path = config(tmp_path, "openai.yaml", enabled="semantic, taxonomic", llm=llm)
    assert run(capsys, "memory", "configure", *where, "--config", str(path))[0] == 0
    # When it is applied without the key in the environment
    code, _, err = run(capsys, "memory", "apply", *where, "--wait", "--timeout", "10")
    # Then it fails naming the variable, before anything changed
    assert code == 1 and "MONGOMEM_TEST_LLM_KEY" in err and "nothing was changed" in err
    assert not (data / REQUEST).exists()
    assert MemoryClient(stack.url).status()["extraction"]["enabled"] == ["semantic"]
    # With the key set, the same config applies and the stack is ready with it
    monkeypatch.setenv("MONGOMEM_TEST_LLM_KEY", "sk-test")
    code, _, err = run(capsys, "memory", "apply", *where, "--wait", "--timeout", "30")
    assert code == 0, err
    status = MemoryClient(stack.url).status()
    assert status["ready"] is True and status["llm"]["kind"] != "offline"
    # the key reached the stack once and was not left on disk
    assert "sk-test" not in (data / REQUEST).read_text() and "sk-test" not in (data / APPLIED).read_text()


def test_local_status_shows_readiness_backlog_and_queue_depths(
    local: tuple[LocalStack, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    stack, data = local
    # Given a message stuck in the procedural DLQ and a session with unpromoted turns
    assert stack.queue is not None
    LocalQueue(stack.queue.coll.database).send("extract-procedural-dlq", "{}")
    MemoryClient(stack.url).record_turn("s-1", "ana", "user", "hello")
    # and a session of another tenant, which the API's status never shows the caller
    other = RecordTurnsRequest.model_validate({"turns": [{"role": "user", "content": "elsewhere"}]})
    assert stack.services is not None
    stack.services.recorder.record(Scope(tenant="other", user_id="bo"), "s-9", other)
    # When the status is shown
    code, out, _ = run(capsys, "memory", "status", "--base-url", stack.url, "--data-dir", str(data), "--json")
    report = json.loads(out)
    # Then it has the readiness, the backlog and the queues read from the local stack's MongoDB
    assert code == 0 and report["service"]["ready"] is True
    assert report["service"]["sessions_pending_promotion"] >= 1
    assert report["service"]["backlog_scope"] == "tenant default"
    # the operator's view reads every tenant's backlog from MongoDB
    assert report["backlog"]["scope"] == "all tenants"
    assert (
        report["backlog"]["sessions_pending_promotion"] == report["service"]["sessions_pending_promotion"] + 1
    )
    assert report["queues"]["procedural"]["dlq"] == 1 and report["queues"]["semantic"]["visible"] == 0
    code, text, _ = run(capsys, "memory", "status", "--base-url", stack.url, "--data-dir", str(data))
    assert "ready       yes" in text and "procedural" in text and "embeddings  hashing" in text
    assert "backlog     (all tenants)" in text


# A deployed stack's configure / apply / status run against the built stack in tests/twin.
