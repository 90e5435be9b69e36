"""Sessions (`sessions`): seq allocation, counters, the recent client tokens, leases.

{_id: "tenant|user|session", tenant, user_id, session_id, agent_id, created_at, last_turn_at, last_seq,
 pending, unpromoted_tokens, promoted_through_seq, idle_due_at, tokens: [{t, at}], deleted_ranges,
 lease_until, lease_owner}
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, NoReturn

from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument
from pymongo.collection import Collection
from pymongo.errors import DuplicateKeyError

from mongomem.adapters.mongo.driver import MongoDatabase, translate_errors
from mongomem.adapters.mongo.ids import session_key
from mongomem.models.common import Scope, as_utc
from mongomem.models.sessions import Session, StoredSnapshot
from mongomem.shortterm.ports import (
    DELETED_RANGES,
    TOKEN_WINDOW,
    AgentConflict,
    Allocated,
    NewBatch,
    TokenSeen,
)

COLLECTION = "sessions"
# Never handed to logic: the token list is the adapter's fast path, the lease the adapter's lock.
_HIDDEN = {"tokens": 0, "lease_owner": 0, "lease_until": 0}
# What an allocation reads back: the seq it reserved and what the size rules look at.
_COUNTERS = {"last_seq": 1, "pending": 1, "unpromoted_tokens": 1, "size_due_at": 1}


def _session(doc: dict[str, Any]) -> Session:
    return Session(
        tenant=doc["tenant"],
        user_id=doc["user_id"],
        session_id=doc["session_id"],
        agent_id=doc.get("agent_id"),
        created_at=as_utc(doc["created_at"]),
        last_turn_at=as_utc(doc["last_turn_at"]) if doc.get("last_turn_at") else None,
        last_seq=doc.get("last_seq", 0),
        promoted_through_seq=doc.get("promoted_through_seq", 0),
        pending=doc.get("pending", 0),
        unpromoted_tokens=doc.get("unpromoted_tokens", 0),
        idle_due_at=as_utc(doc["idle_due_at"]) if doc.get("idle_due_at") else None,
        size_due_at=as_utc(doc["size_due_at"]) if doc.get("size_due_at") else None,
        deleted_ranges=[(int(a), int(b)) for a, b in doc.get("deleted_ranges") or []],
    )


def _lease(owner: str, now: datetime, lease_seconds: int) -> dict[str, Any]:
    return {"$set": {"lease_until": now + timedelta(seconds=lease_seconds), "lease_owner": owner}}


def _free(now: datetime) -> dict[str, Any]:
    # no lease, or an expired one ($not matches a missing field): one clause, no $or
    return {"lease_until": {"$not": {"$gt": now}}}


def _allocation(skey: str, batch: NewBatch, now: datetime) -> tuple[dict[str, Any], dict[str, Any]]:
    """The filter and update of one allocation (plain $inc/$set/$push, no pipeline update: cheap on
    every MongoDB-compatible server)."""
    update: dict[str, Any] = {
        "$inc": {"last_seq": batch.size, "pending": batch.size, "unpromoted_tokens": batch.tokens},
        "$set": {"last_turn_at": now, "idle_due_at": batch.idle_due_at},
    }
    query: dict[str, Any] = {"_id": skey}
    if batch.agent_id is not None:
        # a session belongs to one agent: a batch naming another is refused, never reassigned
        query["agent_id"] = batch.agent_id
    if batch.client_token:
        update["$push"] = {
            "tokens": {"$each": [{"t": batch.client_token, "at": now}], "$slice": -TOKEN_WINDOW}
        }
        # a quick retry misses the filter and is answered without allocating seqs
        query["tokens.t"] = {"$ne": batch.client_token}
    return query, update


# Dropped where an earlier version created them: every recorded turn rewrote their entries.
OBSOLETE_INDEXES = frozenset({"pending", "unpromoted_tokens"})

# How often a claim looks for another due session after a racing scanner leased the one it found.
CLAIM_RACES = 8


class MongoSessionRepository:
    """Implements shortterm.ports.SessionRepository."""

    def __init__(self, database: MongoDatabase) -> None:
        self.database = database
        self.coll: Collection[dict[str, Any]] = database.db[COLLECTION]

    def ensure_indexes(self) -> None:
        self.database.ensure_once(COLLECTION, self._create_indexes)

    def _create_indexes(self) -> None:
        with translate_errors():
            self.coll.create_indexes(
                [
                    IndexModel([("tenant", ASCENDING), ("user_id", ASCENDING), ("session_id", ASCENDING)]),
                    # The scanner's cost grows with due sessions only: each due rule has a partial index
                    # holding just the sessions it makes due. The size rule is a mark the record path
                    # sets when a session reaches it, so recording a turn rewrites one such index entry
                    # (idle_due_at), not three.
                    IndexModel(
                        [("idle_due_at", ASCENDING)],
                        name="idle_due",
                        partialFilterExpression={"idle_due_at": {"$exists": True}},
                    ),
                    IndexModel(
                        [("size_due_at", ASCENDING)],
                        name="size_due",
                        partialFilterExpression={"size_due_at": {"$exists": True}},
                    ),
                ]
            )
            # Indexes of earlier versions on counters every turn changes (the size rules read them)
            present = {ix["name"] for ix in self.coll.list_indexes()}
            for obsolete in OBSOLETE_INDEXES & present:
                self.coll.drop_index(obsolete)

    # -- recording -----------------------------------------------------------------------------
    def allocate(self, scope: Scope, session_id: str, batch: NewBatch, now: datetime) -> Allocated:
        skey = session_key(scope, session_id)
        query, update = _allocation(skey, batch, now)
        with translate_errors():
            doc = self._allocate_existing(query, update)
            if doc is None:
                # First turn of the session (or a token retry): create the session, then allocate.
                # Not an upsert: an upsert racing another upsert may apply yet return nothing on some
                # servers, which would lose the seqs it allocated.
                self._create(skey, scope, session_id, batch.agent_id, now)
                doc = self._allocate_existing(query, update)
        if doc is None:
            self._refuse(skey, batch)
        return Allocated(
            int(doc["last_seq"]),
            int(doc.get("pending", 0)),
            int(doc.get("unpromoted_tokens", 0)),
            doc.get("size_due_at") is not None,
        )

    def _create(self, skey: str, scope: Scope, session_id: str, agent_id: str | None, now: datetime) -> None:
        """Insert the session with zero counters, unless a racing first turn inserted it already."""
        try:
            self.coll.insert_one(
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

    def _refuse(self, skey: str, batch: NewBatch) -> NoReturn:
        """The session exists, so the filter missed because the token is already in the window or
        because the session belongs to another agent (a read only on this rare path)."""
        if batch.agent_id is not None:
            with translate_errors():
                held = self.coll.find_one({"_id": skey}, {"agent_id": 1})
            if held is not None and held.get("agent_id") != batch.agent_id:
                raise AgentConflict(held.get("agent_id"))
        raise TokenSeen(batch.client_token)

    def _allocate_existing(self, query: dict[str, Any], update: dict[str, Any]) -> dict[str, Any] | None:
        return self.coll.find_one_and_update(
            query, update, return_document=ReturnDocument.AFTER, projection=_COUNTERS
        )

    def mark_size_due(self, scope: Scope, session_id: str, at: datetime) -> None:
        with translate_errors():
            self.coll.update_one(
                {"_id": session_key(scope, session_id), "size_due_at": {"$exists": False}},
                {"$set": {"size_due_at": at}},
            )

    def clear_size_due(
        self, scope: Scope, session_id: str, max_messages: int, max_tokens: int | None
    ) -> None:
        query: dict[str, Any] = {"_id": session_key(scope, session_id), "pending": {"$lt": max_messages}}
        if max_tokens:
            query["unpromoted_tokens"] = {"$lt": max_tokens}
        with translate_errors():
            self.coll.update_one(query, {"$unset": {"size_due_at": ""}})

    def token_seen_at(self, scope: Scope, session_id: str, client_token: str) -> datetime | None:
        with translate_errors():
            doc = self.coll.find_one(
                {"_id": session_key(scope, session_id)}, {"tokens": {"$elemMatch": {"t": client_token}}}
            )
        if not doc or not doc.get("tokens"):
            return None
        return as_utc(doc["tokens"][0]["at"])

    # -- reading -------------------------------------------------------------------------------
    def get(self, scope: Scope, session_id: str) -> Session | None:
        with translate_errors():
            doc = self.coll.find_one({"_id": session_key(scope, session_id), **scope.filter()}, _HIDDEN)
        return _session(doc) if doc else None

    def user_sessions(
        self, scope: Scope, limit: int, before: tuple[datetime, str] | None = None
    ) -> list[Session]:
        query: dict[str, Any] = {**scope.filter()}
        if before is not None:
            at, session_id = before
            query["$or"] = [
                {"last_turn_at": {"$lt": at}},
                {"last_turn_at": at, "session_id": {"$lt": session_id}},
            ]
        with translate_errors():
            docs = list(
                self.coll.find(query, _HIDDEN)
                .sort([("last_turn_at", DESCENDING), ("session_id", DESCENDING)])
                .limit(limit)
            )
        return [_session(d) for d in docs]

    # -- promotion -----------------------------------------------------------------------------
    def claim_due(self, owner: str, now: datetime, lease_seconds: int) -> Session | None:
        # One probe per due rule, each read from that rule's partial index (hinted: SecantusDB plans
        # neither an $or of the rules nor the $exists a partial index implies), then the lease by
        # compare-and-set on _id: no findAndModify, whose write SecantusDB runs as a collection scan.
        # Keys examined grow with due (and leased) sessions only; see docs/benchmarks.md.
        rules: list[tuple[str, dict[str, Any]]] = [
            ("idle_due", {"idle_due_at": {"$lte": now}}),
            ("size_due", {"size_due_at": {"$lte": now}}),
        ]
        with translate_errors():
            for index, rule in rules:
                query = {**rule, **_free(now)}
                for _ in range(CLAIM_RACES):
                    found = self.coll.find_one(query, {"_id": 1}, hint=index)
                    if found is None:
                        break
                    doc = self._lease_if({"_id": found["_id"], **query}, owner, now, lease_seconds)
                    if doc is not None:
                        return _session(doc)
        return None

    def claim(
        self, scope: Scope, session_id: str, owner: str, now: datetime, lease_seconds: int
    ) -> Session | None:
        with translate_errors():
            doc = self._lease_if(
                {"_id": session_key(scope, session_id), **_free(now)}, owner, now, lease_seconds
            )
        return _session(doc) if doc else None

    def _lease_if(
        self, query: dict[str, Any], owner: str, now: datetime, lease_seconds: int
    ) -> dict[str, Any] | None:
        """Lease the session `query` (which pins its _id) still matches; its document, or None."""
        if self.coll.update_one(query, _lease(owner, now, lease_seconds)).modified_count != 1:
            return None
        return self.coll.find_one({"_id": query["_id"], "lease_owner": owner}, _HIDDEN)

    def release(self, scope: Scope, session_id: str, owner: str) -> None:
        with translate_errors():
            self.coll.update_one(
                {"_id": session_key(scope, session_id), "lease_owner": owner},
                {"$unset": {"lease_until": "", "lease_owner": ""}},
            )

    def advance(self, scope: Scope, session_id: str, snapshot: StoredSnapshot) -> Session | None:
        skey = session_key(scope, session_id)
        size = snapshot.to_seq - snapshot.from_seq + 1
        with translate_errors():
            # compare-and-set, then a read by _id (not findAndModify: see claim_due)
            moved = self.coll.update_one(
                {"_id": skey, "promoted_through_seq": snapshot.from_seq - 1},
                {
                    "$set": {"promoted_through_seq": snapshot.to_seq},
                    "$inc": {"pending": -size, "unpromoted_tokens": -snapshot.tokens},
                },
            )
            if moved.modified_count != 1:
                return None
            doc = self.coll.find_one({"_id": skey}, _HIDDEN)
            if doc is not None and doc["pending"] <= 0:
                # Fully promoted: leave the idle index. A record racing in between sets pending > 0
                # again, so the filter keeps its fresh idle_due_at.
                self.coll.update_one(
                    {"_id": skey, "pending": {"$lte": 0}},
                    {"$unset": {"idle_due_at": "", "size_due_at": ""}, "$set": {"unpromoted_tokens": 0}},
                )
                doc.pop("idle_due_at", None)
                doc.pop("size_due_at", None)
        return _session(doc) if doc else None

    def forget_deleted(
        self, scope: Scope, session_id: str, tokens: int, deleted: tuple[int, int] | None
    ) -> None:
        update: dict[str, Any] = {"$inc": {"unpromoted_tokens": -tokens}}
        if deleted is not None:
            # Promotion steps over these seqs at once instead of waiting for a writer (hole grace).
            update["$push"] = {"deleted_ranges": {"$each": [list(deleted)], "$slice": -DELETED_RANGES}}
        with translate_errors():
            self.coll.update_one({"_id": session_key(scope, session_id)}, update)

    # -- threads -------------------------------------------------------------------------------
    def create_copy(self, scope: Scope, session_id: str, source: Session, now: datetime) -> bool:
        doc: dict[str, Any] = {
            "_id": session_key(scope, session_id),
            **scope.filter(),
            "session_id": session_id,
            "agent_id": source.agent_id,
            "created_at": now,
            "last_turn_at": source.last_turn_at or now,
            "last_seq": source.last_seq,
            "pending": 0,
            "promoted_through_seq": source.last_seq,
            "unpromoted_tokens": 0,
        }
        try:
            with translate_errors():
                self.coll.insert_one(doc)
        except DuplicateKeyError:
            return False
        return True

    def delete(self, scope: Scope, session_id: str) -> bool:
        with translate_errors():
            result = self.coll.delete_one({"_id": session_key(scope, session_id), **scope.filter()})
        return bool(result.deleted_count)
