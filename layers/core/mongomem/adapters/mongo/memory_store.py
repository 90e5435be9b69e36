"""MongoDB adapter for long-term memories (MemoryRepository): one document per version, scoped by
(tenant, user_id); a tenant's org memories have the user_id ORG_OWNER. Documents become `MemoryRecord`s
here and nowhere else. Documents from before scopes have no visibility/agent_id: they read as private
and shared by the user's agents (`agent_id: null` matches a missing field)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument, UpdateOne
from pymongo.collection import Collection
from pymongo.database import Database
from pymongo.errors import DuplicateKeyError

from mongomem.adapters.mongo.driver import translate_errors, update_and_read
from mongomem.adapters.mongo.erasure import FEEDBACK_COLLECTION
from mongomem.models.common import Scope, as_utc, utcnow
from mongomem.models.memory import (
    ORG_OWNER,
    DecisionRecord,
    EvidenceRef,
    MemoryFilter,
    MemoryRecord,
    MemoryView,
    ObservedRange,
    PayloadFilter,
)

_USE_FIELD = {"success": "usage.successes", "failure": "usage.failures"}


def read_filter(target: Scope | MemoryView) -> dict[str, Any]:
    """One scope's documents, or a view's: the user's private ones (of one agent and the shared ones,
    when it names one) and the tenant's org ones."""
    if isinstance(target, Scope):
        return target.filter()
    owners = target.owners()
    query: dict[str, Any] = {
        "tenant": target.tenant,
        "user_id": owners[0] if len(owners) == 1 else {"$in": owners},
    }
    if target.agent_id is not None:
        query["agent_id"] = {"$in": [target.agent_id, None]}
    return query


def unexpired() -> dict[str, Any]:
    """Memories whose `expires_at` has not passed: expired means gone from every read, not only once
    MongoDB's TTL monitor (a 60 s period) deleted it. Matches documents without the field too."""
    return {"expires_at": {"$not": {"$lte": utcnow()}}}


def backed() -> dict[str, Any]:
    """Proposals with a statement behind them whose own expiry has not passed (`EvidenceRef.until`): one
    no statement backs any more is expired too (`MemoryRecord.live`)."""
    return {"evidence": {"$elemMatch": {"until": {"$not": {"$lte": utcnow()}}}}}


def live_by_id() -> dict[str, Any]:
    """`unexpired()` and, of a proposal, `backed()`: for reads by id (a point lookup on SecantusDB whatever
    else the filter names; elsewhere an `$or` walks the whole collection)."""
    return {**unexpired(), "$or": [{"status": {"$ne": "proposed"}}, backed()]}


def _uncounted(evidence: EvidenceRef) -> dict[str, Any]:
    """An evidence entry pushed without adding to reinforcement_count (`EvidenceRef.counted`)."""
    return {**_evidence_doc(evidence), "counted": False}


def _evidence_doc(evidence: EvidenceRef) -> dict[str, Any]:
    """An evidence entry as stored: its answered fields, and `said_keyed` where it holds (stored only)."""
    return {**evidence.model_dump(), **({"said_keyed": True} if evidence.said_keyed else {})}


def to_record(doc: dict[str, Any]) -> MemoryRecord:
    embedding = doc.get("embedding") or {}
    data = {k: v for k, v in doc.items() if k not in ("_id", "embedding")}
    for field in ("created_at", "updated_at", "last_reinforced_at", "expires_at", "observed_at"):
        if data.get(field) is not None:
            data[field] = as_utc(data[field])
    if (data.get("usage") or {}).get("last_used_at") is not None:
        data["usage"] = {**data["usage"], "last_used_at": as_utc(data["usage"]["last_used_at"])}
    data["decisions"] = [{**d, "at": as_utc(d["at"])} for d in doc.get("decisions") or []]
    data["evidence"] = [
        {**e, **{f: as_utc(e[f]) for f in ("observed_at", "until") if e.get(f) is not None}}
        for e in doc.get("evidence") or []
    ]
    return MemoryRecord(
        memory_id=doc["_id"],
        embedding_model=embedding.get("model"),
        embedding_dim=embedding.get("dim"),
        **data,
    )


def to_doc(record: MemoryRecord) -> dict[str, Any]:
    data = record.model_dump(exclude={"memory_id", "embedding_model", "embedding_dim"})
    data["evidence"] = [_evidence_doc(e) for e in record.evidence]
    if data.get("usage") is None:
        data.pop("usage", None)  # set by the first feedback (an embedded document, incremented in place)
    dim = record.embedding_dim or (len(record.vector) if record.vector else None)
    return {"_id": record.memory_id, **data, "embedding": {"model": record.embedding_model, "dim": dim}}


