"""One contract for every VectorIndex: embedded (numpy and pure Python) and OpenSearch (real node, lucene).

Vectors come from a tiny deterministic embedder: hashed bag of "concepts" in 64 dims, where a
synonym table folds related words together, so "planes" is a semantic neighbour of "flights"
without sharing a keyword with it.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from mongomem.vectors.port import DimensionMismatch, Hit, IndexDoc, SearchQuery, VectorIndex

OpenIndex = Callable[[], VectorIndex]

DIM = 64
CONCEPTS = {
    **dict.fromkeys(["flight", "flights", "plane", "planes", "airline", "fly", "flying"], "air-travel"),
    **dict.fromkeys(["hike", "hiking", "trek", "trail", "mountains"], "outdoors"),
    **dict.fromkeys(["coffee", "espresso", "latte", "cappuccino"], "coffee"),
}


def embed(text: str, dim: int = DIM) -> list[float]:
    """Deterministic unit vector: each word (or its concept) adds +-1 to one hashed dimension."""
    vec = [0.0] * dim
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        digest = hashlib.blake2b(CONCEPTS.get(word, word).encode(), digest_size=4).digest()
        vec[digest[0] % dim] += 1.0 if digest[1] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vec)) or 1.0
    return [x / norm for x in vec]


def axis(*weights: float) -> list[float]:
    """A DIM-sized vector with the given leading components (for exact cosine checks)."""
    return list(weights) + [0.0] * (DIM - len(weights))


def mem(doc_id: str, text: str, tenant: str, user: str = "alice", **fields: Any) -> IndexDoc:
    return IndexDoc(doc_id, tenant, user, "memory", text, embed(text), fields)


def query(tenant: str, text: str, user: str = "alice", **kw: Any) -> SearchQuery:
    kw.setdefault("vector", embed(text))
    return SearchQuery(tenant=tenant, user_id=user, kind=kw.pop("kind", "memory"), text=text, **kw)


def ids(hits: list[Hit]) -> list[str]:
    return [h.id for h in hits]


@pytest.fixture
def tenant() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


def test_a_fresh_index_answers_empty(index: VectorIndex, tenant: str) -> None:
    # Given an index nobody has written to yet
    # When it is searched and counted
    # Then it answers with nothing instead of failing (a new deployment before its first memory)
    assert index.ping() is True
    assert index.search(query(tenant, "anything at all")) == []
    assert index.count() == 0
    assert index.delete_user(tenant, "alice") == 0
    index.delete(["missing"])


def test_a_small_user_among_thousands_gets_exactly_their_documents(index: VectorIndex, tenant: str) -> None:
    # Given 3,000 documents of other users (same tenant, and the SAME user id in another tenant),
    # all closer to the query than any of alice's five documents
    probe = "favourite espresso bar downtown"
    others = [mem(f"o{i}", f"{probe} {i}", tenant, user=f"user{i % 60}") for i in range(2000)]
    others += [mem(f"x{i}", f"{probe} {i}", f"{tenant}-other", user="alice") for i in range(1000)]
    mine = [
        mem(f"a{i}", text, tenant)
        for i, text in enumerate(
            [
                "owns a red bicycle",
                "works as a nurse",
                "downtown apartment",
                "allergic to cats",
                "plays chess",
            ]
        )
    ]
    index.upsert(others)
    index.upsert(mine)

    # When alice searches by vector (k-NN), by keyword and hybrid
    knn = index.search(query(tenant, probe, mode="knn", top_k=10))
    bm25 = index.search(query(tenant, probe, mode="bm25", top_k=10))
    hybrid = index.search(query(tenant, probe, top_k=10))

    # Then the k-NN filter ran inside the search: all five of hers, nobody else's
    assert sorted(ids(knn)) == ["a0", "a1", "a2", "a3", "a4"]
    assert ids(bm25) == ["a2"]  # only her "downtown" document matches a keyword
    assert set(ids(hybrid)) == {"a0", "a1", "a2", "a3", "a4"}
    assert index.count(tenant, "alice") == 5
    assert index.count(f"{tenant}-other", "alice") == 1000
    assert index.count(tenant) == 2005


def test_filters_are_exact_matches_anded_and_lists_mean_any(index: VectorIndex, tenant: str) -> None:
    # Given memories of every type and status, tagged
    docs = []
    for t in ("semantic", "episodic", "procedural"):
        for s in ("active", "superseded"):
            docs.append(
                mem(f"{t}-{s}", f"note about {t} things", tenant, type=t, status=s, tags=[t[:3], "all"])
            )
    index.upsert(docs)
    want = {"semantic-active", "episodic-active"}

    # When searching with a list filter (any of) and a single-value filter (AND)
    filters: dict[str, Any] = {"type": ["semantic", "episodic"], "status": "active"}
    results = {
        mode: index.search(query(tenant, "note", mode=mode, filters=filters))
        for mode in ("knn", "bm25", "hybrid")
    }

    # Then every mode returns exactly the matching documents, with their fields
    for mode, hits in results.items():
        assert set(ids(hits)) == want, mode
    assert set(ids(index.search(query(tenant, "note", filters={"tags": "pro"})))) == {
        "procedural-active",
        "procedural-superseded",
    }
    assert index.search(query(tenant, "note", filters={"type": "nonexistent"})) == []
    assert index.search(query(tenant, "note", filters={"type": []})) == []


def test_ranges_bound_timestamps_inside_every_mode(index: VectorIndex, tenant: str) -> None:
    # Given memories observed at different times (ISO-8601 UTC, one format), and one without the field
    times = ["2023-01-05T10:00:00+00:00", "2023-06-30T23:59:59+00:00", "2024-02-01T00:00:00+00:00"]
    index.upsert([mem(f"m{i}", f"trip note {i}", tenant, observed_at=t) for i, t in enumerate(times)])
    index.upsert([mem("undated", "trip note undated", tenant)])
    expected = {
        (times[1], None): {"m1", "m2"},  # from is inclusive
        (None, times[1]): {"m0"},  # to is exclusive
        ("2023-01-01T00:00:00+00:00", "2024-01-01T00:00:00+00:00"): {"m0", "m1"},
        ("2025-01-01T00:00:00+00:00", None): set(),
    }
    for bounds, want in expected.items():
        for mode in ("knn", "bm25", "hybrid"):
            hits = index.search(query(tenant, "trip note", mode=mode, ranges={"observed_at": bounds}))
            # Then only documents with the field inside the range come back, in every mode
            assert set(ids(hits)) == want, (bounds, mode)
    both = query(tenant, "trip note", filters={"kind_of": "x"}, ranges={"observed_at": (None, None)})
    assert index.search(both) == []  # ranges AND filters


def test_turns_filter_by_session_and_never_mix_with_memories(index: VectorIndex, tenant: str) -> None:
    # Given turns of two sessions and a memory with the same words
    turns = [
        IndexDoc(
            f"s{s}-{i}",
            tenant,
            "alice",
            "turn",
            f"we talked about hiking {i}",
            embed("hiking"),
            {"session_id": f"s{s}", "role": "user" if i % 2 else "assistant", "seq": i},
        )
        for s in (1, 2)
        for i in range(4)
    ]
    index.upsert([*turns, mem("m1", "we talked about hiking", tenant)])

    # When recalling turns of session s1 by meaning, and user turns only
    s1 = index.search(query(tenant, "trek in the mountains", kind="turn", filters={"session_id": "s1"}))
    users = index.search(query(tenant, "hiking", kind="turn", filters={"role": "user"}, top_k=20))

    # Then only that session's turns come back (never the memory), and the role filter holds
    assert set(ids(s1)) == {"s1-0", "s1-1", "s1-2", "s1-3"}
    assert set(ids(users)) == {"s1-1", "s1-3", "s2-1", "s2-3"}
    assert index.count(tenant, "alice", "turn") == 8
    assert index.count(tenant, "alice", "memory") == 1


def test_hybrid_surfaces_both_an_exact_keyword_match_and_a_semantic_neighbour(
    index: VectorIndex, tenant: str
) -> None:
    # Given a keyword-only match (SFO), a meaning-only match (planes ~ flights) and 40 distractors
    filler = [
        "garden",
        "tomatoes",
        "piano",
        "lessons",
        "sister",
        "birthday",
        "rent",
        "invoice",
        "jazz",
        "novel",
    ]
    docs = [mem(f"d{i}", f"{filler[i % 10]} {filler[(i * 3 + 1) % 10]} {i}", tenant) for i in range(40)]
    docs.append(mem("keyword", "SFO is where the car is parked", tenant))
    docs.append(mem("semantic", "always books aisle seats on planes", tenant))
    index.upsert(docs)

    # When searching hybrid with a question sharing a keyword with one and meaning with the other
    q = query(tenant, "Which flights leave from SFO", top_k=3)
    hits = {h.id: h for h in index.search(q)}
    knn = index.search(query(tenant, q.text, mode="knn", top_k=3))
    bm25 = index.search(query(tenant, q.text, mode="bm25", top_k=3))

    # Then both surface, each credited by its own retriever, and the fused score is RRF
    assert {"keyword", "semantic"} <= set(hits)
    assert hits["keyword"].signals["bm25_rank"] == 1
    assert hits["semantic"].signals["knn_rank"] == 1
    assert "bm25_rank" not in hits["semantic"].signals
    assert ids(bm25) == ["keyword"]
    assert knn[0].id == "semantic"
    expected = sum(
        1 / (60 + hits["keyword"].signals[f"{leg}_rank"])
        for leg in ("knn", "bm25")
        if f"{leg}_rank" in hits["keyword"].signals
    )
    assert hits["keyword"].score == pytest.approx(expected)
    # and a query without a vector still finds the keyword match
    assert ids(index.search(query(tenant, "SFO", vector=None))) == ["keyword"]


def test_several_queries_at_once_answer_as_each_alone(index: VectorIndex, tenant: str) -> None:
    from mongomem.vectors.port import search_all

    # Given turns and memories of two users
    index.upsert(
        [
            *(mem(f"m{i}", f"trip {i} to the mountains for hiking", tenant) for i in range(6)),
            mem("other", "hiking in the mountains", tenant, user="bob"),
            *(
                IndexDoc(f"t{i}", tenant, "alice", "turn", f"hiking day {i}", embed("hiking"), {"seq": i})
                for i in range(4)
            ),
        ]
    )
    queries = [
        query(tenant, "hiking in the mountains", top_k=3),
        query(tenant, "hiking", kind="turn", mode="knn", top_k=2),
        query(tenant, "hiking", kind="turn", mode="bm25", top_k=2),
        query(tenant, "nothing matches zzz", mode="bm25"),
    ]
    # When they are asked together (recall's rankings: one round trip on OpenSearch)
    together = search_all(index, queries)
    # Then each gets exactly the hits it gets alone, in its own scope and kind
    assert [ids(hits) for hits in together] == [ids(index.search(q)) for q in queries]
    assert [len(hits) for hits in together] == [3, 2, 2, 0]
    assert "other" not in ids(together[0])


def test_upsert_is_idempotent_by_id(index: VectorIndex, tenant: str) -> None:
    # Given the same memory written twice, then rewritten with a new status, then moved to bob
    first = mem("m1", "likes green tea", tenant, status="active", reinforcement_count=1)
    index.upsert([first])
    index.upsert([first, first])
    index.upsert([mem("m1", "likes green tea", tenant, status="superseded", reinforcement_count=2)])

    # Then there is one document, carrying the latest fields
    assert index.count(tenant) == 1
    [hit] = index.search(query(tenant, "green tea"))
    assert hit.fields == {"status": "superseded", "reinforcement_count": 2}

    # When the id is written for another user, it leaves alice's scope (ids are global, like _id)
    index.upsert([mem("m1", "likes green tea", tenant, user="bob")])
    assert index.search(query(tenant, "green tea")) == []
    assert ids(index.search(query(tenant, "green tea", user="bob"))) == ["m1"]
    assert index.count(tenant) == 1


def test_fields_round_trip_with_their_types(index: VectorIndex, tenant: str) -> None:
    fields: dict[str, Any] = {
        "type": "episodic",
        "lineage_id": "L1",
        "created_at": "2024-05-01T10:00:00Z",
        "reinforcement_count": 3,
        "confidence": 0.75,
        "pinned": True,
        "valid_to": None,
        "participants": ["alice", "bob"],
    }
    index.upsert([mem("m1", "met bob at the conference", tenant, **fields)])
    [hit] = index.search(query(tenant, "conference"))
    assert hit.fields == fields
    assert ids(
        index.search(query(tenant, "conference", filters={"pinned": "true", "participants": "bob"}))
    ) == ["m1"]


def test_delete_and_delete_user(index: VectorIndex, tenant: str) -> None:
    # Given three users' memories, bob also in another tenant
    index.upsert(
        [
            mem(f"{u}{i}", f"{u} memory number {i}", tenant, user=u)
            for u in ("alice", "bob", "carol")
            for i in range(3)
        ]
    )
    index.upsert([mem("bob-elsewhere", "bob memory", f"{tenant}-b", user="bob")])

    # When one memory is deleted (plus an unknown id), then all of bob's in this tenant
    index.delete(["alice1", "never-indexed"])
    removed = index.delete_user(tenant, "bob")

    # Then they are gone from search and counts; nobody else lost anything
    assert "alice1" not in ids(index.search(query(tenant, "memory number", top_k=10)))
    assert index.count(tenant, "alice") == 2
    assert removed == 3
    assert index.count(tenant, "bob") == 0
    assert index.search(query(tenant, "bob memory", user="bob")) == []
    assert index.count(tenant, "carol") == 3
    assert index.count(f"{tenant}-b", "bob") == 1
    assert index.delete_user(tenant, "bob") == 0


def test_dimension_mismatch_is_a_clear_error(open_index: OpenIndex, tenant: str) -> None:
    index = open_index()
    index.ensure(DIM)
    index.ensure(DIM)  # idempotent
    index.upsert([mem("m1", "sixty four dims", tenant)])

    with pytest.raises(DimensionMismatch, match=r"64.*32"):
        index.ensure(32)
    with pytest.raises(DimensionMismatch):
        index.upsert([IndexDoc("m2", tenant, "alice", "memory", "short", [1.0] * 32)])
    with pytest.raises(DimensionMismatch) as caught:
        open_index().ensure(32)  # a fresh process reads the dimension from storage
    assert (caught.value.index_dim, caught.value.got_dim) == (64, 32)
    assert isinstance(caught.value, ValueError)
    with pytest.raises(DimensionMismatch):
        index.search(query(tenant, "sixty", vector=[1.0] * 32))
    assert index.count() == 1


def test_min_score_is_a_cosine_floor_for_vector_matches(index: VectorIndex, tenant: str) -> None:
    # Given documents at known cosine similarities 1.0, 0.8, 0.6 and 0.0 from the query vector
    vectors = {"c100": axis(1, 0), "c80": axis(0.8, 0.6), "c60": axis(0.6, 0.8), "c0": axis(0, 1)}
    index.upsert([IndexDoc(k, tenant, "alice", "memory", f"doc {k}", v) for k, v in vectors.items()])
    index.upsert([IndexDoc("kw", tenant, "alice", "memory", "zanzibar", axis(0, -1))])  # cosine 0 too
    q: dict[str, Any] = {"vector": axis(1, 0), "min_score": 0.7}

    # When searching k-NN with a floor of 0.7
    knn = index.search(query(tenant, "zanzibar", mode="knn", **q))
    hybrid = index.search(query(tenant, "zanzibar", **q))

    # Then only vector matches above the floor remain, scored by cosine (engine-independent)
    assert ids(knn) == ["c100", "c80"]
    assert [h.score for h in knn] == pytest.approx([1.0, 0.8], abs=1e-4)
    assert knn[1].signals["knn_score"] == pytest.approx(0.8, abs=1e-4)
    # and hybrid keeps an exact keyword match even though its vector is far away
    assert set(ids(hybrid)) == {"c100", "c80", "kw"}
    assert index.search(query(tenant, "zanzibar", mode="knn", vector=axis(1, 0), min_score=1.01)) == []


def _snapshot(index: VectorIndex, tenant: str) -> list[list[tuple[str, float]]]:
    out = []
    for user in ("u0", "u1"):
        for mode in ("knn", "bm25", "hybrid"):
            for text, filters in (("coffee with friends", {}), ("planes and trails", {"type": "episodic"})):
                hits = index.search(query(tenant, text, user=user, mode=mode, filters=filters, top_k=5))
                out.append([(h.id, round(h.score, 4)) for h in hits])
    return out


def test_drop_and_rebuild_gives_identical_results(index: VectorIndex, tenant: str) -> None:
    # Given 150 memories of 3 users, written as MongoDB would replay them
    words = ["coffee", "latte", "planes", "trail", "friends", "garden", "weekend", "office", "music", "cats"]
    docs = [
        mem(
            f"m{i:03d}",
            f"{words[i % 10]} {words[(i * 7) % 10]} {words[(i * 3) % 10]} {i} n{i}",
            tenant,
            user=f"u{i % 3}",
            type=("semantic", "episodic")[i % 2],
            created_at=f"2024-01-{1 + i % 28:02d}",
        )
        for i in range(150)
    ]
    index.upsert(docs)
    before = _snapshot(index, tenant)
    assert all(before)  # every probe found something: the comparison below is not vacuous

    # When the index is dropped and rebuilt (in a different order, as a reindex may)
    index.drop()
    assert index.count() == 0
    assert index.search(query(tenant, "coffee", user="u0")) == []
    index.ensure(DIM)
    index.upsert(list(reversed(docs)))

    # Then every search answers exactly as before
    assert _snapshot(index, tenant) == before


def test_reopening_keeps_documents_and_deletions(open_index: OpenIndex, tenant: str) -> None:
    # Given writes, deletes and an erased user in one process
    index = open_index()
    index.upsert([mem(f"m{i}", f"hiking trip {i}", tenant, n=i) for i in range(20)])
    index.upsert([mem("bob1", "hiking", tenant, user="bob")])
    index.delete(["m3"])
    index.upsert([mem("m4", "espresso tasting", tenant, n=40)])
    index.delete_user(tenant, "bob")
    before = [
        index.search(query(tenant, text, mode=mode))
        for text in ("hiking", "coffee")
        for mode in ("knn", "hybrid")
    ]

    # When the index is opened again (a restarted dev stack)
    reopened = open_index()

    # Then it holds exactly the same documents and answers the same
    after = [
        reopened.search(query(tenant, text, mode=mode))
        for text in ("hiking", "coffee")
        for mode in ("knn", "hybrid")
    ]
    assert [[(h.id, round(h.score, 5), h.fields) for h in hits] for hits in after] == [
        [(h.id, round(h.score, 5), h.fields) for h in hits] for hits in before
    ]
    assert reopened.count(tenant, "alice") == 19
    assert reopened.count(tenant, "bob") == 0
    reopened.upsert([mem("m21", "new after restart", tenant)])  # the reopened index accepts writes
    assert reopened.count(tenant) == 20


@pytest.mark.opensearch
def test_embedded_and_opensearch_rank_vectors_identically(
    opensearch_node: Any, tmp_path: Any, tenant: str
) -> None:
    # Given the same memories in the embedded index and in OpenSearch (lucene)
    from mongomem.vectors.embedded import EmbeddedIndex
    from mongomem.vectors.opensearch import OpenSearchIndex

    remote = OpenSearchIndex(opensearch_node.url, f"same-{tenant}", engine="lucene", replicas=0, refresh=True)
    local = EmbeddedIndex(None)
    rng = random.Random(7)
    docs = [
        IndexDoc(
            f"m{i:03d}",
            tenant,
            "alice",
            "memory",
            f"memory {i}",
            [rng.gauss(0, 1) for _ in range(DIM)],
            {"status": ("active", "superseded")[i % 3 == 0]},
        )
        for i in range(300)
    ]
    try:
        for idx in (remote, local):
            idx.upsert(docs)
        # When both are asked the same k-NN questions
        for _ in range(5):
            vector = [rng.gauss(0, 1) for _ in range(DIM)]
            q = query(tenant, "memory", vector=vector, mode="knn", top_k=8, filters={"status": "active"})
            a, b = remote.search(q), local.search(q)
            # Then they return the same documents in the same order with the same cosine scores
            assert ids(a) == ids(b)
            assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-4)
            assert [h.fields for h in a] == [h.fields for h in b]
    finally:
        remote.drop()


def test_search_query_rejects_filters_on_scope_fields() -> None:
    with pytest.raises(ValueError, match="reserved"):
        SearchQuery("t", "u", "memory", "x", None, filters={"user_id": "someone-else"})
    with pytest.raises(ValueError, match="knn"):
        SearchQuery("t", "u", "memory", "x", None, mode="knn")


def test_concurrent_writers_and_readers_lose_nothing(index: VectorIndex, tenant: str) -> None:
    # Given four threads writing disjoint memories while searches run (handlers share one index)
    from concurrent.futures import ThreadPoolExecutor

    def write(worker: int) -> None:
        for batch in range(5):
            index.upsert(
                [mem(f"w{worker}-{batch}-{i}", f"thread {worker} note {i}", tenant) for i in range(10)]
            )
            index.search(query(tenant, "thread note"))

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, range(4)))

    # Then every write landed exactly once
    assert index.count(tenant, "alice") == 200
    assert len(index.search(query(tenant, "thread note", top_k=50))) == 50


def test_also_user_ids_rank_two_owners_together_as_one_index(index: VectorIndex, tenant: str) -> None:
    # Given alice's documents, the tenant's org documents (owner "#org") and bob's
    texts = {
        "a1": ("alice", "flights to Lisbon booked for May"),
        "a2": ("alice", "coffee with the team on Friday"),
        "o1": ("#org", "the travel policy allows flights in economy"),
        "o2": ("#org", "hiking trail map of the mountains"),
        "b1": ("bob", "flights to Porto and coffee"),
    }
    index.upsert([mem(i, text, tenant, user=u) for i, (u, text) in texts.items()])
    # When alice's query names the org as another owner, in every mode
    for mode in ("hybrid", "knn", "bm25"):
        both = index.search(query(tenant, "flights", also_user_ids=("#org",), mode=mode, top_k=10))
        # Then her documents and the org's come back in one ranking, never bob's
        assert set(ids(both)) <= {"a1", "a2", "o1", "o2"}, mode
        assert {"a1", "o1"} <= set(ids(both)), mode
        scores = [h.score for h in both]
        assert scores == sorted(scores, reverse=True)
    # and BM25 over the union ranks like one owner holding both owners' documents
    single = [mem(f"u-{i}", text, tenant, user="merged") for i, (u, text) in texts.items() if u != "bob"]
    index.upsert(single)
    union = index.search(query(tenant, "flights policy", also_user_ids=("#org",), mode="bm25", top_k=10))
    merged = index.search(query(tenant, "flights policy", user="merged", mode="bm25", top_k=10))
    assert [h.id for h in union] == [h.id.removeprefix("u-") for h in merged]
    # without the extra owner, only alice's
    assert set(ids(index.search(query(tenant, "flights", top_k=10)))) <= {"a1", "a2"}


def test_none_in_a_filter_list_matches_documents_without_the_field(index: VectorIndex, tenant: str) -> None:
    index.upsert(
        [
            mem("shared", "coffee order", tenant),
            mem("mine", "coffee beans", tenant, agent_id="barista"),
            mem("theirs", "coffee machine", tenant, agent_id="cashier"),
        ]
    )
    for mode in ("hybrid", "knn", "bm25"):
        got = index.search(query(tenant, "coffee", filters={"agent_id": ["barista", None]}, mode=mode))
        assert set(ids(got)) == {"shared", "mine"}, mode
        only_shared = index.search(query(tenant, "coffee", filters={"agent_id": [None]}, mode=mode))
        assert ids(only_shared) == ["shared"], mode
