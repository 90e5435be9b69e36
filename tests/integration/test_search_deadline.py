"""The search index's timeouts and retries end within an API request's deadline (issue 21, finding 10).

API Gateway answers a client 503 once an integration has not answered within 30 s, and the function runs
on unseen ("Quotas for configuring and running an HTTP API"). The OpenSearch client's own settings (10 s
per attempt, 4 attempts) outlive that; inside an API request (mongomem.budget) each attempt is cut so
that all of them end before the request's deadline, and the caller gets our own 503.
"""

from __future__ import annotations

import time

import pytest

from mongomem.budget import request_budget
from mongomem.errors import Unavailable
from mongomem.vectors.opensearch import OpenSearchIndex, make_client
from mongomem.vectors.port import IndexUnavailable, SearchQuery


def test_a_hanging_search_index_gives_up_within_the_requests_budget() -> None:
    from twin.faults import Blackhole

    with Blackhole() as hole:
        # Given a search endpoint that accepts connections and never answers
        index = OpenSearchIndex(make_client(hole.url, timeout=10, max_retries=3), "hangs", engine="lucene")
        query = SearchQuery("acme", "ana", "memory", "tea", [1.0] * 8, top_k=3)
        # When a search runs inside a request with 3 s left
        started = time.monotonic()
        with request_budget(3.0), pytest.raises(IndexUnavailable) as refused:
            index.search(query)
        took = time.monotonic() - started
    # Then it gives up by the deadline (not after 4 attempts of 10 s), as an error the API answers with
    # a 503 of its own
    assert took < 3.0 + 1.0, took
    assert isinstance(refused.value, Unavailable)
