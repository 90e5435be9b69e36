"""Operating a deployed stack, in the twin: the shipped config, a rotated MongoDB password, demo providers.

Two more stacks beside test_deployed_twin's: `mongomem-ops` (template defaults: Bedrock through the
stand-in, no search index) on a SecantusDB that requires SCRAM authentication, its URI with user and
password in the stack's `mongomem/ops/mongodb` secret (moto's Secrets Manager); and `mongomem-demo`,
deployed with AllowDemoProviders=true and the offline extractor with the hashing embedder. Everything is
driven as a user would: the CLI with --stack, HTTP through the API Gateway stand-in with an API key.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pymongo import MongoClient

from mongomem.cli import main
from tests.conftest import ROOT, load_event

USER = "mongomem-app"
PASSWORDS = ("first-password", "rotated-password", "changed-by-hand")
OPS = ["--stack", "mongomem-ops", "--region", "eu-west-1"]
DEMO = ["--stack", "mongomem-demo", "--region", "eu-west-1"]
OFFLINE = "memory:\n  providers:\n    llm: {kind: offline}\n"
RECONNECTED = "MongoDB authentication failed; the secret changed (rotation), reconnecting"
UNCHANGED = "MongoDB authentication failed and the secret is unchanged"


class AuthMongo:
    """SecantusDB with --auth on a data dir (so it restarts with its users), one SCRAM user."""

    def __init__(self, data: Path) -> None:
        from mongomem.local.mongod import EmbeddedMongo

        plain = EmbeddedMongo(data).start()  # users are provisioned without auth, then it restarts with it
        client: MongoClient[dict[str, Any]] = MongoClient(plain.uri)
        client.admin.command("createUser", USER, pwd=PASSWORDS[0], roles=["root"])
        client.close()
        plain.stop()
        self.server = EmbeddedMongo(data, port=plain.port, extra_args=("--auth",)).start()
        self.password = PASSWORDS[0]

    def uri(self, password: str) -> str:
        return f"mongodb://{USER}:{password}@127.0.0.1:{self.server.port}/?directConnection=true&authSource=admin"

    def change_password(self, new: str) -> None:
        client: MongoClient[dict[str, Any]] = MongoClient(self.uri(self.password))
        client.admin.command("updateUser", USER, pwd=new)
        client.close()
        self.password = new

    def restart(self) -> None:
        """Every connection drops (a maintenance event, a failover): the functions' pools reconnect."""
        self.server.stop()
        self.server.start()


@pytest.fixture(scope="module")
def auth_mongo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthMongo]:
    server = AuthMongo(tmp_path_factory.mktemp("auth-mongo"))
    yield server
    server.server.stop()


@contextlib.contextmanager
def operator_shell(twin: Any) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        for key, value in twin.aws_env().items():
            mp.setenv(key, value)
        for key in ("AWS_PROFILE", "MONGOMEM_STACK", "MONGOMEM_API_KEY"):
            mp.delenv(key, raising=False)
        yield


