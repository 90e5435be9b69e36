"""Invariant 4: the index can be dropped and rebuilt from MongoDB (`mongomem reindex`) with identical results."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.cli import main
from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.models.common import Scope
from mongomem.models.memory import CreateMemoryRequest
from mongomem.models.search import SearchRequest
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.retrieval.search import MemorySearch
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from mongomem.vectors.opensearch import OpenSearchIndex

USERS = ["ana", "ben"]
TOPICS = (
    "hiking in the alps",
    "sourdough bread baking",
    "jazz piano lessons",
    "marathon training plan",
    "vegetarian cooking",
    "python programming",
    "bird watching at dawn",
    "sailing on the lake",
    "chess openings",
    "learning japanese",
    "gardening tomatoes",
    "trail running shoes",
)
QUERIES = ["running", "cooking and baking bread", "what music does the user play", "japanese", "lake sailing"]


class Env:
    """One vector index kind, reachable both in-process and by the CLI through MONGOMEM_* variables."""

    def __init__(self, kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
        self.kind = kind
        self.path = tmp_path / "vectors"
        self.url = ""
        self.name = f"t-reindex-{uuid.uuid4().hex[:10]}"
        if kind == "opensearch":
            self.url = request.getfixturevalue("opensearch_node").url
            request.addfinalizer(lambda: OpenSearchIndex(self.url, self.name).drop())

    def index(self) -> Any:
        """A fresh handle: the embedded index reloads what the CLI wrote to its sqlite file."""
        if self.kind == "embedded":
            return EmbeddedIndex(self.path)
        return OpenSearchIndex(self.url, self.name, engine="lucene", refresh=True)

    def variables(self) -> dict[str, str]:
        if self.kind == "embedded":
            return {"MONGOMEM_VECTOR_INDEX_PATH": str(self.path)}
        return {
            "MONGOMEM_OPENSEARCH_ENDPOINT": self.url,
            "MONGOMEM_OPENSEARCH_ENGINE": "lucene",
            "MONGOMEM_OPENSEARCH_INDEX": self.name,
        }

    def after_cli(self, index: Any) -> None:
        """The CLI writes without refresh (as deployed); make its writes visible to the next search."""
        if isinstance(index, OpenSearchIndex):
            index.client.indices.refresh(index=self.name)

    def tombstones(self, index: Any) -> int:
        """Deleted-but-retained Lucene documents: each re-upsert (supersede, reinforce) leaves one.

        Lucene keeps them (soft deletes, retained for recovery) and counts them in BM25's term
        statistics, so raw BM25 scores of a long-lived index differ from those of a fresh build even
        after a force merge. The embedded index keeps exact statistics and has none.
        """
        if not isinstance(index, OpenSearchIndex):
            return 0
        stats = index.client.indices.stats(index=self.name, metric="docs")
        return int(stats["_all"]["primaries"]["docs"]["deleted"])


@pytest.fixture(params=["embedded", pytest.param("opensearch", marks=pytest.mark.opensearch)])
def env(
    request: pytest.FixtureRequest, tmp_path: Path, mongo_server: Any, db_name: str, monkeypatch: Any
) -> Env:
    env = Env(request.param, request, tmp_path)
    monkeypatch.setenv("MONGOMEM_MONGODB_URI", mongo_server.uri)
    monkeypatch.setenv("MONGOMEM_DB_NAME", db_name)
    for name, value in env.variables().items():
        monkeypatch.setenv(name, value)
    return env


@pytest.fixture
def svc(env: Env, make_settings: Any) -> Iterator[Services]:
    cfg = parse_project_config({"memory": {"extraction": {"enabled": ["episodic"]}}})
    services = Services(
        make_settings(project=cfg, enabled_extractions=["episodic"]),
        # Near matches (same topic under another attribute) are ambiguous: the scripted LLM keeps both.
        llm=ScriptedLLM({"reconcile": [{"decision": "ADD", "reason": "a different fact"}]}, loop=True),
        embedder=HashingEmbedder(dim=96),
        vector_index=env.index(),
        queue_factory=local_queue_factory,
    )
    configure(services)
    yield services
    configure(None)
    services.database.drop()


def write_memories(svc: Services) -> None:
    """Adds, restatements (reinforcement), updates (superseded versions) and a delete for two users."""
    for u, user in enumerate(USERS):
        scope = Scope(tenant="default", user_id=user)
        for i, topic in enumerate(TOPICS[u::2] + TOPICS[: 3 + u]):
            payload = {"subject": "user", "attribute": f"hobby {i % 7}", "value": topic}
            svc.memories.create(scope, CreateMemoryRequest(type="semantic", payload=payload))
        for topic in TOPICS[:4]:
            payload = {"subject": "user", "attribute": "likes", "value": topic}
            for _ in range(1 + TOPICS.index(topic) % 3):
                svc.memories.create(scope, CreateMemoryRequest(type="semantic", payload=payload))
        victim = svc.memory_store.list_page(scope, "semantic", "active", 1, None)[0]
        svc.memories.delete(scope, victim.memory_id)
    statuses = {d["status"] for d in svc.memory_store.coll.find({}, {"status": 1})}
    assert statuses == {"active", "superseded", "deleted"}


def snapshot(svc: Services, index: Any) -> list[Any]:
    """Every query x mode x history flag for every user, as (mode, [(id, score, signals)]) per search."""
    searcher = MemorySearch(svc.memory_store, index, svc.embedder)
    out = []
    for user in USERS:
        for query in QUERIES:
            for mode in ("hybrid", "knn", "bm25"):
                for history in (False, True):
                    request = SearchRequest(query=query, mode=mode, include_superseded=history, top_k=8)
                    response = searcher.search(Scope(tenant="default", user_id=user), request)
                    out.append(
                        (mode, [(r.memory_id, r.score, r.signals.model_dump()) for r in response.results])
                    )
    return out


def assert_same(before: list[Any], after: list[Any], raw_bm25: bool = True) -> None:
    """Same ids in the same order with the same scores and signals.

    Without `raw_bm25` (a long-lived Lucene index, see Env.tombstones) BM25's term statistics differ, and
    with them BM25 scores and so the order of BM25 and hybrid answers: those must hold the same memories
    with the same k-NN signals; k-NN answers must still be identical.
    """
    assert len(before) == len(after)
    for (mode, old), (_, new) in zip(before, after, strict=True):
        if raw_bm25 or mode == "knn":
            assert [i for i, _, _ in new] == [i for i, _, _ in old], (mode, old, new)
            for (_, old_score, old_sig), (_, new_score, new_sig) in zip(old, new, strict=True):
                assert new_score == pytest.approx(old_score, abs=1e-6)
                assert new_sig == pytest.approx(old_sig, abs=1e-6)
            continue
        assert {i for i, _, _ in new} == {i for i, _, _ in old}, (mode, old, new)
        knn = {i: (sig["knn_rank"], round(sig["knn_score"] or 0, 5)) for i, _, sig in old}
        assert {i: (sig["knn_rank"], round(sig["knn_score"] or 0, 5)) for i, _, sig in new} == knn


def record(env: Env, svc: Services) -> list[Any]:
    """The answers of the index as written through, after updates, restatements and a delete."""
    write_memories(svc)
    live = snapshot(svc, svc.vector_index)
    assert sum(len(r) for _, r in live) > 100
    assert (env.tombstones(svc.vector_index) > 0) == (env.kind == "opensearch")
    return live


def test_dropped_index_is_rebuilt_by_reindex_with_identical_results(
    env: Env, svc: Services, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given memories with history (updates, restatements, a delete), and the answers the index gives
    live = record(env, svc)
    versions = svc.memory_store.coll.count_documents({"status": {"$ne": "deleted"}})
    # When the index is lost, Then search finds nothing
    index = svc.vector_index
    assert index is not None
    index.drop()
    assert index.count() == 0 and all(r == [] for _, r in snapshot(svc, index))
    # When `mongomem reindex` rebuilds it from MongoDB
    assert main(["reindex"]) == 0
    out = capsys.readouterr().out
    assert f"indexed {versions} of {versions} memory versions" in out
    assert f"done: {versions} memory versions indexed" in out
    rebuilt = env.index()
    env.after_cli(rebuilt)
    # Then every search answers as before: ids, order, scores and signals (raw BM25: see Env.tombstones)
    assert rebuilt.count() == versions
    assert_same(live, snapshot(svc, rebuilt), raw_bm25=env.kind == "embedded")


def test_reindex_drop_replaces_a_populated_index_with_identical_results(
    env: Env, svc: Services, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a populated index
    live = record(env, svc)
    versions = svc.memory_store.coll.count_documents({"status": {"$ne": "deleted"}})
    rebuilds = []
    # When `mongomem reindex --drop` runs twice
    for _ in range(2):
        assert main(["reindex", "--drop"]) == 0
        out = capsys.readouterr().out
        assert f"{type(svc.vector_index).__name__}: {versions} documents before reindex" in out
        assert "dropping the index" in out and f"done: {versions} memory versions indexed" in out
        rebuilt = env.index()
        env.after_cli(rebuilt)
        assert rebuilt.count() == versions and env.tombstones(rebuilt) == 0
        rebuilds.append(snapshot(svc, rebuilt))
    # Then both rebuilds answer identically, raw BM25 scores included, and as the live index did
    assert_same(rebuilds[0], rebuilds[1])
    assert_same(live, rebuilds[0], raw_bm25=env.kind == "embedded")
    assert svc.memory_store.coll.count_documents({"index_state": "pending"}) == 0


def test_reindex_without_an_index_configured_says_how_to_configure_one(
    mongo_server: Any, db_name: str, monkeypatch: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MONGOMEM_MONGODB_URI", mongo_server.uri)
    monkeypatch.setenv("MONGOMEM_DB_NAME", db_name)
    for name in ("MONGOMEM_OPENSEARCH_ENDPOINT", "MONGOMEM_VECTOR_INDEX_PATH"):
        monkeypatch.delenv(name, raising=False)
    assert main(["reindex"]) == 2
    assert "MONGOMEM_OPENSEARCH_ENDPOINT" in capsys.readouterr().err


def test_reindex_reports_an_unreachable_index(
    mongo_server: Any, db_name: str, monkeypatch: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from opensearch_node import free_port

    monkeypatch.setenv("MONGOMEM_MONGODB_URI", mongo_server.uri)
    monkeypatch.setenv("MONGOMEM_DB_NAME", db_name)
    monkeypatch.setenv("MONGOMEM_OPENSEARCH_ENDPOINT", f"http://127.0.0.1:{free_port()}")
    assert main(["reindex", "--drop"]) == 1
    assert "does not answer" in capsys.readouterr().err
