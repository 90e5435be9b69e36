"""Retention and erasure across collections: TTL indexes, turn expiry, removing a user everywhere."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pymongo import ASCENDING, IndexModel

from mongomem.adapters.mongo.driver import MongoDatabase, translate_errors
from mongomem.adapters.mongo.ids import resource_key
from mongomem.erasure import LABELS, PendingSweep, TextOf, without_erased_words
from mongomem.models.common import Scope, as_utc
from mongomem.models.memory import ORG_OWNER, stated_words
from mongomem.models.sessions import StoredSnapshot

# A procedure's success/failure reports (adapters/mongo/memory_store.py writes them).
FEEDBACK_COLLECTION = "procedure_feedback"
# Collections erased by name, in this order: sessions first so the scanner cannot promote mid-erasure.
USER_COLLECTIONS = ("sessions", "snapshots", "turns", "memories", "threads", "resources", "observations")
# Never swept by scope: keys belong to the tenant, the local queue holds no scope fields.
NOT_USER_DATA = frozenset({"api_keys", "local_queue"})
LOCAL_QUEUE = "local_queue"
# Every user's last calls (adapters/mongo/recent_requests.py): erased by scope, and purged of what an
# erased user alone stated when another user was shown it.
REQUEST_LOGS = "recent_requests"
# Follow-up index sweeps of erased users (erasure.PendingSweep), run by index_sync when due.
SWEEPS = "erasure_sweeps"


def _without_user(
    doc: dict[str, Any], user_id: str, at: datetime, text_of: TextOf | None
) -> dict[str, object] | None:
    """The $set that takes one user's evidence out of an org memory version (with the decisions their
    snapshots made, the reinforcements they added and, with `text_of`, the words only they said); None
    when no other user's evidence is left. A tenant-wide entry naming the user is the tenant's backing
    (docs/adr/0073): it stays, without the user's id, and the version with it, its texts too; the labels
    only entries naming the user gave (an alias, a tag, a tool grant) still go with the user."""
    evidence = doc.get("evidence") or []
    named = [e for e in evidence if e.get("user_id") == user_id]
    mine = [e for e in named if not e.get("tenant_wide")]
    others = [e for e in evidence if e.get("user_id") != user_id]
    kept = [e for e in evidence if not _said_by(e, user_id)]
    if not kept:
        return None
    said = {e.get("snapshot_id") for e in mine if e.get("snapshot_id")}
    update: dict[str, object] = {
        "decisions": [d for d in doc.get("decisions") or [] if d.get("snapshot_id") not in said],
        # what the user's entries added: an entry merged or retracting uncounted added nothing
        "reinforcement_count": max(1, int(doc.get("reinforcement_count") or 1) - _added(mine)),
        "updated_at": at,
        "index_state": "pending",
    }
    # the first statement left, never earlier than the version's time: one user's word never moves an org
    # memory's time back (docs/adr/0072), and evidence may carry a time its user gave
    seen = [e["observed_at"] for e in kept if e.get("observed_at")]
    if seen:
        first = min(seen)
        current = doc.get("observed_at")
        update["observed_at"] = first if current is None or first > current else current
    payload = doc.get("payload") or {}
    # the tenant's entries naming the user: their labels go with the user, their texts are the tenant's
    tenants = [e.get("said") for e in named if e.get("tenant_wide")]
    words = without_erased_words(
        payload,
        [*(e.get("said") for e in mine), *(_part(w, labels=True) for w in tenants)],
        [*(e.get("said") for e in others), *(_part(w, labels=False) for w in tenants)],
        keyed=_keyed([*others, *(e for e in named if e.get("tenant_wide"))]),
    )
    if words is not None and text_of is not None:
        try:
            update.update(payload=words, text=text_of(str(doc.get("type")), words))
            payload = words
        except KeyError:  # a custom type no longer declared: its payload stays as it is
            pass
    update["evidence"] = [_tenants(e, payload) if e.get("user_id") == user_id else e for e in kept]
    return update


def _added(entries: list[dict[str, Any]]) -> int:
    """How much the evidence entries added to a memory's reinforcement_count (`EvidenceRef.counted`)."""
    return sum(1 for e in entries if e.get("counted", True))


