"""The MongoDB driver interface: one client per process, the durable write concern, error translation.

Every operations module of this package (one per entity) works on the `MongoDatabase` built here;
driver errors leave it as domain errors (mongomem.errors).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bson.errors import InvalidDocument, InvalidStringData
from pymongo import MongoClient, WriteConcern
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import (
    AutoReconnect,
    BulkWriteError,
    ConnectionFailure,
    InvalidOperation,
    OperationFailure,
    PyMongoError,
    ServerSelectionTimeoutError,
    WriteConcernError,
)

from mongomem.errors import InvalidInput, StoreAuthFailed, StoreUnavailable

_CLIENTS: dict[str, MongoClient[dict[str, Any]]] = {}
_CLIENTS_LOCK = threading.Lock()
_INDEXED: set[tuple[str, str, str]] = set()

DUPLICATE_KEY = 11000

# Topologies whose writes are acknowledged by a primary before its secondaries have them.
_REPLICATED_TOPOLOGIES = frozenset(
    {"ReplicaSetWithPrimary", "ReplicaSetNoPrimary", "Sharded", "LoadBalanced"}
)
_REPLICATED_SERVERS = frozenset({"RSPrimary", "RSSecondary", "Mongos"})


def get_client(uri: str, **kwargs: Any) -> MongoClient[dict[str, Any]]:
    """One MongoClient per process (per Lambda execution environment), created on first use."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(uri)
        if client is None:
            options: dict[str, Any] = {
                "serverSelectionTimeoutMS": 5000,
                "connectTimeoutMS": 5000,
                "retryWrites": True,
                "appname": "mongomem",
                "tz_aware": True,
            }
            options.update(kwargs)
            client = MongoClient(uri, **options)
            _CLIENTS[uri] = client
        return client


def close_clients() -> None:
    """Close every client of the process (its end); a client another part of the process still uses fails
    after this, so a caller that made one client closes that one (`close_client`)."""
    with _CLIENTS_LOCK:
        for client in _CLIENTS.values():
            client.close()
        _CLIENTS.clear()
        _INDEXED.clear()


def close_client(uri: str) -> None:
    """Close the process's client of one URI (the next `get_client(uri)` makes a new one)."""
    with _CLIENTS_LOCK:
        client = _CLIENTS.pop(uri, None)
        if client is not None:
            client.close()


AUTHENTICATION_FAILED = 18


def unavailable() -> StoreUnavailable:
    return StoreUnavailable(
        "the document store is unavailable; retry with the same client_token", {"retry_after_seconds": 2}
    )


@contextmanager
def translate_errors() -> Iterator[None]:
    """Turn driver connectivity and durability errors into StoreUnavailable (503 + retry hint).

    A write whose write concern failed (e.g. `majority` timed out) may or may not have been applied:
    the client retries with its client_token, which makes the retry a replay if it was.
    """
    try:
        yield
    except (ServerSelectionTimeoutError, ConnectionFailure, AutoReconnect, WriteConcernError) as exc:
        raise unavailable() from exc
    except BulkWriteError as exc:
        if exc.details.get("writeConcernErrors"):
            raise unavailable() from exc
        raise
    except OperationFailure as exc:
        if exc.code == AUTHENTICATION_FAILED:
            raise StoreAuthFailed(
                "the document store refused the credentials", {"retry_after_seconds": 2}
            ) from exc
        if exc.has_error_label("RetryableWriteError"):
            raise unavailable() from exc
        raise
    except (InvalidDocument, InvalidStringData, OverflowError) as exc:
        # The API's validated types make this unreachable; a value BSON cannot hold is still bad input.
        raise InvalidInput("a value cannot be stored (not representable in BSON)") from exc


def update_and_read(
    coll: Collection[dict[str, Any]],
    query: dict[str, Any],
    update: dict[str, Any],
    projection: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The document after a conditional update of one document named by `_id` (None: nothing matched).

    An update and a find that name `_id` are point lookups on every server we run on, while SecantusDB
    (the local and test server) answers findAndModify by walking the collection: 50 ms at 5,000
    documents, measured (docs/adr/README.md). Atlas pays one more round trip. For status changes and
    counters read back for display only: the session's seq counter, whose returned value must be the
    one this call allocated, stays a findAndModify.
    """
    result = coll.update_one(query, update)
    if not result.matched_count:
        return None
    return coll.find_one({"_id": query["_id"]}, projection)


def write_concern_for(client: MongoClient[dict[str, Any]], mode: str, timeout_ms: int) -> WriteConcern:
    """The write concern of acknowledged writes: journaled always, `majority` where data is replicated.

    `auto` asks the driver's view of the topology (server selection reuses the driver's own `hello`,
    so no command is sent for it): a replica set, sharded cluster or load balancer (Atlas) gets
    `majority`, a standalone `{w: 1, j: true}`.
    """
    if mode == "auto":
        mode = "majority" if replicated(client) else "journaled"
    if mode == "majority":
        return WriteConcern(w="majority", j=True, wtimeout=timeout_ms)
    return WriteConcern(w=1, j=True)


def replicated(client: MongoClient[dict[str, Any]]) -> bool:
    """True when the deployment is a replica set, a sharded cluster or behind a load balancer."""
    with translate_errors():
        try:
            _ = client.address  # waits for server selection
        except InvalidOperation:  # load-balanced mode has no single address
            return True
    topology = client.topology_description
    if topology.topology_type_name in _REPLICATED_TOPOLOGIES:
        return True
    return any(
        s.replica_set_name or s.server_type_name in _REPLICATED_SERVERS
        for s in topology.server_descriptions().values()
    )


def durable_database(
    client: MongoClient[dict[str, Any]], name: str, mode: str = "auto", timeout_ms: int = 5000
) -> Database[dict[str, Any]]:
    """A database handle whose writes use the durable write concern (for tools outside Services)."""
    return client.get_database(name, write_concern=write_concern_for(client, mode, timeout_ms))


class MongoDatabase:
    """The memory database with the durable write concern; what every repository of this package takes."""

    def __init__(
        self, client: MongoClient[dict[str, Any]], name: str, write_concern: WriteConcern | None = None
    ) -> None:
        self.client = client
        # Every collection reached through `db` writes with this write concern (docs/adr/0002-durability-what-a-2xx-means.md).
        self.db: Database[dict[str, Any]] = client.get_database(name, write_concern=write_concern)

    @classmethod
    def wrap(cls, db: Database[dict[str, Any]]) -> MongoDatabase:
        """A pymongo database handle (e.g. from `durable_database`) as a MongoDatabase, write concern kept."""
        return cls(db.client, db.name, db.write_concern)

    @property
    def name(self) -> str:
        return self.db.name

    def ensure_once(self, what: str, create: Callable[[], None]) -> None:
        """Run `create` (e.g. an entity's index set) once per process for this database."""
        marker = (str(id(self.client)), self.db.name, what)
        with _CLIENTS_LOCK:
            if marker in _INDEXED:
                return
        create()
        with _CLIENTS_LOCK:
            _INDEXED.add(marker)

    def ping(self) -> bool:
        """False when the server cannot be reached; refused credentials raise StoreAuthFailed instead.

        A rotated password is not an outage: raising lets the runtime refetch the secret and answer again.
        """
        try:
            with translate_errors():
                self.client.admin.command("ping")
            return True
        except StoreAuthFailed:
            raise
        except (StoreUnavailable, PyMongoError):
            return False

    def drop(self) -> None:
        """Drop the whole database (tests, benchmarks)."""
        with translate_errors():
            self.client.drop_database(self.db.name)
