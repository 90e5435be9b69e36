"""The MongoDB adapter: one driver module and one operations module per entity (as graphiti splits it).

- driver: the client (one per process), the durable write concern, error translation, `MongoDatabase`
- ids: every document id format (turn, session, snapshot, working memory)
- sessions, turns, snapshots: short-term memory (shortterm.ports)
- api_keys (identity.ports), working_memory (workingmemory.ports)
- memory_store: long-term memories (MemoryRepository), one document per version
- erasure (retention, erasing a user), backlog (the status figures), directory (the tenant's users)

The names below stay importable from here (other packages and tools import them).
"""

from mongomem.adapters.mongo.driver import (
    MongoDatabase,
    close_clients,
    durable_database,
    get_client,
    replicated,
    translate_errors,
    update_and_read,
    write_concern_for,
)

__all__ = [
    "MongoDatabase",
    "close_clients",
    "durable_database",
    "get_client",
    "replicated",
    "translate_errors",
    "update_and_read",
    "write_concern_for",
]
