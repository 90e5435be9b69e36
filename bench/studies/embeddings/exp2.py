"""Grid + leave-one-conversation-out tuning of the 4-channel recipe."""

import itertools
import json
import sys

import numpy as np
from locomo_eval import Recipe, TextOpts, evaluate, fmt

M = sys.argv[1] if len(sys.argv) > 1 else "e5q4"


def recipe(k1, b, fusion, kf, wd, wc, nb):
    own = TextOpts(caption=True, date=True)
    ctx = TextOpts(caption=True, date=True, neighbours=nb)
    return Recipe(
        f"k1={k1} b={b} {fusion} k={kf} wd={wd} wc={wc} nb={nb}",
        k1=k1,
        b=b,
        fusion=fusion,
        rrf_k=kf,
        channels=(("bm25", own, 1.0), ("bm25", ctx, wc), (M, own, wd), (M, ctx, wd * wc)),
    )


grid = []
for k1, b, nb in itertools.product((0.9, 1.2, 1.6), (0.4, 0.75, 1.0), (1, 2)):
    for wd, wc in itertools.product((0.5, 1.0, 1.5), (0.5, 1.0, 1.5)):
        for kf in (10, 20, 40, 60):
            grid.append(recipe(k1, b, "rrf", kf, wd, wc, nb))
        grid.append(recipe(k1, b, "blend", 0, wd, wc, nb))
rows = []
for r in grid:
    res = evaluate(r)
    rows.append((r.name, {k: v.tolist() for k, v in res.items()}))
json.dump(rows, open(f"grid_{M}.json", "w"))
best = {}
for tr, te in (("26", "30"), ("30", "26")):
    name, res = max(rows, key=lambda x: x[1][tr][2])
    best[tr] = name
    print(f"tune on {tr}: best {name}: train R@10 {res[tr][2]:.3f} -> test {te}: {fmt(np.array(res[te]))}")
n26, n30 = 150, 81
loo = (np.array(dict(rows)[best["26"]]["30"]) * n30 + np.array(dict(rows)[best["30"]]["26"]) * n26) / (
    n26 + n30
)
print("LOO pooled (231 q):", fmt(loo))
name, res = max(rows, key=lambda x: x[1]["all"][2])
print(f"oracle best combined: {name}: {fmt(np.array(res['all']))}")
ref = recipe(1.2, 0.75, "rrf", 60, 1.0, 1.0, 2).name
print("untuned defaults (k1 1.2 b .75 rrf60 equal weights nb2):", fmt(np.array(dict(rows)[ref]["all"])))
