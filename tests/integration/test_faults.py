"""Faults on real servers: MongoDB dying around a record call, the authorizer without MongoDB, an
extraction crashing mid-batch, and re-driving dead-lettered messages (locally and on SQS)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from mongomem.adapters.mongo import get_client
from mongomem.cli import main as cli_main
from mongomem.extraction.extractor import ExtractionResult, SnapshotInput
from mongomem.kindnames import BuiltinKind
from mongomem.local.http import LocalAuthorizer, to_event
from mongomem.local.lambdas import find_functions_dir, load_handler
from mongomem.local.mongod import EmbeddedMongo, free_port
from mongomem.local.queue import LocalQueue, QueuePolicy, local_queue_factory
from mongomem.local.worker import drain
from mongomem.models.common import Scope, utcnow
from mongomem.models.sessions import TypeStatusUpdate
from mongomem.models.turns import RecordTurnsRequest
from mongomem.ops.dlq import SnapshotStatuses, SqsRedrive
from mongomem.ops.redrive import retry_sqs
from mongomem.runtime import Services, configure
from tests.conftest import load_event, load_function
from tests.helpers import report_figures

PASSED: list[str] = []
report_figures("fault scenarios passed", lambda: f"{len(PASSED)}: " + "; ".join(PASSED))


@pytest.fixture
def server(tmp_path: Path) -> Any:
    """A SecantusDB of this test's own, on a fixed port and data folder, so it can be killed and restarted."""
    mongo = EmbeddedMongo(tmp_path / "mongo", port=free_port()).start()
    yield mongo
    mongo.stop()


@pytest.fixture
def svc(server: Any, make_settings: Any) -> Any:
    get_client(server.uri, serverSelectionTimeoutMS=1500, connectTimeoutMS=1000)  # fail fast when it is down
    services = Services(make_settings(mongodb_uri=server.uri), queue_factory=local_queue_factory)
    configure(services)
    yield services
    configure(None)


def restart(server: Any) -> None:
    server.start()
    get_client(server.uri).admin.command("ping")


@pytest.fixture(scope="module")
def record_fn() -> Any:
    return load_function("record_turns")


def post(record_fn: Any, ctx: Any, token: str) -> tuple[int, dict[str, str], dict[str, Any]]:
    event = load_event("record_turns_post.json")
    body = json.loads(event["body"])
    body["client_token"] = token
    event["body"] = json.dumps(body)
    response = record_fn.lambda_handler(event, ctx)
    return response["statusCode"], response.get("headers") or {}, json.loads(response["body"])


def assert_clean_503(status: int, headers: dict[str, str], body: dict[str, Any]) -> None:
    assert status == 503 and headers.get("Retry-After") == "2"
    assert body["error"]["code"] == "store_unavailable"
    # no driver text reaches the client
    text = json.dumps(body).lower()
    assert not any(word in text for word in ("pymongo", "serverselection", "127.0.0.1", "traceback", "errno"))


def test_mongodb_down_during_record_gives_503_and_the_retry_records_once(
    server: Any, svc: Any, record_fn: Any, ctx: Any
) -> None:
    # Given an acknowledged batch (journaled: it survives the kill without any flush of ours)
    assert post(record_fn, ctx, "tok-1")[0] == 201
    # When MongoDB dies and the client records its next batch
    server.kill()
    assert_clean_503(*post(record_fn, ctx, "tok-2"))
    # Then, once MongoDB is back on the same data, the retry with the same token records the batch once
    restart(server)
    status, _, body = post(record_fn, ctx, "tok-2")
    assert status == 201 and [t["seq"] for t in body["turns"]] == [3, 4]
    assert post(record_fn, ctx, "tok-2")[0] == 200  # and a second retry is a replay
    assert sorted(d["seq"] for d in svc.db["turns"].find({})) == [1, 2, 3, 4]
    PASSED.append("record: MongoDB down before the call")


