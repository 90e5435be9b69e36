"""The identity context's root: API keys, the user directory, the recent-request log."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from mongomem.runtime.infra import Infrastructure

if TYPE_CHECKING:
    from mongomem.adapters.mongo.api_keys import MongoApiKeyRepository
    from mongomem.adapters.mongo.recent_requests import MongoRecentRequestLog
    from mongomem.directory import DirectoryRepository


class IdentityRoot(Infrastructure):
    """Who calls: keys (the authorizer), users (the console), the agent calls a user made."""

    @cached_property
    def api_keys(self) -> MongoApiKeyRepository:
        from mongomem.adapters.mongo.api_keys import MongoApiKeyRepository  # lazy: 1.9 ms

        return self._indexed(MongoApiKeyRepository(self.database))

    @cached_property
    def directory(self) -> DirectoryRepository:
        from mongomem.adapters.mongo.directory import MongoDirectoryRepository  # lazy: 8.9 ms

        return MongoDirectoryRepository(self.database)

    @cached_property
    def recent_requests(self) -> MongoRecentRequestLog:
        from mongomem.adapters.mongo.recent_requests import MongoRecentRequestLog  # lazy: 9.5 ms

        return self._indexed(MongoRecentRequestLog(self.database))
