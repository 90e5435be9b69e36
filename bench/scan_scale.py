"""Benchmark: does the session scan (and index_sync) cost grow with due work or with all data?

Two worlds side by side on one SecantusDB server, each in its own database:
  * small: 20,000 sessions, large: 200,000 sessions (10 per user), of which the SAME 200 are due
    (quiet for longer than `idle_seconds`), 200 more were active a moment ago (not due yet) and the
    rest are idle and fully promoted, each with its turns and its snapshot;
  * small: 20,000 and large: 200,000 long-term memories, of which the SAME 200 wait for index_sync.
Every document is a copy of what the real code wrote for a template: the record path
(`svc.recorder.record`), promotion (`Promoter.flush`), recall indexing (marked indexed) and
`MemoryService.create`, with ids, users and times changed; bulk `insert_many` seeds them.

Each round resets the 200 due sessions and the 200 pending memories and invokes the real handlers
(functions/scan_sessions, functions/index_sync) on both worlds, alternating which goes first.
Figures: medians over the rounds of the handler time, and their growth large / small (goal <= 1.3);
the queries that look for work (the scan's due-session claim, outbox sweep and recall queue; index_sync's
pending query), captured with pymongo command monitoring and explained with executionStats on the
pre-scan state: keys (or, for a collection scan, documents) examined per due session (goal <= 2);
the server time of every command shape; and, on the large world, candidate query shapes that an
index would serve (`alternatives`).

    .venv/bin/python bench/scan_scale.py --quick     # 2,000 vs 20,000 sessions, 20 due (~3 min)
    .venv/bin/python bench/scan_scale.py             # 20,000 vs 200,000 sessions, 200 due (long: see docs)

Notes on SecantusDB's explain (the server of `make dev` and the tests): it executes the query
without the command's limit, so an index scan reports every matching key; a limit-1 command (the
claim's findAndModify) is counted as at most `limit` keys, as MongoDB's LIMIT stage would stop.
A collection scan reports every document of the collection.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from harness import emit, log, machine, median, memory_payload, quiet, r
from pymongo import ASCENDING, monitoring

FINDERS = ("find", "findAndModify", "aggregate", "count")


# -- command capture -------------------------------------------------------------------------------
class Capture(monitoring.CommandListener):
    """Records the commands sent to one database while `on` (name, collection, filter, limit, ms)."""

    def __init__(self) -> None:
        self.on = False
        self.db = ""
        self.commands: list[dict[str, Any]] = []
        self._started: dict[int, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if not self.on or event.database_name != self.db:
            return
        cmd = event.command
        name = event.command_name
        coll = cmd.get(name) if isinstance(cmd.get(name), str) else ""
        entry: dict[str, Any] = {"name": name, "collection": coll}
        if name == "find":
            entry.update(
                filter=cmd.get("filter") or {},
                sort=cmd.get("sort"),
                limit=cmd.get("limit"),
                hint=cmd.get("hint"),
            )
        elif name == "findAndModify":
            entry.update(filter=cmd.get("query") or {}, sort=cmd.get("sort"), limit=1, hint=cmd.get("hint"))
        elif name in ("update", "delete"):
            ops = cmd.get("updates") or cmd.get("deletes") or []
            first = ops[0] if ops else {}
            entry.update(filter=first.get("q") or {}, limit=None, hint=first.get("hint"))
        else:
            entry.update(filter=None, limit=None)
        with self._lock:
            self._started[event.request_id] = entry

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        self._finish(event.request_id, event.duration_micros)

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        self._finish(event.request_id, event.duration_micros)

    def _finish(self, request_id: int, micros: int) -> None:
        with self._lock:
            entry = self._started.pop(request_id, None)
            if entry is not None:
                entry["ms"] = micros / 1000.0
                self.commands.append(entry)


CAPTURE = Capture()
monitoring.register(CAPTURE)  # before any client exists: every client reports to it


def shape(value: Any) -> Any:
    """A filter with its values replaced by their type: one key per query shape."""
    if isinstance(value, dict):
        return {
            k: shape(v) if k.startswith("$") or isinstance(v, dict | list) else "?" for k, v in value.items()
        }
    if isinstance(value, list):
        return [shape(v) for v in value] if value and isinstance(value[0], dict) else "?"
    return "?"


def finds_work(entry: dict[str, Any]) -> bool:
    """A query that looks for work: a read over the collection, not pinned to one document or session."""
    flt = entry.get("filter")
    if entry["name"] not in FINDERS or not isinstance(flt, dict):
        return False
    return "_id" not in flt and "session_id" not in flt


def shape_key(entry: dict[str, Any]) -> str:
    return f"{entry['name']} {entry['collection']} {shape(entry.get('filter'))}"


def examined(db: Any, entry: dict[str, Any]) -> dict[str, Any]:
    """explain (executionStats) of a captured query, on the database's current state."""
    inner: dict[str, Any] = {"find": entry["collection"], "filter": entry["filter"]}
    if entry.get("sort"):
        inner["sort"] = entry["sort"]
    if entry.get("limit"):
        inner["limit"] = entry["limit"]
    if entry.get("hint"):
        inner["hint"] = entry["hint"]  # the index the command named, as the server used it
    reply = db.command({"explain": inner, "verbosity": "executionStats"})
    stats = reply.get("executionStats", {})
    plan = reply.get("queryPlanner", {}).get("winningPlan", {})
    stage = plan
    while isinstance(stage, dict) and "inputStage" in stage and stage.get("stage") != "IXSCAN":
        stage = stage["inputStage"]
    index = stage.get("indexName") if isinstance(stage, dict) else None
    keys = int(stats.get("totalKeysExamined", 0))
    docs = int(stats.get("totalDocsExamined", 0))
    cost = docs  # a collection scan examines documents, not keys
    if index is not None:
        cost = min(keys, int(entry["limit"])) if entry.get("limit") else keys
    return {"plan": f"IXSCAN {index}" if index else "COLLSCAN", "keys": keys, "docs": docs, "examined": cost}


