"""Exploration: multi-channel fusion with neighbour context."""

from locomo_eval import Recipe, TextOpts, evaluate, fmt

M = "e5q4"
own = TextOpts(caption=True, date=True)
ctx = TextOpts(caption=True, date=True, neighbours=2)
ctxd = TextOpts(caption=True, neighbours=2)
R = [
    Recipe("bm25 own (cap+date)", channels=(("bm25", own, 1.0),)),
    Recipe("bm25 ctx", channels=(("bm25", ctx, 1.0),)),
    Recipe("dense own+date", channels=((M, own, 1.0),)),
    Recipe("dense ctx+date", channels=((M, ctx, 1.0),)),
    Recipe("dense ctx nodate", channels=((M, ctxd, 1.0),)),
    Recipe("rrf bm25ctx+densectx", channels=(("bm25", ctx, 1.0), (M, ctx, 1.0))),
    Recipe("rrf bm25 own+ctx", channels=(("bm25", own, 1.0), ("bm25", ctx, 1.0))),
    Recipe("rrf dense own+ctx", channels=((M, own, 1.0), (M, ctx, 1.0))),
    Recipe("rrf 4ch", channels=(("bm25", own, 1.0), ("bm25", ctx, 1.0), (M, own, 1.0), (M, ctx, 1.0))),
    Recipe(
        "rrf 4ch k=20",
        rrf_k=20,
        channels=(("bm25", own, 1.0), ("bm25", ctx, 1.0), (M, own, 1.0), (M, ctx, 1.0)),
    ),
    Recipe(
        "rrf 4ch k=100",
        rrf_k=100,
        channels=(("bm25", own, 1.0), ("bm25", ctx, 1.0), (M, own, 1.0), (M, ctx, 1.0)),
    ),
    Recipe(
        "blend 4ch",
        fusion="blend",
        channels=(("bm25", own, 1.0), ("bm25", ctx, 1.0), (M, own, 1.0), (M, ctx, 1.0)),
    ),
    Recipe("rrf bm25own+densectx", channels=(("bm25", own, 1.0), (M, ctx, 1.0))),
    Recipe("rrf 2ch own, smooth .3", smooth=0.3, channels=(("bm25", own, 1.0), (M, own, 1.0))),
    Recipe("rrf 2ch own, smooth .5", smooth=0.5, channels=(("bm25", own, 1.0), (M, own, 1.0))),
    Recipe("bm25 own smooth .5", smooth=0.5, channels=(("bm25", own, 1.0),)),
]
print("| recipe | R@1 | R@5 | R@10 | R@25 | R@10 conv26 | R@10 conv30 |")
print("|---|---|---|---|---|---|---|")
for r in R:
    res = evaluate(r)
    print(f"| {r.name} | {fmt(res['all'])} | {res['26'][2]:.3f} | {res['30'][2]:.3f} |", flush=True)
