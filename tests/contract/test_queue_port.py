"""The QueuePort contract (mongomem.ports): Amazon SQS (moto's server) and the local stack's queue alike.

Each implementation comes with a way to read what it sent: SQS's ReceiveMessage, the local queue's
own receive (what the local stack's pollers use), the in-memory queue's (tests/fakes.py, the unit tests').
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mongomem.errors import QueueUnavailable
from mongomem.kindnames import CUSTOM_QUEUE, BuiltinKind
from mongomem.ports import QueuePort

# reads a queue by its name: a built-in kind's, or `custom` (every custom type's)
Received = Callable[[str], list[dict[str, Any]]]


@pytest.fixture(scope="module")
def moto_sqs() -> Iterator[Any]:
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    client = boto3.client(
        "sqs",
        endpoint_url=f"http://{host}:{port}",
        region_name="eu-west-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    yield client
    server.stop()


@pytest.fixture(params=["sqs", "local", "in-memory"])
def queue(request: pytest.FixtureRequest) -> tuple[QueuePort, Received]:
    kinds = (BuiltinKind.semantic.value, BuiltinKind.episodic.value, CUSTOM_QUEUE)
    if request.param == "in-memory":
        from tests.fakes import InMemoryQueue

        fake = InMemoryQueue(list(kinds))
        return fake, fake.receive
    if request.param == "sqs":
        from mongomem.adapters.queues import SqsQueue

        client = request.getfixturevalue("moto_sqs")
        prefix = request.getfixturevalue("db_name")
        urls: dict[str, str] = {t: client.create_queue(QueueName=f"{prefix}-{t}")["QueueUrl"] for t in kinds}

        def received_sqs(kind: str) -> list[dict[str, Any]]:
            out = client.receive_message(QueueUrl=urls[kind], MaxNumberOfMessages=10, WaitTimeSeconds=0)
            return [json.loads(m["Body"]) for m in out.get("Messages", [])]

        return SqsQueue(urls, client=client), received_sqs
    from mongomem.local.queue import LocalExtractionQueue, QueuePolicy

    database = request.getfixturevalue("database")
    local = LocalExtractionQueue(database.db, {t: f"local:extract-{t}" for t in kinds})

    def received_local(kind: str) -> list[dict[str, Any]]:
        records = local.queue.receive(f"extract-{kind}", QueuePolicy(), max_messages=10)
        return [json.loads(r["body"]) for r in records]

    return local, received_local


def test_a_message_reaches_its_kinds_queue_once_and_intact(queue: tuple[QueuePort, Received]) -> None:
    port, received = queue
    body = {
        "snapshot_id": "snap-0123456789abcdef01234567",
        "type": "semantic",
        "tenant": "acme",
        "user_id": "ana",
    }
    port.send_extraction(BuiltinKind.semantic, body)
    assert received(BuiltinKind.semantic) == [body]
    assert received(BuiltinKind.episodic) == []
    assert received(BuiltinKind.semantic) == []  # received: invisible for the visibility timeout


def test_every_kind_has_its_own_queue(queue: tuple[QueuePort, Received]) -> None:
    port, received = queue
    for kind in (BuiltinKind.semantic, BuiltinKind.episodic):
        port.send_extraction(kind, {"snapshot_id": f"snap-{kind.value}", "type": kind.value})
    port.send_extraction(BuiltinKind.semantic, {"snapshot_id": "snap-2", "type": "semantic"})
    assert sorted(m["snapshot_id"] for m in received(BuiltinKind.semantic)) == ["snap-2", "snap-semantic"]
    assert [m["snapshot_id"] for m in received(BuiltinKind.episodic)] == ["snap-episodic"]


def test_every_custom_type_shares_the_custom_queue(queue: tuple[QueuePort, Received]) -> None:
    port, received = queue
    port.send_extraction("recipes", {"snapshot_id": "snap-1", "type": "recipes"})
    port.send_extraction("travel_plans", {"snapshot_id": "snap-1", "type": "travel_plans"})
    assert [m["type"] for m in received(CUSTOM_QUEUE)] == ["recipes", "travel_plans"]
    assert received(BuiltinKind.semantic) == []


@pytest.mark.parametrize(
    "implementation", ["sqs", "in-memory"]
)  # the local stack makes any queue it is sent to
def test_a_kind_without_a_queue_is_refused(implementation: str, request: pytest.FixtureRequest) -> None:
    port: QueuePort
    if implementation == "sqs":
        from mongomem.adapters.queues import SqsQueue

        port = SqsQueue({}, client=request.getfixturevalue("moto_sqs"))
    else:
        from tests.fakes import InMemoryQueue

        port = InMemoryQueue([BuiltinKind.episodic.value])
    with pytest.raises(QueueUnavailable, match="no queue configured"):
        port.send_extraction(BuiltinKind.semantic, {"snapshot_id": "s"})


def test_sqs_refuses_a_queue_it_cannot_reach(moto_sqs: Any) -> None:
    from mongomem.adapters.queues import SqsQueue

    gone: dict[str, str] = {BuiltinKind.semantic: moto_sqs.meta.endpoint_url + "/123456789012/no-such-queue"}
    with pytest.raises(QueueUnavailable):
        SqsQueue(gone, client=moto_sqs).send_extraction(BuiltinKind.semantic, {"snapshot_id": "s"})
