"""Benchmark: recording a turn through the real handler vs a bare pymongo insert_one.

Both run side by side in one process against the same local MongoDB-compatible server (SecantusDB),
alternating in several rounds; the figure judged is the ratio of median per-turn latencies
(goal <= 2.0: the record path does two round trips, the session update and the turn insert).
Also compares the record handler's import time with `import pymongo, pydantic, aws_lambda_powertools`
in fresh interpreters (goal <= 1.5x).

    python bench/record_turn.py [--turns 400] [--rounds 5]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from mongomem.local.queue import local_queue_factory

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mongomem")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "mongomem-bench")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")


def bare_doc(session: str, i: int) -> dict[str, object]:
    """The turn document the handler would store, for the bare driver sides."""
    return {
        "_id": f"default|bench-user|{session}#{i + 1}",
        "tenant": "default",
        "user_id": "bench-user",
        "session_id": session,
        "seq": i + 1,
        "role": "user",
        "content": f"turn {i}: I'd like a window seat on the 9am flight.",
        "tokens": 14,
    }


def import_seconds(code: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        probe = f"import time; t=time.perf_counter(); {code}; print(time.perf_counter()-t)"
        out = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ},
        )
        samples.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=400, help="turns per side per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--import-runs", type=int, default=7)
    args = parser.parse_args()

    from mongomem.local.mongod import EmbeddedMongo
    from tests.conftest import Ctx, load_event, load_function

    with tempfile.TemporaryDirectory() as tmp, EmbeddedMongo(Path(tmp)) as server:
        from mongomem.config import settings_from_env
        from mongomem.runtime import Services, configure

        db = f"bench_{uuid.uuid4().hex[:8]}"
        svc = Services(
            settings_from_env({"MONGOMEM_MONGODB_URI": server.uri, "MONGOMEM_DB_NAME": db}),
            queue_factory=local_queue_factory,
        )
        configure(svc)
        fn = load_function("record_turns")
        ctx = Ctx()
        template = load_event("record_turn_single.json")
        store = svc.store
        write_concern = store.db.write_concern.document
        bare = store.db["bare_turns"]
        # the bare side gets the same indexes as the turns collection, so only our logic differs
        for index in store.turns.list_indexes():
            if index["name"] != "_id_":
                options = {k: index[k] for k in ("unique", "partialFilterExpression") if k in index}
                bare.create_index(list(index["key"].items()), name=index["name"], **options)
        sink = io.StringIO()

        def handler_round(session: str, n: int) -> list[float]:
            times = []
            event = json.loads(json.dumps(template))
            event["rawPath"] = f"/v1/sessions/{session}/turns"
            event["requestContext"]["http"]["path"] = event["rawPath"]
            for i in range(n):
                event["body"] = json.dumps(
                    {
                        "user_id": "bench-user",
                        "role": "user",
                        "content": f"turn {i}: I'd like a window seat on the 9am flight.",
                    }
                )
                t = time.perf_counter()
                with contextlib.redirect_stdout(sink):  # EMF metrics lines; formatted, not shown
                    response = fn.lambda_handler(event, ctx)
                times.append(time.perf_counter() - t)
                assert response["statusCode"] == 201, response
                sink.seek(0)
                sink.truncate()
            return times

        def bare_round(session: str, n: int) -> list[float]:
            times = []
            for i in range(n):
                doc = bare_doc(session, i)
                t = time.perf_counter()
                bare.insert_one(doc)
                times.append(time.perf_counter() - t)
            return times

        sessions = store.db["bare_sessions"]

        def floor_round(session: str, n: int) -> list[float]:
            """The two commands the record path cannot avoid, bare: a session $inc and the turn insert."""
            times = []
            for i in range(n):
                doc = bare_doc(session, i)
                t = time.perf_counter()
                sessions.find_one_and_update({"_id": session}, {"$inc": {"last_seq": 1}}, upsert=True)
                bare.insert_one(doc)
                times.append(time.perf_counter() - t)
            return times

        handler_round("warmup", 50)
        bare_round("warmup", 50)
        floor_round("warmup-f", 50)
        medians_h, medians_b, medians_f, rate_h, rate_b = [], [], [], [], []
        for r in range(args.rounds):
            h = handler_round(f"h{r}", args.turns)
            b = bare_round(f"b{r}", args.turns)
            f = floor_round(f"f{r}", args.turns)
            medians_h.append(statistics.median(h))
            medians_b.append(statistics.median(b))
            medians_f.append(statistics.median(f))
            rate_h.append(len(h) / sum(h))
            rate_b.append(len(b) / sum(b))
            print(
                f"round {r + 1}: handler {len(h) / sum(h):7.0f} turns/s (median {statistics.median(h) * 1000:.2f} ms)"
                f"   bare insert_one {len(b) / sum(b):7.0f} turns/s (median {statistics.median(b) * 1000:.2f} ms)",
                flush=True,
            )
        configure(None)

    med_h, med_b, med_f = (
        statistics.median(medians_h),
        statistics.median(medians_b),
        statistics.median(medians_f),
    )
    imp_handler = import_seconds(
        "import importlib.util as u; s=u.spec_from_file_location('a','functions/record_turns/app.py'); "
        "m=u.module_from_spec(s); s.loader.exec_module(m)",
        args.import_runs,
    )
    imp_base = import_seconds("import pymongo, pydantic, aws_lambda_powertools", args.import_runs)
    result = {
        "handler_turns_per_s": round(statistics.median(rate_h)),
        "bare_insert_turns_per_s": round(statistics.median(rate_b)),
        "handler_median_ms": round(med_h * 1000, 3),
        "bare_median_ms": round(med_b * 1000, 3),
        "ratio_handler_vs_bare": round(med_h / med_b, 2),
        "goal_ratio": 2.0,
        "two_command_floor_median_ms": round(med_f * 1000, 3),
        "floor_vs_bare": round(med_f / med_b, 2),
        "ratio_handler_vs_floor": round(med_h / med_f, 2),
        "import_handler_ms": round(imp_handler * 1000, 1),
        "import_baseline_ms": round(imp_base * 1000, 1),
        "import_ratio": round(imp_handler / imp_base, 2),
        "goal_import_ratio": 1.5,
        "rounds": args.rounds,
        "turns_per_round": args.turns,
        # every side writes with the stores' durable write concern (docs/decisions.md "Durability")
        "write_concern": write_concern,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
