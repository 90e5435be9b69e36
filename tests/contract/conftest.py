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
    pytest.param("opensearch-serverless", marks=pytest.mark.opensearch),
]

# How long the Serverless stand-in keeps a write from search here: long enough that a test which did not
# wait for visibility fails, short enough to keep the suite quick (the twin runs a realistic one).
VISIBILITY_SECONDS = 0.3


@pytest.fixture(scope="session")
def serverless_collection(opensearch_node: Any) -> Iterator[Any]:
    """The OpenSearch Serverless stand-in (tools/twin/aoss.py) in front of the session's node."""
    from twin.aoss import SearchProxy

    with SearchProxy(opensearch_node.url, visibility_seconds=VISIBILITY_SECONDS) as proxy:
        yield proxy


def signed_client(url: str, service: str = "aoss") -> Any:
    """An opensearch-py client that signs with SigV4 for `service`, as a deployed function does."""
    from botocore.credentials import Credentials
    from opensearchpy import OpenSearch, Urllib3AWSV4SignerAuth, Urllib3HttpConnection

    auth = Urllib3AWSV4SignerAuth(Credentials("AKIDTWINTWINTWIN", "twin-secret"), "eu-west-1", service)
    return OpenSearch(hosts=[url], http_auth=auth, connection_class=Urllib3HttpConnection, timeout=30)


class Visible:
    """A VectorIndex whose writes return once search sees them: the test waits for visibility (the
    stand-in's clock), it never refreshes."""

    def __init__(self, index: Any, collection: Any) -> None:
        self._index = index
        self._collection = collection

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._index, name)
        if name not in ("upsert", "delete", "delete_user", "drop", "ensure"):
            return attr

        def then_settle(*args: Any, **kwargs: Any) -> Any:
            result = attr(*args, **kwargs)
            self._collection.settle()
            return result

        return then_settle


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
    elif request.param == "opensearch-serverless":
        from mongomem.vectors.opensearch import OpenSearchIndex

        collection = request.getfixturevalue("serverless_collection")
        name = f"contract-{uuid.uuid4().hex[:12]}"

        def factory() -> VectorIndex:
            # faiss, as deployed: the stand-in refuses lucene and builds the node's index with it
            signed = OpenSearchIndex(signed_client(collection.url), name, serverless=True)
            opened.append(signed)
            return Visible(signed, collection)
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


@pytest.fixture(params=["mongo", "in-memory"])
def sessions(request: pytest.FixtureRequest) -> Any:
    if request.param == "in-memory":
        from tests.fakes import InMemorySessionRepository

        return InMemorySessionRepository()
    from mongomem.adapters.mongo.sessions import MongoSessionRepository

    return _indexed(MongoSessionRepository(request.getfixturevalue("database")))


@pytest.fixture(params=["mongo", "in-memory"])
def turns(request: pytest.FixtureRequest) -> Any:
    if request.param == "in-memory":
        from tests.fakes import InMemoryTurnRepository

        return InMemoryTurnRepository()
    from mongomem.adapters.mongo.turns import MongoTurnRepository

    return _indexed(MongoTurnRepository(request.getfixturevalue("database")))


@pytest.fixture(params=["mongo", "in-memory"])
def snapshots(request: pytest.FixtureRequest) -> Any:
    if request.param == "in-memory":
        from tests.fakes import InMemorySnapshotRepository

        return InMemorySnapshotRepository()
    from mongomem.adapters.mongo.snapshots import MongoSnapshotRepository

    return _indexed(MongoSnapshotRepository(request.getfixturevalue("database")))


# The ApiKeyRepository implementations the suite runs against (CONTRIBUTING.md's store recipe adds one).
API_KEYS = ["mongo", "in-memory"]


@pytest.fixture(params=API_KEYS)
def api_keys(request: pytest.FixtureRequest) -> Any:
    if request.param == "in-memory":
        from tests.fakes import InMemoryApiKeyRepository

        return InMemoryApiKeyRepository()
    if request.param == "mongo":
        from mongomem.adapters.mongo.api_keys import MongoApiKeyRepository

        return _indexed(MongoApiKeyRepository(request.getfixturevalue("database")))
    raise LookupError(f"no branch of the api_keys fixture builds {request.param!r}")


@pytest.fixture(params=["mongo", "in-memory"])
def working_memory(request: pytest.FixtureRequest) -> Any:
    if request.param == "in-memory":
        from tests.fakes import InMemoryWorkingMemory

        return InMemoryWorkingMemory()
    from mongomem.adapters.mongo.working_memory import MongoWorkingMemoryRepository

    return MongoWorkingMemoryRepository(request.getfixturevalue("database"))


@pytest.fixture(params=["mongo", "in-memory"])
def store(request: pytest.FixtureRequest) -> Any:
    """Every collection at once, for the cross-collection contracts: one MongoDB database through its
    adapters, or tests.fakes.InMemoryStore; both give the seeding hooks of tests/contract/seed.py."""
    if request.param == "in-memory":
        from tests.fakes import InMemoryStore

        return InMemoryStore()
    from tests.contract.seed import MongoStore

    return MongoStore(request.getfixturevalue("database"))


@pytest.fixture
def erasure(store: Any) -> Any:
    from tests.fakes import InMemoryErasureRepository, InMemoryStore

    if isinstance(store, InMemoryStore):
        return InMemoryErasureRepository(store)
    from mongomem.adapters.mongo.erasure import MongoErasureRepository

    return _indexed(MongoErasureRepository(store.database))


@pytest.fixture
def backlog(store: Any) -> Any:
    from tests.fakes import InMemoryBacklogRepository, InMemoryStore

    if isinstance(store, InMemoryStore):
        return InMemoryBacklogRepository(store)
    from mongomem.adapters.mongo.backlog import MongoBacklogRepository

    return MongoBacklogRepository(store.database)


@pytest.fixture
def directory(store: Any) -> Any:
    from tests.fakes import InMemoryDirectoryRepository, InMemoryStore

    if isinstance(store, InMemoryStore):
        return InMemoryDirectoryRepository(store)
    from mongomem.adapters.mongo.directory import MongoDirectoryRepository

    return MongoDirectoryRepository(store.database)


@pytest.fixture(params=["mongo", "in-memory"])
def memories(request: pytest.FixtureRequest) -> Any:
    if request.param == "in-memory":
        from tests.fakes import InMemoryMemoryRepository

        return InMemoryMemoryRepository()
    from mongomem.adapters.mongo.memory_store import MemoryStore

    return _indexed(MemoryStore(request.getfixturevalue("database").db))