def per_shape(commands: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for entry in commands:
        row = out.setdefault(shape_key(entry), {"count": 0, "ms": 0.0, "first": entry})
        row["count"] += 1
        row["ms"] += entry["ms"]
    return out


# -- templates: what the real code writes ----------------------------------------------------------
def settings_for(uri: str, db: str) -> Any:
    from mongomem.config import parse_project_config, settings_from_env
    from mongomem.kindnames import BuiltinKind

    # Sessions that went quiet more than 6 h ago are due; a long run never makes the active ones due.
    project = parse_project_config({"memory": {"snapshot": {"idle_seconds": 6 * 3600}}})
    env = {"MONGOMEM_MONGODB_URI": uri, "MONGOMEM_DB_NAME": db}
    for t in BuiltinKind:
        env[f"MONGOMEM_QUEUE_URL_{t.value.upper()}"] = f"local:extract-{t.value}"
    return settings_from_env(env, project=project)


def services_for(uri: str, db: str) -> Any:
    from mongomem.local.queue import local_queue_factory
    from mongomem.offline.embed_hashing import HashingEmbedder
    from mongomem.runtime import Services
    from mongomem.vectors.embedded import EmbeddedIndex

    return Services(
        settings_for(uri, db),
        queue_factory=local_queue_factory,
        embedder=HashingEmbedder(dim=64),
        vector_index=EmbeddedIndex(None),
    )


def templates(uri: str, turns_per_session: int) -> dict[str, Any]:
    """Session, turn, snapshot and memory documents exactly as the real code writes them."""
    from mongomem.models.common import Scope
    from mongomem.models.memory import CreateMemoryRequest
    from mongomem.models.turns import RecordTurnsRequest

    db_name = f"scan_tmpl_{uuid.uuid4().hex[:6]}"
    svc = services_for(uri, db_name)
    scope = Scope(tenant="default", user_id="tmpl")
    lines = [
        "I moved to Lisbon last spring, my home airport is LIS now.",
        "Noted: Lisbon, and LIS as your home airport.",
        "Can you book me the 9am flight to Porto on Friday?",
        "Booked: Friday 9:05 LIS to OPO, window seat.",
    ]
    body = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": lines[i % len(lines)]}
        for i in range(turns_per_session)
    ]
    for sid in ("idle", "due", "active"):
        svc.recorder.record(scope, sid, RecordTurnsRequest.model_validate({"turns": body}))
    svc.promoter.flush(scope, "idle")
    # Recall indexing ran for these turns in earlier scans (as TurnIndexer.index_batch marks them).
    for sid in ("idle", "due", "active"):
        ids = [t.id for t in svc.turns.in_range(scope, sid, 1, turns_per_session)]
        svc.turns.set_recall_state(ids, indexed=True, ctx_next=True)
    # The documents themselves (BSON as the adapters wrote them) are what the worlds are cloned from.
    db = svc.db
    out: dict[str, Any] = {}
    for sid in ("idle", "due", "active"):
        out[sid] = {
            "session": db.sessions.find_one({"session_id": sid}),
            "turns": list(db.turns.find({"session_id": sid}).sort("seq", 1)),
            "snapshots": list(db.snapshots.find({"session_id": sid})),
        }
    created = svc.memories.create(
        scope,
        CreateMemoryRequest.model_validate(
            {
                "type": "semantic",
                "payload": memory_payload("semantic", random.Random(1), 0),
                "reconcile": False,
            }
        ),
    )
    out["memory"] = svc.memory_store.coll.find_one({"_id": created.memory.memory_id})
    db.client.drop_database(db_name)
    return out


