"""MongoDB adapter (pymongo): sessions, turns and snapshots.

Only this module talks to the driver for short-term memory. Driver errors become domain errors.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from bson.errors import InvalidDocument, InvalidStringData
from pymongo import ASCENDING, DESCENDING, IndexModel, MongoClient, ReturnDocument, WriteConcern
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import (
    AutoReconnect,
    BulkWriteError,
    ConnectionFailure,
    DuplicateKeyError,
    InvalidOperation,
    OperationFailure,
    PyMongoError,
    ServerSelectionTimeoutError,
    WriteConcernError,
)

from mongomem.errors import InvalidInput, StoreAuthFailed, StoreUnavailable
from mongomem.models.common import Scope, as_utc

_CLIENTS: dict[str, MongoClient[dict[str, Any]]] = {}
_CLIENTS_LOCK = threading.Lock()
_INDEXED: set[tuple[str, str]] = set()

# Per-session memory of recent client tokens. Only a fast path: a retry found here is answered without
# allocating seqs. What makes a token once-only is the unique index TOKEN_INDEX on the turns themselves.
TOKEN_WINDOW = 200
TOKEN_INDEX = "session_client_token_once"
DUPLICATE_KEY = 11000

# Topologies whose writes are acknowledged by a primary before its secondaries have them.
_REPLICATED_TOPOLOGIES = frozenset(
    {"ReplicaSetWithPrimary", "ReplicaSetNoPrimary", "Sharded", "LoadBalanced"}
)
_REPLICATED_SERVERS = frozenset({"RSPrimary", "RSSecondary", "Mongos"})


# Deleted unpromoted seq ranges a session remembers; older ones fall back to the hole grace period.
DELETED_RANGES = 50


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
    with _CLIENTS_LOCK:
        for client in _CLIENTS.values():
            client.close()
        _CLIENTS.clear()
        _INDEXED.clear()


AUTHENTICATION_FAILED = 18


def _unavailable() -> StoreUnavailable:
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
        raise _unavailable() from exc
    except BulkWriteError as exc:
        if exc.details.get("writeConcernErrors"):
            raise _unavailable() from exc
        raise
    except OperationFailure as exc:
        if exc.code == AUTHENTICATION_FAILED:
            raise StoreAuthFailed(
                "the document store refused the credentials", {"retry_after_seconds": 2}
            ) from exc
        if exc.has_error_label("RetryableWriteError"):
            raise _unavailable() from exc
        raise
    except (InvalidDocument, InvalidStringData, OverflowError) as exc:
        # The API's validated types make this unreachable; a value BSON cannot hold is still bad input.
        raise InvalidInput("a value cannot be stored (not representable in BSON)") from exc


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


def _token_collision(error: dict[str, Any]) -> bool:
    if error.get("code") != DUPLICATE_KEY:
        return False
    pattern = error.get("keyPattern")
    if isinstance(pattern, dict):
        return "client_token" in pattern
    return TOKEN_INDEX in str(error.get("errmsg", ""))


def session_key(scope: Scope, session_id: str) -> str:
    # '|' cannot occur in identifiers (see models.common.ID_PATTERN), so the key is unambiguous.
    return f"{scope.tenant}|{scope.user_id}|{session_id}"


def turn_key(skey: str, seq: int) -> str:
    return f"{skey}#{seq}"


def snapshot_id_for(skey: str, from_seq: int) -> str:
    # Deterministic: two scanners cutting the same range collide on _id instead of duplicating it.
    return "snap-" + hashlib.sha256(f"{skey}#{from_seq}".encode()).hexdigest()[:24]


class TokenSeen(Exception):
    """The client token was already used in this session: the request is a retry."""


class PromotionPolicy:
    """When a session is due: `pending` turns reach max_messages (or tokens max_tokens), or it went idle.

    Each rule is one indexed field (pending, unpromoted_tokens, idle_due_at), so recording a turn is a
    plain $inc/$set and the scanner's query cost grows with due sessions, not with all sessions.
    """

    def __init__(self, max_messages: int, max_tokens: int | None, idle_seconds: int) -> None:
        self.max_messages = max_messages
        self.max_tokens = max_tokens
        self.idle_seconds = idle_seconds

    def size_due(self, session: dict[str, Any]) -> bool:
        if session.get("pending", 0) >= self.max_messages:
            return True
        return bool(self.max_tokens) and session.get("unpromoted_tokens", 0) >= (self.max_tokens or 0)

    def is_due(self, session: dict[str, Any], now: datetime) -> bool:
        if session.get("pending", 0) <= 0:
            return False
        idle_at = session.get("idle_due_at")
        return self.size_due(session) or (idle_at is not None and as_utc(idle_at) <= now)

    def due_at(self, session: dict[str, Any], now: datetime) -> datetime | None:
        if session.get("pending", 0) <= 0:
            return None
        if self.size_due(session):
            return now
        idle_at = session.get("idle_due_at")
        return as_utc(idle_at) if idle_at is not None else None

    def reason(self, session: dict[str, Any]) -> str:
        return "size" if self.size_due(session) else "idle"

    def due_query(self, now: datetime) -> dict[str, Any]:
        rules: list[dict[str, Any]] = [
            {"idle_due_at": {"$lte": now}},
            {"pending": {"$gte": self.max_messages}},
        ]
        if self.max_tokens:
            rules.append({"unpromoted_tokens": {"$gte": self.max_tokens}})
        return {"$or": rules}


class MongoStore:
    """Short-term memory collections: sessions, turns, snapshots."""

    def __init__(
        self, client: MongoClient[dict[str, Any]], db_name: str, write_concern: WriteConcern | None = None
    ) -> None:
        self.client = client
        # Every collection below (and the stores built on self.db) writes with this write concern.
        self.db: Database[dict[str, Any]] = client.get_database(db_name, write_concern=write_concern)
        self.sessions: Collection[dict[str, Any]] = self.db["sessions"]
        self.turns: Collection[dict[str, Any]] = self.db["turns"]
        self.snapshots: Collection[dict[str, Any]] = self.db["snapshots"]

    # -- setup ---------------------------------------------------------------------------------
    def ensure_indexes(self) -> None:
        """Create the indexes every query relies on (idempotent; once per process)."""
        marker = (str(id(self.client)), self.db.name)
        if marker in _INDEXED:
            return
        with translate_errors():
            self.sessions.create_indexes(
                [
                    IndexModel([("tenant", ASCENDING), ("user_id", ASCENDING), ("session_id", ASCENDING)]),
                    # The scanner's cost grows with due sessions only: each due rule has a partial index
                    # holding just the sessions with unpromoted turns.
                    IndexModel(
                        [("idle_due_at", ASCENDING)],
                        name="idle_due",
                        partialFilterExpression={"idle_due_at": {"$exists": True}},
                    ),
                    IndexModel(
                        [("pending", ASCENDING)],
                        name="pending",
                        partialFilterExpression={"pending": {"$gt": 0}},
                    ),
                    IndexModel(
                        [("unpromoted_tokens", ASCENDING)],
                        name="unpromoted_tokens",
                        partialFilterExpression={"unpromoted_tokens": {"$gt": 0}},
                    ),
                ]
            )
            self.turns.create_indexes(
                [
                    IndexModel(
                        [
                            ("tenant", ASCENDING),
                            ("user_id", ASCENDING),
                            ("session_id", ASCENDING),
                            ("seq", ASCENDING),
                        ],
                        name="session_seq",
                        unique=True,
                    ),
                    # Retention: a turn gets `expire_at` only once its snapshot is fully extracted
                    # (mongomem.erasure), so unpromoted and unextracted turns never expire.
                    IndexModel([("expire_at", ASCENDING)], name="turn_expiry", expireAfterSeconds=0),
                    # The recall indexer's queue: only turns still waiting to be embedded, oldest first.
                    IndexModel(
                        [("recall_indexed", ASCENDING), ("recorded_at", ASCENDING), ("seq", ASCENDING)],
                        name="recall_unindexed",
                        partialFilterExpression={"recall_indexed": False},
                    ),
                ]
            )
            self._ensure_token_index()
            self.snapshots.create_indexes(
                [
                    IndexModel(
                        [
                            ("tenant", ASCENDING),
                            ("user_id", ASCENDING),
                            ("session_id", ASCENDING),
                            ("from_seq", ASCENDING),
                        ],
                        name="session_range",
                    ),
                    IndexModel(
                        [("fanned_out", ASCENDING), ("created_at", ASCENDING)],
                        name="fanout_outbox",
                        partialFilterExpression={"fanned_out": False},
                    ),
                ]
            )
        _INDEXED.add(marker)

    def _ensure_token_index(self) -> None:
        """A client token records its batch once, however long after the retry comes (docs/decisions.md).

        A database written before this index existed may hold a batch recorded twice under one token;
        the index cannot be built then, and recording goes on without it (logged, never a failed request).
        """
        try:
            self.turns.create_index(
                [
                    ("tenant", ASCENDING),
                    ("user_id", ASCENDING),
                    ("session_id", ASCENDING),
                    ("client_token", ASCENDING),
                    ("batch_index", ASCENDING),
                ],
                name=TOKEN_INDEX,
                unique=True,
                partialFilterExpression={"client_token": {"$exists": True}},
            )
        except OperationFailure as exc:
            if exc.code != DUPLICATE_KEY:
                raise
            logging.getLogger(__name__).warning(
                "turns hold a client token recorded twice; index %s not built: retries older than the "
                "session's last %d tokens may record again until the duplicates are removed",
                TOKEN_INDEX,
                TOKEN_WINDOW,
            )

    # -- recording -----------------------------------------------------------------------------
    def allocate(
        self,
        scope: Scope,
        session_id: str,
        agent_id: str | None,
        count: int,
        tokens: int,
        client_token: str | None,
        policy: PromotionPolicy,
        now: datetime,
    ) -> dict[str, Any]:
        """Reserve `count` consecutive seqs and bump the session counters in one round trip.

        Plain $inc/$set/$push (no pipeline update): cheap on every MongoDB-compatible server.
        """
        skey = session_key(scope, session_id)
        update: dict[str, Any] = {
            "$inc": {"last_seq": count, "pending": count, "unpromoted_tokens": tokens},
            "$set": {"last_turn_at": now, "idle_due_at": now + timedelta(seconds=policy.idle_seconds)},
        }
        query: dict[str, Any] = {"_id": skey}
        if client_token:
            update["$push"] = {"tokens": {"$each": [{"t": client_token, "at": now}], "$slice": -TOKEN_WINDOW}}
            query["tokens.t"] = {"$ne": client_token}
        with translate_errors():
            doc = self._allocate_existing(query, update)
            if doc is None:
                # First turn of the session (or a token retry): create the session, then allocate.
                # Not an upsert: an upsert racing another upsert may apply yet return nothing on some
                # servers, which would lose the seqs it allocated.
                try:
                    self.sessions.insert_one(
                        {
                            "_id": skey,
                            **scope.filter(),
                            "session_id": session_id,
                            "agent_id": agent_id,
                            "created_at": now,
                            "last_seq": 0,
                            "pending": 0,
                            "promoted_through_seq": 0,
                            "unpromoted_tokens": 0,
                        }
                    )
                except DuplicateKeyError:
                    pass
                doc = self._allocate_existing(query, update)
        if doc is None:
            # The session exists, so the filter missed only because the token is already in the window.
            raise TokenSeen(client_token)
        return doc

    def _allocate_existing(self, query: dict[str, Any], update: dict[str, Any]) -> dict[str, Any] | None:
        return self.sessions.find_one_and_update(
            query, update, return_document=ReturnDocument.AFTER, projection={"last_seq": 1}
        )

    def insert_new_turns(self, docs: list[dict[str, Any]]) -> bool:
        """Insert a batch under freshly allocated seqs; False when its client token already holds a batch.

        Ordered, so the batch's first turn decides: if the token's turn 0 exists, nothing is inserted.
        """
        with translate_errors():
            try:
                self.turns.insert_many(docs, ordered=True)
            except BulkWriteError as exc:
                errors = exc.details.get("writeErrors", [])
                if errors and all(_token_collision(e) for e in errors):
                    return False
                if any(e.get("code") == DUPLICATE_KEY for e in errors):
                    # Fresh seqs that already exist: never acknowledge them for this batch.
                    raise _unavailable() from exc
                raise
        return True

    def insert_turns(self, docs: list[dict[str, Any]]) -> None:
        """Insert turn documents; re-inserting the same (session, seq) is a no-op (idempotent repair)."""
        with translate_errors():
            try:
                self.turns.insert_many(docs, ordered=False)
            except BulkWriteError as exc:
                others = [e for e in exc.details.get("writeErrors", []) if e.get("code") != DUPLICATE_KEY]
                if others or exc.details.get("writeConcernErrors"):
                    raise

    def token_seen_at(self, scope: Scope, session_id: str, client_token: str) -> datetime | None:
        """When a client token was first used in this session (None when out of the window)."""
        with translate_errors():
            doc = self.sessions.find_one(
                {"_id": session_key(scope, session_id)}, {"tokens": {"$elemMatch": {"t": client_token}}}
            )
        if not doc or not doc.get("tokens"):
            return None
        return as_utc(doc["tokens"][0]["at"])

    def turns_by_token(self, scope: Scope, session_id: str, client_token: str) -> list[dict[str, Any]]:
        query = {**scope.filter(), "session_id": session_id, "client_token": client_token}
        with translate_errors():
            return list(self.turns.find(query, {"seq": 1, "batch_index": 1, "batch_size": 1}).sort("seq", 1))

    # -- reading -------------------------------------------------------------------------------
    def get_session(self, scope: Scope, session_id: str) -> dict[str, Any] | None:
        with translate_errors():
            return self.sessions.find_one(
                {"_id": session_key(scope, session_id), **scope.filter()}, {"tokens": 0}
            )

    def list_turns(
        self, scope: Scope, session_id: str, limit: int, before_seq: int | None = None
    ) -> list[dict[str, Any]]:
        """The newest `limit` turns (before `before_seq`), oldest first."""
        query: dict[str, Any] = {**scope.filter(), "session_id": session_id}
        if before_seq is not None:
            query["seq"] = {"$lt": before_seq}
        with translate_errors():
            docs = list(self.turns.find(query).sort("seq", DESCENDING).limit(limit))
        docs.reverse()
        return docs

    def turns_in_range(
        self, scope: Scope, session_id: str, from_seq: int, to_seq: int
    ) -> list[dict[str, Any]]:
        query = {**scope.filter(), "session_id": session_id, "seq": {"$gte": from_seq, "$lte": to_seq}}
        with translate_errors():
            return list(self.turns.find(query).sort("seq", ASCENDING))

    def present_seqs(
        self, scope: Scope, session_id: str, from_seq: int, to_seq: int
    ) -> list[tuple[int, int]]:
        """(seq, tokens) of the turns that exist in [from_seq, to_seq], in order."""
        query = {**scope.filter(), "session_id": session_id, "seq": {"$gte": from_seq, "$lte": to_seq}}
        with translate_errors():
            cursor = self.turns.find(query, {"_id": 0, "seq": 1, "tokens": 1}).sort("seq", ASCENDING)
            return [(d["seq"], d.get("tokens", 0)) for d in cursor]

    def delete_turns(self, scope: Scope, session_id: str, from_seq: int | None) -> int:
        """Delete the session's turns with seq >= from_seq (all without it); returns how many went.

        The seqs stay allocated: promotion steps over them as it does over abandoned seqs. Only the
        unpromoted token count shrinks, so the size trigger counts what is left."""
        query: dict[str, Any] = {**scope.filter(), "session_id": session_id}
        if from_seq is not None:
            query["seq"] = {"$gte": from_seq}
        skey = session_key(scope, session_id)
        with translate_errors():
            session = self.sessions.find_one({"_id": skey}, {"promoted_through_seq": 1, "last_seq": 1})
            if session is None:
                return 0
            promoted, last = session["promoted_through_seq"], session["last_seq"]
            doomed = list(self.turns.find(query, {"_id": 0, "seq": 1, "tokens": 1}))
            deleted = self.turns.delete_many(query).deleted_count
            tokens = sum(d.get("tokens", 0) for d in doomed if d["seq"] > promoted)
            update: dict[str, Any] = {"$inc": {"unpromoted_tokens": -tokens}}
            start = max(from_seq or 1, promoted + 1)
            if start <= last:
                # Promotion steps over these seqs at once instead of waiting for a writer (hole grace).
                entry = {"$each": [[start, last]], "$slice": -DELETED_RANGES}
                update["$push"] = {"deleted_ranges": entry}
            self.sessions.update_one({"_id": skey}, update)
        return int(deleted)

    # -- promotion -----------------------------------------------------------------------------
    def claim_due(
        self, owner: str, now: datetime, lease_seconds: int, policy: PromotionPolicy
    ) -> dict[str, Any] | None:
        """Lease a due session that nobody holds (or whose holder's lease expired)."""
        with translate_errors():
            return self.sessions.find_one_and_update(
                {
                    "$and": [
                        policy.due_query(now),
                        {"$or": [{"lease_until": {"$exists": False}}, {"lease_until": {"$lte": now}}]},
                    ]
                },
                {"$set": {"lease_until": now + timedelta(seconds=lease_seconds), "lease_owner": owner}},
                projection={"tokens": 0},
                return_document=ReturnDocument.AFTER,
            )

    def claim_session(
        self, scope: Scope, session_id: str, owner: str, now: datetime, lease_seconds: int
    ) -> dict[str, Any] | None:
        with translate_errors():
            return self.sessions.find_one_and_update(
                {
                    "_id": session_key(scope, session_id),
                    "$or": [{"lease_until": {"$exists": False}}, {"lease_until": {"$lte": now}}],
                },
                {"$set": {"lease_until": now + timedelta(seconds=lease_seconds), "lease_owner": owner}},
                projection={"tokens": 0},
                return_document=ReturnDocument.AFTER,
            )

    def release(self, skey: str, owner: str) -> None:
        with translate_errors():
            self.sessions.update_one(
                {"_id": skey, "lease_owner": owner}, {"$unset": {"lease_until": "", "lease_owner": ""}}
            )

    def get_snapshot(self, snapshot_id: str) -> dict[str, Any] | None:
        with translate_errors():
            return self.snapshots.find_one({"_id": snapshot_id})

    def create_snapshot(self, doc: dict[str, Any]) -> dict[str, Any]:
        """Insert the snapshot, or return the one another scanner already cut from the same seq."""
        with translate_errors():
            try:
                self.snapshots.insert_one(doc)
                return doc
            except DuplicateKeyError:
                existing = self.snapshots.find_one({"_id": doc["_id"]})
                assert existing is not None
                return existing

    def tag_turns(self, snap: dict[str, Any]) -> None:
        query = {
            "tenant": snap["tenant"],
            "user_id": snap["user_id"],
            "session_id": snap["session_id"],
            "seq": {"$gte": snap["from_seq"], "$lte": snap["to_seq"]},
        }
        with translate_errors():
            self.turns.update_many(query, {"$set": {"snapshot_id": snap["_id"]}})

    def advance(self, skey: str, snap: dict[str, Any]) -> dict[str, Any] | None:
        """Move promoted_through_seq over the snapshot if nobody has yet (compare-and-set)."""
        size = snap["to_seq"] - snap["from_seq"] + 1
        with translate_errors():
            doc = self.sessions.find_one_and_update(
                {"_id": skey, "promoted_through_seq": snap["from_seq"] - 1},
                {
                    "$set": {"promoted_through_seq": snap["to_seq"]},
                    "$inc": {"pending": -size, "unpromoted_tokens": -snap.get("tokens", 0)},
                },
                projection={"tokens": 0},
                return_document=ReturnDocument.AFTER,
            )
            if doc is not None and doc["pending"] <= 0:
                # Fully promoted: leave the idle index. A record racing in between sets pending > 0
                # again, so the filter keeps its fresh idle_due_at.
                self.sessions.update_one(
                    {"_id": skey, "pending": {"$lte": 0}},
                    {"$unset": {"idle_due_at": ""}, "$set": {"unpromoted_tokens": 0}},
                )
                doc.pop("idle_due_at", None)
        return doc

    def reload_session(self, skey: str) -> dict[str, Any] | None:
        with translate_errors():
            return self.sessions.find_one({"_id": skey}, {"tokens": 0})

    def mark_fanned_out(self, snapshot_id: str) -> None:
        with translate_errors():
            self.snapshots.update_one({"_id": snapshot_id}, {"$set": {"fanned_out": True}})

    def unfanned_snapshots(self, older_than: datetime, limit: int) -> list[dict[str, Any]]:
        with translate_errors():
            return list(
                self.snapshots.find({"fanned_out": False, "created_at": {"$lte": older_than}}).limit(limit)
            )

    def session_snapshots(self, scope: Scope, session_id: str, limit: int = 100) -> list[dict[str, Any]]:
        with translate_errors():
            return list(
                self.snapshots.find({**scope.filter(), "session_id": session_id})
                .sort("from_seq", DESCENDING)
                .limit(limit)
            )

    def set_extraction_status(
        self, snapshot_id: str, memory_type: str, fields: dict[str, Any], inc_attempts: bool = False
    ) -> dict[str, Any] | None:
        update: dict[str, Any] = {"$set": {f"extraction.{memory_type}.{k}": v for k, v in fields.items()}}
        if inc_attempts:
            update["$inc"] = {f"extraction.{memory_type}.attempts": 1}
        with translate_errors():
            return self.snapshots.find_one_and_update(
                {"_id": snapshot_id}, update, return_document=ReturnDocument.AFTER
            )

    def user_sessions(
        self, scope: Scope, limit: int, before: tuple[datetime, str] | None = None
    ) -> list[dict[str, Any]]:
        """A user's sessions, most recently active first (keyset paging on last_turn_at, session_id)."""
        query: dict[str, Any] = {**scope.filter()}
        if before is not None:
            at, session_id = before
            query["$or"] = [
                {"last_turn_at": {"$lt": at}},
                {"last_turn_at": at, "session_id": {"$lt": session_id}},
            ]
        projection = {"tokens": 0, "lease_owner": 0, "lease_until": 0}
        with translate_errors():
            return list(
                self.sessions.find(query, projection)
                .sort([("last_turn_at", DESCENDING), ("session_id", DESCENDING)])
                .limit(limit)
            )

    def user_snapshot(self, scope: Scope, snapshot_id: str) -> dict[str, Any] | None:
        """A snapshot, only if it belongs to the scope (ids are global, so the scope is checked here)."""
        with translate_errors():
            return self.snapshots.find_one({"_id": snapshot_id, **scope.filter()})

    def requeue_extraction(
        self, scope: Scope, snapshot_id: str, memory_type: str, at: datetime
    ) -> dict[str, Any] | None:
        """Set one kind of the scope's snapshot back to queued, unless it is done (compare-and-set)."""
        path = f"extraction.{memory_type}"
        query = {"_id": snapshot_id, **scope.filter(), f"{path}.status": {"$exists": True, "$ne": "done"}}
        update = {"$set": {f"{path}.status": "queued", f"{path}.error": None, f"{path}.updated_at": at}}
        with translate_errors():
            return self.snapshots.find_one_and_update(query, update, return_document=ReturnDocument.AFTER)

    # -- semantic recall -----------------------------------------------------------------------
    def unindexed_turns(self, limit: int) -> list[dict[str, Any]]:
        """Turns waiting for the recall indexer, oldest first (through the partial index)."""
        with translate_errors():
            return list(
                self.turns.find({"recall_indexed": False})
                .sort([("recorded_at", ASCENDING), ("seq", ASCENDING)])
                .limit(limit)
            )

    def turns_in_ranges(self, scope: Scope, ranges: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
        """The turns of one user in several (session_id, from_seq, to_seq) ranges, in one query."""
        if not ranges:
            return []
        query = {
            **scope.filter(),
            "$or": [{"session_id": s, "seq": {"$gte": lo, "$lte": hi}} for s, lo, hi in ranges],
        }
        with translate_errors():
            return list(self.turns.find(query).sort([("session_id", ASCENDING), ("seq", ASCENDING)]))

    def turns_by_ids(self, scope: Scope, ids: list[str]) -> list[dict[str, Any]]:
        with translate_errors():
            return list(self.turns.find({"_id": {"$in": ids}, **scope.filter()}))

    def requeue_recall(self) -> int:
        """Queue every recall-indexed (or parked) turn again, after the index was dropped."""
        with translate_errors():
            result = self.turns.update_many(
                {"recall_indexed": {"$in": [True, "failed"]}},
                {
                    "$set": {"recall_indexed": False, "recall_ctx_next": False},
                    "$unset": {"recall_attempts": ""},
                },
            )
        return int(result.modified_count)

    def set_recall_state(self, ids: list[str], fields: dict[str, Any], inc_attempts: bool = False) -> None:
        if not ids:
            return
        update: dict[str, Any] = {"$set": fields}
        if inc_attempts:
            update["$inc"] = {"recall_attempts": 1}
        with translate_errors():
            self.turns.update_many({"_id": {"$in": ids}}, update)

    def ping(self) -> bool:
        try:
            self.client.admin.command("ping")
            return True
        except PyMongoError:
            return False


__all__ = [
    "DuplicateKeyError",
    "MongoStore",
    "OperationFailure",
    "PromotionPolicy",
    "TokenSeen",
    "durable_database",
    "get_client",
    "session_key",
    "snapshot_id_for",
    "turn_key",
    "write_concern_for",
]
