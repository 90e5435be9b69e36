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