def _shift(doc: dict[str, Any], delta: timedelta, fields: tuple[str, ...]) -> None:
    for f in fields:
        if isinstance(doc.get(f), datetime):
            doc[f] = doc[f] + delta


def clone_session(
    tmpl: dict[str, Any], user: str, sid: str, anchor: datetime
) -> tuple[Any, list[Any], list[Any]]:
    """A template session with another user/session id, its last turn at `anchor`."""
    from mongomem.adapters.mongo.ids import session_key, snapshot_id, turn_key
    from mongomem.models.common import Scope

    scope = Scope(tenant="default", user_id=user)
    skey = session_key(scope, sid)
    delta = anchor - tmpl["session"]["last_turn_at"]
    session = dict(tmpl["session"], _id=skey, user_id=user, session_id=sid)
    _shift(session, delta, ("created_at", "last_turn_at", "idle_due_at"))
    snap_ids = {s["_id"]: snapshot_id(scope, sid, s["from_seq"]) for s in tmpl["snapshots"]}
    turns = []
    for t in tmpl["turns"]:
        turn = dict(t, _id=turn_key(scope, sid, t["seq"]), user_id=user, session_id=sid)
        _shift(turn, delta, ("timestamp", "recorded_at"))
        if "snapshot_id" in turn:
            turn["snapshot_id"] = snap_ids[turn["snapshot_id"]]
        turns.append(turn)
    snaps = []
    for s in tmpl["snapshots"]:
        snap = dict(s, _id=snap_ids[s["_id"]], user_id=user, session_id=sid)
        _shift(snap, delta, ("created_at",))
        snaps.append(snap)
    return session, turns, snaps


