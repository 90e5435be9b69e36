"""Benchmark: memory search, recall and context latency at scale, through the real handler, vs a floor.

Data (seeded once per data dir, through the project's own code): 1,000 users with 100 long-term memories
each of mixed kinds (semantic 40 %, episodic 30 %, procedural 20 %, taxonomic 10 %; documents cloned from
one that `MemoryService.create` wrote, indexed with `longterm.write.indexing.index_doc`), and one user in ten
with 2,000 recorded turns (20 sessions of 100, recorded with `svc.recorder`, embedded and indexed for
recall by the scan job's `TurnIndexer`) and a working memory, in the real OpenSearch node (engine
lucene, 2 index documents per turn) and SecantusDB. Embedder: the hashing embedder (dim 384 by default),
the same on both sides, so its cost stays small next to what is being compared.

Queries come from the stored texts' neighbourhoods (a stored memory's or turn's text with words dropped
and one unrelated word added). Every query goes through functions/memory_api (API Gateway v2 event in,
response out):
  * POST /v1/memories/search  {user_id, query, top_k: 10}                    (any user)
  * POST /v1/recall           {user_id, query, top_k: 4, message_range: 1}   (users with turns)
  * POST /v1/context          {user_id, session_id, query, token_budget: 2000}: working memory, recent
                              turns, memories and recalled messages           (users with turns)
The floor of each request, measured in the same run and interleaved with it, is the work it cannot
avoid: embed the query once with the same embedder, send every OpenSearch query body the handler sent
(captured from the handler itself) in ONE `_msearch` round trip, and fetch what it returned by id from
MongoDB (one `find` per collection: memories, turns).

Prints one JSON line: p50/p95 per endpoint (medians over the rounds), `*_vs_floor` (handler p50 / floor
p50, median over rounds; goals: search <= 1.2, context <= 1.5), the floors, how often the query's
source document came back (`search_source_recall@10`, `recall_source_recall@4`), and the profile of
the context handler (time per section, and the functions cProfile finds most expensive).

    .venv/bin/python bench/context_latency.py --quick        # 100 users, 10 with 500 turns (~3 min)
    .venv/bin/python bench/context_latency.py                 # the issue's data (seeding ~30 min)
    .venv/bin/python bench/context_latency.py --data-dir /tmp/ctx-bench   # seed once, reuse after
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from harness import (
    KIND_MIX,
    PEOPLE,
    PLACES,
    WORDS,
    api_event,
    emit,
    log,
    machine,
    median,
    memory_payload,
    percentile,
    profile_top,
    query_near,
    quiet,
    r,
    timed,
)

TENANT = "default"  # the local memory API's tenant without an authorizer
INDEX = "bench-context"
DB = "context_bench"
TOPICS = [
    "the flight to {place} on {day}",
    "dinner with {person} at {place}",
    "the {word} project deadline",
    "a gift for {person}'s birthday",
    "the {word} recipe we tried",
    "moving the meeting with {person}",
    "the hike near {place}",
    "renewing the {word} subscription",
]


def turn_text(rng: random.Random, i: int, role: str) -> str:
    topic = rng.choice(TOPICS).format(
        place=rng.choice(PLACES),
        day=rng.choice(["Monday", "Friday", "Sunday"]),
        person=rng.choice(PEOPLE),
        word=rng.choice(WORDS),
    )
    tag = " ".join(rng.sample(WORDS, 3))
    if role == "user":
        return f"Can you help me with {topic}? Keep in mind {tag} (note {i})."
    return f"Sure: for {topic} I suggest we look at {tag} first (step {i})."


# -- the world -------------------------------------------------------------------------------------
class World:
    """The servers, the services the handler runs on, and the seeded data's parameters."""

    def __init__(self, args: argparse.Namespace, data_dir: Path) -> None:
        from opensearch_node import OpenSearchNode

        from mongomem.config import parse_project_config, settings_from_env
        from mongomem.kindnames import BuiltinKind
        from mongomem.local.mongod import EmbeddedMongo
        from mongomem.local.queue import local_queue_factory
        from mongomem.offline.embed_hashing import HashingEmbedder
        from mongomem.runtime import Services

        self.args = args
        self.data_dir = data_dir
        self.mongo = EmbeddedMongo(data_dir / "mongo").start()
        self.node: Any = None
        url = args.opensearch_url
        if url is None:
            self.node = OpenSearchNode()
            self.node.start(data_dir=data_dir / "opensearch", heap=args.heap)
            url = self.node.url
            log(
                f"OpenSearch node at {url} ({self.node.startup_seconds:.0f} s), SecantusDB at {self.mongo.uri}"
            )
        project = parse_project_config(
            {
                "memory": {
                    "extraction": {"enabled": []},
                    # nothing is promoted during the run; the recall indexer embeds everything in one go
                    "snapshot": {"max_messages": 10_000, "idle_seconds": 10 * 365 * 86400},
                    "recall": {"index_batch": 500, "index_max_per_run": 100_000},
                }
            }
        )
        env = {
            "MONGOMEM_MONGODB_URI": self.mongo.uri,
            "MONGOMEM_DB_NAME": DB,
            "MONGOMEM_OPENSEARCH_ENDPOINT": url,
            "MONGOMEM_OPENSEARCH_ENGINE": "lucene",
            "MONGOMEM_OPENSEARCH_INDEX": INDEX,
        }
        for t in BuiltinKind:
            env[f"MONGOMEM_QUEUE_URL_{t.value.upper()}"] = f"local:extract-{t.value}"
        self.embedder = HashingEmbedder(dim=args.dim)
        self.svc = Services(
            settings_from_env(env, project=project), queue_factory=local_queue_factory, embedder=self.embedder
        )
        self.index: Any = self.svc.vector_index
        self.heavy = list(range(0, args.users, args.turn_users_every))

    def stop(self) -> None:
        if self.node is not None:
            self.node.stop()
        self.mongo.stop()

    def manifest(self) -> dict[str, Any]:
        a = self.args
        return {
            "users": a.users,
            "memories_per_user": a.memories_per_user,
            "turn_users_every": a.turn_users_every,
            "turns_per_user": a.turns_per_user,
            "turns_per_session": a.turns_per_session,
            "dim": a.dim,
            "version": 1,
        }

    # -- seeding ---------------------------------------------------------------------------------
    def seed(self) -> dict[str, float]:
        """Seed what the data dir does not hold yet (stages are recorded, so an interrupted seed resumes)."""
        marker = self.data_dir / "seeded.json"
        state = json.loads(marker.read_text()) if marker.exists() else {}
        if state.get("manifest") != self.manifest():
            state = {"manifest": self.manifest(), "stages": []}
        if len(state["stages"]) == 4:
            log(f"reusing the data seeded in {self.data_dir}")
            return {}
        from pymongo import MongoClient

        from mongomem.runtime import configure

        if not state["stages"]:
            # A stale world goes before the services touch the database: they create its indexes on first use.
            with MongoClient(self.mongo.uri) as raw:
                raw.drop_database(DB)
            self.index.drop()
        figures: dict[str, float] = {}
        configure(self.svc)
        try:
            for stage, step in (
                ("memories", self._seed_memories),
                ("turns", self._seed_turns),
                ("recall_index", self._index_turns),
                ("working_memory", self._seed_working_memory),
            ):
                if stage in state["stages"]:
                    continue
                figures[f"{stage}_s"] = step()
                state["stages"].append(stage)
                marker.write_text(json.dumps(state))
            self._settle()
        finally:
            configure(None)
        return figures

    def _seed_memories(self) -> float:
        from mongomem.adapters.mongo.memory_store import to_record
        from mongomem.longterm.write.indexing import index_doc
        from mongomem.models.common import Scope
        from mongomem.models.memory import CreateMemoryRequest

        started = time.perf_counter()
        a = self.args
        rng = random.Random(11)
        tmpl_scope = Scope(tenant=TENANT, user_id="template")
        created = self.svc.memories.create(
            tmpl_scope,
            CreateMemoryRequest.model_validate(
                {"type": "semantic", "payload": memory_payload("semantic", rng, 0), "reconcile": False}
            ),
        )
        coll = self.svc.memory_store.coll
        tmpl = coll.find_one({"_id": created.memory.memory_id})
        assert tmpl is not None
        self.index.ensure(self.args.dim)
        base = datetime(2025, 6, 1, tzinfo=UTC)
        pending_mongo: list[Any] = []
        pending_index: list[Any] = []
        futures = []
        with ThreadPoolExecutor(max_workers=2) as pool:
            for u in range(a.users):
                user = f"user-{u:05d}"
                kinds = [KIND_MIX[j % len(KIND_MIX)] for j in range(a.memories_per_user)]
                payloads = [memory_payload(k, rng, j) for j, k in enumerate(kinds)]
                texts = [self.svc.kinds[k].text(p) for k, p in zip(kinds, payloads, strict=True)]
                vectors = self.embedder.embed(texts, "document")
                for j, (kind, payload, text, vector) in enumerate(
                    zip(kinds, payloads, texts, vectors, strict=True)
                ):
                    at = base + timedelta(hours=u * 7 + j)
                    doc = dict(
                        tmpl,
                        _id=f"mem-{u:05d}-{j:03d}",
                        lineage_id=f"lin-{u:05d}-{j:03d}",
                        user_id=user,
                        type=kind,
                        key=self.svc.kinds[kind].key(payload),
                        payload=payload,
                        text=text,
                        vector=vector,
                        embedding={"model": self.embedder.model, "dim": len(vector)},
                        reinforcement_count=1 + (j % 7 == 0) * rng.randint(1, 9),
                        created_at=at,
                        updated_at=at,
                        last_reinforced_at=at,
                        observed_at=at,
                        valid_from=at.date().isoformat(),
                        index_state="indexed",
                        indexed_at=at,
                        evidence=[{"snapshot_id": None, "seqs": [], "source": "api"}],
                    )
                    pending_mongo.append(doc)
                    pending_index.append(index_doc(to_record(doc)))
                if len(pending_mongo) >= 2000 or u == a.users - 1:
                    futures.append(pool.submit(coll.insert_many, pending_mongo, ordered=False))
                    futures.append(pool.submit(self.index.upsert, pending_index))
                    pending_mongo, pending_index = [], []
                    if len(futures) > 6:  # keep memory bounded: wait for the oldest batches
                        for f in futures[:-4]:
                            f.result()
                        futures = futures[-4:]
                if u % 100 == 99:
                    log(f"  memories: {u + 1:,} of {a.users:,} users")
            for f in futures:
                f.result()
        return time.perf_counter() - started

    def _seed_turns(self) -> float:
        from mongomem.models.common import Scope
        from mongomem.models.turns import RecordTurnsRequest

        started = time.perf_counter()
        a = self.args
        rng = random.Random(23)
        base = datetime(2025, 1, 1, tzinfo=UTC)
        for n, u in enumerate(self.heavy):
            scope = Scope(tenant=TENANT, user_id=f"user-{u:05d}")
            sessions = max(1, a.turns_per_user // a.turns_per_session)
            for s in range(sessions):
                start = base + timedelta(days=s * 3, hours=u % 24)
                turns = []
                for i in range(a.turns_per_session):
                    role = "user" if i % 2 == 0 else "assistant"
                    turns.append(
                        {
                            "role": role,
                            "name": "Ana" if role == "user" else None,
                            "content": turn_text(rng, s * a.turns_per_session + i, role),
                            "timestamp": (start + timedelta(seconds=30 * i)).isoformat(),
                        }
                    )
                for k in range(0, len(turns), 100):  # memory.limits.max_batch
                    self.svc.recorder.record(
                        scope,
                        f"chat-{s:03d}",
                        RecordTurnsRequest.model_validate({"turns": turns[k : k + 100]}),
                    )
            if n % 10 == 9:
                log(f"  turns: {n + 1} of {len(self.heavy)} users recorded")
        return time.perf_counter() - started

    def _index_turns(self) -> float:
        """The recall index documents the scan job's TurnIndexer writes, built a session at a time.

        Same texts, ids and fields (retrieval.turn_indexing's own functions) and the same turn flags
        (set through the turn repository); only the batching differs: a session's turns are read once
        with `TurnRepository.in_range` instead of the indexer's bounded batches and neighbour windows.
        """
        from mongomem.models.common import Scope
        from mongomem.retrieval import turn_indexing as ti
        from mongomem.vectors.port import IndexDoc

        started = time.perf_counter()
        repo = self.svc.turns
        sessions = max(1, self.args.turns_per_user // self.args.turns_per_session)
        futures = []
        with ThreadPoolExecutor(max_workers=2) as pool:
            for n, u in enumerate(self.heavy):
                scope = Scope(tenant=TENANT, user_id=f"user-{u:05d}")
                for s in range(sessions):
                    everything = repo.in_range(scope, f"chat-{s:03d}", 1, 10**9)
                    turns = [t for t in everything if ti.recallable(t)]
                    slots: list[tuple[Any, str, str]] = []
                    for i, t in enumerate(turns):
                        prev = turns[i - 1] if i else None
                        nxt = turns[i + 1] if i + 1 < len(turns) else None
                        slots.append((t, "own", ti.own_text(t)))
                        slots.append((t, "ctx", ti.context_text(t, prev, nxt)))
                    vectors = self.embedder.embed([text for _, _, text in slots], "document")
                    docs = [
                        IndexDoc(
                            id=ti.doc_id(t.id, channel),
                            tenant=t.tenant,
                            user_id=t.user_id,
                            kind="turn",
                            text=text,
                            vector=vector,
                            fields=ti._fields(t, channel),
                        )
                        for (t, channel, text), vector in zip(slots, vectors, strict=True)
                    ]
                    futures.append(pool.submit(self.index.upsert, docs))
                    ids = [t.id for t in everything]
                    repo.set_recall_state(ids[:-1], indexed=True, ctx_next=True)
                    repo.set_recall_state(ids[-1:], indexed=True, ctx_next=False)
                    if len(futures) > 4:
                        for f in futures[:-2]:
                            f.result()
                        futures = futures[-2:]
                if n % 10 == 9:
                    log(f"  recall index: {n + 1} of {len(self.heavy)} users")
            for f in futures:
                f.result()
        return time.perf_counter() - started

    def _seed_working_memory(self) -> float:
        from tests.conftest import Ctx, load_function

        started = time.perf_counter()
        fn = load_function("memory_api")
        for u in self.heavy:
            content = (
                f"# User\n- **Name**: Ana {u}\n- **Home**: {PLACES[u % len(PLACES)]}\n"
                f"- **Working on**: the {WORDS[u % len(WORDS)]} project\n- **Prefers**: short answers\n"
            )
            event = api_event(
                "PUT", "/v1/working-memory", {"content": content}, query=f"user_id=user-{u:05d}"
            )
            with quiet():
                response = fn.lambda_handler(event, Ctx())
            if response["statusCode"] != 200:
                raise SystemExit(f"working memory seed failed: {response}")
        return time.perf_counter() - started

    def _settle(self) -> None:
        client = self.index.client
        client.indices.refresh(index=INDEX)
        quiet_polls = 0
        while quiet_polls < 3:
            stats = client.indices.stats(index=INDEX, metric="merge")
            quiet_polls = quiet_polls + 1 if stats["_all"]["total"]["merges"]["current"] == 0 else 0
            time.sleep(1)
        count = client.count(index=INDEX)["count"]
        log(f"  index settled: {count:,} documents")


# -- queries ---------------------------------------------------------------------------------------
def make_queries(world: World, n: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    """Request bodies with the id of the document each was drawn from."""
    rng = random.Random(seed)
    db = world.svc.db
    out: dict[str, list[dict[str, Any]]] = {"search": [], "recall": [], "context": []}
    for _ in range(n):
        user = f"user-{rng.randrange(world.args.users):05d}"
        docs = list(db.memories.find({"tenant": TENANT, "user_id": user, "status": "active"}, {"text": 1}))
        doc = rng.choice(docs)
        out["search"].append(
            {
                "body": {"user_id": user, "query": query_near(doc["text"], rng), "top_k": 10},
                "source": doc["_id"],
            }
        )
    sessions = max(1, world.args.turns_per_user // world.args.turns_per_session)
    for endpoint in ("recall", "context"):
        for _ in range(n):
            u = rng.choice(world.heavy)
            user = f"user-{u:05d}"
            session = f"chat-{rng.randrange(sessions):03d}"
            seq = rng.randint(1, world.args.turns_per_session)
            turn = db.turns.find_one({"tenant": TENANT, "user_id": user, "session_id": session, "seq": seq})
            assert turn is not None, (user, session, seq)
            query = query_near(turn["content"], rng)
            if endpoint == "recall":
                body: dict[str, Any] = {"user_id": user, "query": query, "top_k": 4, "message_range": 1}
            else:
                latest = f"chat-{sessions - 1:03d}"
                body = {"user_id": user, "session_id": latest, "query": query, "token_budget": 2000}
            out[endpoint].append({"body": body, "source": f"{session}:{seq}"})
    return out


PATHS = {"search": "/v1/memories/search", "recall": "/v1/recall", "context": "/v1/context"}


class Capture:
    """Records the SearchQuery objects the handler sends to the index, and its round trips (only while
    installed). `OpenSearchIndex.search` goes through `search_many`, so wrapping that sees both."""

    def __init__(self, index: Any) -> None:
        self.index = index
        self.queries: list[Any] = []
        self.round_trips = 0

    def __enter__(self) -> Capture:
        real = self.index.search_many

        def search_many(queries: list[Any]) -> Any:
            self.queries.extend(queries)
            self.round_trips += 1
            return real(queries)

        self.index.search_many = search_many  # an instance attribute shadows the method until __exit__
        return self

    def __exit__(self, *exc: Any) -> None:
        del self.index.search_many


def turn_keys(user: str, public_ids: list[str]) -> list[str]:
    from mongomem.adapters.mongo.ids import turn_key
    from mongomem.models.common import Scope

    scope = Scope(tenant=TENANT, user_id=user)
    out = []
    for tid in public_ids:
        session, _, seq = tid.rpartition(":")
        out.append(turn_key(scope, session, int(seq)))
    return out


def build_case(world: World, fn: Any, ctx: Any, endpoint: str, q: dict[str, Any]) -> dict[str, Any]:
    """Run the handler once, capturing its index queries; return the handler call, its floor and a check."""
    event = api_event("POST", PATHS[endpoint], q["body"])
    with Capture(world.index) as cap, quiet():
        response = fn.lambda_handler(event, ctx)
    if response["statusCode"] != 200:
        raise SystemExit(f"{endpoint} failed: {response['statusCode']} {response['body'][:500]}")
    answer = json.loads(response["body"])
    bodies = [body for sq in cap.queries for _, body in world.index.query_bodies(sq)]
    ndjson = "".join(f"{{}}\n{json.dumps(b)}\n" for b in bodies)
    user = q["body"]["user_id"]
    if endpoint == "search":
        memory_ids = [x["memory_id"] for x in answer["results"]]
        turn_ids: list[str] = []
        hit = q["source"] in memory_ids
    elif endpoint == "recall":
        memory_ids, turn_ids = [], turn_keys(user, answer["turn_ids"])
        hit = q["source"] in answer["matched"]
    else:
        ids = answer["ids"]
        memory_ids = list(ids.get("memories", []))
        turn_ids = turn_keys(user, list(ids.get("recent_turns", [])) + list(ids.get("recalled", [])))
        hit = True
    db = world.svc.db
    transport = world.index.client.transport
    path = f"/{INDEX}/_msearch"
    text = q["body"]["query"]
    embedder = world.embedder
    scope = {"tenant": TENANT, "user_id": user}

    def floor() -> None:
        embedder.embed([text], "query")
        transport.perform_request("POST", path, body=ndjson)
        if memory_ids:
            list(db.memories.find({"_id": {"$in": memory_ids}, **scope}))
        if turn_ids:
            list(db.turns.find({"_id": {"$in": turn_ids}, **scope}))

    def handler() -> None:
        with quiet():
            out = fn.lambda_handler(event, ctx)
        assert out["statusCode"] == 200, out

    return {
        "handler": handler,
        "floor": floor,
        "hit": hit,
        "bodies": len(bodies),
        "searches": cap.round_trips,
        "tokens": answer.get("tokens"),
    }


def measure(cases: list[dict[str, Any]], rnd: int) -> tuple[list[float], list[float]]:
    handler_ms, floor_ms = [], []
    for i, case in enumerate(cases):
        if (i + rnd) % 2:
            handler_ms.append(timed(case["handler"])[0])
            floor_ms.append(timed(case["floor"])[0])
        else:
            floor_ms.append(timed(case["floor"])[0])
            handler_ms.append(timed(case["handler"])[0])
    return handler_ms, floor_ms


# -- profile -----------------------------------------------------------------------------------------
def section_times(cases: list[dict[str, Any]], endpoint: str) -> dict[str, float]:
    """Median ms per step of the handler (each step wrapped with a timer for this pass only)."""
    from mongomem.adapters.mongo.memory_store import MemoryStore
    from mongomem.adapters.mongo.turns import MongoTurnRepository
    from mongomem.offline.embed_hashing import HashingEmbedder
    from mongomem.retrieval import context as context_module
    from mongomem.retrieval.block.sources import WorkingMemory
    from mongomem.retrieval.recall import Recall
    from mongomem.retrieval.search import MemorySearch
    from mongomem.vectors.opensearch import OpenSearchIndex

    spent: dict[str, list[float]] = defaultdict(list)
    current: dict[str, float] = defaultdict(float)
    steps: dict[str, list[tuple[Any, str, str]]] = {
        "context": [
            (context_module.ContextBuilder, "build", "ContextBuilder.build"),
            (WorkingMemory, "gather", "working memory"),
            (MongoTurnRepository, "latest", "recent turns (turns.latest)"),
            (MemorySearch, "search", "memories (MemorySearch.search)"),
            (Recall, "recall", "recalled (Recall.recall)"),
            (context_module, "pack", "budget fit (block.pack)"),
        ],
        "recall": [
            (Recall, "recall", "Recall.recall"),
            (HashingEmbedder, "embed", "embed query"),
            (OpenSearchIndex, "search_many", "OpenSearch _msearch (4 rankings)"),
            (MongoTurnRepository, "by_ids", "matches by id (turns.by_ids)"),
            (MongoTurnRepository, "in_ranges", "neighbours (turns.in_ranges)"),
        ],
        "search": [
            (MemorySearch, "search", "MemorySearch.search"),
            (HashingEmbedder, "embed", "embed query"),
            (OpenSearchIndex, "search", "OpenSearch _msearch (knn + bm25)"),
            (MemoryStore, "get_many", "hydrate by id (get_many)"),
        ],
    }
    originals = []

    def wrap(owner: Any, name: str, label: str) -> None:
        real = getattr(owner, name)
        originals.append((owner, name, real))

        def timed_call(*a: Any, **kw: Any) -> Any:
            started = time.perf_counter()
            try:
                return real(*a, **kw)
            finally:
                current[label] += (time.perf_counter() - started) * 1000.0

        setattr(owner, name, timed_call)

    for owner, name, label in steps[endpoint]:
        wrap(owner, name, label)
    try:
        for case in cases:
            current.clear()
            total = timed(case["handler"])[0]
            for label, ms in current.items():
                spent[label].append(ms)
            spent["handler (event in, response out)"].append(total)
    finally:
        for owner, name, real in reversed(originals):
            setattr(owner, name, real)
    return {label: r(median(v), 2) for label, v in spent.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--users", type=int, default=None, help="1,000 (quick: 100)")
    p.add_argument("--memories-per-user", type=int, default=100)
    p.add_argument("--turn-users-every", type=int, default=10, help="one user in N has recorded turns")
    p.add_argument("--turns-per-user", type=int, default=None, help="2,000 (quick: 500)")
    p.add_argument("--turns-per-session", type=int, default=100)
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--queries", type=int, default=None, help="per endpoint: 100 (quick: 60)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument(
        "--profile", type=int, default=30, help="context requests profiled after the rounds (0: none)"
    )
    p.add_argument("--heap", default="2g", help="OpenSearch JVM heap")
    p.add_argument(
        "--opensearch-url",
        default=None,
        help="a running OpenSearch node instead of starting one (its index is dropped)",
    )
    p.add_argument("--data-dir", type=Path, help="keep the servers' data here and reuse it on the next run")
    p.add_argument("--seed", type=int, default=5)
    p.add_argument(
        "--seed-only", action="store_true", help="seed --data-dir and stop (measure in a later run)"
    )
    p.add_argument(
        "--quick", action="store_true", help="100 users, 10 with 500 turns, 60 queries per endpoint"
    )
    args = p.parse_args()
    for name, full, quick in (("users", 1000, 100), ("turns_per_user", 2000, 500), ("queries", 100, 60)):
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)

    import signal

    from tests.conftest import Ctx, load_function

    def terminate(*_: Any) -> None:
        raise SystemExit(143)

    # A SIGTERM ends the run through the finally blocks below, which stop both servers.
    signal.signal(signal.SIGTERM, terminate)
    started = time.perf_counter()
    tmp = None
    data_dir = args.data_dir
    if data_dir is None:
        tmp = tempfile.mkdtemp(prefix="context-latency-")
        data_dir = Path(tmp)
    data_dir.mkdir(parents=True, exist_ok=True)
    world = World(args, data_dir)
    from mongomem.runtime import configure

    try:
        seeding = world.seed()
        if seeding:
            log(f"seeded: {json.dumps({k: round(v) for k, v in seeding.items()})} s")
        if args.seed_only:
            return
        configure(world.svc)
        fn = load_function("memory_api")
        ctx = Ctx()
        queries = make_queries(world, args.queries, args.seed)
        cases = {ep: [build_case(world, fn, ctx, ep, q) for q in qs] for ep, qs in queries.items()}
        for cs in cases.values():  # warm-up: caches, connection pools and the node
            for c in cs[: min(20, len(cs))]:
                c["handler"]()
                c["floor"]()
        per_round: dict[str, dict[str, list[float]]] = {ep: defaultdict(list) for ep in cases}
        for rnd in range(args.rounds):
            for ep, cs in cases.items():
                h, f = measure(cs, rnd)
                row = per_round[ep]
                row["p50"].append(percentile(h, 50))
                row["p95"].append(percentile(h, 95))
                row["floor_p50"].append(percentile(f, 50))
                row["floor_p95"].append(percentile(f, 95))
                row["ratio"].append(percentile(h, 50) / percentile(f, 50))
                log(
                    f"round {rnd + 1} {ep:<7} p50 {percentile(h, 50):7.2f} ms  p95 {percentile(h, 95):7.2f} ms   "
                    f"floor p50 {percentile(f, 50):6.2f} ms   ratio {row['ratio'][-1]:.2f}"
                )
        profile: dict[str, Any] = {}
        if args.profile:
            for ep in ("search", "recall", "context"):
                sample = cases[ep][: args.profile]
                profile[f"{ep}_steps_median_ms"] = steps = section_times(sample, ep)
                log(f"{ep} steps (median ms): {json.dumps(steps)}")
                text = profile_top(lambda sample=sample: [c["handler"]() for c in sample], limit=25)
                log(f"cProfile of {len(sample)} {ep} requests (cumulative):\n{text}")
                profile[f"{ep}_cprofile_top"] = [
                    " ".join(line.split()) for line in text.splitlines() if "(" in line and "{" not in line
                ][:25]
        med = {ep: {k: median(v) for k, v in row.items()} for ep, row in per_round.items()}
        result: dict[str, Any] = {
            "bench": "context_latency",
            "search_p50_ms": r(med["search"]["p50"]),
            "search_p95_ms": r(med["search"]["p95"]),
            "context_p50_ms": r(med["context"]["p50"]),
            "context_p95_ms": r(med["context"]["p95"]),
            "search_vs_floor": r(med["search"]["ratio"]),
            "context_vs_floor": r(med["context"]["ratio"]),
            "recall_p50_ms": r(med["recall"]["p50"]),
            "recall_p95_ms": r(med["recall"]["p95"]),
            "recall_vs_floor": r(med["recall"]["ratio"]),
            "goals": {"search_vs_floor": 1.2, "context_vs_floor": 1.5},
            "floor_p50_ms": {ep: r(m["floor_p50"]) for ep, m in med.items()},
            "floor_p95_ms": {ep: r(m["floor_p95"]) for ep, m in med.items()},
            "search_source_recall@10": r(sum(c["hit"] for c in cases["search"]) / len(cases["search"]), 3),
            "recall_source_recall@4": r(sum(c["hit"] for c in cases["recall"]) / len(cases["recall"]), 3),
            "opensearch_requests_per_call": {
                ep: median([c["searches"] for c in cs]) for ep, cs in cases.items()
            },
            "query_bodies_per_call": {ep: median([c["bodies"] for c in cs]) for ep, cs in cases.items()},
            "context_tokens_median": median([c["tokens"] for c in cases["context"]]),
            "rounds": args.rounds,
            "queries_per_endpoint": args.queries,
            "data": {
                **world.manifest(),
                "memories": args.users * args.memories_per_user,
                "users_with_turns": len(world.heavy),
                "turns": len(world.heavy) * args.turns_per_user,
                "index_documents": world.index.client.count(index=INDEX)["count"],
                "embedder": f"{world.embedder.model} dim {args.dim}",
                "opensearch": "2.19 single node, engine lucene",
            },
            "seeding_s": {k: round(v) for k, v in seeding.items()},
            "per_round": {
                ep: {k: [r(x) for x in v] for k, v in row.items()} for ep, row in per_round.items()
            },
            **profile,
            "wall_s": round(time.perf_counter() - started),
            "machine": machine(),
        }
        emit(result)
    finally:
        configure(None)
        world.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
