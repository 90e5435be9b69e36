"""The relevance floor of the local e5 embedder: cosine of a question to its evidence turns, to the other
turns of its conversation, and to off-topic texts (dev split only)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/
from locomo_recall import conversations, questions

from mongomem.providers.embed_local import LocalEmbedderProvider


def main() -> None:
    emb = LocalEmbedderProvider()
    rng = random.Random(1)
    evid, other = [], []
    for _name, conv, qa in conversations(Path(sys.argv[1])):
        turns = {}
        for k, v in conv.items():
            if k.startswith("session_") and isinstance(v, list):
                for t in v:
                    turns[t["dia_id"]] = f"{t['speaker']}: {t['text']}"
        ids = list(turns)
        vecs = np.array(emb.embed([turns[i] for i in ids], "document"))
        index = {d: i for i, d in enumerate(ids)}
        qs = questions(qa, set(ids))[:60]
        qv = np.array(emb.embed([q for q, _ in qs], "query"))
        for (_q, ev), v in zip(qs, qv, strict=True):
            sims = vecs @ v
            evid += [float(sims[index[e]]) for e in ev]
            other += [float(sims[i]) for i in rng.sample(range(len(ids)), 20)]
    pairs = [
        (
            "what should I eat tonight?",
            "Deploy the data pipeline: Ship the nightly data pipeline to production",
        ),
        ("what should I eat tonight?", "user likes: sushi"),
        ("food allergies", "user allergy: peanuts"),
        (
            "how do we deploy the data pipeline?",
            "Deploy the data pipeline: Ship the nightly data pipeline to production",
        ),
        ("Hi again!", "user home city: Lisbon"),
        ("what is the weather like?", "user favourite colour: green"),
    ]
    for q, d in pairs:
        a = np.array(emb.embed([q], "query")[0])
        b = np.array(emb.embed([d], "document")[0])
        print(f"{float(a @ b):.3f}  {q!r} vs {d!r}")
    for name, xs in (("evidence", evid), ("other turns", other)):
        xs = sorted(xs)
        print(
            name,
            len(xs),
            " ".join(
                f"p{round(p * 100)} {xs[int(p * (len(xs) - 1))]:.3f}" for p in (0.05, 0.25, 0.5, 0.75, 0.95)
            ),
        )


if __name__ == "__main__":
    main()
