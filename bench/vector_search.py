"""Vector search benchmark: recall@10 of the k-NN path and the latency overhead of our search API.

Synthetic memories with cluster structure (deterministic, seeded) spread over many users. For each
VectorIndex (the OpenSearch adapter on a real node, and the embedded index) it reports (one JSON line
on stdout, progress on stderr):
  * recall@10 of `search(mode="knn")` against exact cosine search over the user's active memories
    (goal >= 0.98);
  * median latency of `search()` vs the raw request it issues, interleaved, median of several
    rounds (goal: ratio <= 1.3). For the embedded index "raw" is a bare numpy scan of the user's rows.

    .venv/bin/python bench/vector_search.py                       # 100k docs, 1,000 users
    .venv/bin/python bench/vector_search.py --docs 5000 --users 50 --queries 50   # quick
    .venv/bin/python bench/vector_search.py --url http://127.0.0.1:9200          # existing node

numpy is used here (bench only) to generate data and compute the exact ground truth.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from harness import emit, log  # noqa: E402

from mongomem.vectors.embedded import EmbeddedIndex  # noqa: E402
from mongomem.vectors.opensearch import OpenSearchIndex, make_client  # noqa: E402
from mongomem.vectors.port import IndexDoc, SearchQuery, VectorIndex, normalize  # noqa: E402

TENANT = "bench"
TYPES = ["semantic", "episodic", "procedural", "taxonomic"]
COMMON = ["user", "prefers", "likes", "remembers", "said", "about", "with", "from", "often", "usually"]


class Corpus:
    """Deterministic clustered vectors, per-user ownership, a status field and cluster-flavoured text."""

    def __init__(self, docs: int, users: int, dim: int, clusters: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        centroids = rng.standard_normal((clusters, dim)).astype(np.float32)
        self.cluster = rng.integers(0, clusters, docs)
        vecs = centroids[self.cluster] + 0.6 * rng.standard_normal((docs, dim)).astype(np.float32)
        self.vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
        self.centroids = centroids
        self.user = np.arange(docs) % users
        self.active = rng.random(docs) < 0.8
        self.ids = [f"m{i:07d}" for i in range(docs)]
        words = rng.integers(0, 30, (docs, 4))
        common = rng.integers(0, len(COMMON), (docs, 3))
        self.texts = [
            " ".join([*(f"c{self.cluster[i]}w{w}" for w in words[i]), *(COMMON[c] for c in common[i])])
            for i in range(docs)
        ]
        self.rows_of_user: dict[int, np.ndarray] = {}
        order = np.argsort(self.user, kind="stable")
        bounds = np.searchsorted(self.user[order], np.arange(users + 1))
        for u in range(users):
            self.rows_of_user[u] = order[bounds[u] : bounds[u + 1]]

    def docs(self) -> list[IndexDoc]:
        return [
            IndexDoc(
                id=self.ids[i],
                tenant=TENANT,
                user_id=f"u{self.user[i]}",
                kind="memory",
                text=self.texts[i],
                vector=self.vecs[i].tolist(),
                fields={"type": TYPES[i % 4], "status": "active" if self.active[i] else "superseded"},
            )
            for i in range(len(self.ids))
        ]

    def queries(self, n: int, seed: int) -> list[tuple[int, SearchQuery]]:
        rng = np.random.default_rng(seed + 1)
        out = []
        for _ in range(n):
            user = int(rng.integers(0, len(self.rows_of_user)))
            cluster = int(self.cluster[rng.choice(self.rows_of_user[user])])
            vec = self.centroids[cluster] + 0.6 * rng.standard_normal(self.centroids.shape[1])
            text = f"c{cluster}w{rng.integers(0, 30)} c{cluster}w{rng.integers(0, 30)} likes"
            q = SearchQuery(
                tenant=TENANT,
                user_id=f"u{user}",
                kind="memory",
                text=text,
                vector=normalize(vec.tolist()),
                top_k=10,
                filters={"status": "active"},
                mode="knn",
            )
            out.append((user, q))
        return out

    def exact(self, user: int, q: SearchQuery, k: int = 10) -> list[str]:
        rows = self.rows_of_user[user]
        rows = rows[self.active[rows]]
        scores = self.vecs[rows] @ np.asarray(q.vector, dtype=np.float32)
        top = rows[np.argsort(-scores, kind="stable")[:k]]
        return [self.ids[i] for i in top]


def with_mode(q: SearchQuery, mode: str) -> SearchQuery:
    return dataclasses.replace(q, mode=mode)  # type: ignore[arg-type]


def timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def compare(
    api: Sequence[Callable[[], Any]], raw: Sequence[Callable[[], Any]], rounds: int
) -> tuple[float, float]:
    """Median over rounds of the per-round median latency (ms), api and raw calls interleaved."""
    api_medians, raw_medians = [], []
    for r in range(rounds):
        a, b = [], []
        for i, (fa, fb) in enumerate(zip(api, raw, strict=True)):
            if (i + r) % 2:  # alternate who goes first so caches and GC favour neither
                a.append(timed(fa))
                b.append(timed(fb))
            else:
                b.append(timed(fb))
                a.append(timed(fa))
        api_medians.append(statistics.median(a) * 1000)
        raw_medians.append(statistics.median(b) * 1000)
    return statistics.median(api_medians), statistics.median(raw_medians)


def ingest(index: VectorIndex, docs: list[IndexDoc], batch: int = 1000) -> float:
    index.ensure(len(docs[0].vector))
    t0 = time.perf_counter()
    for start in range(0, len(docs), batch):
        index.upsert(docs[start : start + batch])
    return len(docs) / (time.perf_counter() - t0)


def recall(index: VectorIndex, corpus: Corpus, queries: list[tuple[int, SearchQuery]]) -> float:
    got = total = 0
    for user, q in queries:
        truth = corpus.exact(user, q)
        hits = {h.id for h in index.search(q)}
        got += len(hits.intersection(truth))
        total += len(truth)
    return got / max(total, 1)


def raw_opensearch(index: OpenSearchIndex, q: SearchQuery) -> Callable[[], Any]:
    """The exact HTTP request(s) `search` sends, pre-serialised, through the same client."""
    bodies = [body for _, body in index.query_bodies(q)]
    transport = index.client.transport
    if len(bodies) == 1:
        payload = json.dumps(bodies[0])
        return lambda: transport.perform_request("POST", f"/{index.index_name}/_search", body=payload)
    ndjson = "".join(f"{{}}\n{json.dumps(b)}\n" for b in bodies)
    return lambda: transport.perform_request("POST", f"/{index.index_name}/_msearch", body=ndjson)


def raw_embedded(corpus: Corpus, user: int, q: SearchQuery) -> Callable[[], Any]:
    rows = corpus.rows_of_user[user]
    rows = rows[corpus.active[rows]]
    matrix = np.ascontiguousarray(corpus.vecs[rows])
    assert q.vector is not None
    vector = np.asarray(q.vector, dtype=np.float32)

    def scan() -> Any:
        scores = np.einsum("ij,j->i", matrix, vector)  # as the index does (no BLAS threads)
        k = min(q.top_k, len(scores) - 1)
        return rows[np.argpartition(-scores, k)[: q.top_k]]

    return scan


def settle(index: OpenSearchIndex, quiet_polls: int = 3) -> None:
    """Refresh, then wait until background segment merges (HNSW graph rebuilds) stop: steady state."""
    index.client.indices.refresh(index=index.index_name)
    quiet = 0
    while quiet < quiet_polls:
        stats = index.client.indices.stats(index=index.index_name, metric="merge")
        quiet = quiet + 1 if stats["_all"]["total"]["merges"]["current"] == 0 else 0
        time.sleep(1)


def run(
    name: str, index: VectorIndex, corpus: Corpus, args: argparse.Namespace, raw: Callable[..., Any]
) -> dict[str, Any]:
    docs = corpus.docs()
    rate = ingest(index, docs)
    if isinstance(index, OpenSearchIndex):
        settle(index)
    queries = corpus.queries(args.queries, args.seed)
    for _, q in queries[: min(50, len(queries))]:  # warm caches and the JIT
        index.search(q)
    r = recall(index, corpus, queries)
    log(f"\n[{name}] {len(docs):,} docs, {args.users:,} users, dim {args.dim}: ingest {rate:,.0f} docs/s")
    log(f"  recall@10 (knn vs exact)      {r:.4f}   goal >= 0.98")
    result: dict[str, Any] = {"ingest_docs_per_s": round(rate), "recall_at_10": round(r, 4)}
    for mode in ("knn", "hybrid"):
        qs = [(u, with_mode(q, mode)) for u, q in queries]
        api = [lambda q=q: index.search(q) for _, q in qs]
        raws = [raw(u, q) for u, q in qs]
        a, b = compare(api, raws, args.rounds)
        log(f"  {mode:<6} median latency api {a:7.3f} ms   raw {b:7.3f} ms   ratio {a / b:5.2f}")
        result.update(
            {f"{mode}_api_ms": round(a, 3), f"{mode}_raw_ms": round(b, 3), f"{mode}_ratio": round(a / b, 2)}
        )
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--docs", type=int, default=100_000)
    p.add_argument("--users", type=int, default=1_000)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--dim", type=int, default=128, help="64-384")
    p.add_argument("--clusters", type=int, default=64)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--engine", default="lucene", help="k-NN engine (the local node has lucene only)")
    p.add_argument("--url", help="use a running node instead of starting one")
    p.add_argument("--heap", default="1g")
    p.add_argument("--skip-opensearch", action="store_true")
    p.add_argument("--skip-embedded", action="store_true")
    args = p.parse_args(argv)

    t0 = time.perf_counter()
    corpus = Corpus(args.docs, args.users, args.dim, args.clusters, args.seed)
    log(f"corpus generated in {time.perf_counter() - t0:.1f}s")
    result: dict[str, Any] = {
        "bench": "vector_search",
        "docs": args.docs,
        "users": args.users,
        "queries": args.queries,
        "dim": args.dim,
        "rounds": args.rounds,
    }

    if not args.skip_embedded:
        embedded = EmbeddedIndex(None)
        result["embedded"] = run("embedded", embedded, corpus, args, lambda u, q: raw_embedded(corpus, u, q))
        del embedded

    if not args.skip_opensearch:
        node = None
        url = args.url
        if url is None:
            from opensearch_node import OpenSearchNode

            node = OpenSearchNode()
            node.start(heap=args.heap)
            url = node.url
            log(f"\nOpenSearch node started in {node.startup_seconds:.1f}s at {url}")
        index = OpenSearchIndex(
            make_client(url, timeout=120), "bench-memories", engine=args.engine, replicas=0
        )
        index.drop()
        try:
            result["opensearch"] = run(
                f"opensearch/{args.engine}", index, corpus, args, lambda _u, q: raw_opensearch(index, q)
            )
        finally:
            index.drop()
            if node is not None:
                node.stop()
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
