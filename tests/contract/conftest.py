"""Contract-test fixtures: one real OpenSearch node per session and each VectorIndex implementation.

The lead will move `opensearch_node` to tests/conftest.py; it is self-contained for that reason.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.vectors.port import VectorIndex

TOOLS = Path(__file__).resolve().parents[2] / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

from opensearch_node import OpenSearchNode, OpenSearchNodeError  # noqa: E402

IMPLEMENTATIONS = [
    "embedded",
    "embedded-pure-python",
    pytest.param("opensearch", marks=pytest.mark.opensearch),
]


@pytest.fixture(scope="session")
def opensearch_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenSearchNode]:
    """A real OpenSearch 2.19 + k-NN node; a start failure fails the tests (never skips them)."""
    node = OpenSearchNode()
    try:
        node.start(data_dir=tmp_path_factory.mktemp("opensearch"), heap="1g")
    except OpenSearchNodeError as exc:
        message = str(exc)
        tail = node.log_tail()
        if tail not in message:
            message += f"\n--- node log tail ---\n{tail}"
        pytest.fail(f"OpenSearch node did not start: {message}", pytrace=False)
    yield node
    node.stop()


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
