"""Recall indexing throughput of the local stack's indexer, beside the raw embedder on the same texts.

Each round imports a history (the turns of a LoCoMo-layout conversation, e.g. a LongMemEval-S history in
the dev split's lme-dev folder, or tests/data/locomo-mini) for a fresh user through POST /v1/import (the
memory_api handler), then times the indexer the local stack's scan runs (`Services.turn_indexer`, on
SecantusDB and the embedded index, the local embedder by default) until nothing is queued:

- indexer side: reading the queue, the neighbours, building the texts, one embedding call per batch,
  writing the index documents, marking the turns;
- floor side: the same embedding calls alone (the texts the indexer embedded, batch by batch), on the same
  embedder in the same process.

The sides alternate which goes first. Prints one JSON line: `turns_per_s` and `tokens_per_s` (history
tokens, the stored estimate of about 4 characters a token) of the indexer, `floor_turns_per_s`,
`indexer_vs_floor` (indexer time / floor time, >= 1: what indexing adds to embedding), `model_tokens_per_s`
(the model's own tokens of every embedded text, on the floor side), medians of `--rounds`, and
`lme_history_s`: the time the indexer would take for a LongMemEval-S history (450 turns, 120k tokens) at
the measured token rate. The machine's load average is printed with it: a shared machine is slower.

    .venv/bin/python bench/recall_indexing.py DATA_FILE_OR_DIR [--turns 96] [--rounds 3] [--embeddings local]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from harness import api_event, emit, log, median
from locomo_recall import api_turns, conversations, sessions

LME_TOKENS = 120_000  # a LongMemEval-S history: ~450 turns, ~120k tokens


def history(path: Path, limit: int) -> list[dict[str, Any]]:
    """The first `limit` turns (0: all) of the first conversation under `path`, as import turns."""
    folder = path if path.is_dir() else path.parent
    convs = [c for c in conversations(folder) if path.is_dir() or c[0] == path.stem]
    if not convs:
        raise SystemExit(f"no LoCoMo-layout conversation in {path}")
    _, conv, _ = convs[0]
    out = []
    for n, start, turns in sessions(conv):
        for t in api_turns(conv, start, turns):
            out.append({**t, "session_id": f"session_{n}"})
    return out[:limit] if limit else out


class Recording:
    """The stack's embedder, noting every document batch it was asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.batches: list[list[str]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed(self, texts: list[str], purpose: Any = "document") -> list[list[float]]:
        if purpose == "document":
            self.batches.append(list(texts))
        return list(self.inner.embed(texts, purpose))


class Stack:
    def __init__(self, uri: str, embeddings: str, data: Path) -> None:
        from mongomem.config import parse_project_config, settings_from_env
        from mongomem.local.queue import local_queue_factory
        from mongomem.runtime import Services, configure
        from tests.conftest import Ctx, load_function

        project = parse_project_config(
            {
                "memory": {
                    "extraction": {"enabled": []},
                    "snapshot": {"max_messages": 10000, "idle_seconds": 86400},
                    "providers": {"llm": {"kind": "offline"}, "embeddings": {"kind": embeddings}},
                    "recall": {"enabled": True},
                }
            }
        )
        env = {
            "MONGOMEM_MONGODB_URI": uri,
            "MONGOMEM_DB_NAME": f"bench_{uuid.uuid4().hex[:8]}",
            "MONGOMEM_VECTOR_INDEX_PATH": str(data / "vectors"),
        }
        self.svc = Services(settings_from_env(env, project=project), queue_factory=local_queue_factory)
        configure(self.svc)
        self.embedder = Recording(self.svc.embedder)
        self.api = load_function("memory_api")
        self.ctx = Ctx()

    def load(self, user: str, turns: list[dict[str, Any]]) -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            for i in range(0, len(turns), 1000):
                body = {"user_id": user, "format": "turns", "turns": turns[i : i + 1000]}
                response = self.api.lambda_handler(api_event("POST", "/v1/import", body), self.ctx)
                if response["statusCode"] != 200:
                    raise SystemExit(f"import failed: {response}")

    def index_all(self) -> tuple[float, int, list[list[str]]]:
        """Seconds the indexer took to empty the queue, turns indexed, the batches it embedded."""
        from mongomem.retrieval.turn_indexing import TurnIndexer

        indexer = self.svc.turn_indexer
        indexer = TurnIndexer(indexer.turns, indexer.index, self.embedder, indexer.config)
        self.embedder.batches = []
        done = 0
        started = time.perf_counter()
        while (report := indexer.run())["turns"]:
            done += report["turns"]
        took = time.perf_counter() - started
        if report["failed"]:
            raise SystemExit(f"indexing failed: {report}")
        return took, done, self.embedder.batches

    def floor(self, batches: list[list[str]]) -> float:
        started = time.perf_counter()
        for texts in batches:
            self.embedder.inner.embed(texts, "document")
        return time.perf_counter() - started


