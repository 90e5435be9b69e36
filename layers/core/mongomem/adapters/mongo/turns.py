"""Turns (`turns`): one document per (tenant, user_id, session_id, seq), `_id` "tenant|user|session#seq".

A turn with a client token carries `client_token`, `batch_index` and `batch_size`; the unique index
TOKEN_INDEX on (session, client_token, batch_index) makes a token record its batch once, however late
the retry comes. `recall_indexed: false` queues a turn for the recall indexer (a partial index).
"""

from __future__ import annotations

import logging
from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel
from pymongo.collection import Collection
from pymongo.errors import BulkWriteError, OperationFailure

from mongomem.adapters.mongo.driver import DUPLICATE_KEY, MongoDatabase, translate_errors, unavailable
from mongomem.adapters.mongo.ids import turn_key
from mongomem.models.common import Scope, as_utc
from mongomem.models.sessions import StoredSnapshot
from mongomem.models.turns import DeletedTurns, NewTurn, RecallLane, RecallState, StoredBatch, Turn
from mongomem.shortterm.ports import TOKEN_WINDOW

COLLECTION = "turns"
# in_ranges fetches ranges up to this many seqs by id in one query (wider ones with a query per range)
MAX_KEYS_PER_FETCH = 1000
TOKEN_INDEX = "session_client_token_once"
RECALL_QUEUE_INDEX = "recall_lanes"
# The recall queue's index before lanes (docs/adr/0053-fair-recall-indexing.md): oldest first of everyone.
OBSOLETE_INDEXES = frozenset({"recall_unindexed"})
_LANE_ORDER = [("recall_indexed", ASCENDING), ("tenant", ASCENDING), ("user_id", ASCENDING)]
# Optional fields a document carries only when set.
_OPTIONAL = (
    "tool_calls",
    "tool_call_id",
    "name",
    "metadata",
    "client_token",
    "batch_index",
    "batch_size",
    "import_key",
)


def _doc(scope: Scope, session_id: str, turn: NewTurn) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "_id": turn_key(scope, session_id, turn.seq),
        "tenant": scope.tenant,
        "user_id": scope.user_id,
        "session_id": session_id,
        "seq": turn.seq,
        "role": turn.role,
        "content": turn.content,
        "timestamp": turn.timestamp,
        "recorded_at": turn.recorded_at,
        "tokens": turn.tokens,
    }
    for name in _OPTIONAL:
        value = getattr(turn, name)
        if value is not None:
            doc[name] = value
    if turn.recall_indexed is not None:
        doc["recall_indexed"] = turn.recall_indexed
    return doc


def _turn(doc: dict[str, Any]) -> Turn:
    return Turn.model_construct(
        id=doc["_id"],
        tenant=doc["tenant"],
        user_id=doc["user_id"],
        session_id=doc["session_id"],
        seq=doc["seq"],
        role=doc["role"],
        content=doc.get("content", ""),
        timestamp=as_utc(doc["timestamp"]),
        recorded_at=as_utc(doc.get("recorded_at") or doc["timestamp"]),
        tokens=doc.get("tokens", 0),
        tool_calls=doc.get("tool_calls"),
        tool_call_id=doc.get("tool_call_id"),
        name=doc.get("name"),
        metadata=doc.get("metadata"),
        client_token=doc.get("client_token"),
        batch_index=doc.get("batch_index"),
        batch_size=doc.get("batch_size"),
        recall_indexed=doc.get("recall_indexed"),
        import_key=doc.get("import_key"),
        snapshot_id=doc.get("snapshot_id"),
        recall_ctx_next=doc.get("recall_ctx_next"),
        recall_attempts=int(doc.get("recall_attempts", 0)),
    )


def _token_collision(error: dict[str, Any]) -> bool:
    if error.get("code") != DUPLICATE_KEY:
        return False
    pattern = error.get("keyPattern")
    if isinstance(pattern, dict):
        return "client_token" in pattern
    return TOKEN_INDEX in str(error.get("errmsg", ""))


