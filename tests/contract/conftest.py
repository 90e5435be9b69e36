"""Contract-test fixtures: each VectorIndex implementation (the OpenSearch node is in tests/conftest.py)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.vectors.port import VectorIndex

IMPLEMENTATIONS = [
    "embedded",
    "embedded-pure-python",
    pytest.param("opensearch", marks=pytest.mark.opensearch),
]

OpenIndex = Callable[[], VectorIndex]


@pytest.fixture(params=IMPLEMENTATIONS)
def open_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenIndex]:
    """A factory of VectorIndex instances over ONE fresh storage; calling it again reopens it."""
    opened: list[Any] = []
    if request.param == "opensearch":
        from mongomem.vectors.opensearch import OpenSearchIndex

        node = request.getfixturevalue("opensearch_node")
        name = f"contract-{uuid.uuid4().hex[:12]}"

        def factory() -> VectorIndex:
            # Tests run engine lucene (the only one this node has); production uses faiss with the same JSON.
            index = OpenSearchIndex(node.url, name, engine="lucene", shards=1, replicas=0, refresh=True)
            opened.append(index)
            return index
    else:
        from mongomem.vectors.embedded import EmbeddedIndex

        use_numpy = request.param == "embedded"

        def factory() -> VectorIndex:
            index = EmbeddedIndex(tmp_path / "vectors", use_numpy=use_numpy)
            opened.append(index)
            return index

    yield factory
    if opened:
        opened[-1].drop()
    for index in opened:
        if hasattr(index, "close"):
            index.close()


@pytest.fixture
def index(open_index: OpenIndex) -> VectorIndex:
    return open_index()


# -- repositories -----------------------------------------------------------------------------------
# Each repository Protocol has one contract suite here; every implementation of it runs that suite:
# the MongoDB adapter against the real server (SecantusDB), the in-memory fakes of tests/fakes.py too.


@pytest.fixture
def database(mongo_server: Any, db_name: str) -> Iterator[Any]:
    """A fresh memory database with the durable write concern, dropped afterwards."""
    from mongomem.adapters.mongo import MongoDatabase, get_client, write_concern_for

    client = get_client(mongo_server.uri)
    db = MongoDatabase(client, db_name, write_concern_for(client, "auto", 5000))
    yield db
    db.drop()


def _indexed(repository: Any) -> Any:
    repository.ensure_indexes()
    return repository


@pytest.fixture(params=["mongo"])
def sessions(request: pytest.FixtureRequest, database: Any) -> Any:
    from mongomem.adapters.mongo.sessions import MongoSessionRepository

    return _indexed(MongoSessionRepository(database))


@pytest.fixture(params=["mongo"])
def turns(request: pytest.FixtureRequest, database: Any) -> Any:
    from mongomem.adapters.mongo.turns import MongoTurnRepository

    return _indexed(MongoTurnRepository(database))


@pytest.fixture(params=["mongo"])
def snapshots(request: pytest.FixtureRequest, database: Any) -> Any:
    from mongomem.adapters.mongo.snapshots import MongoSnapshotRepository

    return _indexed(MongoSnapshotRepository(database))


@pytest.fixture(params=["mongo"])
def api_keys(request: pytest.FixtureRequest, database: Any) -> Any:
    from mongomem.adapters.mongo.api_keys import MongoApiKeyRepository

    return _indexed(MongoApiKeyRepository(database))


@pytest.fixture(params=["mongo", "in-memory"])
def working_memory(request: pytest.FixtureRequest) -> Any:
    if request.param == "in-memory":
        from tests.fakes import InMemoryWorkingMemory

        return InMemoryWorkingMemory()
    from mongomem.adapters.mongo.working_memory import MongoWorkingMemoryRepository

    return MongoWorkingMemoryRepository(request.getfixturevalue("database"))


@pytest.fixture(params=["mongo"])
def erasure(request: pytest.FixtureRequest, database: Any) -> Any:
    from mongomem.adapters.mongo.erasure import MongoErasureRepository

    return _indexed(MongoErasureRepository(database))


@pytest.fixture(params=["mongo"])
def backlog(request: pytest.FixtureRequest, database: Any) -> Any:
    from mongomem.adapters.mongo.figures import MongoBacklogRepository

    return MongoBacklogRepository(database)


@pytest.fixture(params=["mongo"])
def directory(request: pytest.FixtureRequest, database: Any) -> Any:
    from mongomem.adapters.mongo.directory import MongoDirectoryRepository

    return MongoDirectoryRepository(database)


@pytest.fixture(params=["mongo"])
def memories(request: pytest.FixtureRequest, database: Any) -> Any:
    from mongomem.adapters.memory_store import MemoryStore

    return _indexed(MemoryStore(database.db))
