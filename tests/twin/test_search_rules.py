"""OpenSearch Serverless as AWS publishes it (docs/aws-rules.md), and mongomem's index working within it.

The stand-in (tools/twin/aoss.py) is a proxy in front of the real node: the first tests show it refuses
what a vector search collection refuses; the others run the code the functions run (the index built from
deployed settings, signed for `aoss`) against it, waiting for writes to become visible, never refreshing.
"""

from __future__ import annotations

import json
import time
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mongomem.vectors.port import IndexDoc, SearchQuery
from tests.contract.conftest import signed_client

pytestmark = pytest.mark.opensearch

DIM = 8
DELAY = 1.0  # seconds a write stays invisible here (the deployed journey runs a realistic one)


@pytest.fixture(scope="module")
def collection(opensearch_node: Any) -> Iterator[Any]:
    from twin.aoss import SearchProxy

    with SearchProxy(opensearch_node.url, visibility_seconds=DELAY) as proxy:
        yield proxy


@pytest.fixture
def name() -> str:
    return f"rules-{uuid.uuid4().hex[:10]}"


def raw(url: str, method: str, path: str, body: Any = None, ndjson: bool = False) -> tuple[int, bytes]:
    """An unsigned request straight to a URL (the node, or the stand-in with signing switched off)."""
    data = None
    if body is not None:
        data = b"".join(json.dumps(x).encode() + b"\n" for x in body) if ndjson else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method=method)
    request.add_header("Content-Type", "application/x-ndjson" if ndjson else "application/json")
    try:
        with urllib.request.urlopen(request) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def vec(*lead: float) -> list[float]:
    return [*lead, *([0.0] * (DIM - len(lead)))]


def doc(doc_id: str, text: str, user: str = "ana", **fields: Any) -> IndexDoc:
    return IndexDoc(doc_id, "acme", user, "memory", text, vec(1.0, 0.5), fields)


def query(text: str, user: str = "ana") -> SearchQuery:
    return SearchQuery("acme", user, "memory", text, vec(1.0, 0.5), top_k=10)


