"""`mongomem memory configure | apply | status` against a real local stack and a (moto) AWS stack."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import moto
import pytest

from mongomem.cli import main
from mongomem.cli.memory import APPLIED, REQUEST, STAGED, LocalControl
from mongomem.client import MemoryClient
from mongomem.local.queue import LocalQueue
from mongomem.local.stack import LocalStack
from mongomem.models.common import Scope
from mongomem.models.turns import RecordTurnsRequest
from mongomem.runtime import services
from mongomem.shortterm.record import record_turns

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
    local: tuple[LocalStack, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stack, data = local
    where = ["--base-url", stack.url, "--data-dir", str(data)]
    monkeypatch.delenv("MONGOMEM_TEST_LLM_KEY", raising=False)
    llm = "{kind: openai-compatible, model: gpt-4o-mini, api_key_env: MONGOMEM_TEST_LLM_KEY}"
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
    record_turns(
        services().store, services().settings.memory, Scope(tenant="other", user_id="bo"), "s-9", other
    )
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


# -- a deployed stack (AWS APIs served by moto; the stack's ApiUrl is a real local stack) ----------


def aws_stack(api_url: str) -> dict[str, Any]:
    role = {"Fn::GetAtt": ["Role", "Arn"]}
    code = {"ZipFile": "def lambda_handler(event, context):\n    return {}\n"}

    def function(env: dict[str, str]) -> dict[str, Any]:
        props = {"Runtime": "python3.11", "Handler": "index.lambda_handler", "Role": role, "Code": code}
        return {"Type": "AWS::Lambda::Function", "Properties": {**props, "Environment": {"Variables": env}}}

    return {
        "Resources": {
            "Role": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "AssumeRolePolicyDocument": {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Principal": {"Service": "lambda.amazonaws.com"},
                                "Action": "sts:AssumeRole",
                            }
                        ],
                    }
                },
            },
            "SemanticDLQ": {"Type": "AWS::SQS::Queue"},
            "SemanticQueue": {"Type": "AWS::SQS::Queue"},
            "RecordTurnsFunction": function({"MONGOMEM_DB_NAME": "mongomem", "KEEP_ME": "yes"}),
            "ExtractSemanticFunction": function({"MONGOMEM_EXTRACTION_TYPE": "semantic"}),
        },
        "Outputs": {
            "ApiUrl": {"Value": api_url},
            "SemanticQueueUrl": {"Value": {"Ref": "SemanticQueue"}},
            "SemanticDLQUrl": {"Value": {"Ref": "SemanticDLQ"}},
        },
    }


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Any, str]]:
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_REGION": "eu-west-1",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("MONGOMEM_STACK", raising=False)
    stack = LocalStack(
        data_dir=tmp_path / "api", port=0, scan_seconds=60, config_file=config(tmp_path, "served.yaml")
    ).start()
    with moto.mock_aws():
        import boto3

        session = boto3.session.Session(region_name="eu-west-1")
        session.client("cloudformation").create_stack(
            StackName="mm-test",
            TemplateBody=json.dumps(aws_stack(stack.url)),
            Capabilities=["CAPABILITY_IAM"],
        )
        yield session, stack.url
    stack.stop()


def function_env(session: Any) -> dict[str, dict[str, str]]:
    lam = session.client("lambda")
    names = [
        r["PhysicalResourceId"]
        for r in session.client("cloudformation").list_stack_resources(StackName="mm-test")[
            "StackResourceSummaries"
        ]
        if r["ResourceType"] == "AWS::Lambda::Function"
    ]
    return {n: lam.get_function_configuration(FunctionName=n)["Environment"]["Variables"] for n in names}


def test_deployed_configure_apply_status(
    aws: tuple[Any, str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session, _ = aws
    stack = ["--stack", "mm-test", "--region", "eu-west-1"]
    # configure uploads the validated file to SSM
    path = config(tmp_path, "deploy.yaml")
    code, out, err = run(capsys, "memory", "configure", *stack, "--config", str(path))
    assert code == 0, err
    param = session.client("ssm").get_parameter(Name="/mongomem/mm-test/project-config")["Parameter"]
    assert param["Value"] == path.read_text()
    # apply refuses an LLM without its key before touching any function
    before = function_env(session)
    monkeypatch.delenv("MONGOMEM_TEST_LLM_KEY", raising=False)
    keyed = config(
        tmp_path, "keyed.yaml", llm="{kind: openai-compatible, model: m, api_key_env: MONGOMEM_TEST_LLM_KEY}"
    )
    assert run(capsys, "memory", "configure", *stack, "--config", str(keyed))[0] == 0
    code, _, err = run(capsys, "memory", "apply", *stack, "--wait")
    assert code == 1 and "MONGOMEM_TEST_LLM_KEY" in err and function_env(session) == before
    # apply of a usable config sets the variables on every function, keeps the others, waits for ready
    assert run(capsys, "memory", "configure", *stack, "--config", str(path))[0] == 0
    code, out, err = run(capsys, "memory", "apply", *stack, "--wait", "--timeout", "30")
    assert code == 0, err
    after = function_env(session)
    assert len(after) == 2 and all(
        env["MONGOMEM_ENABLED_EXTRACTIONS"] == "semantic" for env in after.values()
    )
    assert any(env.get("KEEP_ME") == "yes" for env in after.values())
    assert any(env.get("MONGOMEM_EXTRACTION_TYPE") == "semantic" for env in after.values())
    assert "updated" in out and "service: ready" in out
    # status: applied config, queue depths from SQS, readiness from the API
    queue_url = next(
        o["OutputValue"]
        for o in session.client("cloudformation").describe_stacks(StackName="mm-test")["Stacks"][0]["Outputs"]
        if o["OutputKey"] == "SemanticQueueUrl"
    )
    session.client("sqs").send_message(QueueUrl=queue_url, MessageBody="{}")
    code, out, _ = run(capsys, "memory", "status", *stack, "--json")
    report = json.loads(out)
    assert code == 0 and report["service"]["ready"] is True and report["config"]["pending_apply"] is False
    assert report["queues"]["semantic"] == {"visible": 1, "in_flight": 0, "dlq": 0}
