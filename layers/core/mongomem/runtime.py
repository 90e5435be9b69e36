"""Per-process singletons: settings, the MongoDB store and the queue, created lazily and reused.

A Lambda execution environment builds each once on first use; tests and the local stack can
install their own with `configure()`.
"""

from __future__ import annotations

import threading
from functools import cached_property
from typing import TYPE_CHECKING

from mongomem.config import Settings, settings_from_env

if TYPE_CHECKING:
    from mongomem.adapters.mongo import MongoStore
    from mongomem.ports import QueuePort
    from mongomem.shortterm.promotion import Promoter


class Services:
    def __init__(self, settings: Settings, queue: QueuePort | None = None) -> None:
        self.settings = settings
        self._queue = queue

    @cached_property
    def store(self) -> MongoStore:
        from mongomem.adapters.mongo import MongoStore, get_client

        uri = self.settings.mongodb_uri
        if self.settings.mongodb_secret_arn:
            from mongomem.adapters.secrets import mongodb_uri_from_secret

            uri = mongodb_uri_from_secret(self.settings.mongodb_secret_arn)
        store = MongoStore(get_client(uri), self.settings.db_name)
        if self.settings.ensure_indexes:
            store.ensure_indexes()
        return store

    @cached_property
    def queue(self) -> QueuePort:
        if self._queue is not None:
            return self._queue
        from mongomem.adapters.queues import queue_for

        return queue_for(self.settings, self.store)

    @cached_property
    def promoter(self) -> Promoter:
        from mongomem.shortterm.promotion import Promoter

        return Promoter(self.store, self.queue, self.settings)


_current: Services | None = None
_lock = threading.Lock()


def services() -> Services:
    """The process's services, built from the environment on first use."""
    global _current
    with _lock:
        if _current is None:
            _current = Services(settings_from_env())
        return _current


def configure(new: Services | None) -> None:
    """Install services explicitly (the local stack, tests); None resets to lazy env-based setup."""
    global _current
    with _lock:
        _current = new
