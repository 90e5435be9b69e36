"""LoCoMo evidence-recall harness for mongomem retrieval recipes (research only).

Metric (shared/data/locomo-dev/README.md): for every question of categories 1-4,
rank the conversation's turns and take the share of its evidence turns among the
top k, averaged over questions; k in 1, 5, 10, 25.

Usage:
    python locomo_eval.py models            # per-model dense numbers, speed, load time
    python locomo_eval.py ablate            # recipe ablations (combined + per conversation)
    python locomo_eval.py final [query|passage]  # final recipe through the library code
    python locomo_eval.py speed             # embeddings/s and load time per model
    python exp2.py e5q4                     # grid + leave-one-conversation-out tuning
    python exp3.py e5q4                     # ablations around the final recipe
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]  # bench/studies/embeddings -> the repository
sys.path.insert(0, str(HERE))


def _load_lexical():
    """Import mongomem/retrieval/lexical.py by path (stdlib only, no package deps)."""
    import importlib.util

    path = ROOT / "layers" / "core" / "mongomem" / "retrieval" / "lexical.py"
    spec = importlib.util.spec_from_file_location("mongomem_lexical", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["mongomem_lexical"] = mod
    spec.loader.exec_module(mod)
    return mod


lexical = _load_lexical()
BM25Index, rrf_fuse = lexical.BM25Index, lexical.rrf_fuse

# The LoCoMo dev split (one JSON file per conversation): its folder is LOCOMO_DEV_DIR.
DATA = Path(os.environ.get("LOCOMO_DEV_DIR", "locomo-dev"))
CACHE = HERE / "cache"
KS = (1, 5, 10, 25)


@dataclass
class Turn:
    id: str
    speaker: str
    text: str
    caption: str
    session: int
    date: str


@dataclass
class Conv:
    name: str
    turns: list[Turn]
    qa: list[dict]


def load(name: str) -> Conv:
    d = json.loads((DATA / f"{name}.json").read_text())
    turns: list[Turn] = []
    sessions = sorted(
        (int(m.group(1)) for k in d if (m := re.fullmatch(r"session_(\d+)", k))),
    )
    for s in sessions:
        date = d.get(f"session_{s}_date_time", "")
        for t in d[f"session_{s}"]:
            turns.append(Turn(t["dia_id"], t["speaker"], t["text"], t.get("blip_caption", ""), s, date))
    ids = {t.id for t in turns}
    qa = []
    for q in d["qa"]:
        if q.get("category") not in (1, 2, 3, 4):
            continue
        ev = {e.strip() for x in q.get("evidence", []) for e in x.split(";") if e.strip()}
        ev &= ids
        if ev:
            qa.append({**q, "ev": ev})
    return Conv(name, turns, qa)


# ---------------------------------------------------------------- indexed text


@dataclass(frozen=True)
class TextOpts:
    speaker: bool = True
    caption: bool = False
    date: bool = False
    neighbours: int = 0  # 0 none, 1 prev only, 2 prev+next, 4 two each side


def short_date(dt: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '8 May 2023'."""
    return dt.split(" on ")[-1].replace(",", "") if dt else ""


def turn_text(t: Turn, o: TextOpts) -> str:
    s = f"{t.speaker}: {t.text}" if o.speaker else t.text
    if o.caption and t.caption:
        s += f" [shared a photo: {t.caption}]"
    if o.date and t.date:
        s = f"({short_date(t.date)}) {s}"
    return s