def eventually(probe: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def serverless_index(collection: Any, name: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The index a deployed function builds (Services from the settings the template gives it)."""
    from mongomem.config import Settings
    from mongomem.runtime import Services

    for key, value in {
        "AWS_ACCESS_KEY_ID": "AKIDTWINTWINTWIN",
        "AWS_SECRET_ACCESS_KEY": "twin-secret",
        "AWS_REGION": "eu-west-1",
    }.items():
        monkeypatch.setenv(key, value)
    settings = Settings(
        opensearch_endpoint=collection.url,
        opensearch_auth="sigv4-aoss",
        opensearch_engine="faiss",
        opensearch_index=name,
        aws_region="eu-west-1",
    )
    return Services(settings).vector_index


# -- the stand-in refuses what a vector search collection refuses -------------------------------------


def test_the_collection_refuses_custom_ids_upserts_refresh_and_lucene(
    opensearch_node: Any, name: str
) -> None:
    from twin.aoss import NO_CUSTOM_ID, SearchProxy

    with SearchProxy(opensearch_node.url, check_signature=False) as aoss:
        mapping = {"properties": {"v": {"type": "knn_vector", "dimension": DIM}}}
        # lucene is no engine of a vector search collection; faiss (hnsw) and nmslib are
        lucene = {"type": "knn_vector", "dimension": DIM, "method": {"name": "hnsw", "engine": "lucene"}}
        status, body = raw(aoss.url, "PUT", f"/{name}", {"mappings": {"properties": {"v": lucene}}})
        assert status == 400 and b"lucene" in body
        ivf = {"type": "knn_vector", "dimension": DIM, "method": {"name": "ivf", "engine": "faiss"}}
        assert raw(aoss.url, "PUT", f"/{name}", {"mappings": {"properties": {"v": ivf}}})[0] == 400
        faiss = {"type": "knn_vector", "dimension": DIM, "method": {"name": "hnsw", "engine": "faiss"}}
        assert (
            raw(aoss.url, "PUT", f"/{name}", {"settings": {"index.knn": True}, "mappings": mapping})[0] == 200
        )
        shown = json.loads(raw(aoss.url, "GET", f"/{name}/_mapping")[1])
        assert shown[name]["mappings"]["properties"]["v"]["method"]["engine"] == "nmslib"  # Classic default
        raw(aoss.url, "DELETE", f"/{name}")
        knn = {"settings": {"index.knn": True}, "mappings": {"properties": {"v": faiss}}}
        assert raw(aoss.url, "PUT", f"/{name}", knn)[0] == 200
        shown = json.loads(raw(aoss.url, "GET", f"/{name}/_mapping")[1])
        assert shown[name]["mappings"]["properties"]["v"]["method"]["engine"] == "faiss"
        # a custom document id: 400 per bulk item, and for the single-document APIs
        status, body = raw(
            aoss.url, "POST", "/_bulk", [{"index": {"_index": name, "_id": "m1"}}, {"t": 1}], True
        )
        item = json.loads(body)["items"][0]["index"]
        assert (status, item["status"], item["error"]["reason"]) == (200, 400, NO_CUSTOM_ID)
        assert raw(aoss.url, "PUT", f"/{name}/_doc/m1", {"t": 1})[0] == 400
        assert raw(aoss.url, "PUT", f"/{name}/_create/m1", {"t": 1})[0] == 400
        assert raw(aoss.url, "POST", f"/{name}/_doc/m1", {"t": 1})[0] == 404  # no such operation
        upsert = [{"update": {"_index": name, "_id": "x"}}, {"doc": {"t": 2}, "doc_as_upsert": True}]
        assert (
            json.loads(raw(aoss.url, "POST", "/_bulk", upsert, True)[1])["items"][0]["update"]["status"]
            == 400
        )
        # no _refresh, no refresh on a write, no _delete_by_query, no scroll: 404 with an empty body
        assert raw(aoss.url, "POST", f"/{name}/_refresh") == (404, b"")
        assert raw(aoss.url, "POST", f"/{name}/_delete_by_query", {"query": {"match_all": {}}}) == (404, b"")
        assert raw(aoss.url, "POST", f"/{name}/_search?scroll=1m", {})[0] == 404
        assert raw(aoss.url, "GET", "/")[0] == 404
        assert raw(aoss.url, "POST", f"/{name}/_doc?refresh=true", {"t": 1})[0] == 400
        # a document without an id is taken, and its id assigned by the service
        status, body = raw(aoss.url, "POST", f"/{name}/_doc", {"t": 1})
        assert status == 201 and json.loads(body)["_id"]


def test_a_write_is_searchable_only_after_the_collection_refreshes(opensearch_node: Any, name: str) -> None:
    from twin.aoss import SearchProxy

    with SearchProxy(opensearch_node.url, visibility_seconds=DELAY, check_signature=False) as aoss:
        raw(aoss.url, "PUT", f"/{name}", {"mappings": {"properties": {"t": {"type": "keyword"}}}})
        written = time.monotonic()
        _id = json.loads(raw(aoss.url, "POST", f"/{name}/_doc", {"t": "x"})[1])["_id"]

        def count() -> int:
            return int(
                json.loads(raw(aoss.url, "POST", f"/{name}/_count", {"query": {"match_all": {}}})[1])["count"]
            )

        assert count() == 0  # acknowledged, not yet searchable
        assert eventually(count) == 1
        assert time.monotonic() - written >= DELAY
        # a delete is acknowledged at once and leaves search at the next refresh
        assert json.loads(raw(aoss.url, "DELETE", f"/{name}/_doc/{_id}")[1])["result"] == "deleted"
        assert json.loads(raw(aoss.url, "DELETE", f"/{name}/_doc/{_id}")[1])["result"] == "not_found"
        assert count() == 1
        assert eventually(lambda: count() == 0)


def test_requests_must_be_signed_for_aoss(collection: Any, opensearch_node: Any, name: str) -> None:
    # unsigned, or signed for the domain service `es`: refused before anything happens
    assert raw(collection.url, "PUT", f"/{name}", {})[0] == 403
    with pytest.raises(Exception, match="403"):
        signed_client(collection.url, service="es").indices.create(index=name, body={})
    assert raw(opensearch_node.url, "HEAD", f"/{name}")[0] == 404
    # signed for aoss, with the payload hash the service requires: accepted
    signed_client(collection.url).indices.create(index=name, body={})
    assert raw(opensearch_node.url, "HEAD", f"/{name}")[0] == 200
    raw(opensearch_node.url, "DELETE", f"/{name}")


# -- mongomem within those rules -------------------------------------------------------------------------


def test_memories_and_recall_turns_are_indexed_in_a_serverless_collection(
    collection: Any, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the index a deployed function builds for OpenSearchMode=serverless
    index = serverless_index(collection, name, monkeypatch)
    try:
        # When a memory and a recalled turn's own-text chunk (ids "<turn>#own0") are written
        index.upsert(
            [doc("m1", "home airport is LIS"), doc("turn-9#own0", "we fly from Lisbon", role="user")]
        )
        # Then the collection took them (no custom id was sent) and, once visible, search finds them
        hits = eventually(lambda: index.search(query("airport Lisbon")))
        assert sorted(h.id for h in hits) == ["m1", "turn-9#own0"]
        # and a delete by our id finds them by field
        index.delete(["turn-9#own0"])
        assert eventually(lambda: [h.id for h in index.search(query("airport Lisbon"))] == ["m1"])
    finally:
        index.drop()


def test_a_replaced_version_never_shows_twice(
    collection: Any, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = serverless_index(collection, name, monkeypatch)
    try:
        # Given a memory rewritten before search could see its first copy (the delete of the old copy
        # cannot find it yet)
        index.upsert([doc("m1", "likes tea", reinforcement_count=1)])
        index.upsert([doc("m1", "likes tea", reinforcement_count=2)])
        collection.settle()
        assert index.count("acme", "ana") == 2  # both copies are in the collection
        # When it is searched
        hits = index.search(query("tea"))
        # Then it shows once, as its newest copy, and the search deleted the older one
        assert [(h.id, h.fields["reinforcement_count"]) for h in hits] == [("m1", 2)]
        assert eventually(lambda: index.count("acme", "ana") == 1)
    finally:
        index.drop()


def test_erasing_a_user_removes_their_vectors_from_a_serverless_collection(
    collection: Any, opensearch_node: Any, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = serverless_index(collection, name, monkeypatch)
    try:
        # Given a user's documents in the collection, searchable, and another user's (written as the
        # collection holds them: service-assigned _ids, our id in a field)
        index.ensure(DIM)
        lines: list[Any] = []
        for i, user in enumerate(["bob"] * 5 + ["ana"]):
            source = {"id": f"m{i}", "tenant": "acme", "user_id": user, "kind": "memory", "text": "note"}
            lines += [{"index": {"_index": name}}, {**source, "vector": vec(1.0)}]
        assert raw(opensearch_node.url, "POST", "/_bulk?refresh=true", lines, ndjson=True)[0] == 200
        assert index.count("acme") == 6
        # When the user is erased (a collection has no _refresh: its 404 is no missing index)
        erased = index.delete_user("acme", "bob")
        # Then every one of their documents was deleted, and search finds none of them once it refreshes
        assert erased == 5
        collection.settle()
        assert index.count("acme", "bob") == 0 and index.count("acme", "ana") == 1
        _, body = raw(opensearch_node.url, "POST", f"/{name}/_count", {"query": {"term": {"user_id": "bob"}}})
        assert json.loads(body)["count"] == 0  # nothing of bob's text or vectors is left in the index
        assert not [c for c in collection.calls if "_refresh" in c.path]  # never asked for a refresh
    finally:
        index.drop()


def test_an_erase_sweeps_again_for_writes_the_collection_had_not_shown_yet(
    collection: Any, name: str, monkeypatch: pytest.MonkeyPatch, make_settings: Any
) -> None:
    """Issue 33 finding 8: an erase could not see what was written less than a refresh interval before
    it; the operator had to erase again a minute later. Now index_sync sweeps again by itself."""
    from mongomem.erasure import erase_user, sweep_erased
    from mongomem.models.common import Scope
    from mongomem.runtime import Services

    index = serverless_index(collection, name, monkeypatch)
    index.refresh_seconds = DELAY  # the stand-in refreshes every DELAY seconds (a collection: 60)
    erasure = Services(make_settings()).erasure
    try:
        # Given bob's memories written just before his erase (not searchable yet), and ana's
        index.ensure(DIM)
        index.upsert([doc(f"b{i}", "bob's note", user="bob") for i in range(3)] + [doc("a1", "ana's note")])
        # When bob is erased, through the API's erase (the sweep cannot see his fresh writes)
        result = erase_user(erasure, index, Scope(tenant="acme", user_id="bob"))
        assert result.erased["index_entries"] == 0
        collection.settle()
        assert index.count("acme", "bob") == 3  # what an erase alone left behind before issue 33
        # and bob, a new user under the same id, writes again after the erase
        index.upsert([doc("b-new", "bob again", user="bob")])
        # Then the next index_sync once the follow-up is due sweeps what the erase could not see, and only that
        assert sweep_erased(erasure, index) == 0  # not due yet: nothing is swept early
        time.sleep(2 * DELAY + 0.2)
        assert sweep_erased(erasure, index) == 3
        collection.settle()
        assert eventually(lambda: index.count("acme", "bob") == 1)
        assert [h.id for h in index.search(query("bob again", user="bob"))] == ["b-new"]
        assert index.count("acme", "ana") == 1
        # and the follow-up is done: a later run sweeps nothing
        assert sweep_erased(erasure, index) == 0
    finally:
        index.drop()