class MemoryStore:
    def __init__(self, db: Database[dict[str, Any]]) -> None:
        self.coll: Collection[dict[str, Any]] = db["memories"]
        # one document per (procedure version, user, window): what each user reported
        self.feedback: Collection[dict[str, Any]] = db[FEEDBACK_COLLECTION]

    def ensure_indexes(self) -> None:
        with translate_errors():
            self.feedback.create_indexes(
                [IndexModel([("tenant", ASCENDING), ("user_id", ASCENDING)], name="feedback_user")]
            )
            self.coll.create_indexes(
                [
                    IndexModel(
                        [
                            ("tenant", ASCENDING),
                            ("user_id", ASCENDING),
                            ("type", ASCENDING),
                            ("key", ASCENDING),
                            ("status", ASCENDING),
                        ],
                        name="scope_type_key",
                    ),
                    IndexModel(
                        [
                            ("tenant", ASCENDING),
                            ("user_id", ASCENDING),
                            ("lineage_id", ASCENDING),
                            ("version", ASCENDING),
                        ],
                        name="lineage_version",
                        unique=True,
                    ),
                    IndexModel(
                        [
                            ("tenant", ASCENDING),
                            ("user_id", ASCENDING),
                            ("status", ASCENDING),
                            ("created_at", DESCENDING),
                        ],
                        name="scope_status_created",
                    ),
                    IndexModel(
                        [("index_state", ASCENDING), ("updated_at", ASCENDING)],
                        name="index_outbox",
                        partialFilterExpression={"index_state": "pending"},
                    ),
                    # which embedding models the stored vectors come from (status), without a scan
                    IndexModel(
                        [("embedding.model", ASCENDING), ("embedding.dim", ASCENDING)],
                        name="memory_embedding",
                    ),
                ]
            )

    # -- writes --------------------------------------------------------------------------------
    def insert(self, record: MemoryRecord) -> bool:
        """Insert a version; False when that exact version exists already (a redelivery)."""
        with translate_errors():
            try:
                self.coll.insert_one(to_doc(record))
                return True
            except DuplicateKeyError:
                return False

    def supersede(self, scope: Scope, old_id: str, new_id: str, at: datetime) -> bool:
        with translate_errors():
            done = self.coll.update_one(
                {"_id": old_id, **scope.filter(), "status": "active"},
                {
                    "$set": {
                        "status": "superseded",
                        "superseded_by": new_id,
                        "valid_to": at.isoformat(),
                        "updated_at": at,
                        "index_state": "pending",
                    }
                },
            )
        return done.matched_count == 1

    def repair_lineage(
        self, scope: Scope, lineage_id: str, newest_version: int, newest_id: str, at: datetime
    ) -> None:
        """Supersede older active versions left by a crash between insert and supersede."""
        with translate_errors():
            self.coll.update_many(
                {
                    **scope.filter(),
                    "lineage_id": lineage_id,
                    "status": "active",
                    "version": {"$lt": newest_version},
                },
                {
                    "$set": {
                        "status": "superseded",
                        "superseded_by": newest_id,
                        "updated_at": at,
                        "index_state": "pending",
                    }
                },
            )

    def reinforce(
        self,
        scope: Scope,
        memory_id: str,
        evidence: EvidenceRef,
        decision: DecisionRecord,
        at: datetime,
        *,
        merged_payload: dict[str, Any] | None = None,
        merged_text: str | None = None,
        status: str = "active",
        earliest: bool = True,
        restated: Mapping[str, Any] | None = None,
    ) -> MemoryRecord | None:
        """Count a restatement once per snapshot: +1, evidence and decision appended, fields merged; an
        earlier observation moves observed_at back (it is the first time the memory was stated), unless
        not `earliest`. Shared memory counts one user once: a user (not the tenant) already among its
        evidence is not counted again (None), unless the restatement merges additions, which are kept
        with their evidence (their words) and not counted."""
        query: dict[str, Any] = {"_id": memory_id, **scope.filter(), "status": status}
        if evidence.snapshot_id:
            query["evidence.snapshot_id"] = {"$ne": evidence.snapshot_id}
        update: dict[str, Any] = {
            "$inc": {"reinforcement_count": 1},
            # index_state: the index holds the count too (search ranks by it), re-written after this
            "$set": {"last_reinforced_at": at, "updated_at": at, "index_state": "pending"},
            "$push": {"evidence": _evidence_doc(evidence), "decisions": decision.model_dump()},
        }
        if evidence.observed_at is not None and earliest:
            update["$min"] = {"observed_at": min(evidence.observed_at, at)}
        if merged_payload is not None:
            update["$set"].update(payload=merged_payload, text=merged_text)
        update["$set"].update(restated or {})
        once = scope.user_id == ORG_OWNER and bool(evidence.user_id) and not evidence.tenant_wide
        counted = {"$not": {"$elemMatch": {"user_id": evidence.user_id, "tenant_wide": {"$ne": True}}}}
        with translate_errors():
            doc = update_and_read(self.coll, {**query, "evidence": counted} if once else query, update)
            if doc is None and once and merged_payload is not None:
                # the user counted already: their additions merge, with the words they said, uncounted
                del update["$inc"]
                update["$push"]["evidence"] = _uncounted(evidence)
                doc = update_and_read(self.coll, query, update)
        return to_record(doc) if doc else None

    def retract(
        self, scope: Scope, memory_id: str, evidence: EvidenceRef, decision: DecisionRecord, at: datetime
    ) -> MemoryRecord | None:
        update: dict[str, Any] = {
            "$set": {
                "status": "superseded",
                "valid_to": at.isoformat(),
                "updated_at": at,
                "index_state": "pending",
            },
            "$push": {"evidence": _uncounted(evidence), "decisions": decision.model_dump()},
        }
        with translate_errors():
            doc = update_and_read(self.coll, {"_id": memory_id, **scope.filter(), "status": "active"}, update)
        return to_record(doc) if doc else None

    def activate(
        self,
        scope: Scope,
        memory_id: str,
        supersedes: str,
        decision: DecisionRecord,
        at: datetime,
        payload: dict[str, Any],
        text: str,
        carried: dict[str, Any],
    ) -> MemoryRecord | None:
        update = {
            "$set": {
                **carried,
                "status": "active",
                "supersedes": supersedes,
                "payload": payload,
                "text": text,
                "updated_at": at,
                "index_state": "pending",
            },
            "$push": {"decisions": decision.model_dump()},
        }
        with translate_errors():
            doc = update_and_read(
                self.coll, {"_id": memory_id, **scope.filter(), "status": "proposed"}, update
            )
        return to_record(doc) if doc else None

    def withdraw(self, scope: Scope, memory_id: str, at: datetime) -> None:
        with translate_errors():
            self.coll.update_one(
                {"_id": memory_id, **scope.filter(), "status": "active"},
                {
                    "$set": {"status": "proposed", "updated_at": at, "index_state": "pending"},
                    "$unset": {"supersedes": ""},
                    "$pop": {"decisions": 1},
                },
            )

    def drop_proposals(self, scope: Scope, user_id: str, ids: list[str]) -> list[str]:
        if not ids:
            return []
        # only the user's own: a proposal another user (or the tenant) backed meanwhile stays
        query = {
            "_id": {"$in": ids},
            **scope.filter(),
            "status": "proposed",
            "evidence": {"$not": {"$elemMatch": {"user_id": {"$ne": user_id}}}},
            "evidence.tenant_wide": {"$ne": True},
        }
        with translate_errors():
            found = [str(d["_id"]) for d in self.coll.find(query, {"_id": 1})]
            # one by one: a proposal another user backed between the read and the delete stays, unreported
            return [i for i in found if self.coll.delete_one({**query, "_id": i}).deleted_count]

    def record_use(
        self, scope: Scope, memory_id: str, user_id: str, window: str, outcome: str, at: datetime
    ) -> tuple[MemoryRecord | None, bool]:
        """Count a user's use of an active version once per window (a later report in the window
        replaces the earlier one). The user's reports live in `procedure_feedback` (tenant, user_id:
        erased with the user, whose counts erasure takes back)."""
        key = f"{scope.tenant}|{memory_id}|{user_id}|{window}"
        report = {"tenant": scope.tenant, "user_id": user_id, "memory_id": memory_id, "window": window}
        with translate_errors():
            before = self.feedback.find_one_and_update(
                {"_id": key},
                {"$set": {**report, "outcome": outcome, "at": at}},
                upsert=True,
                return_document=ReturnDocument.BEFORE,
            )
            previous = (before or {}).get("outcome")
            inc: dict[str, int] = {}
            if previous != outcome:
                inc[_USE_FIELD[outcome]] = 1
                if previous in _USE_FIELD:
                    inc[_USE_FIELD[previous]] = -1
            update: dict[str, Any] = {
                "$max": {"usage.last_used_at": at},
                "$set": {"usage.last_outcome": outcome},
            }
            if inc:
                update["$inc"] = inc
            doc = update_and_read(self.coll, {"_id": memory_id, **scope.filter(), "status": "active"}, update)
            if doc is None:  # replaced or deleted meanwhile: the report does not stand
                if before is None:
                    self.feedback.delete_one({"_id": key})
                else:
                    self.feedback.replace_one({"_id": key}, {k: v for k, v in before.items() if k != "_id"})
                return None, False
        return to_record(doc), bool(inc)

    def set_index_state(self, ids: list[str], state: str, at: datetime) -> None:
        if not ids:
            return
        with translate_errors():
            self.coll.update_many({"_id": {"$in": ids}}, {"$set": {"index_state": state, "indexed_at": at}})

    def delete_lineage(self, scope: Scope, lineage_id: str, at: datetime) -> int:
        with translate_errors():
            result = self.coll.update_many(
                {**scope.filter(), "lineage_id": lineage_id, "status": {"$ne": "deleted"}},
                {
                    "$set": {
                        "status": "deleted",
                        "deleted_at": at,
                        "updated_at": at,
                        "index_state": "pending",
                    },
                    # a deleted version is never searched: its vector (a trace of the text) goes with it
                    "$unset": {"vector": "", "embedding": ""},
                },
            )
        return int(result.modified_count)

    # -- reads ---------------------------------------------------------------------------------
    def get(self, scope: Scope | MemoryView, memory_id: str) -> MemoryRecord | None:
        with translate_errors():
            doc = self.coll.find_one({"_id": memory_id, **read_filter(scope), **live_by_id()})
        return to_record(doc) if doc else None

    def get_many(self, scope: Scope | MemoryView, ids: list[str]) -> list[MemoryRecord]:
        if not ids:
            return []
        with translate_errors():
            # a filter naming _id is a point lookup on SecantusDB whatever else it names
            found = self.coll.find({"_id": {"$in": ids}, **read_filter(scope), **live_by_id()})
            return [to_record(d) for d in found]

    def active_by_key(
        self, scope: Scope, kind: str, key: str, agent_id: str | None = None
    ) -> list[MemoryRecord]:
        """Active versions of the key in one agent's part of the scope (None: the part shared by agents)."""
        found = [r for r in self.by_keys(scope, kind, [key], None) if r.agent_id == agent_id]
        return sorted(found, key=lambda r: -r.version)

    def active_names(self, scope: Scope, kind: str, fields: list[str]) -> list[tuple[str, dict[str, Any]]]:
        # a prefix of the scope_type_key index (the scope and the type); the status is sorted out here
        query = {**scope.filter(), "type": kind}
        shown = {"key": 1, "status": 1, **{f"payload.{f}": 1 for f in fields}}
        with translate_errors():
            docs = list(self.coll.find(query, shown))
        return [
            (str(d["key"]), {f: (d.get("payload") or {}).get(f) for f in fields})
            for d in docs
            if d.get("status") == "active"
        ]

    def with_evidence(self, scope: Scope, kind: str, key: str, snapshot_id: str) -> MemoryRecord | None:
        """A version of this key that already holds this snapshot's evidence (redelivery check)."""
        held = [
            r
            for r in self.by_keys(scope, kind, [key], snapshot_id)
            if any(e.snapshot_id == snapshot_id for e in r.evidence)
        ]
        return max(held, key=lambda r: r.version) if held else None

    def by_keys(
        self, scope: Scope, kind: str, keys: list[str], snapshot_id: str | None
    ) -> list[MemoryRecord]:
        if not keys:
            return []
        # Exactly the fields of the scope_type_key index: SecantusDB walks the whole collection when a
        # filter names one field more (agent_id, evidence.snapshot_id, an $or); the rest is sorted out
        # here, over the few versions one key has.
        query = {
            **scope.filter(),
            "type": kind,
            "key": keys[0] if len(keys) == 1 else {"$in": sorted(set(keys))},
        }
        with translate_errors():
            # whole documents: SecantusDB spends more on a projection than on returning the vector
            docs = list(self.coll.find(query))
        now = utcnow()  # an expired version is gone from the writer's reads too (until the TTL monitor runs)
        return [
            r
            for r in map(to_record, docs)
            if r.live(now)
            and (
                r.status == "active"
                or (snapshot_id is not None and any(e.snapshot_id == snapshot_id for e in r.evidence))
            )
        ]

    def lineage(self, scope: Scope, lineage_id: str) -> list[MemoryRecord]:
        with translate_errors():
            cursor = self.coll.find({**scope.filter(), "lineage_id": lineage_id}).sort("version", ASCENDING)
            return [to_record(d) for d in cursor]

    def list_page(
        self,
        scope: Scope | MemoryView,
        kind: str | None,
        status: str | None,
        limit: int,
        before: datetime | None,
        *,
        payload: PayloadFilter | None = None,
        observed: ObservedRange | None = None,
        filters: MemoryFilter | None = None,
    ) -> list[MemoryRecord]:
        query: dict[str, Any] = {**read_filter(scope), **unexpired()}
        if filters is not None:
            if filters.tags:
                query["payload.tags"] = {"$in": list(filters.tags)}
            if filters.domain is not None:
                query["payload.domain"] = filters.domain
            for key, value in filters.metadata.items():
                query[f"metadata.{key}"] = value
            if filters.snapshot_id is not None:
                # the viewer's own evidence only: a snapshot id is computable (a hash of the user and the
                # session), and another user's entry in an org memory must not answer whether they had that
                # session. A private memory's entries written before evidence named its user have none.
                viewer = scope.scope.user_id if isinstance(scope, MemoryView) else scope.user_id
                query["evidence"] = {
                    "$elemMatch": {"snapshot_id": filters.snapshot_id, "user_id": {"$in": [viewer, None]}}
                }
        if observed:
            query["observed_at"] = {
                **({"$gte": observed.after} if observed.after else {}),
                **({"$lt": observed.before} if observed.before else {}),
            }
        if kind:
            query["type"] = kind
        for field, value in (payload.exact if payload else {}).items():
            query[f"payload.{field}"] = value
        for field, prefix in (payload.prefix if payload else {}).items():
            # An anchored, escaped regex: a prefix match MongoDB answers from an index on the field.
            query.setdefault(f"payload.{field}", {"$regex": "^" + re.escape(prefix)})
        # pending proposals are listed only when asked for (status=proposed): nobody reads them by default
        query["status"] = status or {"$nin": ["deleted", "proposed"]}
        if status == "proposed":
            query["$and"] = [backed()]  # beside a snapshot's `evidence` filter
        if before is not None:
            query["created_at"] = {"$lt": before}
        with translate_errors():
            cursor = self.coll.find(query, {"vector": 0}).sort("created_at", DESCENDING).limit(limit)
            return [to_record(d) for d in cursor]

    def domains(self, tenant: str, user_id: str) -> list[tuple[str, int]]:
        """(domain, active taxonomic terms) of the user's and the org's terms, most terms first."""
        pipeline: list[dict[str, Any]] = [
            {
                "$match": {
                    "tenant": tenant,
                    "user_id": {"$in": [user_id, ORG_OWNER]},
                    "type": "taxonomic",
                    "status": "active",
                    "payload.domain": {"$type": "string"},
                    **unexpired(),
                }
            },
            {"$group": {"_id": "$payload.domain", "n": {"$sum": 1}}},
        ]
        with translate_errors():
            rows = list(self.coll.aggregate(pipeline))
        return sorted(((str(r["_id"]), int(r["n"])) for r in rows), key=lambda r: (-r[1], r[0]))

    def decisions_per_day(
        self, tenant: str, user_id: str | None, since: datetime
    ) -> list[tuple[str, str, int]]:
        """(UTC day "YYYY-MM-DD", decision, count) of the decisions recorded since `since`."""
        match: dict[str, Any] = {"tenant": tenant, "decisions.at": {"$gte": since}}
        if user_id is not None:
            match["user_id"] = user_id
        pipeline: list[dict[str, Any]] = [
            {"$match": match},
            {"$project": {"_id": 0, "decisions.at": 1, "decisions.decision": 1}},
            {"$unwind": "$decisions"},
            {"$match": {"decisions.at": {"$gte": since}}},
            {
                "$group": {
                    "_id": {
                        "day": {"$dateToString": {"format": "%Y-%m-%d", "date": "$decisions.at"}},
                        "decision": "$decisions.decision",
                    },
                    "n": {"$sum": 1},
                }
            },
        ]
        with translate_errors():
            rows = list(self.coll.aggregate(pipeline))
        return [(r["_id"]["day"], r["_id"]["decision"], int(r["n"])) for r in rows]

    def index_backlog(self, tenant: str, user_id: str | None) -> tuple[int, datetime | None]:
        """(versions waiting for the search index, when the oldest of them changed) of a tenant or user."""
        query: dict[str, Any] = {"index_state": "pending", "tenant": tenant}
        if user_id is not None:
            query["user_id"] = user_id
        with translate_errors():
            count = self.coll.count_documents(query)
            oldest = (
                self.coll.find_one(query, {"updated_at": 1}, sort=[("updated_at", ASCENDING)])
                if count
                else None
            )
        return count, (oldest or {}).get("updated_at")

    def pending_index(self, older_than: datetime, limit: int) -> list[MemoryRecord]:
        with translate_errors():
            cursor = self.coll.find({"index_state": "pending", "updated_at": {"$lte": older_than}}).limit(
                limit
            )
            return [to_record(d) for d in cursor]

    def shared_keys(self, tenant: str, user_id: str | None, limit: int) -> list[list[MemoryRecord]]:
        """Groups of active versions that share one owner, kind and key (at most `limit` groups)."""
        match: dict[str, Any] = {"tenant": tenant, "status": "active", **unexpired()}
        if user_id is not None:
            match["user_id"] = user_id
        pipeline: list[dict[str, Any]] = [
            {"$match": match},
            {
                "$group": {
                    "_id": {"u": "$user_id", "t": "$type", "k": "$key"},
                    "n": {"$sum": 1},
                    "ids": {"$push": "$_id"},
                }
            },
            {"$match": {"n": {"$gte": 2}}},
            {"$sort": {"_id.u": 1, "_id.t": 1, "_id.k": 1}},
            {"$limit": limit},
        ]
        with translate_errors():
            groups = [row["ids"] for row in self.coll.aggregate(pipeline)]
            ids = [i for g in groups for i in g]
            docs = (
                {d["_id"]: d for d in self.coll.find({"_id": {"$in": ids}, "tenant": tenant})} if ids else {}
            )
        return [[to_record(docs[i]) for i in g if i in docs] for g in groups]

    def all_versions(self, batch: int = 500) -> Iterator[MemoryRecord]:
        with translate_errors():
            for doc in self.coll.find({"status": {"$ne": "deleted"}}).batch_size(batch):
                yield to_record(doc)

    def embedding_models(self) -> set[tuple[str, int]]:
        found: set[tuple[str, int]] = set()
        with translate_errors():
            for model in self.coll.distinct("embedding.model"):
                if model is None:
                    continue
                for dim in self.coll.distinct("embedding.dim", {"embedding.model": model}):
                    if dim is not None:
                        found.add((str(model), int(dim)))
        return found

    @staticmethod
    def _otherwise(model: str, dim: int, tenant: str | None = None) -> dict[str, Any]:
        query: dict[str, Any] = {
            "status": {"$ne": "deleted"},
            "$nor": [{"embedding.model": model, "embedding.dim": dim}],
        }
        return {"tenant": tenant, **query} if tenant is not None else query

    def count_embedded_otherwise(self, model: str, dim: int, tenant: str | None = None) -> int:
        with translate_errors():
            return int(self.coll.count_documents(self._otherwise(model, dim, tenant)))

    def embedded_otherwise(self, model: str, dim: int, limit: int) -> list[MemoryRecord]:
        with translate_errors():
            return [to_record(d) for d in self.coll.find(self._otherwise(model, dim)).limit(limit)]

    def set_embeddings(self, vectors: list[tuple[str, list[float]]], model: str, at: datetime) -> None:
        if not vectors:
            return
        with translate_errors():
            self.coll.bulk_write(
                [
                    UpdateOne(
                        {"_id": memory_id},
                        {
                            "$set": {
                                "vector": vector,
                                "embedding": {"model": model, "dim": len(vector)},
                                "index_state": "pending",
                                "updated_at": at,
                            }
                        },
                    )
                    for memory_id, vector in vectors
                ],
                ordered=False,
            )

    def set_keys(self, keys: list[tuple[str, str]], at: datetime) -> None:
        if not keys:
            return
        with translate_errors():
            self.coll.bulk_write(
                [
                    UpdateOne({"_id": memory_id}, {"$set": {"key": key, "updated_at": at}})
                    for memory_id, key in keys
                ],
                ordered=False,
            )

    def forget_deleted_embeddings(self) -> int:
        with translate_errors():
            result = self.coll.update_many(
                {"status": "deleted", "embedding": {"$exists": True}},
                {"$unset": {"vector": "", "embedding": ""}},
            )
        return int(result.modified_count)
