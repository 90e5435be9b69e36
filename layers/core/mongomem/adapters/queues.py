"""The extraction queue adapter: Amazon SQS (the local stack brings its own look-alike)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mongomem.config import ConfigError, Settings, queue_name
from mongomem.errors import QueueUnavailable

if TYPE_CHECKING:
    from mongomem.ports import QueuePort

LOCAL_PREFIX = "local:"


class SqsQueue:
    """Sends extraction messages to the per-type SQS queues named in the settings."""

    def __init__(self, urls: dict[str, str], client: Any = None) -> None:
        self.urls = urls
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3  # lazy: 126 ms

            self._client = boto3.client("sqs")
        return self._client

    def send_extraction(self, kind: str, body: dict[str, Any]) -> None:
        queue = queue_name(kind)  # a custom type's messages go to the shared custom queue
        url = self.urls.get(queue)
        if not url:
            raise QueueUnavailable(f"no queue configured for memory type {str(kind)!r} (queue {queue!r})")
        from botocore.exceptions import BotoCoreError, ClientError  # lazy: 7.1 ms

        try:
            self.client.send_message(QueueUrl=url, MessageBody=json.dumps(body, sort_keys=True))
        except (BotoCoreError, ClientError) as exc:
            raise QueueUnavailable(f"could not send to the {queue} queue") from exc


def queue_for(settings: Settings) -> QueuePort:
    """The SQS queues the settings name; `local:` queues belong to the local stack, which brings its own."""
    urls = settings.queue_urls
    local = sorted(str(t) for t, u in urls.items() if u.startswith(LOCAL_PREFIX))
    if local:
        raise ConfigError(
            f"queue URLs for {', '.join(local)} are local stack queues (local:...); "
            "only `mongomem dev` (or a test) can serve them"
        )
    return SqsQueue(urls)
