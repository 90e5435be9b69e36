"""Queue adapters: Amazon SQS in AWS, a MongoDB-backed SQS look-alike in the local stack."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mongomem.config import MemoryType, Settings
from mongomem.errors import QueueUnavailable

if TYPE_CHECKING:
    from mongomem.adapters.mongo import MongoStore
    from mongomem.ports import QueuePort

LOCAL_PREFIX = "local:"


class SqsQueue:
    """Sends extraction messages to the per-type SQS queues named in the settings."""

    def __init__(self, urls: dict[MemoryType, str], client: Any = None) -> None:
        self.urls = urls
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3

            self._client = boto3.client("sqs")
        return self._client

    def send_extraction(self, memory_type: MemoryType, body: dict[str, Any]) -> None:
        url = self.urls.get(memory_type)
        if not url:
            raise QueueUnavailable(f"no queue configured for memory type {memory_type.value!r}")
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.send_message(QueueUrl=url, MessageBody=json.dumps(body, sort_keys=True))
        except (BotoCoreError, ClientError) as exc:
            raise QueueUnavailable(f"could not send to the {memory_type.value} queue") from exc


class LocalExtractionQueue:
    """The local stack's per-type queues (see mongomem.adapters.localqueue)."""

    def __init__(self, names: dict[MemoryType, str], store: MongoStore) -> None:
        from mongomem.adapters.localqueue import LocalQueue

        self.names = names
        self.queue = LocalQueue(store.db)

    def send_extraction(self, memory_type: MemoryType, body: dict[str, Any]) -> None:
        name = self.names.get(memory_type) or f"extract-{memory_type.value}"
        self.queue.send(name, json.dumps(body, sort_keys=True))


def queue_for(settings: Settings, store: MongoStore) -> QueuePort:
    """SQS when the settings name SQS URLs, the local queue when they name `local:` queues (or none)."""
    urls = settings.queue_urls
    if urls and all(not u.startswith(LOCAL_PREFIX) for u in urls.values()):
        return SqsQueue(urls)
    names = {t: u[len(LOCAL_PREFIX) :] for t, u in urls.items() if u.startswith(LOCAL_PREFIX)}
    return LocalExtractionQueue(names, store)
