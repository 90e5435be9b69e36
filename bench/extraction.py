"""Benchmark: the extraction pipeline's own cost per snapshot, apart from the LLM.

Runs the real extract handler (SQS event in) on snapshots recorded through the real record path,
against the local MongoDB-compatible server, with a scripted LLM that answers at once (pure pipeline
overhead: MongoDB reads and writes, embedding, reconciliation, indexing), then with the same LLM
taking a realistic 800 ms. Judged by the share of wall time spent outside the LLM call
(goal: < 10% of a realistic LLM call per snapshot). Medians over several rounds.

    python bench/extraction.py [--snapshots 30] [--rounds 3] [--embedder hashing|local]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from mongomem.local.queue import local_queue_factory
from mongomem.ports import ANSWERS

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mongomem")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "mongomem-bench")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")

FOODS = ["pizza", "sushi", "ramen", "tacos", "paella", "curry", "falafel", "pho", "dumplings", "risotto"]
CITIES = ["Lisbon", "Porto", "Madrid", "Paris", "Berlin", "Rome", "Oslo", "Vienna"]


class TimedLLM:
    """Answers like a scripted LLM after `delay` seconds, and keeps the time spent in calls."""

    name = "bench"
    capabilities = ANSWERS

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.spent = 0.0
        self.calls = 0

    def ready(self) -> tuple[bool, str]:
        return True, ""

    def complete_json(self, request: Any) -> Any:
        from mongomem.ports import LLMResult

        started = time.perf_counter()
        self.calls += 1
        n = self.calls
        if self.delay:
            time.sleep(self.delay)
        if request.task == "reconcile":  # an ambiguous vector match: the LLM decides (counts as LLM time)
            answer = {"decision": "ADD", "target_id": None, "reason": "a different dish"}
            self.spent += time.perf_counter() - started
            return LLMResult(text=json.dumps(answer), model="bench")
        items = [
            # restated facts (REINFORCE), a changing one (UPDATE) and new ones (ADD)
            {"subject": "user", "attribute": "diet", "value": "vegetarian", "evidence_seqs": [1]},
            {
                "subject": "user",
                "attribute": "home city",
                "value": CITIES[n % len(CITIES)],
                "evidence_seqs": [2],
            },
            {
                "subject": "user",
                "attribute": "likes",
                "value": f"{FOODS[n % len(FOODS)]} #{n}",
                "evidence_seqs": [3],
            },
        ]
        self.spent += time.perf_counter() - started
        return LLMResult(text=json.dumps({"items": items}), model="bench")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=30, help="snapshots per zero-latency round")
    parser.add_argument("--slow-snapshots", type=int, default=6, help="snapshots per 800 ms round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--embedder", choices=["hashing", "local"], default="local")
    args = parser.parse_args()

    from mongomem.config import parse_project_config, settings_from_env
    from mongomem.local.mongod import EmbeddedMongo
    from mongomem.models.common import Scope
    from mongomem.models.turns import RecordTurnsRequest
    from mongomem.runtime import Services, configure
    from mongomem.vectors.embedded import EmbeddedIndex
    from tests.conftest import Ctx, load_event, load_function

    if args.embedder == "local":
        from mongomem.providers.embed_local import LocalEmbedderProvider

        embedder: Any = LocalEmbedderProvider()
    else:
        from mongomem.offline.embed_hashing import HashingEmbedder

        embedder = HashingEmbedder(dim=384)
    fn = load_function("extract")
    ctx = Ctx()
    template = load_event("extract_sqs.json")["Records"][0]
    sink = io.StringIO()

    def run_round(tmp: Path, server: Any, delay: float, count: int) -> tuple[list[float], float, float]:
        cfg = parse_project_config({"memory": {"extraction": {"enabled": ["semantic"]}}})
        llm = TimedLLM(delay)
        settings = settings_from_env(
            {"MONGOMEM_MONGODB_URI": server.uri, "MONGOMEM_DB_NAME": f"bench_{uuid.uuid4().hex[:8]}"},
            project=cfg,
            enabled_extractions=["semantic"],
        )
        svc = Services(
            settings,
            llm=llm,
            embedder=embedder,
            vector_index=EmbeddedIndex(tmp / uuid.uuid4().hex[:8]),
            queue_factory=local_queue_factory,
        )
        configure(svc)
        scope = Scope(tenant="default", user_id="bench-user")
        snaps = []
        for i in range(count):
            turns = [
                {
                    "role": "user" if k % 2 == 0 else "assistant",
                    "content": f"Session {i} turn {k}: I'm vegetarian and I live in {CITIES[i % len(CITIES)]}.",
                }
                for k in range(10)
            ]
            svc.recorder.record(
                scope,
                f"s{i}",
                RecordTurnsRequest.model_validate({"turns": turns}),
            )
            snaps.append(svc.promoter.flush(scope, f"s{i}")[0].snapshot_id)
        times = []
        wall_started = time.perf_counter()
        for snap in snaps:
            event = {"Records": [dict(template, body=json.dumps({"snapshot_id": snap, "type": "semantic"}))]}
            started = time.perf_counter()
            with contextlib.redirect_stdout(sink):
                response = fn.lambda_handler(event, ctx)
            times.append(time.perf_counter() - started)
            assert response == {"batchItemFailures": []}, response
            sink.seek(0)
            sink.truncate()
        wall = time.perf_counter() - wall_started
        configure(None)
        svc.database.drop()
        return times, wall, llm.spent

    fast_medians, fast_rates, shares, slow_medians = [], [], [], []
    with tempfile.TemporaryDirectory() as tmpdir, EmbeddedMongo(Path(tmpdir) / "mongo") as server:
        tmp = Path(tmpdir)
        embedder.embed(["warm up the model"], "document")
        run_round(tmp, server, 0.0, 3)  # warm-up
        for r in range(args.rounds):
            times, wall, _ = run_round(tmp, server, 0.0, args.snapshots)
            fast_medians.append(statistics.median(times))
            fast_rates.append(len(times) / wall)
            slow_times, slow_wall, llm_spent = run_round(tmp, server, 0.8, args.slow_snapshots)
            outside = (slow_wall - llm_spent) / slow_wall
            shares.append(outside)
            slow_medians.append(statistics.median(slow_times))
            print(
                f"round {r + 1}: zero-latency LLM {len(times) / wall:6.1f} snapshots/s "
                f"(median {statistics.median(times) * 1000:.1f} ms)   800 ms LLM: "
                f"{outside * 100:.1f}% of wall time outside the LLM call",
                file=sys.stderr,
                flush=True,
            )
    result = {
        "embedder": embedder.model,
        "zero_latency_snapshots_per_s": round(statistics.median(fast_rates), 2),
        "zero_latency_median_ms_per_snapshot": round(statistics.median(fast_medians) * 1000, 2),
        "llm_800ms_median_ms_per_snapshot": round(statistics.median(slow_medians) * 1000, 1),
        "share_outside_llm": round(statistics.median(shares), 4),
        "goal_share_outside_llm": 0.10,
        "memories_per_snapshot": 3,
        "turns_per_snapshot": 10,
        "rounds": args.rounds,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
