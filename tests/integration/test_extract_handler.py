"""The SQS extraction handler: partial batch failures, idempotent redelivery, DLQ after maxReceiveCount."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from mongomem.extraction.extractor import ExtractionResult, SnapshotInput
from mongomem.kindnames import BuiltinKind
from mongomem.local.queue import LocalQueue, QueuePolicy
from mongomem.local.worker import deliver_batch, drain
from mongomem.models.common import Scope
from mongomem.models.turns import RecordTurnsRequest
from mongomem.runtime import configure
from tests.conftest import load_event, load_function

SCOPE = Scope(tenant="default", user_id="user-7")


class Counting:
    memory_type = BuiltinKind.semantic

    def __init__(self, calls: list[str], fail_for: set[str]) -> None:
        self.calls, self.fail_for = calls, fail_for

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        self.calls.append(item.snapshot.snapshot_id)
        if item.snapshot.session_id in self.fail_for:
            raise RuntimeError("the LLM answer was not valid JSON")
        return ExtractionResult(
            memory_ids=[f"m-{t.seq}" for t in item.turns], decisions=Counter({"ADD": len(item.turns)})
        )


@pytest.fixture
def extractor(services: Any) -> Any:
    calls: list[str] = []
    fail_for: set[str] = set()
    configure(services.replaced(extractors={BuiltinKind.semantic: lambda _svc: Counting(calls, fail_for)}))
    yield calls, fail_for
    configure(services)


@pytest.fixture(scope="module")
def extract_fn() -> Any:
    return load_function("extract")


def promote(services: Any, session: str) -> str:
    req = RecordTurnsRequest.model_validate(
        {"turns": [{"role": "user", "content": "I live in Porto"}, {"role": "assistant", "content": "Noted"}]}
    )
    services.recorder.record(SCOPE, session, req)
    result: str = services.promoter.flush(SCOPE, session)[0].snapshot_id
    return result


def sqs_event(*snapshot_ids: str, memory_type: str = "semantic") -> dict[str, Any]:
    template = load_event("extract_sqs.json")["Records"][0]
    records = []
    for i, sid in enumerate(snapshot_ids):
        rec = dict(template, messageId=f"m-{i}", body=json.dumps({"snapshot_id": sid, "type": memory_type}))
        records.append(rec)
    return {"Records": records}


def test_only_the_failed_message_is_reported(
    services: Any, extractor: Any, extract_fn: Any, ctx: Any
) -> None:
    _, fail_for = extractor
    good, bad = promote(services, "good"), promote(services, "bad")
    fail_for.add("bad")
    response = extract_fn.lambda_handler(sqs_event(good, bad), ctx)
    assert response == {"batchItemFailures": [{"itemIdentifier": "m-1"}]}
    assert services.db["snapshots"].find_one(good)["extraction"]["semantic"]["status"] == "done"
    failed = services.db["snapshots"].find_one(bad)["extraction"]["semantic"]
    assert failed["status"] == "failed" and "not valid JSON" in failed["error"] and failed["attempts"] == 1


def test_redelivery_does_not_extract_twice(services: Any, extractor: Any, extract_fn: Any, ctx: Any) -> None:
    calls, _ = extractor
    snap = promote(services, "s1")
    assert extract_fn.lambda_handler(sqs_event(snap), ctx) == {"batchItemFailures": []}
    assert extract_fn.lambda_handler(sqs_event(snap), ctx) == {"batchItemFailures": []}
    assert calls == [snap]
    status = services.db["snapshots"].find_one(snap)["extraction"]["semantic"]
    assert status["status"] == "done" and status["memories"] == 2 and status["attempts"] == 1


def test_malformed_message_fails_alone(services: Any, extractor: Any, extract_fn: Any, ctx: Any) -> None:
    snap = promote(services, "s1")
    event = sqs_event(snap)
    event["Records"].append(dict(event["Records"][0], messageId="junk", body="not json"))
    assert extract_fn.lambda_handler(event, ctx) == {"batchItemFailures": [{"itemIdentifier": "junk"}]}


def test_a_kind_the_project_turned_off_is_marked_skipped_not_failed(
    services: Any, extract_fn: Any, ctx: Any
) -> None:
    # Given a message for episodic queued before the project config turned episodic extraction off
    snap = promote(services, "s1")
    services.settings = services.settings.model_copy(update={"enabled_extractions": [BuiltinKind.semantic]})
    assert extract_fn.lambda_handler(sqs_event(snap, memory_type="episodic"), ctx) == {
        "batchItemFailures": []
    }
    assert services.db["snapshots"].find_one(snap)["extraction"]["episodic"]["status"] == "skipped"


def test_failing_message_reaches_the_dlq_after_max_receive_count(
    services: Any, extractor: Any, extract_fn: Any
) -> None:
    _, fail_for = extractor
    fail_for.add("bad")
    good, bad = promote(services, "good"), promote(services, "bad")
    queue = LocalQueue(services.db)
    policy = QueuePolicy(visibility_timeout=0.0, max_receive_count=3)
    received = drain(queue, "extract-semantic", extract_fn.lambda_handler, policy)
    # the good one once, the bad one three times, then it is moved to the DLQ
    assert received == 4
    assert queue.depth("extract-semantic") == 0
    assert [json.loads(b)["snapshot_id"] for b in queue.bodies("extract-semantic-dlq")] == [bad]
    status = services.db["snapshots"].find_one(bad)["extraction"]["semantic"]
    assert status["status"] == "failed" and status["attempts"] == 3
    assert services.db["snapshots"].find_one(good)["extraction"]["semantic"]["status"] == "done"
    # the DLQ can be re-driven once the cause is fixed
    fail_for.clear()
    assert queue.redrive("extract-semantic-dlq") == 1
    drain(queue, "extract-semantic", extract_fn.lambda_handler, policy)
    assert services.db["snapshots"].find_one(bad)["extraction"]["semantic"]["status"] == "done"


def test_invisible_messages_wait_for_the_visibility_timeout(
    services: Any, extractor: Any, extract_fn: Any
) -> None:
    _, fail_for = extractor
    fail_for.add("bad")
    promote(services, "bad")
    queue = LocalQueue(services.db)
    policy = QueuePolicy(visibility_timeout=60.0, max_receive_count=3)
    first = deliver_batch(queue, "extract-semantic", extract_fn.lambda_handler, policy)
    again = deliver_batch(queue, "extract-semantic", extract_fn.lambda_handler, policy)
    assert (first.received, first.failed) == (1, 1)
    assert again.received == 0 and queue.depth("extract-semantic") == 1


class Refused:
    """An extractor whose provider refuses the deployment (Bedrock AccessDenied)."""

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        from mongomem.ports import LLMConfigError

        raise LLMConfigError("bedrock:m: AccessDeniedException: You don't have access to the model")


def test_a_provider_that_refuses_the_deployment_alarms_at_once(
    services: Any,
    extract_fn: Any,
    ctx: Any,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    configure(services.replaced(extractors={BuiltinKind.semantic: lambda _svc: Refused()}))
    try:
        snap = promote(services, "s1")
        body = {"snapshot_id": snap, "type": "semantic", "then": ["episodic"]}
        event = sqs_event(snap)
        event["Records"][0]["body"] = json.dumps(body)
        capsys.readouterr()
        # When the provider refuses with AccessDenied
        assert extract_fn.lambda_handler(event, ctx) == {"batchItemFailures": [{"itemIdentifier": "m-0"}]}
    finally:
        configure(services)
    # Then it is said at once: an ERROR and the metric the ExtractionConfigErrors alarm watches (period 60 s)
    assert [r.levelname for r in caplog.records if "refuses the deployment" in r.getMessage()] == ["ERROR"]
    metrics = [
        json.loads(line) for line in capsys.readouterr().out.splitlines() if "ExtractionConfigErrors" in line
    ]
    assert metrics and metrics[0]["ExtractionConfigErrors"] == [1.0]
    assert metrics[0]["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["service"]]
    status = services.db["snapshots"].find_one(snap)["extraction"]["semantic"]
    assert (status["status"], status["reason"]) == ("failed", "config")
    # and the snapshot's next kind is not held up: its message was sent
    passed = [json.loads(b) for b in LocalQueue(services.db).bodies("extract-episodic")]
    assert [(p["snapshot_id"], p["type"]) for p in passed] == [(snap, "episodic")]


class Unusable:
    """An extractor whose LLM answered the same unusable output twice: a final failure (ADR 0012)."""

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        from mongomem.errors import ExtractionFailed

        raise ExtractionFailed(
            "the model's answer is not valid JSON, twice", reason="invalid_output", final=True
        )


def test_a_final_failure_is_done_with_but_alarms(
    services: Any,
    extract_fn: Any,
    ctx: Any,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    configure(services.replaced(extractors={BuiltinKind.semantic: lambda _svc: Unusable()}))
    try:
        snap = promote(services, "s1")
        capsys.readouterr()
        # When the kind fails for good (asking again would fail the same way)
        assert extract_fn.lambda_handler(sqs_event(snap), ctx) == {"batchItemFailures": []}
    finally:
        configure(services)
    # Then the message is done with (no DLQ), but the failure is loud: a WARNING, and a metric on the
    # service dimension only, the one the ExtractionFailuresAlarm watches (besides the per-kind figure)
    assert [r.levelname for r in caplog.records if "failed for good" in r.getMessage()] == ["WARNING"]
    docs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "ExtractionFailures" in line]
    dimension_sets = [d["_aws"]["CloudWatchMetrics"][0]["Dimensions"] for d in docs]
    assert [["service"]] in dimension_sets, dimension_sets
    assert [["service", "memory_type", "reason"]] in dimension_sets or any(
        set(ds[0]) == {"service", "memory_type", "reason"} for ds in dimension_sets
    )
