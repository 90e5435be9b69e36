"""Ablations around the final recipe (one change at a time)."""

import sys
from dataclasses import replace

from locomo_eval import Recipe, TextOpts, evaluate, fmt

M = sys.argv[1] if len(sys.argv) > 1 else "e5q4"


def final(name="FINAL", model=M, own=TextOpts(caption=True, date=True), nb=2, k=10, chans="4", **kw):
    ctx = replace(own, neighbours=nb)
    ch = {
        "4": (("bm25", own, 1.0), ("bm25", ctx, 1.0), (model, own, 1.0), (model, ctx, 1.0)),
        "3": (("bm25", own, 1.0), ("bm25", ctx, 1.0), (model, ctx, 1.0)),
        "2ctx": (("bm25", ctx, 1.0), (model, ctx, 1.0)),
        "2own": (("bm25", own, 1.0), (model, own, 1.0)),
        "bm25": (("bm25", own, 1.0), ("bm25", ctx, 1.0)),
        "dense": ((model, own, 1.0), (model, ctx, 1.0)),
    }[chans]
    return Recipe(name, rrf_k=k, channels=ch, **kw)


R = [
    final(),
    final("- date", own=TextOpts(caption=True)),
    final("- caption", own=TextOpts(date=True)),
    final("- speaker name", own=TextOpts(speaker=False, caption=True, date=True)),
    final("- stemming/stopwords (BM25)", stem=False, stop=False),
    final("- stemming only", stem=False),
    final("context prev only (nb=1)", nb=1),
    final("context +-2 turns", nb=4),
    final("- own-text channels (ctx only, 2ch)", chans="2ctx"),
    final("- context channels (own only, 2ch)", chans="2own"),
    final("3ch: dense ctx only", chans="3"),
    final("BM25 only (own+ctx)", chans="bm25"),
    final("dense only (own+ctx)", chans="dense"),
    final("RRF k=60", k=60),
    final("score blend instead of RRF", fusion="blend"),
]
print("| recipe | R@1 | R@5 | R@10 | R@25 | R@10 conv26 | R@10 conv30 |")
print("|---|---|---|---|---|---|---|")
for r in R:
    res = evaluate(r)
    print(f"| {r.name} | {fmt(res['all'])} | {res['26'][2]:.3f} | {res['30'][2]:.3f} |", flush=True)
