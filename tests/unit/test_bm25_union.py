"""BM25 over several partitions (the embedded index's user + org search) scores as one index would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mongomem.retrieval.lexical import BM25Index, bm25_union

WORDS = ["flight", "lisbon", "coffee", "policy", "travel", "economy", "hiking", "map", "team"]
docs = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join), min_size=1, max_size=12
)


@settings(max_examples=60, deadline=None)
@given(docs, docs, st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join))
def test_union_scores_equal_one_index_holding_every_document(a: list[str], b: list[str], q: str) -> None:
    left, right, whole = BM25Index(), BM25Index(), BM25Index()
    for i, text in enumerate(a):
        left.add(f"a{i}", text)
        whole.add(f"a{i}", text)
    for i, text in enumerate(b):
        right.add(f"b{i}", text)
        whole.add(f"b{i}", text)
    got = bm25_union([(left, None), (right, None)], q, k=50)
    want = whole.search(q, k=50)
    assert [d for d, _ in got] == [d for d, _ in want]
    assert [round(s, 9) for _, s in got] == [round(s, 9) for _, s in want]


def test_allowed_ids_restrict_each_part_but_not_the_statistics() -> None:
    left, right = BM25Index(), BM25Index()
    left.add("a", "flight to lisbon")
    right.add("b", "flight policy")
    right.add("c", "flight map")
    got = bm25_union([(left, None), (right, {"b"})], "flight", k=10)
    assert {d for d, _ in got} == {"a", "b"}  # c is not allowed, yet counts in the document frequency
    assert bm25_union([(left, set()), (right, set())], "flight") == []