def build_texts(c: Conv, o: TextOpts) -> list[str]:
    base = [turn_text(t, replace(o, date=False)) for t in c.turns]
    out = []
    for i, t in enumerate(c.turns):
        s = turn_text(t, o)
        if o.neighbours:
            span = range(-1, 0) if o.neighbours == 1 else range(-(o.neighbours // 2), o.neighbours // 2 + 1)
            ctx = [
                base[j]
                for j in (i + d for d in span if d != 0)
                if 0 <= j < len(c.turns) and c.turns[j].session == t.session
            ]
            if ctx:
                s = f"{s} (context: {' '.join(ctx)})"
        out.append(s)
    return out


# ---------------------------------------------------------------- embeddings

_model_cache: dict[str, object] = {}


def get_model(key: str):
    from models import MODELS

    if key not in _model_cache:
        _model_cache[key] = MODELS[key]()
    return _model_cache[key]


def embed_cached(key: str, texts: list[str], kind: str) -> np.ndarray:
    h = hashlib.sha1(("\x00".join(texts) + kind + key).encode()).hexdigest()[:16]
    f = CACHE / f"{key}_{h}.npy"
    if f.exists():
        return np.load(f)
    CACHE.mkdir(exist_ok=True)
    e = np.asarray(get_model(key).embed(texts, kind), dtype=np.float32)
    np.save(f, e)
    return e


# ---------------------------------------------------------------- scoring


@dataclass(frozen=True)
class Recipe:
    name: str = "recipe"
    bm25: bool = True
    dense: str | None = "e5q4"
    lex_text: TextOpts = TextOpts()
    dense_text: TextOpts = TextOpts()
    k1: float = 1.2
    b: float = 0.75
    stem: bool = True
    stop: bool = True
    fusion: str = "rrf"  # rrf | blend
    rrf_k: int = 60
    w_dense: float = 1.0  # weight of dense ranking in RRF (bm25 weight 1)
    smooth: float = 0.0  # add smooth*(neighbour scores) within the session
    channels: tuple = ()  # explicit (kind, TextOpts, weight) channels; overrides bm25/dense


def _smooth(scores: np.ndarray, c: Conv, beta: float) -> np.ndarray:
    if beta <= 0:
        return scores
    out = scores.copy()
    sess = np.array([t.session for t in c.turns])
    same_prev = np.r_[False, sess[1:] == sess[:-1]]
    out[1:] += beta * scores[:-1] * same_prev[1:]
    out[:-1] += beta * scores[1:] * same_prev[1:]
    return out


def bm25_scores(c: Conv, r: Recipe, queries: list[str]) -> np.ndarray:
    sw = lexical.STOPWORDS if r.stop else None
    idx = BM25Index(k1=r.k1, b=r.b, stopwords=sw, stemming=r.stem)
    texts = build_texts(c, r.lex_text)
    for t, s in zip(c.turns, texts, strict=True):
        idx.add(t.id, s)
    pos = {t.id: i for i, t in enumerate(c.turns)}
    out = np.zeros((len(queries), len(c.turns)), dtype=np.float64)
    for qi, q in enumerate(queries):
        for doc, sc in idx.search(q, k=len(c.turns)):
            out[qi, pos[doc]] = sc
    return out


def dense_scores(c: Conv, r: Recipe, queries: list[str]) -> np.ndarray:
    assert r.dense
    docs = embed_cached(r.dense, build_texts(c, r.dense_text), "passage")
    qs = embed_cached(r.dense, queries, "query")
    return qs @ docs.T


def rank(scores: np.ndarray) -> np.ndarray:
    return np.argsort(-scores, axis=1, kind="stable")


Channel = tuple[str, TextOpts, float]  # ("bm25" | model key, indexed text, RRF weight)

_score_cache: dict[tuple, np.ndarray] = {}


def channel_scores(c: Conv, r: Recipe, ch: Channel, queries: list[str]) -> np.ndarray:
    kind, opts, _ = ch
    if kind == "bm25":
        key = (c.name, kind, opts, r.k1, r.b, r.stem, r.stop)
        if key not in _score_cache:
            _score_cache[key] = bm25_scores(c, replace(r, lex_text=opts), queries)
    else:
        key = (c.name, kind, opts)
        if key not in _score_cache:
            _score_cache[key] = dense_scores(c, replace(r, dense=kind, dense_text=opts), queries)
    return _score_cache[key]


def channels_of(r: Recipe) -> list[Channel]:
    if r.channels:
        return list(r.channels)
    out: list[Channel] = []
    if r.bm25:
        out.append(("bm25", r.lex_text, 1.0))
    if r.dense:
        out.append((r.dense, r.dense_text, r.w_dense))
    return out


def fused_order(c: Conv, r: Recipe, queries: list[str]) -> np.ndarray:
    chs = channels_of(r)
    mats = [_smooth_rows(channel_scores(c, r, ch, queries), c, r.smooth) for ch in chs]
    if len(mats) == 1:
        return rank(mats[0])
    if r.fusion == "rrf":
        n = len(c.turns)
        fused = np.zeros((len(queries), n))
        for m, ch in zip(mats, chs, strict=True):
            rk = np.empty_like(rank(m))
            order = rank(m)
            rows = np.arange(len(queries))[:, None]
            rk[rows, order] = np.arange(1, n + 1)[None, :]
            fused += ch[2] / (r.rrf_k + rk)
        return rank(fused)
    total = np.zeros_like(mats[0])
    for m, ch in zip(mats, chs, strict=True):
        if ch[0] == "bm25":
            mn = m / np.maximum(m.max(1, keepdims=True), 1e-9)
        else:
            mn = (m - m.min(1, keepdims=True)) / np.maximum(np.ptp(m, 1, keepdims=True), 1e-9)
        total += ch[2] * mn
    return rank(total)


def run(c: Conv, r: Recipe) -> np.ndarray:
    """Return per-question recall at KS, shape (n_questions, len(KS))."""
    queries = [q["question"] for q in c.qa]
    order = fused_order(c, r, queries)
    ids = [t.id for t in c.turns]
    res = np.zeros((len(c.qa), len(KS)))
    for qi, q in enumerate(c.qa):
        for j, k in enumerate(KS):
            top = {ids[i] for i in order[qi, :k]}
            res[qi, j] = len(top & q["ev"]) / len(q["ev"])
    return res


def _smooth_rows(m: np.ndarray, c: Conv, beta: float) -> np.ndarray:
    if beta <= 0:
        return m
    return np.stack([_smooth(row, c, beta) for row in m])


CONVS: dict[str, Conv] = {}


def convs() -> dict[str, Conv]:
    if not CONVS:
        for n in ("26", "30"):
            CONVS[n] = load(n)
    return CONVS


def evaluate(r: Recipe, names: tuple[str, ...] = ("26", "30")) -> dict[str, np.ndarray]:
    cs = convs()
    per = {n: run(cs[n], r) for n in names}
    out = {n: v.mean(0) for n, v in per.items()}
    out["all"] = np.concatenate(list(per.values())).mean(0)
    return out


def fmt(v: np.ndarray) -> str:
    return " | ".join(f"{x:.3f}" for x in v)


# ---------------------------------------------------------------- commands


def cmd_models() -> None:
    import subprocess

    texts_all = build_texts(convs()["26"], TextOpts())
    print("| model | R@1 | R@5 | R@10 | R@25 | emb/s (batch 32, 2 threads) | import+load s |")
    print("|---|---|---|---|---|---|---|")
    for key in ("minilm_fp32", "minilm_int8", "e5q4"):
        probe = (
            f"import time,sys;t=time.time();sys.path.insert(0,'{HERE}');from models import MODELS;"
            f"m=MODELS['{key}']();m.embed(['warm up'],'query');print(time.time()-t)"
        )
        load_s = float(
            subprocess.run(
                [sys.executable, "-c", probe], capture_output=True, text=True, check=True
            ).stdout.strip()
        )
        m = get_model(key)
        m.embed(texts_all[:32], "passage")
        t0 = time.time()
        m.embed(texts_all, "passage")
        eps = len(texts_all) / (time.time() - t0)
        r = Recipe(name=key, bm25=False, dense=key)
        res = evaluate(r)
        print(f"| {m.name} | {fmt(res['all'])} | {eps:.0f} | {load_s:.2f} |")


def base_recipes(model: str = "e5q4") -> list[Recipe]:
    sp = TextOpts()
    full = TextOpts(caption=True, date=False, neighbours=0)
    rs = [
        Recipe("BM25 default (k1 1.2 b .75, stem+stop)", dense=None),
        Recipe("BM25 no stem/stop", dense=None, stem=False, stop=False),
        Recipe("BM25 + caption", dense=None, lex_text=full),
        Recipe("BM25 + caption + date", dense=None, lex_text=replace(full, date=True)),
        Recipe("BM25 + caption + prev", dense=None, lex_text=replace(full, neighbours=1)),
        Recipe("BM25 + caption + prev/next", dense=None, lex_text=replace(full, neighbours=2)),
        Recipe(f"dense {model}", bm25=False, dense=model),
        Recipe(f"dense {model} + caption", bm25=False, dense=model, dense_text=full),
        Recipe(
            f"dense {model} + caption + prev",
            bm25=False,
            dense=model,
            dense_text=replace(full, neighbours=1),
        ),
        Recipe(
            f"dense {model} + caption + prev/next",
            bm25=False,
            dense=model,
            dense_text=replace(full, neighbours=2),
        ),
        Recipe(
            f"dense {model} + caption + date", bm25=False, dense=model, dense_text=replace(full, date=True)
        ),
        Recipe("RRF60 bm25+dense, speaker only", dense=model, lex_text=sp, dense_text=sp),
        Recipe("RRF60 + caption both", dense=model, lex_text=full, dense_text=full),
    ]
    return rs


def cmd_ablate(model: str = "e5q4", extra: list[Recipe] | None = None) -> None:
    print("| recipe | R@1 | R@5 | R@10 | R@25 | R@10 conv26 | R@10 conv30 |")
    print("|---|---|---|---|---|---|---|")
    for r in base_recipes(model) + (extra or []):
        res = evaluate(r)
        print(f"| {r.name} | {fmt(res['all'])} | {res['26'][2]:.3f} | {res['30'][2]:.3f} |")


FINAL_OWN = TextOpts(speaker=True, caption=True, date=True)
FINAL_CTX = TextOpts(speaker=True, caption=True, date=True, neighbours=2)


def _load_embedder():
    import importlib.util

    path = ROOT / "layers" / "core" / "mongomem" / "adapters" / "embed_local.py"
    spec = importlib.util.spec_from_file_location("mongomem_embed_local", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.LocalEmbedder()


def cmd_final(query_kind: str = "query") -> None:
    """End-to-end check of the final recipe with the library code only.

    Four rankings per question, fused with lexical.rrf_fuse(k=10, equal weights):
    BM25 over the turn's own text, BM25 over the turn + neighbours, and the same two
    texts embedded with LocalEmbedder (e5-small q4), ranked by cosine.
    """
    emb = _load_embedder()
    per = {}
    for name, c in convs().items():
        own, ctx = build_texts(c, FINAL_OWN), build_texts(c, FINAL_CTX)
        ids = [t.id for t in c.turns]
        lex = []
        for texts in (own, ctx):
            ix = BM25Index(k1=1.2, b=0.75)
            for i, tx in zip(ids, texts, strict=True):
                ix.add(i, tx)
            lex.append(ix)
        vecs = [np.array(emb.embed(texts)) for texts in (own, ctx)]
        qs = [q["question"] for q in c.qa]
        qv = np.array(emb.embed(qs, kind=query_kind))
        res = np.zeros((len(qs), len(KS)))
        for qi, q in enumerate(c.qa):
            rankings = [[d for d, _ in ix.search(qs[qi], k=len(ids))] for ix in lex]
            rankings += [[ids[j] for j in np.argsort(-(v @ qv[qi]), kind="stable")] for v in vecs]
            fused = [d for d, _ in rrf_fuse(rankings, k=10)]
            for j, k in enumerate(KS):
                res[qi, j] = len(set(fused[:k]) & q["ev"]) / len(q["ev"])
        per[name] = res
    allr = np.concatenate(list(per.values()))
    print(f"final recipe via library (queries as {query_kind!r}), {len(allr)} questions")
    print("| set | R@1 | R@5 | R@10 | R@25 |")
    print("|---|---|---|---|---|")
    for name, res in per.items():
        print(f"| conv {name} | {fmt(res.mean(0))} |")
    print(f"| all | {fmt(allr.mean(0))} |")


def cmd_speed() -> None:
    """Embeddings/s on the 419 turns of conversation 26 (own text and with context)."""
    import subprocess

    for key in ("minilm_fp32", "minilm_int8", "e5q4"):
        m = get_model(key)
        for label, opts in (("own", FINAL_OWN), ("ctx", FINAL_CTX)):
            texts = build_texts(convs()["26"], opts)
            m.embed(texts[:32], "passage")
            best = 0.0
            for _ in range(2 if key != "minilm_fp32" else 1):
                t0 = time.time()
                m.embed(texts, "passage")
                best = max(best, len(texts) / (time.time() - t0))
            print(f"{m.name} [{label}]: {best:.0f} emb/s")
        probe = (
            f"import time,sys;t=time.time();sys.path.insert(0,'{HERE}');from models import MODELS;"
            f"m=MODELS['{key}']();m.embed(['warm up'],'query');print(time.time()-t)"
        )
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
        print(f"{m.name}: import+load+first embed {float(out.stdout):.2f} s")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "ablate"
    if cmd == "models":
        cmd_models()
    elif cmd == "final":
        cmd_final(*(sys.argv[2:3] or ["query"]))
    elif cmd == "speed":
        cmd_speed()
    elif cmd == "ablate":
        cmd_ablate(*(sys.argv[2:3] or ["e5q4"]))
    else:
        raise SystemExit(f"unknown command {cmd}")
