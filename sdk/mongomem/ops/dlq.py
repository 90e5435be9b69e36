"""Dead-letter re-drive: SQS message move tasks (deployed) and the snapshots' per-type status in MongoDB."""

from __future__ import annotations

from typing import Any

from pymongo.database import Database

from mongomem.adapters.mongo import translate_errors
from mongomem.errors import NotFound, QueueUnavailable
from mongomem.models.common import utcnow


class SnapshotStatuses:
    """The per-type extraction status of snapshots (`snapshots.extraction.<type>`)."""

    def __init__(self, db: Database[dict[str, Any]]) -> None:
        self.coll = db["snapshots"]

    def requeue(self, kind: str, snapshot_ids: list[str] | None = None) -> int:
        """Mark the type queued again: for the given snapshots, or else for every failed one."""
        path = f"extraction.{kind}"
        query: dict[str, Any] = {f"{path}.status": {"$nin": ["done", "queued"]}, path: {"$exists": True}}
        if snapshot_ids is not None:
            if not snapshot_ids:
                return 0
            query["_id"] = {"$in": snapshot_ids}
        else:
            query[f"{path}.status"] = "failed"
        update = {"$set": {f"{path}.status": "queued", f"{path}.error": None, f"{path}.updated_at": utcnow()}}
        with translate_errors():
            return int(self.coll.update_many(query, update).modified_count)


class SqsRedrive:
    """Finds a stack's DLQs from its outputs and starts SQS message move tasks back to the source queues."""

    def __init__(self, sqs: Any, cloudformation: Any) -> None:
        self.sqs = sqs
        self.cloudformation = cloudformation
        self._moved: set[str] = set()  # DLQs this run moved already (one lane: every kind shares one)

    def dlq_urls(self, stack: str) -> dict[str, str]:
        """{memory type: DLQ URL} from the stack's `<Type>DLQUrl` outputs."""
        from botocore.exceptions import BotoCoreError, ClientError  # lazy: 3.0 ms

        try:
            stacks = self.cloudformation.describe_stacks(StackName=stack)["Stacks"]
        except (BotoCoreError, ClientError) as exc:
            raise NotFound(f"stack {stack!r} not found or not readable") from exc
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}
        return {
            key.removesuffix("DLQUrl").lower(): value
            for key, value in outputs.items()
            if key.endswith("DLQUrl")
        }

    def start_move(self, dlq_url: str) -> tuple[str, int]:
        """Start moving every message of the DLQ back to its source queue; (task handle, messages)."""
        from botocore.exceptions import BotoCoreError, ClientError  # lazy: 3.2 ms

        if dlq_url in self._moved:
            return "", 0  # moved with another kind's retry: SQS runs one move task per queue at a time
        self._moved.add(dlq_url)
        try:
            attrs = self.sqs.get_queue_attributes(
                QueueUrl=dlq_url, AttributeNames=["QueueArn", "ApproximateNumberOfMessages"]
            )["Attributes"]
            count = int(attrs.get("ApproximateNumberOfMessages", "0"))
            if count == 0:
                return "", 0
            # No DestinationArn: SQS moves each message back to the queue it was dead-lettered from.
            task = self.sqs.start_message_move_task(SourceArn=attrs["QueueArn"])
        except (BotoCoreError, ClientError) as exc:
            raise QueueUnavailable(f"could not start the re-drive of {dlq_url}") from exc
        return str(task["TaskHandle"]), count