def test_mongodb_dying_between_the_two_writes_leaves_no_turn_and_the_retry_is_safe(
    server: Any, svc: Any, record_fn: Any, ctx: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = svc.turns  # the turn repository the record function's services use
    original = turns.insert_new

    def die_first(*args: Any) -> bool:
        server.kill()  # the session update is journaled; the turns never reach the server
        return bool(original(*args))

    monkeypatch.setattr(turns, "insert_new", die_first)
    assert_clean_503(*post(record_fn, ctx, "tok-1"))
    monkeypatch.setattr(turns, "insert_new", original)
    restart(server)
    # Then no turn of the batch is visible (the allocated seqs are a hole the scanner skips)
    assert svc.db["turns"].count_documents({}) == 0
    # An immediate retry is told to wait: the first attempt might still be writing
    status, _, body = post(record_fn, ctx, "tok-1")
    assert status == 409 and body["error"]["details"]["retry_after_seconds"] > 0
    # After the settle time the retry records the batch exactly once
    svc.db["sessions"].update_one({}, {"$set": {"tokens.0.at": utcnow() - timedelta(minutes=1)}})
    status, _, body = post(record_fn, ctx, "tok-1")
    assert status == 200 and len(body["turns"]) == 2
    assert post(record_fn, ctx, "tok-1")[2]["turns"] == body["turns"]
    assert svc.db["turns"].count_documents({}) == 2
    PASSED.append("record: MongoDB dies between session update and turn insert")


def test_memory_api_with_mongodb_down_is_a_clean_503(server: Any, svc: Any, ctx: Any) -> None:
    api = load_function("memory_api")
    server.kill()
    response = api.lambda_handler(load_event("memory_list.json"), ctx)
    assert_clean_503(response["statusCode"], response["headers"], json.loads(response["body"]))
    PASSED.append("memory API: MongoDB down")


def test_authorizer_without_mongodb_fails_closed_and_caches_nothing(server: Any, svc: Any) -> None:
    from mongomem.identity.service import create_key

    key, _ = create_key(svc.api_keys, "acme", "memory_service")
    functions = find_functions_dir(Path(__file__))
    auth = LocalAuthorizer(lambda: load_handler(functions, "authorizer"), keys_required=lambda: True)
    event = to_event("GET", "/v1/memories?user_id=u", {"x-api-key": key}, b"", "127.0.0.1")
    server.kill()
    refused = auth.check(event)
    assert refused is not None and refused["statusCode"] == 503
    restart(server)
    # the outage was not cached as a denial
    assert auth.check(event) is None
    assert event["requestContext"]["authorizer"]["lambda"]["tenant"] == "acme"
    PASSED.append("authorizer: MongoDB down")


# -- extraction crashes and re-drives -------------------------------------------------------------
class Flaky:
    memory_type = BuiltinKind.semantic

    def __init__(self, broken: set[str]) -> None:
        self.broken = broken

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        if item.snapshot.session_id in self.broken:
            raise RuntimeError("provider crashed mid-batch")
        return ExtractionResult()


def cli_report(out: str) -> dict[str, Any]:
    """The command's one-line JSON report (Powertools logs share stdout)."""
    lines = [line for line in out.splitlines() if line.startswith('{"type"')]
    assert len(lines) == 1, out
    return dict(json.loads(lines[0]))


def promote(svc: Any, session: str) -> str:
    scope = Scope(tenant="default", user_id="u1")
    req = RecordTurnsRequest.model_validate({"turns": [{"role": "user", "content": "hello"}]})
    svc.recorder.record(scope, session, req)
    return str(svc.promoter.flush(scope, session)[0].snapshot_id)


def test_crash_mid_batch_dead_letters_and_snapshots_retry_redrives(
    svc: Any, server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = {"bad"}
    configure(svc.replaced(extractors={BuiltinKind.semantic: lambda _svc: Flaky(broken)}))
    extract = load_function("extract").lambda_handler
    try:
        good, bad = promote(svc, "good"), promote(svc, "bad")
        queue, policy = LocalQueue(svc.db), QueuePolicy(visibility_timeout=0.0, max_receive_count=3)
        drain(queue, "extract-semantic", extract, policy)
        # Then only the failed message went round again, and after maxReceiveCount it sits in the DLQ
        assert [json.loads(b)["snapshot_id"] for b in queue.bodies("extract-semantic-dlq")] == [bad]
        assert svc.db["snapshots"].find_one(bad)["extraction"]["semantic"]["status"] == "failed"
        assert svc.db["snapshots"].find_one(good)["extraction"]["semantic"]["status"] == "done"
        # When the cause is fixed and the operator re-drives (the CLI finds the running stack's database)
        broken.clear()
        data = tmp_path / "local"
        data.mkdir()
        (data / "stack.json").write_text(
            json.dumps({"mongodb_uri": server.uri, "db_name": svc.settings.db_name})
        )
        assert cli_main(["snapshots", "retry", "--type", "semantic", "--local", "--data-dir", str(data)]) == 0
        report = cli_report(capsys.readouterr().out)
        assert report == {"type": "semantic", "messages": 1, "snapshots_requeued": 1}
        assert svc.db["snapshots"].find_one(bad)["extraction"]["semantic"]["status"] == "queued"
        assert queue.depth("extract-semantic-dlq") == 0 and queue.depth("extract-semantic") == 1
        drain(queue, "extract-semantic", extract, policy)
    finally:
        configure(svc)
    assert svc.db["snapshots"].find_one(bad)["extraction"]["semantic"]["status"] == "done"
    PASSED.append("extraction: crash mid-batch -> DLQ -> snapshots retry --local")


STACK_OUTPUTS = {
    "Stacks": [
        {
            "StackName": "mongomem-prod",
            "CreationTime": "2026-01-01T00:00:00Z",
            "StackStatus": "CREATE_COMPLETE",
            "Outputs": [
                {
                    "OutputKey": "SemanticDLQUrl",
                    "OutputValue": "https://sqs.eu-west-1.amazonaws.com/1/sem-dlq",
                },
                {"OutputKey": "SemanticQueueUrl", "OutputValue": "https://sqs.eu-west-1.amazonaws.com/1/sem"},
                {
                    "OutputKey": "EpisodicDLQUrl",
                    "OutputValue": "https://sqs.eu-west-1.amazonaws.com/1/epi-dlq",
                },
            ],
        }
    ]
}


def stubbed_clients() -> tuple[Any, Any, Stubber, Stubber]:
    session = boto3.session.Session(region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="y")
    sqs, cfn = session.client("sqs"), session.client("cloudformation")
    return sqs, cfn, Stubber(sqs), Stubber(cfn)


def test_deployed_retry_starts_an_sqs_move_task_and_requeues_failed_snapshots(svc: Any) -> None:
    # Given a snapshot whose semantic extraction failed for good
    bad = promote(svc, "bad")
    svc.snapshots.set_extraction(bad, "semantic", TypeStatusUpdate(status="failed", error="boom"))
    sqs, cfn, sqs_stub, cfn_stub = stubbed_clients()
    cfn_stub.add_response("describe_stacks", STACK_OUTPUTS, {"StackName": "mongomem-prod"})
    dlq_arn = "arn:aws:sqs:eu-west-1:1:sem-dlq"
    sqs_stub.add_response(
        "get_queue_attributes",
        {"Attributes": {"QueueArn": dlq_arn, "ApproximateNumberOfMessages": "3"}},
        {
            "QueueUrl": "https://sqs.eu-west-1.amazonaws.com/1/sem-dlq",
            "AttributeNames": ["QueueArn", "ApproximateNumberOfMessages"],
        },
    )
    # no DestinationArn: SQS returns each message to the queue it was dead-lettered from
    sqs_stub.add_response("start_message_move_task", {"TaskHandle": "task-123"}, {"SourceArn": dlq_arn})
    with sqs_stub, cfn_stub:
        redrive = SqsRedrive(sqs, cfn)
        urls = redrive.dlq_urls("mongomem-prod")
        assert set(urls) == {"semantic", "episodic"}
        report = retry_sqs(redrive, urls, SnapshotStatuses(svc.db), "semantic")
        sqs_stub.assert_no_pending_responses()
    assert (report.messages, report.snapshots_requeued, report.task) == (3, 1, "task-123")
    status = svc.db["snapshots"].find_one(bad)["extraction"]["semantic"]
    assert status["status"] == "queued" and status["error"] is None
    PASSED.append("extraction: snapshots retry --stack (SQS move task)")


def test_deployed_retry_through_the_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sqs, cfn, sqs_stub, cfn_stub = stubbed_clients()
    cfn_stub.add_response("describe_stacks", STACK_OUTPUTS, {"StackName": "mongomem-prod"})
    sqs_stub.add_response(
        "get_queue_attributes",
        {"Attributes": {"QueueArn": "arn:aws:sqs:eu-west-1:1:epi-dlq", "ApproximateNumberOfMessages": "0"}},
    )
    clients = {"sqs": sqs, "cloudformation": cfn}
    monkeypatch.setattr(boto3.session.Session, "client", lambda self, name, **kw: clients[name])
    monkeypatch.delenv("MONGOMEM_MONGODB_URI", raising=False)
    monkeypatch.delenv("MONGOMEM_MONGODB_SECRET_ARN", raising=False)
    with sqs_stub, cfn_stub:
        code = cli_main(
            ["snapshots", "retry", "--type", "episodic", "--stack", "mongomem-prod", "--region", "eu-west-1"]
        )
    assert code == 0
    report = cli_report(capsys.readouterr().out)
    assert report["messages"] == 0 and "no MongoDB configured" in report["notes"][0]