def _keyed(entries: list[dict[str, Any]]) -> bool:
    """Every entry recorded the mappings it stated per key (`EvidenceRef.said_keyed`): one stored before
    may have said a qualifier it does not name, so no mapping entry is taken out while it backs the memory."""
    return all(e.get("said_keyed") for e in entries)


def _part(said: dict[str, list[str]] | None, *, labels: bool) -> dict[str, list[str]] | None:
    """An entry's words of the label fields (`erasure.LABELS`: aliases, tags, tool grants ...), or of
    its other fields (texts, and lists that are the value itself: a procedure's steps)."""
    if said is None:
        return None
    return {name: texts for name, texts in said.items() if (name in LABELS) == labels}


def _said_by(evidence: dict[str, Any], user_id: str) -> bool:
    """The entry is the user's own statement (a tenant-wide key's entry that names them is not)."""
    return evidence.get("user_id") == user_id and not evidence.get("tenant_wide")


def _tenants(evidence: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    """A tenant-wide entry without the user it named (nor turns of theirs), its words only those the
    payload still holds."""
    said = evidence.get("said")
    if said:
        held = {name: {t.strip().casefold() for t in texts} for name, texts in stated_words(payload).items()}
        said = {
            name: kept
            for name, texts in said.items()
            if (kept := [t for t in texts if t.strip().casefold() in held.get(name, set())])
        }
    return {**evidence, "user_id": None, "snapshot_id": None, "seqs": [], "said": said}


class MongoErasureRepository:
    """Implements erasure.ErasureRepository."""

    def __init__(self, database: MongoDatabase, checkpoint: bool = False) -> None:
        self.database = database
        self.db = database.db
        self.checkpoint = checkpoint

    def ensure_indexes(self) -> None:
        self.database.ensure_once("retention", self._create_indexes)

    def _create_indexes(self) -> None:
        """Memories with an `expires_at` date disappear after it (MongoDB's TTL monitor)."""
        with translate_errors():
            self.db["memories"].create_indexes(
                [IndexModel([("expires_at", ASCENDING)], name="memory_expiry", expireAfterSeconds=0)]
            )

    def expire_turns(self, snapshot: StoredSnapshot, expire_at: datetime) -> int:
        """Give the snapshot's turns (that have none yet) an `expire_at`; note it on the snapshot."""
        with translate_errors():
            # Exactly the session_seq index's fields (the snapshot's seq range holds exactly its turns):
            # SecantusDB walks the whole collection for a filter with one field more. A turn that has an
            # expiry already keeps it ($ifNull), as a filter on expire_at would have kept it.
            result = self.db["turns"].update_many(
                {
                    "tenant": snapshot.tenant,
                    "user_id": snapshot.user_id,
                    "session_id": snapshot.session_id,
                    "seq": {"$gte": snapshot.from_seq, "$lte": snapshot.to_seq},
                },
                [{"$set": {"expire_at": {"$ifNull": ["$expire_at", expire_at]}}}],
            )
            self.db["snapshots"].update_one(
                {"_id": snapshot.snapshot_id}, {"$set": {"turns_expire_at": expire_at}}
            )
        return int(result.modified_count)

    def erase(self, scope: Scope) -> dict[str, int]:
        """Delete every document of the scope; returns counts per collection ("other" for the rest)."""
        counts: dict[str, int] = {}
        with translate_errors():
            snapshot_ids = [d["_id"] for d in self.db["snapshots"].find(scope.filter(), {"_id": 1})]
            counts["procedure_feedback"] = self._forget_feedback(scope)
            for name in USER_COLLECTIONS:
                counts[name] = int(self.db[name].delete_many(scope.filter()).deleted_count)
            counts["queue_messages"] = self._erase_local_queue(scope, set(snapshot_ids))
            other = 0
            for name in self.db.list_collection_names():
                if name in USER_COLLECTIONS or name in NOT_USER_DATA or name.startswith("system."):
                    continue
                other += int(self.db[name].delete_many(scope.filter()).deleted_count)
            counts["other"] = other
        return counts

    def forget_in_request_logs(self, tenant: str, memory_ids: list[str]) -> int:
        """Drop, from every request log of the tenant, the calls that returned one of these memories
        (org memories the erased user stated): another user's log must not keep what only they said."""
        if not memory_ids:
            return 0
        logs = self.db[REQUEST_LOGS]
        with translate_errors():
            returned = {"calls.returned.id": {"$in": memory_ids}}
            dropped = 0
            for doc in logs.find({"tenant": tenant, **returned}, {"calls.returned.id": 1}):
                dropped += sum(
                    1
                    for call in doc.get("calls") or []
                    if any(item.get("id") in memory_ids for item in call.get("returned") or [])
                )
            logs.update_many(
                {"tenant": tenant, **returned},
                {"$pull": {"calls": {"returned": {"$elemMatch": {"id": {"$in": memory_ids}}}}}},
            )
        return dropped

    def schedule_sweep(self, scope: Scope, due: datetime, written_before: datetime) -> None:
        # `erased_user`, not `user_id`: an erase of the user (or of another) never takes this note away
        note = {
            "tenant": scope.tenant,
            "erased_user": scope.user_id,
            "due": due,
            "written_before": written_before,
        }
        with translate_errors():
            self.db[SWEEPS].replace_one({"_id": resource_key(scope.tenant, scope.user_id)}, note, upsert=True)

    def due_sweeps(self, now: datetime, limit: int) -> list[PendingSweep]:
        with translate_errors():
            docs = list(self.db[SWEEPS].find({"due": {"$lte": now}}).sort("due", ASCENDING).limit(limit))
        return [
            PendingSweep(
                tenant=d["tenant"],
                user_id=d["erased_user"],
                due=as_utc(d["due"]),
                written_before=as_utc(d["written_before"]),
            )
            for d in docs
        ]

    def sweep_done(self, sweep: PendingSweep) -> None:
        with translate_errors():
            self.db[SWEEPS].delete_one(
                {"_id": resource_key(sweep.tenant, sweep.user_id), "written_before": sweep.written_before}
            )

    def settle(self) -> None:
        """After an erasure: a checkpoint (`fsync`), when configured, so no storage file keeps a copy of
        what was deleted (the local stack's SecantusDB also retires the journal file that held it)."""
        if self.checkpoint:
            with translate_errors():
                self.db.client.admin.command("fsync")

    def forget_org_evidence(
        self, scope: Scope, at: datetime, text_of: TextOf | None = None
    ) -> tuple[list[str], list[str]]:
        """Take the user's evidence out of the tenant's org memories: a version left without evidence is
        deleted, the others lose the user's entries (and the count they added). A lineage whose active
        version went falls back to its newest surviving version. Returns (changed ids, deleted ids)."""
        coll = self.db["memories"]
        changed: list[str] = []
        deleted: list[str] = []
        emptied: dict[str, str | None] = {}  # lineage -> the id its deleted active version replaced
        replaced: dict[str, str | None] = {}  # deleted version -> the id it replaced
        # per lineage, the user's own words (their evidence's `said`): other versions carry them too
        words: dict[str, list[dict[str, list[str]] | None]] = {}
        query = {"tenant": scope.tenant, "user_id": ORG_OWNER, "evidence.user_id": scope.user_id}
        with translate_errors():
            for doc in coll.find(query, {"vector": 0}):
                words.setdefault(doc["lineage_id"], []).extend(
                    _part(e.get("said"), labels=True) if e.get("tenant_wide") else e.get("said")
                    for e in doc.get("evidence") or []
                    if e.get("user_id") == scope.user_id
                )
                update = _without_user(doc, scope.user_id, at, text_of)
                if update is None:
                    coll.delete_one({"_id": doc["_id"]})
                    deleted.append(doc["_id"])
                    replaced[doc["_id"]] = doc.get("supersedes")
                    if doc.get("status") == "active":
                        emptied[doc["lineage_id"]] = doc.get("supersedes")
                    continue
                coll.update_one({"_id": doc["_id"]}, {"$set": update})
                changed.append(doc["_id"])
            for lineage_id, before in emptied.items():
                while before in replaced:  # past the versions this erase deleted too
                    before = replaced[before]
                restored = self._restore_lineage(scope.tenant, lineage_id, before, at)
                if restored is not None:
                    changed.append(restored)
            if text_of is not None:
                for lineage_id, erased in words.items():
                    changed += self._forget_carried_words(scope.tenant, lineage_id, erased, at, text_of)
            changed += self._forget_metadata(scope, at)
        return list(dict.fromkeys(changed)), deleted

    def _forget_metadata(self, scope: Scope, at: datetime) -> list[str]:
        """Clear the metadata the user gave an org memory, on every version that carries it (a proposal
        keeps the metadata of the version it replaces: docs/adr/0072). Returns the changed ids."""
        coll = self.db["memories"]
        given = {"tenant": scope.tenant, "user_id": ORG_OWNER, "metadata_by": scope.user_id}
        ids = [str(d["_id"]) for d in coll.find(given, {"_id": 1})]
        if ids:
            cleared: dict[str, Any] = {
                "metadata": {},
                "metadata_by": None,
                "updated_at": at,
                "index_state": "pending",
            }
            coll.update_many({"_id": {"$in": ids}, **given}, {"$set": cleared})
        return ids

    def _forget_carried_words(
        self,
        tenant: str,
        lineage_id: str,
        erased: list[dict[str, list[str]] | None],
        at: datetime,
        text_of: TextOf,
    ) -> list[str]:
        """Take an erased user's words out of every version of an org lineage that carries them without
        holding their evidence: an UPDATE keeps the aliases of the version it supersedes
        (`TaxonomicKind.updated`), so the tenant's correction or another user's proposal carries an alias
        only the erased user said. A word another user of the lineage said stays. Returns changed ids."""
        coll = self.db["memories"]
        docs = list(
            coll.find({"tenant": tenant, "user_id": ORG_OWNER, "lineage_id": lineage_id}, {"vector": 0})
        )
        entries = [e for d in docs for e in d.get("evidence") or []]
        rest = [e.get("said") for e in entries]
        changed: list[str] = []
        for doc in docs:
            payload = without_erased_words(doc.get("payload") or {}, erased, rest, keyed=_keyed(entries))
            if payload is None:
                continue
            try:
                text = text_of(str(doc.get("type")), payload)
            except KeyError:  # a custom type no longer declared: its payload stays as it is
                continue
            update = {"payload": payload, "text": text, "updated_at": at, "index_state": "pending"}
            coll.update_one({"_id": doc["_id"]}, {"$set": update})
            changed.append(str(doc["_id"]))
        return changed

    def _restore_lineage(self, tenant: str, lineage_id: str, before: str | None, at: datetime) -> str | None:
        """Make the version an org lineage held before its deleted active version active again: the one
        that version replaced (`before`), else the newest version an update replaced; returns its id
        (None when the lineage has no such version, or has an active one). Only a version that was the
        active one comes back: never a proposal, a version kept as history (stated earlier than the
        current one: never active) or one its users retracted (no successor)."""
        coll = self.db["memories"]
        lineage = {"tenant": tenant, "user_id": ORG_OWNER, "lineage_id": lineage_id}
        # replaced by a later version (a retracted one has no successor; a proposal is not superseded)
        versions = {d["_id"]: d for d in coll.find(lineage, {"version": 1, "status": 1, "superseded_by": 1})}
        replaced = [
            d
            for d in versions.values()
            if d.get("status") == "superseded"
            and d.get("superseded_by")
            # kept as history: "superseded" at once by the version that was active, of a lower number
            and versions.get(d["superseded_by"], {}).get("version", d["version"] + 1) > d["version"]
        ]
        chosen = [d for d in replaced if d["_id"] == before] or sorted(replaced, key=lambda d: -d["version"])
        survivor = chosen[0] if chosen else None
        if survivor is None or coll.count_documents({**lineage, "status": "active"}):
            return None
        coll.update_one(
            {"_id": survivor["_id"], "status": "superseded"},
            {
                "$set": {"status": "active", "updated_at": at, "index_state": "pending"},
                "$unset": {"superseded_by": "", "valid_to": ""},
            },
        )
        return str(survivor["_id"])

    def _forget_feedback(self, scope: Scope) -> int:
        """Take the user's procedure feedback back out of the counts it added (org procedures keep the
        other users' reports), then delete the reports."""
        coll = self.db[FEEDBACK_COLLECTION]
        reports = list(coll.find(scope.filter(), {"memory_id": 1, "outcome": 1}))
        for report in reports:
            field = "usage.successes" if report.get("outcome") == "success" else "usage.failures"
            self.db["memories"].update_one(
                {"_id": report.get("memory_id"), "tenant": scope.tenant, field: {"$gt": 0}},
                {"$inc": {field: -1}},
            )
        gone = int(coll.delete_many(scope.filter()).deleted_count) if reports else 0
        for memory_id in {r.get("memory_id") for r in reports}:
            self._last_use_again(scope.tenant, memory_id)
        return gone

    def _last_use_again(self, tenant: str, memory_id: Any) -> None:
        """A procedure's last use and outcome as the remaining reports give them (none: unset), so no
        read shows when an erased user used it or how it went (issue 33's twenty-first probe)."""
        last = next(
            iter(
                self.db[FEEDBACK_COLLECTION]
                .find({"tenant": tenant, "memory_id": memory_id})
                .sort("at", -1)
                .limit(1)
            ),
            None,
        )
        query = {"_id": memory_id, "tenant": tenant}
        if last is None:
            self.db["memories"].update_one(
                query, {"$unset": {"usage.last_used_at": "", "usage.last_outcome": ""}}
            )
        else:
            usage = {"usage.last_used_at": last.get("at"), "usage.last_outcome": last.get("outcome")}
            self.db["memories"].update_one(query, {"$set": usage})

    def _erase_local_queue(self, scope: Scope, snapshot_ids: set[str]) -> int:
        """The local stack's queued extraction messages for the user's snapshots (SQS has no such delete)."""
        if LOCAL_QUEUE not in self.db.list_collection_names():
            return 0
        doomed = []
        for doc in self.db[LOCAL_QUEUE].find({}, {"body": 1}):
            try:
                body = json.loads(doc.get("body") or "{}")
            except ValueError:
                continue
            if not isinstance(body, dict):
                continue
            mine = body.get("tenant") == scope.tenant and body.get("user_id") == scope.user_id
            if mine or body.get("snapshot_id") in snapshot_ids:
                doomed.append(doc["_id"])
        if not doomed:
            return 0
        return int(self.db[LOCAL_QUEUE].delete_many({"_id": {"$in": doomed}}).deleted_count)

    def leftovers(self, scope: Scope) -> dict[str, int]:
        """Documents of the scope still present, per collection (an erasure check)."""
        with translate_errors():
            found = {
                name: self.db[name].count_documents(scope.filter())
                for name in self.db.list_collection_names()
                if not name.startswith("system.")
            }
        return {name: n for name, n in found.items() if n}
