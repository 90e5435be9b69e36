"""Smoke checks for mongomem.retrieval.lexical (run: python check_lexical.py)."""

import sys

from locomo_eval import lexical

BM25Index, rrf_fuse, tokenize, stem = lexical.BM25Index, lexical.rrf_fuse, lexical.tokenize, lexical.stem

assert tokenize("Caroline's hiking trips, she HIKED!") == ["carolin", "hik", "trip", "hik"], tokenize(
    "Caroline's hiking trips, she HIKED!"
)
assert stem("stories") == "story" and stem("running") == "run" and stem("classes") == "class"
ix = BM25Index()
ix.add("a", "Melanie: I went camping with the kids")
ix.add("b", "Caroline: I painted a sunset")
ix.add("c", "Melanie: camping again next week")
assert [d for d, _ in ix.search("camping", 5)][:2] in (["a", "c"], ["c", "a"])
assert [d for d, _ in ix.search("camping", 5, allowed_ids={"a"})] == ["a"]
ix.remove("c")
assert "c" not in ix and len(ix) == 2 and [d for d, _ in ix.search("camping")] == ["a"]
ix.add("a", "replaced text about painting")
assert ix.search("camping") == [] and ix.search("painting")[0][0] in {"a", "b"}
ix.remove("zzz")
f = rrf_fuse([["x", "y", "z"], ["y", "x"]], k=10)
assert f[0][0] in {"x", "y"} and abs(f[0][1] - (1 / 11 + 1 / 12)) < 1e-12
f = rrf_fuse([["x", "y"], ["y", "x"]], k=10, weights=[1.0, 2.0])
assert f[0][0] == "y"
assert BM25Index().search("x") == []
print("lexical checks passed")
sys.exit(0)
