"""Extraction runs within the invocation's time: a record that cannot finish goes back before the timeout.

The LLM is Bedrock Converse over its real wire format (the twin's Bedrock Runtime stand-in, reached through
AWS_ENDPOINT_URL_BEDROCK_RUNTIME), made slow on purpose.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from mongomem.extraction.extractor import ExtractionResult, SnapshotInput
from mongomem.kindnames import BuiltinKind
from mongomem.local.queue import QueuePolicy
from mongomem.models.common import Scope
from mongomem.models.turns import RecordTurnsRequest
from mongomem.ports import LLMError, LLMRequest
from mongomem.runtime import configure
from tests.conftest import load_event, load_function

SCOPE = Scope(tenant="default", user_id="user-7")


@pytest.fixture
def bedrock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from twin.bedrock import BedrockStandIn

    stand_in = BedrockStandIn().start()
    for key, value in {
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": stand_in.url,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_REGION": "eu-west-1",
    }.items():
        monkeypatch.setenv(key, value)
    yield stand_in
    stand_in.stop()


def request(deadline: float | None) -> LLMRequest:
    schema = {"type": "object", "properties": {"items": {"type": "array"}}, "required": ["items"]}
    return LLMRequest(
        task="semantic",
        system="s",
        prompt="p",
        schema=schema,
        schema_name="semantic_memories",
        deadline=deadline,
    )


def test_a_slow_bedrock_call_ends_at_the_deadline_not_at_its_timeout(bedrock: Any) -> None:
    from mongomem.providers.llm_bedrock import BedrockLLM

    llm = BedrockLLM("global.amazon.nova-2-lite-v1:0", region="eu-west-1", timeout=30.0, max_retries=3)
    # Given a model that answers after 6 s and a budget of 3 s
    bedrock.delay_seconds = 6.0
    started = time.monotonic()
    with pytest.raises(LLMError):
        llm.complete_json(request(deadline=started + 3.0))
    # Then the call gave up within the budget (a 30 s timeout with 3 retries would take minutes)
    assert time.monotonic() - started < 3.5
    # and with no time left at all it is not even started
    calls = len(bedrock.calls)
    with pytest.raises(LLMError, match="no time left"):
        llm.complete_json(request(deadline=time.monotonic() + 0.5))
    assert len(bedrock.calls) == calls
    # while a fast answer within the budget is an answer
    bedrock.delay_seconds = 0.0
    assert llm.complete_json(request(deadline=time.monotonic() + 10)).text == '{"items": []}'


class Recording:
    memory_type = BuiltinKind.semantic

    def __init__(self) -> None:
        self.deadlines: list[float | None] = []
        self.budgets: list[float | None] = []

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        from mongomem.budget import request_deadline

        self.deadlines.append(item.deadline)
        self.budgets.append(request_deadline())  # what the embedder and the search index follow
        return ExtractionResult()


class Ctx:
    function_name = "extract"
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:extract"
    aws_request_id = "req"

    def __init__(self, remaining_ms: int) -> None:
        self.remaining_ms = remaining_ms

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


def test_a_record_without_time_left_is_sent_again_at_once_without_spending_a_receive(services: Any) -> None:
    import json

    from mongomem.local.queue import LocalQueue

    extractor = Recording()
    configure(services.replaced(extractors={BuiltinKind.semantic: lambda _svc: extractor}))
    try:
        req = RecordTurnsRequest.model_validate({"turns": [{"role": "user", "content": "I live in Porto"}]})
        services.recorder.record(SCOPE, "s1", req)
        snap = services.promoter.flush(SCOPE, "s1")[0].snapshot_id
        queue = LocalQueue(services.db)
        queue.coll.delete_many({})  # the scan's fan-out: this test delivers its own record
        record = dict(load_event("extract_sqs.json")["Records"][0], messageId="m-1")
        record["body"] = json.dumps({"snapshot_id": snap, "type": "semantic"})
        record["attributes"] = dict(record["attributes"], ApproximateReceiveCount="3")
        handler = load_function("extract").lambda_handler
        # When the invocation has 20 s left (the record needs at least 30 s: the model's call and the commit)
        response = handler({"Records": [record]}, Ctx(20_000))
        # Then this delivery succeeds (a batch item failure would wait out the 720 s visibility timeout and
        # spend one of the message's 5 receives) and the message is in the queue again, visible at once
        assert response == {"batchItemFailures": []}
        sent = [json.loads(b) for b in queue.bodies("extract-semantic")]
        assert sent == [{"snapshot_id": snap, "type": "semantic", "deferred": 1}]
        again = queue.receive("extract-semantic", QueuePolicy())
        assert again and again[0]["attributes"]["ApproximateReceiveCount"] == "1"
        # and nothing was started: the snapshot's kind is still queued, no attempt counted
        status = services.db["snapshots"].find_one(snap)["extraction"]["semantic"]
        assert status["status"] == "queued" and status["attempts"] == 0 and extractor.deadlines == []
        # With 100 s left it runs, and its work is bounded by the invocation's remaining time
        before = time.monotonic()
        assert handler({"Records": [record]}, Ctx(100_000)) == {"batchItemFailures": []}
        deadline = extractor.deadlines[0]
        assert deadline is not None and before + 90 < deadline < before + 100
        # and the commit's own calls (embeddings, the search index) are held to the same deadline (issue 21,
        # finding 6: they ran on their default timeouts and retries past it)
        assert extractor.budgets[0] is not None and abs(extractor.budgets[0] - deadline) < 1.0
    finally:
        configure(services)