def run(twin: Any, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with operator_shell(twin), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def create_key(twin: Any, stack: list[str]) -> str:
    code, out, err = run(twin, "keys", "create", *stack, "--tenant", "acme", "--kind", "memory_service")
    assert code == 0, err
    return re.search(r"^(mm_\S+)$", out, re.M).group(1)  # type: ignore[union-attr]


def http(stack: Any, key: str, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    """One HTTP request, no client retries: what the caller sees on the first try."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        stack.api_url + path,
        data=data,
        method=method,
        headers={"x-api-key": key, "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def record(stack: Any, key: str, content: str) -> tuple[int, dict[str, Any]]:
    return http(
        stack, key, "POST", "/v1/sessions/rot-1/turns", {"user_id": "ana", "role": "user", "content": content}
    )


@pytest.fixture(scope="module")
def ops(twin: Any, auth_mongo: AuthMongo, tmp_path_factory: pytest.TempPathFactory) -> Any:
    # the template's defaults (Bedrock LLM and Titan v2 embeddings, AllowDemoProviders=false); no search
    # index, a short config max age so `apply --wait` is quick
    params = {"Stage": "ops", "OpenSearchMode": "none", "ConfigMaxAgeSeconds": "5"}
    return twin.deploy(
        "mongomem-ops", params, tmp_path_factory.mktemp("ops"), mongodb_uri=auth_mongo.uri(PASSWORDS[0])
    )


@pytest.fixture(scope="module")
def ops_key(twin: Any, ops: Any) -> str:
    return create_key(twin, OPS)


def test_the_shipped_project_config_applies_to_a_deployed_stack(twin: Any, ops: Any, ops_key: str) -> None:
    # Given the repo's project-config.yaml as it is, the documented commands accept it
    code, out, err = run(twin, "memory", "configure", *OPS, "--config", str(ROOT / "project-config.yaml"))
    assert code == 0 and "version 1" in out, err + out
    code, out, err = run(twin, "memory", "apply", *OPS, "--wait", "--timeout", "120")
    assert code == 0, err + out
    assert out.count("runs version 1, ready") == len(ops.functions), out
    # and the service is ready on the template's providers (read over HTTP, as a user would)
    status, body = http(ops, ops_key, "GET", "/v1/status")
    assert status == 200 and body["ready"] is True, body
    assert "bedrock" in json.dumps(body["llm"]).lower() and "titan" in json.dumps(body["embeddings"]).lower()


def test_a_rotated_mongodb_password_is_picked_up_by_refetching_the_secret_once(
    twin: Any, ops: Any, ops_key: str, auth_mongo: AuthMongo
) -> None:
    assert record(ops, ops_key, "before rotation")[0] == 201  # warm, connected with the first password
    # When the password is rotated as Secrets Manager rotation does it (database first, then the secret)
    auth_mongo.change_password(PASSWORDS[1])
    twin.client("secretsmanager").put_secret_value(
        SecretId="mongomem/ops/mongodb", SecretString=json.dumps({"uri": auth_mongo.uri(PASSWORDS[1])})
    )
    # ... and the connections the warm functions hold drop (they stay authenticated until then)
    auth_mongo.restart()
    # Then the very next request succeeds: the function's cached URI fails once, it refetches the secret
    status, body = record(ops, ops_key, "after rotation")
    assert status == 201, body
    assert ops.log_text("RecordTurnsFunction").count(RECONNECTED) == 1
    # ... and every later request runs on the new password without refetching again
    status, body = http(ops, ops_key, "GET", "/v1/sessions/rot-1/turns?user_id=ana")
    assert status == 200 and [t["content"] for t in body["turns"]] == ["before rotation", "after rotation"]
    assert ops.log_text("RecordTurnsFunction").count(RECONNECTED) == 1
    status, body = http(ops, ops_key, "GET", "/v1/status")
    assert status == 200 and body["ready"] is True
    assert ops.log_text("MemoryApiFunction").count(RECONNECTED) == 1


def test_a_password_changed_without_its_secret_answers_503_after_one_refetch(
    twin: Any, ops: Any, ops_key: str, auth_mongo: AuthMongo
) -> None:
    # When the password changes but the secret still holds the old one
    auth_mongo.change_password(PASSWORDS[2])
    auth_mongo.restart()
    before = ops.log_text("RecordTurnsFunction").count(UNCHANGED)
    # Then the caller gets a clean, retryable 503 (not a gateway 500), and nothing is recorded
    status, body = record(ops, ops_key, "refused")
    assert status == 503 and body["error"]["code"] == "store_unavailable", body
    assert body["error"]["details"]["retry_after_seconds"] == 2
    # the secret was refetched once for that request, found unchanged, and logged
    assert ops.log_text("RecordTurnsFunction").count(UNCHANGED) == before + 1
    # A scheduler tick meanwhile fails, and runs once: Lambda does not run it twice more beside the next
    # ticks (EventInvokeConfig: no retries of an asynchronous invocation; the next tick is the retry)
    from twin.lambda_rt import InvocationError

    scan = ops.functions["ScanSessionsFunction"]
    runs = scan.invocations
    with pytest.raises(InvocationError):
        ops.schedule("ScanSessionsFunctionSchedule", load_event("scan_schedule.json"))
    assert scan.invocations == runs + 1
    # And once the secret is put right, the next request reconnects without a redeploy
    twin.client("secretsmanager").put_secret_value(
        SecretId="mongomem/ops/mongodb", SecretString=json.dumps({"uri": auth_mongo.uri(PASSWORDS[2])})
    )
    assert record(ops, ops_key, "after the fix")[0] == 201
    status, body = http(ops, ops_key, "GET", "/v1/sessions/rot-1/turns?user_id=ana")
    assert [t["content"] for t in body["turns"]] == ["before rotation", "after rotation", "after the fix"]


def test_demo_providers_are_refused_in_the_cloud_and_status_says_why_over_http(
    twin: Any, ops: Any, ops_key: str, tmp_path: Path
) -> None:
    path = tmp_path / "offline.yaml"
    path.write_text(OFFLINE)
    code, out, err = run(twin, "memory", "configure", *OPS, "--config", str(path))
    assert code == 0 and "version 2" in out, err + out
    # the CLI refuses to apply it on a stack deployed without AllowDemoProviders ...
    code, _, err = run(twin, "memory", "apply", *OPS, "--wait", "--timeout", "30")
    assert code == 1 and "AllowDemoProviders" in err and "nothing was changed" in err
    ssm = twin.client("ssm")
    name = "/mongomem/mongomem-ops/project-config"
    # ... and when it is applied anyway (the label moved by hand), GET /v1/status tells the caller why
    ssm.label_parameter_version(Name=name, ParameterVersion=2, Labels=["applied"])
    try:
        ops.invoke("MemoryApiFunction", {"mongomem_control": {"refresh": True}})
        status, body = http(ops, ops_key, "GET", "/v1/status")
        assert status == 200 and body["ready"] is False, body
        assert body["llm"]["name"] == "offline (refused)"
        assert any("AllowDemoProviders" in r for r in body["reasons"]), body["reasons"]
    finally:
        ssm.label_parameter_version(Name=name, ParameterVersion=1, Labels=["applied"])
        ops.invoke("MemoryApiFunction", {"mongomem_control": {"refresh": True}})
    assert http(ops, ops_key, "GET", "/v1/status")[1]["ready"] is True


@pytest.fixture(scope="module")
def demo(twin: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    params = {
        "Stage": "demo",
        "MongoDbName": "mongomem_demo",
        "OpenSearchMode": "none",
        "AllowDemoProviders": "true",
        "LlmProvider": "offline",
        "EmbeddingProvider": "hashing",
        "EmbeddingDimension": "256",
        "ConfigMaxAgeSeconds": "5",
    }
    return twin.deploy("mongomem-demo", params, tmp_path_factory.mktemp("demo"))


def test_a_stack_deployed_with_allow_demo_providers_runs_them(twin: Any, demo: Any, tmp_path: Path) -> None:
    key = create_key(twin, DEMO)
    # Given AllowDemoProviders=true, the service is ready on the offline extractor and hashing embedder
    status, body = http(demo, key, "GET", "/v1/status")
    assert status == 200 and body["ready"] is True, body
    assert body["llm"]["name"] == "offline" and "hashing" in json.dumps(body["embeddings"])
    # ... and a conversation becomes memories through the offline extractor, in Lambda
    turns = [
        {"role": "user", "content": "I moved to Lisbon, my home airport is LIS now."},
        {"role": "assistant", "content": "Noted: Lisbon (LIS)."},
    ]
    status, _ = http(demo, key, "POST", "/v1/sessions/demo-1/turns", {"user_id": "ana", "turns": turns})
    assert status == 201
    assert http(demo, key, "POST", "/v1/sessions/demo-1/flush?user_id=ana")[0] in (200, 202)
    # one message per built-in kind's queue (the shared custom-type queue gets none: no type is declared)
    assert demo.drain_queues() == len(demo.event_sources) - 1
    status, body = http(demo, key, "GET", "/v1/memories?user_id=ana&type=semantic")
    assert status == 200 and any("LIS" in json.dumps(m) for m in body["memories"]), body
    # and the CLI lets a demo config be applied there (the stack allows what it runs)
    path = tmp_path / "offline.yaml"
    path.write_text(OFFLINE)
    assert run(twin, "memory", "configure", *DEMO, "--config", str(path))[0] == 0
    code, out, err = run(twin, "memory", "apply", *DEMO, "--wait", "--timeout", "120")
    assert code == 0 and out.count("runs version 1, ready") == len(demo.functions), err + out


def test_ssm_keeps_a_hundred_versions_and_configure_says_what_to_do_at_the_limit(
    twin: Any, ops: Any, tmp_path: Path
) -> None:
    ssm = twin.client("ssm")
    name = "/mongomem/mongomem-ops/project-config"
    applied = ssm.get_parameter(Name=f"{name}:applied")["Parameter"]["Version"]
    versions = [int(p["Version"]) for p in ssm.get_parameter_history(Name=name, MaxResults=50)["Parameters"]]
    # Given the parameter holds 100 versions and its oldest is the applied one (SSM's limit: it would drop
    # the oldest for a new one, but not a labelled version)
    assert min(versions) == applied
    current = ssm.get_parameter(Name=name)["Parameter"]
    for _ in range(100 - int(current["Version"]) + min(versions) - 1):
        ssm.put_parameter(Name=name, Value=current["Value"], Type="String", Overwrite=True, Tier="Advanced")
    # When one more version is configured, the CLI refuses it, naming the limit and the way out
    path = tmp_path / "config.yaml"
    path.write_text((ROOT / "project-config.yaml").read_text())
    code, out, err = run(twin, "memory", "configure", *OPS, "--config", str(path))
    assert code != 0 and "100 versions" in err and "apply a newer version first" in err, err + out
    # ... and once a newer version is applied, the next upload replaces the oldest
    newest = ssm.get_parameter(Name=name)["Parameter"]["Version"]
    ssm.label_parameter_version(Name=name, ParameterVersion=newest, Labels=["applied"])
    code, out, err = run(twin, "memory", "configure", *OPS, "--config", str(path))
    assert code == 0, err
    history = [int(p["Version"]) for p in _history(ssm, name)]
    assert len(history) == 100 and applied not in history
    ssm.label_parameter_version(Name=name, ParameterVersion=newest + 1, Labels=["applied"])
    ops.invoke("MemoryApiFunction", {"mongomem_control": {"refresh": True}})


def _history(ssm: Any, name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    kwargs: dict[str, Any] = {"Name": name, "MaxResults": 50}
    while True:
        page = ssm.get_parameter_history(**kwargs)
        rows += page["Parameters"]
        if not page.get("NextToken"):
            return rows
        kwargs["NextToken"] = page["NextToken"]


def test_a_config_over_ssms_8_kb_is_refused_before_it_is_uploaded(
    twin: Any, ops: Any, tmp_path: Path
) -> None:
    ssm = twin.client("ssm")
    name = "/mongomem/mongomem-ops/project-config"
    versions = len(_history(ssm, name))
    # Given a config whose JSON is over 8 KB (SSM's advanced tier)
    path = tmp_path / "big.yaml"
    kinds = ("semantic", "episodic", "procedural")
    path.write_text(
        "memory:\n  extraction:\n" + "".join(f"    {k}: {{prompt: '{'x' * 3000}'}}\n" for k in kinds)
    )
    code, out, err = run(twin, "memory", "configure", *OPS, "--config", str(path))
    # Then the CLI says so and uploads nothing (SSM would refuse it: the twin's SSM does too)
    assert code != 0 and "8192" in err, err + out
    assert len(_history(ssm, name)) == versions
    with pytest.raises(Exception, match="maximum parameter value of 8192"):
        boto = (
            __import__("boto3")
            .session.Session(region_name="eu-west-1")
            .client("ssm", endpoint_url=twin.ssm.url, aws_access_key_id="x", aws_secret_access_key="y")
        )
        boto.put_parameter(Name=name, Value="x" * 9000, Type="String", Overwrite=True, Tier="Advanced")
