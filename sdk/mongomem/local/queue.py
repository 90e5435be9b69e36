"""An SQS look-alike stored in MongoDB, for the no-Docker local stack.

It keeps SQS's delivery semantics that the extraction handler relies on: at-least-once delivery,
a visibility timeout, ApproximateReceiveCount, partial batch failures (only the failed messages
come back) and a dead-letter queue after maxReceiveCount receives. Messages survive a restart.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pymongo import ASCENDING, ReturnDocument
from pymongo.database import Database

from mongomem.config import queue_name

if TYPE_CHECKING:
    from mongomem.ports import QueuePort
    from mongomem.runtime import Services

DLQ_SUFFIX = "-dlq"


# template.yaml's extraction queues and functions (tests/unit/test_local_queue_settings.py keeps them equal):
# the local stack delivers as the deployed one does.
VISIBILITY_TIMEOUT_SECONDS = 720.0
MAX_RECEIVE_COUNT = 5
EXTRACT_TIMEOUT_SECONDS = 120.0


@dataclass(frozen=True)
class QueuePolicy:
    visibility_timeout: float = VISIBILITY_TIMEOUT_SECONDS
    max_receive_count: int = MAX_RECEIVE_COUNT
    # how long one extraction invocation may run (its Lambda context's remaining time)
    invocation_timeout: float = EXTRACT_TIMEOUT_SECONDS

    @classmethod
    def for_llm(cls, llm_timeout_seconds: float, base: QueuePolicy | None = None) -> QueuePolicy:
        """The template's policy, stretched for a slow model: an invocation has room for one call of the
        configured timeout and the commit after it, and the visibility timeout stays 6 times that."""
        base = base or cls()
        invocation = max(base.invocation_timeout, llm_timeout_seconds + 60.0)
        return cls(
            visibility_timeout=max(base.visibility_timeout, 6 * invocation),
            max_receive_count=base.max_receive_count,
            invocation_timeout=invocation,
        )


def _now() -> datetime:
    return datetime.now(UTC)


class LocalQueue:
    def __init__(self, db: Database[dict[str, Any]], collection: str = "local_queue") -> None:
        self.coll = db[collection]
        self.coll.create_index([("queue", ASCENDING), ("visible_at", ASCENDING)])

    def send(self, queue: str, body: str) -> str:
        message_id = str(uuid.uuid4())
        self.coll.insert_one(
            {
                "_id": message_id,
                "queue": queue,
                "body": body,
                "sent_at": _now(),
                "visible_at": _now(),
                "receive_count": 0,
            }
        )
        return message_id

    def receive(self, queue: str, policy: QueuePolicy, max_messages: int = 10) -> list[dict[str, Any]]:
        """Receive up to max_messages visible messages as SQS event records."""
        records: list[dict[str, Any]] = []
        while len(records) < max_messages:
            now = _now()
            doc = self.coll.find_one_and_update(
                {
                    "queue": queue,
                    "visible_at": {"$lte": now},
                    "_id": {"$nin": [r["messageId"] for r in records]},
                },
                {
                    "$set": {
                        "visible_at": now + timedelta(seconds=policy.visibility_timeout),
                        "receipt": uuid.uuid4().hex,
                    },
                    "$inc": {"receive_count": 1},
                },
                sort=[("visible_at", ASCENDING)],
                return_document=ReturnDocument.AFTER,
            )
            if doc is None:
                break
            if doc["receive_count"] > policy.max_receive_count:
                # SQS's redrive: a message received more than maxReceiveCount times goes to the DLQ.
                self.coll.update_one(
                    {"_id": doc["_id"]},
                    {
                        "$set": {
                            "queue": queue + DLQ_SUFFIX,
                            "visible_at": now,
                            "receive_count": 0,
                            "source_queue": queue,
                        }
                    },
                )
                continue
            records.append(self._record(queue, doc))
        return records

    def delete(self, receipt_handle: str) -> None:
        self.coll.delete_one({"receipt": receipt_handle})

    def depth(self, queue: str) -> int:
        return self.coll.count_documents({"queue": queue})

    def bodies(self, queue: str) -> list[str]:
        return [d["body"] for d in self.coll.find({"queue": queue}).sort("sent_at", ASCENDING)]

    def redrive(self, dlq: str) -> int:
        """Move every message of a DLQ back to its source queue."""
        moved = 0
        for doc in list(self.coll.find({"queue": dlq})):
            source = doc.get("source_queue") or dlq.removesuffix(DLQ_SUFFIX)
            self.coll.update_one(
                {"_id": doc["_id"]}, {"$set": {"queue": source, "visible_at": _now(), "receive_count": 0}}
            )
            moved += 1
        return moved

    @staticmethod
    def _record(queue: str, doc: dict[str, Any]) -> dict[str, Any]:
        sent_ms = str(int(doc["sent_at"].timestamp() * 1000)) if isinstance(doc["sent_at"], datetime) else "0"
        return {
            "messageId": doc["_id"],
            "receiptHandle": doc["receipt"],
            "body": doc["body"],
            "attributes": {
                "ApproximateReceiveCount": str(doc["receive_count"]),
                "SentTimestamp": sent_ms,
                "SenderId": "mongomem-local",
                "ApproximateFirstReceiveTimestamp": sent_ms,
            },
            "messageAttributes": {},
            "md5OfBody": "",
            "eventSource": "aws:sqs",
            "eventSourceARN": f"arn:aws:sqs:local:000000000000:{queue}",
            "awsRegion": "local",
        }


class LocalExtractionQueue:
    """The QueuePort of the local stack: one LocalQueue per memory type (`local:<name>` queue URLs)."""

    LOCAL_PREFIX = "local:"

    def __init__(self, db: Database[dict[str, Any]], urls: dict[str, str] | None = None) -> None:
        self.names = {
            t: u[len(self.LOCAL_PREFIX) :] for t, u in (urls or {}).items() if u.startswith(self.LOCAL_PREFIX)
        }
        self.queue = LocalQueue(db)

    def send_extraction(self, kind: str, body: dict[str, Any]) -> None:
        queue = queue_name(kind)  # every custom type shares one queue, as in template.yaml
        name = self.names.get(queue) or f"extract-{queue}"
        self.queue.send(name, json.dumps(body, sort_keys=True))


def local_queue_factory(services: Services) -> QueuePort:
    """For `Services(queue_factory=...)`: the local queues in the services' own database."""
    return LocalExtractionQueue(services.db, services.settings.queue_urls)
