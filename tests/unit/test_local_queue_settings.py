"""The local stack delivers extraction messages as the deployed stack does: the template's visibility
timeout, receive count and function timeout (issue 23: the local queue used 30 s / 3 and gave every
extraction 25 s, whatever the template or the configured model said)."""

from __future__ import annotations

from pathlib import Path

from mongomem.local.queue import (
    EXTRACT_TIMEOUT_SECONDS,
    MAX_RECEIVE_COUNT,
    VISIBILITY_TIMEOUT_SECONDS,
    QueuePolicy,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_local_queue_policy_is_the_templates() -> None:
    from twin.cfn import load_template

    resources = load_template(ROOT / "template.yaml")["Resources"]
    queues = {
        n: r["Properties"]
        for n, r in resources.items()
        if r["Type"] == "AWS::SQS::Queue" and "RedrivePolicy" in r["Properties"]
    }
    extraction = {n: q for n, q in queues.items() if not n.startswith(("Scan", "IndexSync"))}
    assert extraction, "the template's extraction queues"
    assert {q["VisibilityTimeout"] for q in extraction.values()} == {VISIBILITY_TIMEOUT_SECONDS}
    assert {q["RedrivePolicy"]["maxReceiveCount"] for q in extraction.values()} == {MAX_RECEIVE_COUNT}
    functions = [
        r["Properties"]
        for n, r in resources.items()
        if n.startswith("Extract") and r["Type"] == "AWS::Serverless::Function"
    ]
    assert functions and {f["Timeout"] for f in functions} == {EXTRACT_TIMEOUT_SECONDS}
    policy = QueuePolicy()
    assert (policy.visibility_timeout, policy.max_receive_count, policy.invocation_timeout) == (720, 5, 120)


def test_a_slow_configured_model_stretches_the_local_invocation_and_visibility() -> None:
    # timeout_seconds: 300 (a small model on a laptop): an invocation has room for the call and the commit
    policy = QueuePolicy.for_llm(300.0)
    assert policy.invocation_timeout == 360 and policy.visibility_timeout == 6 * 360
    # a fast model keeps the template's figures
    assert QueuePolicy.for_llm(30.0) == QueuePolicy()


def test_each_local_extraction_invocation_gets_the_configured_time() -> None:
    from typing import Any

    from mongomem.local.worker import deliver_batch

    class OneMessage:
        def receive(self, name: str, policy: QueuePolicy, n: int) -> list[dict[str, Any]]:
            return [{"messageId": "m", "receiptHandle": "r", "body": "{}"}]

        def delete(self, receipt: str) -> None:
            pass

    seen: list[int] = []

    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        seen.append(context.get_remaining_time_in_millis())
        return {"batchItemFailures": []}

    deliver_batch(OneMessage(), "extract-semantic", handler, QueuePolicy.for_llm(300.0))  # type: ignore[arg-type]
    assert 355_000 < seen[0] <= 360_000