# -- one world -------------------------------------------------------------------------------------
class World:
    def __init__(
        self, label: str, uri: str, sessions: int, memories: int, due: int, active: int, step: int
    ) -> None:
        self.label = label
        self.step = step  # every `step`-th session (and memory) is due: the same ids in every world
        self.db_name = f"scan_{label}_{uuid.uuid4().hex[:6]}"
        self.sessions, self.memories, self.due, self.active = sessions, memories, due, active
        self.svc = services_for(uri, self.db_name)
        self.due_sessions: list[dict[str, Any]] = []
        self.due_turn_ids: list[str] = []
        self.pending_ids: list[str] = []
        self.seeded_at: datetime | None = None

    @property
    def db(self) -> Any:
        return self.svc.db

    def seed(self, tmpl: dict[str, Any], batch: int = 2000) -> float:
        from mongomem.models.common import utcnow

        started = time.perf_counter()
        self.svc.ensure_short_term_indexes()  # the indexes first, as a deployment's migration does
        _ = self.svc.memory_store
        db = self.svc.db
        now = utcnow()
        self.seeded_at = now
        step = self.step
        active_at = {step * k + step // 2 for k in range(self.active)}
        buf: dict[str, list[Any]] = defaultdict(list)

        def flush(force: bool = False) -> None:
            for coll, docs in buf.items():
                if docs and (force or len(docs) >= batch):
                    db[coll].insert_many(docs, ordered=False)
                    docs.clear()

        for i in range(self.sessions):
            user, sid = f"u{i // 10:06d}", f"s{i:07d}"
            if i % step == 0 and i // step < self.due:
                session, turns, snaps = clone_session(tmpl["due"], user, sid, now - timedelta(hours=7))
                self.due_sessions.append(session)
                self.due_turn_ids += [t["_id"] for t in turns]
            elif i in active_at:
                session, turns, snaps = clone_session(tmpl["active"], user, sid, now - timedelta(minutes=1))
            else:
                quiet_for = timedelta(days=1 + i % 30, minutes=i % 1440)
                session, turns, snaps = clone_session(tmpl["idle"], user, sid, now - quiet_for)
            buf["sessions"].append(session)
            buf["turns"] += turns
            buf["snapshots"] += snaps
            if i % batch == batch - 1:
                flush()
                if (i + 1) % (batch * 10) == 0:
                    elapsed = time.perf_counter() - started
                    log(f"  seeding {self.label}: {i + 1:,} of {self.sessions:,} sessions ({elapsed:.0f} s)")
        flush(force=True)
        self._seed_memories(tmpl["memory"], now, batch)
        return time.perf_counter() - started

    def _seed_memories(self, tmpl: dict[str, Any], now: datetime, batch: int) -> None:
        kind = self.svc.kinds["semantic"]
        rng = random.Random(7)
        coll = self.svc.memory_store.coll
        step = self.step
        docs: list[dict[str, Any]] = []
        for i in range(self.memories):
            payload = memory_payload("semantic", rng, i)
            text = kind.text(payload)
            pending = i % step == 0 and i // step < self.due
            at = now - timedelta(minutes=10 if pending else 60 * 24 + i % 10_000)
            doc = dict(
                tmpl,
                _id=f"mem-bench{i:09d}",
                lineage_id=f"lin-bench{i:09d}",
                user_id=f"u{i // 100:06d}",
                key=kind.key(payload),
                payload=payload,
                text=text,
                vector=self.svc.embedder.embed([text], "document")[0],
                created_at=at,
                updated_at=at,
                last_reinforced_at=at,
                observed_at=at,
                index_state="pending" if pending else "indexed",
            )
            if pending:
                self.pending_ids.append(doc["_id"])
            docs.append(doc)
            if len(docs) >= batch:
                coll.insert_many(docs, ordered=False)
                docs = []
                if (i + 1) % (batch * 10) == 0:
                    log(f"  seeding {self.label}: {i + 1:,} of {self.memories:,} memories")
        if docs:
            coll.insert_many(docs, ordered=False)

    def reset_scan(self) -> None:
        """The 200 due sessions as they were before a scan promoted them."""
        from mongomem.adapters.mongo.ids import snapshot_id
        from mongomem.models.common import Scope

        ids = [s["_id"] for s in self.due_sessions]
        snaps = [
            snapshot_id(
                Scope(tenant=s["tenant"], user_id=s["user_id"]),
                s["session_id"],
                s["promoted_through_seq"] + 1,
            )
            for s in self.due_sessions
        ]
        self.db.sessions.delete_many({"_id": {"$in": ids}})
        self.db.sessions.insert_many(self.due_sessions)
        self.db.snapshots.delete_many({"_id": {"$in": snaps}})
        self.db.turns.update_many({"_id": {"$in": self.due_turn_ids}}, {"$unset": {"snapshot_id": ""}})
        self.db.local_queue.delete_many({})

    def reset_sync(self) -> None:
        assert self.seeded_at is not None
        self.svc.memory_store.coll.update_many(
            {"_id": {"$in": self.pending_ids}},
            {"$set": {"index_state": "pending", "updated_at": self.seeded_at - timedelta(minutes=10)}},
        )


def run_handler(world: World, fn: Any, event: dict[str, Any], ctx: Any) -> tuple[float, Any, list[Any]]:
    """Invoke a handler on the world's services: (ms, its answer, the commands it sent)."""
    from mongomem.runtime import configure

    configure(world.svc)
    CAPTURE.db, CAPTURE.commands, CAPTURE.on = world.db_name, [], True
    try:
        started = time.perf_counter()
        with quiet():
            result = fn.lambda_handler(event, ctx)
        return (time.perf_counter() - started) * 1000.0, result, CAPTURE.commands
    finally:
        CAPTURE.on = False
        configure(None)


def diagnose(world: World, commands: list[dict[str, Any]], reset: Any, due: int) -> dict[str, Any]:
    """Explain every query shape of one handler run on the state before that run (after `reset`)."""
    shapes = per_shape(commands)
    reset()
    finding = everything = 0.0
    rows = []
    for key, row in sorted(shapes.items(), key=lambda kv: -kv[1]["ms"]):
        item: dict[str, Any] = {"shape": key, "count": row["count"], "server_ms": round(row["ms"], 1)}
        if isinstance(row["first"].get("filter"), dict):
            ex = examined(world.db, row["first"])
            item.update(ex, finds_work=finds_work(row["first"]))
            everything += ex["examined"] * row["count"]
            if item["finds_work"]:
                finding += ex["examined"] * row["count"]
        rows.append(item)
    return {
        "commands": len(commands),
        "server_ms": round(sum(c["ms"] for c in commands), 1),
        "examined_per_due": round(finding / max(due, 1), 2),
        "examined_per_due_all_commands": round(everything / max(due, 1), 2),
        "queries": rows,
    }


def alternatives(world: World, repeat: int = 3) -> list[dict[str, Any]]:
    """Candidate query shapes on the large world (after the rounds): explain and time each, with the
    index it needs created for the probe only. `claim` rows find and lease a due session, `advance` rows
    are the promotion's compare-and-set on one session (`MongoSessionRepository.advance`)."""
    from mongomem.models.common import utcnow

    world.reset_scan()  # the due sessions were re-inserted: they sit at the end of the natural order
    now = utcnow()
    policy = world.svc.promoter.policy
    # the claim's filter before issue 15 (one $or branch per due rule, in one findAndModify); the claim
    # now probes each rule's hinted partial index and leases by compare-and-set (the diagnosis above)
    rules: list[dict[str, Any]] = [{"idle_due_at": {"$lte": now}}, {"pending": {"$gte": policy.max_messages}}]
    if policy.max_tokens:
        rules.append({"unpromoted_tokens": {"$gte": policy.max_tokens}})
    current = {
        "$and": [
            {"$or": rules},
            {"$or": [{"lease_until": {"$exists": False}}, {"lease_until": {"$lte": now}}]},
        ]
    }
    s = world.due_sessions[-1]
    lease = {"$set": {"bench_probe": True}}  # a harmless write; the next reset puts the documents back
    idle_pending = {"idle_due_at": {"$lte": now}, "pending": {"$gt": 0}}
    partial = ("bench_idle_due_pending", {"pending": {"$gt": 0}})
    # (label, operation, filter, probe index)
    candidates: list[tuple[str, str, dict[str, Any], tuple[str, dict[str, Any]] | None]] = [
        ("claim: the former $or filter, findAndModify", "fam", current, None),
        ("claim: the former $or filter, read only", "find", current, None),
        (
            "claim: idle rule alone, existing idle_due index (partial $exists)",
            "find",
            {"idle_due_at": {"$lte": now}},
            None,
        ),
        (
            "claim: idle rule + pending>0, index on idle_due_at partial {pending: {$gt: 0}}",
            "find",
            idle_pending,
            partial,
        ),
        (
            "claim: size rule alone, the counter unindexed (the record path marks size_due_at instead)",
            "find",
            {"pending": {"$gte": policy.max_messages}},
            None,
        ),
        (
            "claim: size rule as the record path's mark, size_due index (partial $exists)",
            "find",
            {"size_due_at": {"$lte": now}},
            None,
        ),
        (
            "claim: lease by compare-and-set update {_id, lease_until: {$not: {$gt: now}}}",
            "update",
            {"_id": s["_id"], "lease_until": {"$not": {"$gt": now}}},
            None,
        ),
        (
            "advance: findAndModify {_id, promoted_through_seq} (the former advance)",
            "fam",
            {"_id": s["_id"], "promoted_through_seq": 0},
            None,
        ),
        (
            "advance: update {_id, promoted_through_seq} (the advance now, then a read by _id)",
            "update",
            {"_id": s["_id"], "promoted_through_seq": 0},
            None,
        ),
        ("advance: findAndModify {_id} alone", "fam", {"_id": s["_id"]}, None),
    ]
    coll = world.db.sessions
    ops = {
        "fam": lambda f: coll.find_one_and_update(f, lease),
        "find": lambda f: coll.find_one(f),
        "update": lambda f: coll.update_one(f, lease),
    }
    out = []
    for label, op, flt, index in candidates:
        if index is not None:
            coll.create_index([("idle_due_at", ASCENDING)], name=index[0], partialFilterExpression=index[1])
        try:
            ex = examined(world.db, {"collection": "sessions", "filter": flt, "limit": 1})
            times = []
            for _ in range(repeat):
                started = time.perf_counter()
                ops[op](flt)
                times.append((time.perf_counter() - started) * 1000.0)
            out.append(
                {
                    "query": label,
                    "explain": ex["plan"],
                    "examined": ex["examined"],
                    "ms": round(median(times), 2),
                }
            )
        finally:
            if index is not None:
                coll.drop_index(index[0])
    world.reset_scan()
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--small", type=int, default=20_000, help="sessions (and memories) of the small world")
    p.add_argument("--large", type=int, default=200_000, help="sessions (and memories) of the large world")
    p.add_argument("--due", type=int, default=200, help="due sessions (and pending memories) in both")
    p.add_argument("--active", type=int, default=200, help="sessions active a minute ago (not due) in both")
    p.add_argument("--turns-per-session", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="2,000 vs 20,000 sessions, 20 due, 20 active")
    args = p.parse_args()
    if args.quick:
        args.small, args.large, args.due, args.active = 2_000, 20_000, 20, 20

    from mongomem.local.mongod import EmbeddedMongo
    from tests.conftest import Ctx, load_event, load_function

    scan_fn, sync_fn = load_function("scan_sessions"), load_function("index_sync")
    scan_event, sync_event = load_event("scan_schedule.json"), load_event("index_sync_schedule.json")
    ctx = Ctx()
    started = time.perf_counter()
    with (
        tempfile.TemporaryDirectory(prefix="scan-scale-") as tmp,
        EmbeddedMongo(Path(tmp) / "mongo") as server,
    ):
        tmpl = templates(server.uri, args.turns_per_session)
        step = args.small // args.due
        worlds = [
            World("small", server.uri, args.small, args.small, args.due, args.active, step),
            World("large", server.uri, args.large, args.large, args.due, args.active, step),
        ]
        for w in worlds:
            seconds = w.seed(tmpl)
            log(f"[{w.label}] seeded {w.sessions:,} sessions and {w.memories:,} memories in {seconds:.0f} s")
        times: dict[str, dict[str, list[float]]] = {w.label: {"scan": [], "sync": []} for w in worlds}
        captured: dict[str, dict[str, list[Any]]] = {w.label: {} for w in worlds}
        for rnd in range(args.rounds + 1):  # round 0 warms the small world up and checks the work done
            order = worlds if rnd % 2 == 0 else worlds[::-1]
            for w in order:
                if rnd == 0 and w.label == "large":
                    continue
                w.reset_scan()
                scan_ms, report, scan_cmds = run_handler(w, scan_fn, scan_event, ctx)
                if report["sessions"] != w.due or report["snapshots"] != w.due:
                    raise SystemExit(f"[{w.label}] the scan promoted {report} instead of {w.due} sessions")
                w.reset_sync()
                sync_ms, synced, sync_cmds = run_handler(w, sync_fn, sync_event, ctx)
                if synced["synced"] != w.due:
                    raise SystemExit(f"[{w.label}] index_sync synced {synced} instead of {w.due} memories")
                if rnd:
                    times[w.label]["scan"].append(scan_ms)
                    times[w.label]["sync"].append(sync_ms)
                    captured[w.label] = {"scan": scan_cmds, "sync": sync_cmds}
                log(
                    f"round {rnd}{' (warm-up)' if not rnd else ''} [{w.label}] "
                    f"scan {scan_ms:.0f} ms, index_sync {sync_ms:.0f} ms"
                )
        small, large = worlds
        diag = {
            w.label: {
                "scan": diagnose(w, captured[w.label]["scan"], w.reset_scan, w.due),
                "index_sync": diagnose(w, captured[w.label]["sync"], w.reset_sync, w.due),
            }
            for w in worlds
        }
        alt = alternatives(large)

    med = {w: {k: median(v) for k, v in t.items()} for w, t in times.items()}
    result = {
        "bench": "scan_scale",
        "keys_examined_per_due_session": diag["large"]["scan"]["examined_per_due"],
        "keys_examined_per_due_session_small": diag["small"]["scan"]["examined_per_due"],
        "scan_ms_small": r(med["small"]["scan"], 1),
        "scan_ms_large": r(med["large"]["scan"], 1),
        "scan_growth": r(med["large"]["scan"] / med["small"]["scan"]),
        "index_sync_ms_small": r(med["small"]["sync"], 1),
        "index_sync_ms_large": r(med["large"]["sync"], 1),
        "index_sync_growth": r(med["large"]["sync"] / med["small"]["sync"]),
        "index_sync_keys_examined_per_pending": diag["large"]["index_sync"]["examined_per_due"],
        "goals": {"keys_examined_per_due_session": 2, "scan_growth": 1.3, "index_sync_growth": 1.3},
        "sessions": [small.sessions, large.sessions],
        "memories": [small.memories, large.memories],
        "due": args.due,
        "active_not_due": args.active,
        "turns_per_session": args.turns_per_session,
        "rounds": args.rounds,
        "scan_rounds_ms": {w: [r(x, 1) for x in t["scan"]] for w, t in times.items()},
        "index_sync_rounds_ms": {w: [r(x, 1) for x in t["sync"]] for w, t in times.items()},
        "diagnosis": diag,
        "alternatives_large": alt,
        "wall_s": round(time.perf_counter() - started),
        "machine": machine(),
    }
    emit(result)


if __name__ == "__main__":
    main()