def model_tokens(embedder: Any, batches: list[list[str]]) -> int | None:
    """The local model's own token count of every text (None for another embedder)."""
    impl = getattr(embedder, "_impl", None)
    engine = getattr(impl, "_engine", None)
    if engine is None or not hasattr(engine, "token_count"):
        return None
    return sum(int(engine.token_count(t)) for texts in batches for t in texts)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path, help="a LoCoMo-layout file, or a folder (its first conversation)")
    parser.add_argument("--turns", type=int, default=96, help="turns of the history per round (0: all)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--embeddings", default="local", choices=["local", "hashing"])
    args = parser.parse_args()

    from mongomem.local.mongod import EmbeddedMongo

    turns = history(args.data, args.turns)
    history_tokens = sum(max(1, len(t["content"]) // 4) for t in turns)
    result_out, sys.stdout = sys.stdout, sys.stderr  # handlers print metrics; stdout is for the result
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp, EmbeddedMongo(Path(tmp) / "mongo") as server:
        stack = Stack(server.uri, args.embeddings, Path(tmp))
        stack.load("warmup", turns[: min(len(turns), 8)])
        stack.index_all()  # loads the model
        indexer_s: list[float] = []
        floor_s: list[float] = []
        texts = tokens = 0
        last: list[list[str]] = []
        for r in range(args.rounds):
            user = f"round-{r}-{uuid.uuid4().hex[:6]}"
            stack.load(user, turns)
            if r % 2 == 1 and last:  # the floor first, on the texts the indexer embedded last round
                floor_s.append(stack.floor(last))
            took, done, batches = stack.index_all()
            if done != len(turns):
                raise SystemExit(f"indexed {done} of {len(turns)} turns")
            indexer_s.append(took)
            if r % 2 == 0 or len(floor_s) < len(indexer_s):
                floor_s.append(stack.floor(batches))
            last = batches
            texts = sum(len(b) for b in batches)
            if not tokens:
                tokens = model_tokens(stack.svc.embedder, batches) or 0
            log(
                f"round {r + 1}: indexer {len(turns) / took:.2f} turns/s ({took:.1f} s, {len(batches)} batches,"
                f" {texts} texts), floor {floor_s[-1]:.1f} s, load {os.getloadavg()[0]:.1f}"
            )
    sys.stdout = result_out
    idx, flo = median(indexer_s), median(floor_s)
    tokens_per_s = history_tokens / idx
    emit(
        {
            "bench": "recall_indexing",
            "data": args.data.name,
            "embeddings": args.embeddings,
            "turns": len(turns),
            "history_tokens": history_tokens,
            "texts_per_round": texts,
            "rounds": args.rounds,
            "turns_per_s": round(len(turns) / idx, 3),
            "tokens_per_s": round(tokens_per_s, 1),
            "floor_turns_per_s": round(len(turns) / flo, 3),
            "indexer_vs_floor": round(idx / flo, 3),
            "model_tokens_per_round": tokens or None,
            "model_tokens_per_s": round(tokens / flo, 1) if tokens else None,
            "lme_history_s": round(LME_TOKENS / tokens_per_s, 1),
            "indexer_s": [round(s, 2) for s in indexer_s],
            "floor_s": [round(s, 2) for s in floor_s],
            "load_average": [round(x, 2) for x in (*load_before, *os.getloadavg())],
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
        }
    )


if __name__ == "__main__":
    main()