class MongoTurnRepository:
    """Implements shortterm.ports.TurnRepository."""

    def __init__(self, database: MongoDatabase) -> None:
        self.database = database
        self.coll: Collection[dict[str, Any]] = database.db[COLLECTION]

    def ensure_indexes(self) -> None:
        self.database.ensure_once(COLLECTION, self._create_indexes)

    def _create_indexes(self) -> None:
        with translate_errors():
            self.coll.create_indexes(
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
                    # The recall indexer's queue: only turns still waiting to be embedded, one lane per
                    # user (the indexer serves lanes in turn), oldest first within a lane.
                    IndexModel(
                        [
                            ("recall_indexed", ASCENDING),
                            ("tenant", ASCENDING),
                            ("user_id", ASCENDING),
                            ("recorded_at", ASCENDING),
                            ("seq", ASCENDING),
                        ],
                        name=RECALL_QUEUE_INDEX,
                        partialFilterExpression={"recall_indexed": False},
                    ),
                ]
            )
            self._ensure_token_index()
            present = {ix["name"] for ix in self.coll.list_indexes()}
            for obsolete in OBSOLETE_INDEXES & present:
                self.coll.drop_index(obsolete)

    def _ensure_token_index(self) -> None:
        """A client token records its batch once, however long after the retry comes (docs/adr/README.md).

        A database written before this index existed may hold a batch recorded twice under one token;
        the index cannot be built then, and recording goes on without it (logged, never a failed request).
        """
        try:
            self.coll.create_index(
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
    def insert_new(self, scope: Scope, session_id: str, turns: list[NewTurn]) -> bool:
        # Ordered, so the batch's first turn decides: if the token's turn 0 exists, nothing is inserted.
        docs = [_doc(scope, session_id, t) for t in turns]
        with translate_errors():
            try:
                self.coll.insert_many(docs, ordered=True)
            except BulkWriteError as exc:
                errors = exc.details.get("writeErrors", [])
                if errors and all(_token_collision(e) for e in errors):
                    return False
                if any(e.get("code") == DUPLICATE_KEY for e in errors):
                    # Fresh seqs that already exist: never acknowledge them for this batch.
                    raise unavailable() from exc
                raise
        return True

    def insert_missing(self, scope: Scope, session_id: str, turns: list[NewTurn]) -> None:
        # re-inserting an existing (session, seq) is a no-op: this is an idempotent repair
        docs = [_doc(scope, session_id, t) for t in turns]
        with translate_errors():
            try:
                self.coll.insert_many(docs, ordered=False)
            except BulkWriteError as exc:
                others = [e for e in exc.details.get("writeErrors", []) if e.get("code") != DUPLICATE_KEY]
                if others or exc.details.get("writeConcernErrors"):
                    raise

    def token_batch(self, scope: Scope, session_id: str, client_token: str) -> StoredBatch | None:
        query = {**scope.filter(), "session_id": session_id, "client_token": client_token}
        with translate_errors():
            docs = list(self.coll.find(query, {"seq": 1, "batch_index": 1, "batch_size": 1}).sort("seq", 1))
        if not docs:
            return None
        first = docs[0]
        return StoredBatch(
            first_seq=first["seq"] - first.get("batch_index", 0),
            size=first.get("batch_size"),
            stored=len(docs),
        )

    def import_keys(self, scope: Scope, session_id: str) -> set[str]:
        query = {**scope.filter(), "session_id": session_id, "import_key": {"$exists": True}}
        with translate_errors():
            return {d["import_key"] for d in self.coll.find(query, {"_id": 0, "import_key": 1})}

    # -- reading -------------------------------------------------------------------------------
    def latest(self, scope: Scope, session_id: str, limit: int, before_seq: int | None = None) -> list[Turn]:
        query: dict[str, Any] = {**scope.filter(), "session_id": session_id}
        if before_seq is not None:
            query["seq"] = {"$lt": before_seq}
        with translate_errors():
            docs = list(self.coll.find(query).sort("seq", DESCENDING).limit(limit))
        docs.reverse()
        return [_turn(d) for d in docs]

    def in_range(self, scope: Scope, session_id: str, from_seq: int, to_seq: int) -> list[Turn]:
        query = {**scope.filter(), "session_id": session_id, "seq": {"$gte": from_seq, "$lte": to_seq}}
        with translate_errors():
            return [_turn(d) for d in self.coll.find(query).sort("seq", ASCENDING)]

    def present_seqs(
        self, scope: Scope, session_id: str, from_seq: int, to_seq: int
    ) -> list[tuple[int, int]]:
        query = {**scope.filter(), "session_id": session_id, "seq": {"$gte": from_seq, "$lte": to_seq}}
        with translate_errors():
            cursor = self.coll.find(query, {"_id": 0, "seq": 1, "tokens": 1}).sort("seq", ASCENDING)
            return [(d["seq"], d.get("tokens", 0)) for d in cursor]

    def in_ranges(self, scope: Scope, ranges: list[tuple[str, int, int]]) -> list[Turn]:
        if not ranges:
            return []
        seqs = sum(hi - lo + 1 for _, lo, hi in ranges)
        with translate_errors():
            if seqs <= MAX_KEYS_PER_FETCH:
                # One fetch by the turns' own ids (the _id index). An $or of per-session ranges is one
                # round trip too, but SecantusDB answers it with a collection scan (1.3 s at 5,000 turns).
                keys = sorted({turn_key(scope, s, q) for s, lo, hi in ranges for q in range(lo, hi + 1)})
                docs = list(self.coll.find({"_id": {"$in": keys}, **scope.filter()}))
            else:  # wide ranges (the recall indexer's batches): one indexed range read per range
                docs = [
                    d
                    for s, lo, hi in ranges
                    for d in self.coll.find(
                        {**scope.filter(), "session_id": s, "seq": {"$gte": lo, "$lte": hi}}
                    )
                ]
        unique = {d["_id"]: d for d in docs}  # overlapping ranges return a turn once
        ordered = sorted(unique.values(), key=lambda d: (d["session_id"], d["seq"]))
        return [_turn(d) for d in ordered]

    def by_ids(self, scope: Scope, ids: list[str]) -> list[Turn]:
        if not ids:
            return []
        with translate_errors():
            return [_turn(d) for d in self.coll.find({"_id": {"$in": ids}, **scope.filter()})]

    # -- deleting and promotion ----------------------------------------------------------------
    def delete_from(self, scope: Scope, session_id: str, from_seq: int | None) -> DeletedTurns:
        query: dict[str, Any] = {**scope.filter(), "session_id": session_id}
        if from_seq is not None:
            query["seq"] = {"$gte": from_seq}
        with translate_errors():
            doomed = list(self.coll.find(query, {"_id": 0, "seq": 1, "tokens": 1}))
            deleted = self.coll.delete_many(query).deleted_count
        return DeletedTurns(deleted=int(deleted), seqs=sorted((d["seq"], d.get("tokens", 0)) for d in doomed))

    def delete_of_snapshot(self, snapshot: StoredSnapshot) -> list[Turn]:
        query = {
            "tenant": snapshot.tenant,
            "user_id": snapshot.user_id,
            "session_id": snapshot.session_id,
            "snapshot_id": snapshot.snapshot_id,
        }
        with translate_errors():
            found = [_turn(d) for d in self.coll.find(query)]
            if found:
                self.coll.delete_many({**query, "_id": {"$in": [t.id for t in found]}})
        return found

    def tag_snapshot(self, snapshot: StoredSnapshot) -> None:
        query = {
            "tenant": snapshot.tenant,
            "user_id": snapshot.user_id,
            "session_id": snapshot.session_id,
            "seq": {"$gte": snapshot.from_seq, "$lte": snapshot.to_seq},
        }
        with translate_errors():
            self.coll.update_many(query, {"$set": {"snapshot_id": snapshot.snapshot_id}})

    # -- semantic recall -----------------------------------------------------------------------
    def recall_lanes(self, limit: int) -> list[RecallLane]:
        """One aggregate over the queue's index keys (the lane index is sorted by user, then age: the
        first key of each user is its oldest turn)."""
        pipeline: list[dict[str, Any]] = [
            {"$match": {"recall_indexed": False}},
            {"$sort": dict([*_LANE_ORDER, ("recorded_at", ASCENDING), ("seq", ASCENDING)])},
            {
                "$group": {
                    "_id": {"tenant": "$tenant", "user_id": "$user_id"},
                    "oldest": {"$first": "$recorded_at"},
                }
            },
            {"$sort": {"oldest": ASCENDING, "_id.tenant": ASCENDING, "_id.user_id": ASCENDING}},
            {"$limit": limit},
        ]
        with translate_errors():
            rows = list(self.coll.aggregate(pipeline, hint=RECALL_QUEUE_INDEX))
        return [
            RecallLane(tenant=r["_id"]["tenant"], user_id=r["_id"]["user_id"], oldest=as_utc(r["oldest"]))
            for r in rows
        ]

    def unindexed(
        self, limit: int, scope: Scope | None = None, exclude: list[str] | None = None
    ) -> list[Turn]:
        query: dict[str, Any] = {"recall_indexed": False}
        if exclude:  # the lane's turns already in the batch being built: its first keys, skipped
            query["_id"] = {"$nin": exclude}
        order = [("recorded_at", ASCENDING), ("seq", ASCENDING)]
        if scope is not None:  # one lane: an equality prefix of the lane index, then its order
            query.update(tenant=scope.tenant, user_id=scope.user_id)
            order = [*_LANE_ORDER, *order]
        with translate_errors():
            cursor = self.coll.find(query).sort(order).limit(limit)
            if scope is not None:
                cursor = cursor.hint(RECALL_QUEUE_INDEX)
            return [_turn(d) for d in cursor]

    def set_recall_state(
        self, ids: list[str], indexed: RecallState | None = None, ctx_next: bool | None = None
    ) -> None:
        fields: dict[str, Any] = {}
        if indexed is not None:
            fields["recall_indexed"] = indexed
        if ctx_next is not None:
            fields["recall_ctx_next"] = ctx_next
        if not ids or not fields:
            return
        with translate_errors():
            self.coll.update_many({"_id": {"$in": ids}}, {"$set": fields})

    def note_recall_failure(self, ids: list[str], error: str) -> None:
        if not ids:
            return
        with translate_errors():
            self.coll.update_many(
                {"_id": {"$in": ids}}, {"$set": {"recall_error": error}, "$inc": {"recall_attempts": 1}}
            )

    def requeue_recall(self) -> int:
        with translate_errors():
            result = self.coll.update_many(
                {"recall_indexed": {"$in": [True, "failed"]}},
                {
                    "$set": {"recall_indexed": False, "recall_ctx_next": False},
                    "$unset": {"recall_attempts": ""},
                },
            )
        return int(result.modified_count)
