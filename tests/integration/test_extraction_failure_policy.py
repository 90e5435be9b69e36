"""Each row of the extraction failure table, by behaviour: the extractor raises the row's exception and the
built extract function writes the kind's status, fails (or not) the batch item, sends (or not) the message
again and the snapshot's next kind, and emits the row's metric (extraction.failures.FAILURE_POLICY)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from mongomem.errors import ExtractionFailed
from mongomem.extraction.extractor import ExtractionResult, NoTimeLeft, SnapshotInput
from mongomem.extraction.failures import FAILURE_POLICY, SnapshotGone, policy_for
from mongomem.kindnames import BuiltinKind
from mongomem.local.queue import LocalQueue
from mongomem.models.common import Scope
from mongomem.models.turns import RecordTurnsRequest
from mongomem.ports import LLMConfigError, LLMError
from mongomem.runtime import configure
from tests.conftest import load_event, load_function

SCOPE = Scope(tenant="default", user_id="user-7")


@dataclass(frozen=True)
class Case:
    exc: Exception
    status: str | None  # the kind's status after the delivery (None: no snapshot to hold one)
    reason: str | None
    final: bool | None
    batch_failure: bool  # the record is reported failed: SQS delivers it again after the visibility timeout
    sent_again: bool  # the same message is back in its queue at once (deferred + 1)
    passed_on: bool  # the snapshot's next kind was sent
    metrics: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (metric, its sorted dimensions) emitted


CASES = [
    Case(SnapshotGone("s"), None, None, None, batch_failure=False, sent_again=False, passed_on=False),
    Case(
        NoTimeLeft("8.0s left"), "queued", None, None, batch_failure=False, sent_again=True, passed_on=False
    ),
    Case(
        ExtractionFailed("not JSON, twice", reason="invalid_output", final=True),
        "failed",
        "invalid_output",
        True,
        batch_failure=False,
        sent_again=False,
        passed_on=True,
        metrics=(
            ("ExtractionFailures", ("memory_type", "reason", "service")),
            ("ExtractionFailures", ("service",)),
        ),
    ),
    Case(
        ExtractionFailed("cut off", reason="truncated"),
        "failed",
        "truncated",
        False,
        batch_failure=True,
        sent_again=False,
        passed_on=True,
    ),
    Case(
        LLMConfigError("bedrock:m: AccessDeniedException"),
        "failed",
        "config",
        False,
        batch_failure=True,
        sent_again=False,
        passed_on=True,
        metrics=(("ExtractionConfigErrors", ("service",)),),
    ),
    Case(
        LLMError("ThrottlingException after 3 retries"),
        "failed",
        "provider",
        False,
        batch_failure=True,
        sent_again=False,
        passed_on=True,
    ),
    Case(
        RuntimeError("a bug"), "failed", "error", False, batch_failure=True, sent_again=False, passed_on=True
    ),
]


def test_the_cases_cover_every_row_of_the_table() -> None:
    assert [policy_for(case.exc) for case in CASES] == list(FAILURE_POLICY)


class Raising:
    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        raise self.exc


@pytest.mark.parametrize("case", CASES, ids=[type(c.exc).__name__ + str(c.final or "") for c in CASES])
def test_a_failure_does_what_its_row_says(
    case: Case, services: Any, ctx: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a snapshot whose semantic kind is to be followed by episodic, and an extractor that raises
    req = RecordTurnsRequest.model_validate({"turns": [{"role": "user", "content": "I live in Porto"}]})
    services.recorder.record(SCOPE, "s1", req)
    snap = services.promoter.flush(SCOPE, "s1")[0].snapshot_id
    queue = LocalQueue(services.db)
    queue.coll.delete_many({})  # the flush's own fan-out: this test delivers its own record
    if isinstance(case.exc, SnapshotGone):
        services.db["snapshots"].delete_one({"_id": snap})  # its user was erased meanwhile
    record = dict(load_event("extract_sqs.json")["Records"][0], messageId="m-1")
    record["body"] = json.dumps({"snapshot_id": snap, "type": "semantic", "then": ["episodic"]})
    configure(services.replaced(extractors={BuiltinKind.semantic: lambda _svc: Raising(case.exc)}))
    try:
        capsys.readouterr()
        # When the extract function receives the record
        response = load_function("extract").lambda_handler({"Records": [record]}, ctx)
    finally:
        configure(services)
    # Then the batch item fails only where the row retries the message
    assert response == {"batchItemFailures": [{"itemIdentifier": "m-1"}] if case.batch_failure else []}
    # and the kind's status is the row's
    doc = services.db["snapshots"].find_one(snap)
    status = doc["extraction"]["semantic"] if doc else None
    if case.status is None:
        assert status is None
    else:
        assert status is not None
        assert (status["status"], status.get("reason"), status.get("final")) == (
            case.status,
            case.reason,
            case.final,
        )
    # and the message is back in its queue at once (or not), the next kind sent (or not)
    again = [json.loads(b) for b in queue.bodies("extract-semantic")]
    assert again == (
        [{"snapshot_id": snap, "type": "semantic", "then": ["episodic"], "deferred": 1}]
        if case.sent_again
        else []
    )
    passed = [(b["snapshot_id"], b["type"]) for b in map(json.loads, queue.bodies("extract-episodic"))]
    assert passed == ([(snap, "episodic")] if case.passed_on else [])
    # and exactly the row's metrics were emitted, on the dimensions its alarm or figure reads
    emitted = []
    for line in capsys.readouterr().out.splitlines():
        doc = json.loads(line) if line.startswith("{") else {}
        for directive in doc.get("_aws", {}).get("CloudWatchMetrics", []):
            for metric in directive["Metrics"]:
                if metric["Name"] in ("ExtractionFailures", "ExtractionConfigErrors"):
                    emitted.append((metric["Name"], tuple(sorted(directive["Dimensions"][0]))))
    assert sorted(emitted) == sorted(case.metrics)
