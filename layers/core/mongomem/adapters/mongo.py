"""MongoDB adapter (pymongo): sessions, turns and snapshots.

Only this module talks to the driver for short-term memory. Driver errors become domain errors.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel, MongoClient, ReturnDocument
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import (
    AutoReconnect,
    BulkWriteError,
    ConnectionFailure,
    DuplicateKeyError,
    OperationFailure,
    PyMongoError,
    ServerSelectionTimeoutError,
)

from mongomem.errors import StoreUnavailable
from mongomem.models.common import Scope

_CLIENTS: dict[str, MongoClient[dict[str, Any]]] = {}
_CLIENTS_LOCK = threading.Lock()
_INDEXED: set[tuple[str, str]] = set()

# Per-session memory of recent client tokens: the idempotency window for retried record calls.
TOKEN_WINDOW = 200
DUPLICATE_KEY = 11000


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


@contextmanager
def translate_errors() -> Iterator[None]:
    """Turn driver connectivity errors into StoreUnavailable (503 + retry hint)."""
    try:
        yield
    except (ServerSelectionTimeoutError, ConnectionFailure, AutoReconnect) as exc:
        raise StoreUnavailable(
            "the document store is unavailable; retry with the same client_token",
            {"retry_after_seconds": 2},
        ) from exc


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
    """The due rule, evaluated inside MongoDB so a record needs one round trip for the session."""

    def __init__(self, max_messages: int, max_tokens: int | None, idle_seconds: int) -> None:
        self.max_messages = max_messages
        self.max_tokens = max_tokens
        self.idle_seconds = idle_seconds

    def size_due(self) -> dict[str, Any]:
        rules: list[dict[str, Any]] = [
            {"$gte": [{"$subtract": ["$last_seq", "$promoted_through_seq"]}, self.max_messages]}
        ]
        if self.max_tokens:
            rules.append({"$gte": ["$unpromoted_tokens", self.max_tokens]})
        return {"$or": rules}

    def due_stage(self) -> dict[str, Any]:
        idle_due = {"$dateAdd": {"startDate": "$last_turn_at", "unit": "second", "amount": self.idle_seconds}}
        pending = {"$gt": ["$last_seq", "$promoted_through_seq"]}
        return {
            "$set": {
                "due_at": {"$cond": [pending, {"$cond": [self.size_due(), "$$NOW", idle_due]}, "$$REMOVE"]},
                "due_reason": {
                    "$cond": [pending, {"$cond": [self.size_due(), "size", "idle"]}, "$$REMOVE"]
                },
            }
        }


class MongoStore:
    """Short-term memory collections: sessions, turns, snapshots."""

    def __init__(self, client: MongoClient[dict[str, Any]], db_name: str) -> None:
        self.client = client
        self.db: Database[dict[str, Any]] = client[db_name]
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
                    # The scanner's cost grows with due sessions only: fully promoted sessions have no due_at.
                    IndexModel(
                        [("due_at", ASCENDING)],
                        name="due_at_pending",
                        partialFilterExpression={"due_at": {"$exists": True}},
                    ),
                ]
            )
            self.turns.create_indexes(
                [
                    IndexModel(
                        [("tenant", ASCENDING), ("user_id", ASCENDING), ("session_id", ASCENDING), ("seq", ASCENDING)],
                        name="session_seq",
                        unique=True,
                    ),
                    IndexModel(
                        [("tenant", ASCENDING), ("user_id", ASCENDING), ("session_id", ASCENDING), ("client_token", ASCENDING)],
                        name="session_client_token",
                        partialFilterExpression={"client_token": {"$exists": True}},
                    ),
                ]
            )
            self.snapshots.create_indexes(
                [
                    IndexModel(
                        [("tenant", ASCENDING), ("user_id", ASCENDING), ("session_id", ASCENDING), ("from_seq", ASCENDING)],
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
    ) -> dict[str, Any]:
        """Reserve `count` consecutive seqs and bump the session counters in one round trip."""
        skey = session_key(scope, session_id)
        base = {"$ifNull": ["$last_seq", 0]}
        stage: dict[str, Any] = {
            "tenant": scope.tenant,
            "user_id": scope.user_id,
            "session_id": session_id,
            "agent_id": {"$ifNull": ["$agent_id", agent_id]},
            "created_at": {"$ifNull": ["$created_at", "$$NOW"]},  # the first allocation's time
            "last_seq": {"$add": [base, count]},
            "promoted_through_seq": {"$ifNull": ["$promoted_through_seq", 0]},
            "unpromoted_tokens": {"$add": [{"$ifNull": ["$unpromoted_tokens", 0]}, tokens]},
            "last_turn_at": "$$NOW",
        }
        query: dict[str, Any] = {"_id": skey}
        if client_token:
            entry = {"t": client_token, "first": {"$add": [base, 1]}, "n": count}
            stage["tokens"] = {
                "$slice": [{"$concatArrays": [{"$ifNull": ["$tokens", []]}, [entry]]}, -TOKEN_WINDOW]
            }
            query["tokens.t"] = {"$ne": client_token}
        pipeline = [{"$set": stage}, policy.due_stage()]
        with translate_errors():
            doc = self._allocate_existing(query, pipeline)
            if doc is None:
                # First turn of the session (or a token retry): create the session, then allocate.
                # Not an upsert: an upsert racing another upsert may apply yet return nothing on some
                # servers, which would lose the seqs it allocated.
                try:
                    self.sessions.insert_one(
                        {"_id": skey, **scope.filter(), "session_id": session_id, "agent_id": agent_id,
                         "last_seq": 0, "promoted_through_seq": 0, "unpromoted_tokens": 0}
                    )
                except DuplicateKeyError:
                    pass
                doc = self._allocate_existing(query, pipeline)
        if doc is None:
            # The session exists, so the filter missed only because the token is already in the window.
            raise TokenSeen(client_token)
        return doc

    def _allocate_existing(self, query: dict[str, Any], pipeline: list[dict[str, Any]]) -> dict[str, Any] | None:
        return self.sessions.find_one_and_update(
            query, pipeline, return_document=ReturnDocument.AFTER, projection={"tokens": 0}
        )

    def insert_turns(self, docs: list[dict[str, Any]]) -> None:
        """Insert turn documents; re-inserting the same (session, seq) is a no-op (idempotent repair)."""
        with translate_errors():
            try:
                self.turns.insert_many(docs, ordered=False)
            except BulkWriteError as exc:
                others = [e for e in exc.details.get("writeErrors", []) if e.get("code") != DUPLICATE_KEY]
                if others:
                    raise

    def token_allocation(self, scope: Scope, session_id: str, client_token: str) -> dict[str, Any] | None:
        """The seq range a client token was given, and the session's promotion point."""
        with translate_errors():
            doc = self.sessions.find_one(
                {"_id": session_key(scope, session_id)},
                {"tokens": {"$elemMatch": {"t": client_token}}, "promoted_through_seq": 1},
            )
        if not doc or not doc.get("tokens"):
            return None
        entry = doc["tokens"][0]
        return {"first": entry["first"], "n": entry["n"], "promoted_through_seq": doc["promoted_through_seq"]}

    # -- reading -------------------------------------------------------------------------------
    def get_session(self, scope: Scope, session_id: str) -> dict[str, Any] | None:
        with translate_errors():
            return self.sessions.find_one({"_id": session_key(scope, session_id), **scope.filter()}, {"tokens": 0})

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

    def turns_in_range(self, scope: Scope, session_id: str, from_seq: int, to_seq: int) -> list[dict[str, Any]]:
        query = {**scope.filter(), "session_id": session_id, "seq": {"$gte": from_seq, "$lte": to_seq}}
        with translate_errors():
            return list(self.turns.find(query).sort("seq", ASCENDING))

    def present_seqs(self, scope: Scope, session_id: str, from_seq: int, to_seq: int) -> list[tuple[int, int]]:
        """(seq, tokens) of the turns that exist in [from_seq, to_seq], in order."""
        query = {**scope.filter(), "session_id": session_id, "seq": {"$gte": from_seq, "$lte": to_seq}}
        with translate_errors():
            cursor = self.turns.find(query, {"_id": 0, "seq": 1, "tokens": 1}).sort("seq", ASCENDING)
            return [(d["seq"], d.get("tokens", 0)) for d in cursor]

    # -- promotion -----------------------------------------------------------------------------
    def claim_due(self, owner: str, now: datetime, lease_seconds: int) -> dict[str, Any] | None:
        """Lease the most overdue session that nobody holds (or whose holder's lease expired)."""
        with translate_errors():
            return self.sessions.find_one_and_update(
                {
                    "due_at": {"$lte": now},
                    "$or": [{"lease_until": {"$exists": False}}, {"lease_until": {"$lte": now}}],
                },
                {"$set": {"lease_until": now + timedelta(seconds=lease_seconds), "lease_owner": owner}},
                sort=[("due_at", ASCENDING)],
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

    def advance(self, skey: str, snap: dict[str, Any], policy: PromotionPolicy) -> dict[str, Any] | None:
        """Move promoted_through_seq over the snapshot if nobody has yet (compare-and-set)."""
        stage = {
            "$set": {
                "promoted_through_seq": snap["to_seq"],
                "unpromoted_tokens": {"$max": [0, {"$subtract": ["$unpromoted_tokens", snap.get("tokens", 0)]}]},
            }
        }
        with translate_errors():
            return self.sessions.find_one_and_update(
                {"_id": skey, "promoted_through_seq": snap["from_seq"] - 1},
                [stage, policy.due_stage()],
                projection={"tokens": 0},
                return_document=ReturnDocument.AFTER,
            )

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
    "get_client",
    "session_key",
    "snapshot_id_for",
    "turn_key",
]
