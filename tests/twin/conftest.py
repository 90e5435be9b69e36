"""The deployed twin's fixtures: one Twin (moto, the Bedrock stand-in, the Lambda API) per session.

The twin's account has a new AWS account's Lambda concurrency quota, 10 ("Lambda quotas": new accounts
start with reduced concurrency): every stack of the suite, the journey included, deploys and runs in it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import ROOT

NEW_ACCOUNT_CONCURRENCY = 10


@pytest.fixture(scope="session")
def twin(mongo_server: Any, opensearch_node: Any) -> Iterator[Any]:
    from twin import Twin

    build = ROOT / ".aws-sam" / "build" / "template.yaml"
    if not build.exists():
        pytest.fail(
            "the deployed twin needs the built stack: run `make sam-build` (make test does)", pytrace=False
        )
    instance = Twin(ROOT, mongo_server.uri, opensearch_node.url, concurrency=NEW_ACCOUNT_CONCURRENCY)
    yield instance
    instance.close()


@pytest.fixture
def aws_cli_env(twin: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """What an operator's shell has: AWS credentials, region and (here) the twin's endpoints."""
    env = twin.aws_env()
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_PROFILE", "MONGOMEM_STACK", "MONGOMEM_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    result: dict[str, str] = env
    return result
