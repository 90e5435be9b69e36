"""AWS's rules that a deploy meets before anything runs: account concurrency, and the custom resource
that must answer CloudFormation on every path (docs/aws-rules.md).

Stacks of their own beside the journey's: `mongomem-cfn` (template defaults, no search index) whose
migration is sent CloudFormation's Update and Delete requests while its database is out of reach, and
stacks whose deploy is meant to fail.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from mongomem.cli.memory_deployed import canonical

TRIP = {
    "memory": {
        "custom_types": [
            {
                "name": "trip",
                "schema": {
                    "type": "object",
                    "properties": {"destination": {"type": "string"}},
                    "required": ["destination"],
                },
                "match_key": ["destination"],
                "prompt": "Extract TRIPS only.",
            }
        ]
    }
}
UNREACHABLE = "mongodb://127.0.0.1:9/?directConnection=true"


def test_a_new_accounts_quota_refuses_reserved_concurrency(
    twin: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Given the twin's account has a new account's concurrency (10): Lambda keeps the account's unreserved
    # concurrency at its minimum, so any reservation fails the deploy
    assert twin.account.concurrency == 10
    params = {
        "Stage": "reserve",
        "MongoDbName": "mongomem_reserve",
        "OpenSearchMode": "none",
        "ReserveConcurrency": "true",
    }
    with pytest.raises(RuntimeError, match="UnreservedConcurrentExecution below its minimum"):
        twin.deploy("mongomem-reserve", params, tmp_path_factory.mktemp("reserve"))
    # which is why reserving is off by default: every other stack of this suite deploys in this account


@pytest.fixture(scope="module")
def cfn_stack(twin: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    params = {
        "Stage": "cfn",
        "MongoDbName": "mongomem_cfn",
        "OpenSearchMode": "none",
        "ConfigMaxAgeSeconds": "5",
    }
    return twin.deploy("mongomem-cfn", params, tmp_path_factory.mktemp("cfn"))


def test_the_migration_answers_cloudformation_when_its_setup_fails(
    twin: Any, cfn_stack: Any, mongo_server: Any
) -> None:
    assert cfn_stack.custom["Migration"]["Status"] == "SUCCESS"
    ssm, secrets = twin.client("ssm"), twin.client("secretsmanager")
    name = "/mongomem/mongomem-cfn/project-config"
    # Given the stack runs a config with a custom type (loading it checks the type's schema in MongoDB) ...
    version = ssm.put_parameter(Name=name, Value=canonical(TRIP), Type="String", Tier="Advanced")["Version"]
    ssm.label_parameter_version(Name=name, ParameterVersion=version, Labels=["applied"])
    # ... and MongoDB is out of reach (its secret names a port nothing listens on)
    secrets.put_secret_value(SecretId="mongomem/cfn/mongodb", SecretString=json.dumps({"uri": UNREACHABLE}))
    migrate = cfn_stack.functions["MigrateFunction"]
    migrate.stop()
    try:
        # When a deploy changes the Migration (CloudFormation sends Update)
        props = {**cfn_stack.resources["Migration"].properties, "Revision": "next"}
        started = time.monotonic()
        answer = cfn_stack.custom_request("Migration", "Update", props)
        # Then the function answers FAILED with the reason, within its own invocation (not: no answer,
        # the stack waiting an hour, the rollback meeting the same failure)
        assert answer["Status"] == "FAILED", answer
        assert "unavailable" in answer["Reason"].lower(), answer["Reason"]
        assert time.monotonic() - started < 60
        # And the stack's deletion (or a failed create's rollback) is answered at once, touching nothing
        answer = cfn_stack.custom_request("Migration", "Delete")
        assert answer["Status"] == "SUCCESS", answer
    finally:
        secrets.put_secret_value(
            SecretId="mongomem/cfn/mongodb", SecretString=json.dumps({"uri": mongo_server.uri})
        )
        migrate.stop()


def test_the_migration_answers_before_its_function_times_out(
    twin: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from twin.faults import Blackhole

    with Blackhole() as hole:
        # Given a search endpoint that never answers, and a migration whose work outlasts its function (45 s
        # here, as a re-keying of millions of memories outlasts 600 s)
        params = {
            "Stage": "slow",
            "MongoDbName": "mongomem_slow",
            "OpenSearchMode": "existing",
            "OpenSearchEndpoint": hole.url.replace("http://", "https://"),
            "OpenSearchResourceArn": "arn:aws:es:eu-west-1:123456789012:domain/slow",
            "OpenSearchAuth": "none",
        }
        started = time.monotonic()
        # When the stack is created, the Migration answers FAILED before Lambda would end its function
        # (without an answer CloudFormation waits an hour, then rolls back)
        with pytest.raises(RuntimeError, match="did not finish within the function's timeout"):
            twin.deploy(
                "mongomem-slow", params, tmp_path_factory.mktemp("slow"), timeouts={"MigrateFunction": 45}
            )
        assert time.monotonic() - started < 45 + 30  # (the deploy's other resources included)


def test_apply_wait_returns_once_no_execution_environment_serves_the_old_version(
    twin: Any, aws_cli_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    import yaml

    from mongomem.cli import main
    from mongomem.cli.memory_deployed import digest

    max_age = 20  # ConfigMaxAgeSeconds: longer than `apply` itself takes here, so only its wait can cover it
    params = {
        "Stage": "wait",
        "MongoDbName": "mongomem_wait",
        "OpenSearchMode": "none",
        "ConfigMaxAgeSeconds": str(max_age),
    }
    tmp = tmp_path_factory.mktemp("wait")
    stack = twin.deploy("mongomem-wait", params, tmp)
    where = ["--stack", "mongomem-wait", "--region", "eu-west-1"]
    ssm = twin.client("ssm")
    name = "/mongomem/mongomem-wait/project-config"
    first = {"memory": {"snapshot": {"max_messages": 50, "idle_seconds": 3600}}}
    second = {"memory": {"snapshot": {"max_messages": 50, "idle_seconds": 3500}}}
    version = ssm.put_parameter(Name=name, Value=canonical(first), Type="String", Tier="Advanced")["Version"]
    ssm.label_parameter_version(Name=name, ParameterVersion=version, Labels=["applied"])
    # Given every function warm on the applied version, the memory API in three execution environments
    # (what concurrent traffic leaves behind; Lambda's control invocation reaches one of them)
    api = stack.functions["MemoryApiFunction"]
    envs = api.warm(3)
    for fn in stack.functions.values():
        for env in envs if fn is api else fn.warm(1):
            assert env.invoke({"mongomem_control": {"refresh": True}})["config"]["sha256"] == digest(
                canonical(first)
            )
    # When a new version is uploaded and applied with --wait
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(second))
    assert main(["memory", "configure", *where, "--config", str(path)]) == 0
    assert main(["memory", "apply", *where, "--wait", "--timeout", "120"]) == 0
    # Then, once it returns, no environment serves the old version: the ones Lambda did not route the
    # control invocation to re-read on their next invocation, their max age being over (issue 21: the
    # command returned while they still served the old version for up to the max age)
    served = [env.invoke({"mongomem_control": {"refresh": False}})["config"]["sha256"] for env in envs]
    assert served == [digest(canonical(second))] * 3
