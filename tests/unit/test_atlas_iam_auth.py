"""Atlas IAM authentication (MONGODB-AWS): the functions sign in to Atlas with their execution role, no
password in the secret (docs/operations.md "1. MongoDB Atlas"; docs/adr/0048-hardening-the-deployed-stack.md)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IAM_URI = (
    "mongodb://cluster0-shard-00-00.abcde.mongodb.net:27017/"
    "?tls=true&authSource=%24external&authMechanism=MONGODB-AWS"
)


def test_a_mongodb_aws_uri_needs_no_password_and_the_layer_ships_the_signer() -> None:
    from mongomem.adapters.mongo.driver import close_client, get_client

    # Given the secret's URI names the MONGODB-AWS mechanism and no user or password
    client = get_client(IAM_URI, connect=False)
    try:
        credentials = client.options.pool_options._credentials
        # Then the client authenticates with AWS credentials (Lambda's role: AWS_ACCESS_KEY_ID,
        # AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN in the function's environment), no password
        assert credentials is not None and credentials.mechanism == "MONGODB-AWS"
        assert credentials.password is None and credentials.source == "$external"
    finally:
        close_client(IAM_URI)  # only this one: a local stack of another test may share the process
    # and the driver's signer (pymongo-auth-aws) is a runtime dependency the layer installs
    import pymongo_auth_aws  # noqa: F401

    requirements = (ROOT / "layers" / "core" / "requirements.txt").read_text()
    assert any(line.startswith("pymongo[aws]") for line in requirements.splitlines())
