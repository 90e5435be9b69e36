"""Benchmark: recording a turn through the real handler vs the bare driver commands it cannot avoid.

Every side runs against the same local MongoDB-compatible server (SecantusDB), with the same indexes
and the stores' durable write concern; the sides take turns every 10 writes (a shared machine's load
changes hit them alike), and figures are medians of several rounds.

- one writer: the handler (API Gateway event in, response out), a bare `insert_one`, and the bare
  two-command floor (`findAndModify $inc` on a session + `insert_one`): `ratio_handler_vs_floor`
  (goal <= 1.15) and `ratio_handler_vs_bare`. A third side sends exactly the record path's two
  commands (its session update and turn document) from bare pymongo to collections with the same
  indexes as sessions and turns: `ratio_handler_vs_record_commands` is what our Python costs
  (validation, logging, EMF metrics, the response), `record_commands_vs_floor` what the record's
  fields and the scanner's indexes cost the server. Each side's CPU per turn in this process
  (`thread_time`) is counted too: `own_cpu_ms_per_turn` is our Python's cost without the server's
  latency, and `ratio_handler_vs_record_commands_by_cpu` the wall ratio that cost alone gives (on a shared
  machine the wall ratio swings with the server's fsync latency from run to run; this one does not);
- 8 concurrent writers, each its own process (like 8 Lambda execution environments): p50/p99 of the
  handler and of the floor, each writer on its own session;
- imports, in fresh interpreters: the record handler vs `import pymongo, pydantic,
  aws_lambda_powertools.event_handler` with one model defined; `own_import_ms` is the difference
  (goal <= 15 ms).

    python bench/record_turn.py [--turns 400] [--rounds 5] [--writers 8] [--concurrent-turns 150]
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mongomem")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "mongomem-bench")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")

CONTENT = "turn {i}: I'd like a window seat on the 9am flight."
CHUNK = 10  # writes of one side before the next side takes over
HANDLER_IMPORT = (
    "import importlib.util as u; s=u.spec_from_file_location('a','functions/record_turns/app.py'); "
    "m=u.module_from_spec(s); s.loader.exec_module(m)"
)
# What any record handler on this stack pays before its own code: the driver, pydantic with one model
# (pydantic's schema machinery loads on the first class), Powertools' event handler.
BASELINE_IMPORT = (
    "import pymongo, pydantic, aws_lambda_powertools.event_handler\nclass M(pydantic.BaseModel):\n    x: int"
)


def bare_doc(session: str, i: int) -> dict[str, object]:
    """The turn document the handler would store, for the bare driver sides."""
    return {
        "_id": f"default|bench-user|{session}#{i + 1}",
        "tenant": "default",
        "user_id": "bench-user",
        "session_id": session,
        "seq": i + 1,
        "role": "user",
        "content": CONTENT.format(i=i),
        "tokens": 14,
    }


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def probe_env(**extra: str) -> dict[str, str]:
    # bytecode is cached, as pip installs the layer's packages (precompiled): no run pays for compiling
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **extra}


def import_seconds(code: str, runs: int, clock: str = "perf_counter") -> list[float]:
    """Import times in fresh interpreters; `clock` "process_time" counts the interpreter's CPU time only
    (what a loaded, shared machine distorts least)."""
    samples = []
    probe = f"import time; t=time.{clock}()\n{code}\nprint(time.{clock}()-t)"
    for _ in range(runs + 1):  # the first run writes the bytecode caches
        out = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env=probe_env(),
        )
        samples.append(float(out.stdout.strip().splitlines()[-1]))
    return samples[1:]


COLD = "\n".join(
    [
        "import json, time",
        "t0 = time.perf_counter()",
        HANDLER_IMPORT,
        "t1 = time.perf_counter()",
        "from tests.conftest import Ctx, load_event",
        "event = load_event('record_turn_single.json')",
        "t2 = time.perf_counter()",
        "response = m.lambda_handler(event, Ctx())",
        "t3 = time.perf_counter()",
        "assert response['statusCode'] == 201, response",
        "print(json.dumps([t1 - t0, t3 - t2]))",
    ]
)


def cold_starts(uri: str, db: str, runs: int) -> tuple[list[float], list[float]]:
    """A fresh interpreter: the handler's import, then its first request (connecting to MongoDB included)."""
    imports, firsts = [], []
    env = probe_env(MONGOMEM_MONGODB_URI=uri, MONGOMEM_DB_NAME=db, MONGOMEM_ENSURE_INDEXES="false")
    for _ in range(runs + 1):  # the first run writes the bytecode caches
        out = subprocess.run([sys.executable, "-c", COLD], cwd=ROOT, capture_output=True, text=True, env=env)
        assert out.returncode == 0, out.stderr[-2000:]
        first_import, first_request = json.loads(out.stdout.strip().splitlines()[-1])
        imports.append(first_import)
        firsts.append(first_request)
    return imports[1:], firsts[1:]


def services_for(uri: str, db: str) -> Any:
    from mongomem.config import settings_from_env
    from mongomem.local.queue import local_queue_factory
    from mongomem.runtime import Services

    return Services(
        settings_from_env({"MONGOMEM_MONGODB_URI": uri, "MONGOMEM_DB_NAME": db}),
        queue_factory=local_queue_factory,
    )


class Sides:
    """The handler and the two bare sides, over one set of services and one database."""

    def __init__(self, uri: str, db: str) -> None:
        from mongomem.runtime import configure
        from tests.conftest import Ctx, load_event, load_function

        self.svc = services_for(uri, db)
        configure(self.svc)
        self.fn = load_function("record_turns")
        self.ctx = Ctx()
        self.template = load_event("record_turn_single.json")
        self.sink = io.StringIO()
        # this process's CPU per turn, chunk by chunk: what our Python costs, whatever the server's latency
        self.cpu: dict[str, list[float]] = {"handler": [], "record_commands": []}
        self.handler("warmup-indexes", 1)  # the turns' indexes exist before the bare side copies them
        database = self.svc.db  # the raw pymongo database, for the bare sides
        self.write_concern = database.write_concern.document
        self.bare = database["bare_turns"]
        self.bare_sessions = database["bare_sessions"]
        self.rec_sessions = database["bare_record_sessions"]
        # the bare sides get the same indexes as the turns collection, so only our logic differs
        copy_indexes(database["turns"], self.bare)
        copy_indexes(database["sessions"], self.rec_sessions)  # the record-commands side's sessions

    def handler(self, session: str, n: int, start: int = 0) -> list[float]:
        times = []
        event = json.loads(json.dumps(self.template))
        event["rawPath"] = f"/v1/sessions/{session}/turns"
        event["requestContext"]["http"]["path"] = event["rawPath"]
        cpu = time.thread_time()
        for i in range(start, start + n):
            event["body"] = json.dumps(
                {"user_id": "bench-user", "role": "user", "content": CONTENT.format(i=i)}
            )
            t = time.perf_counter()
            with contextlib.redirect_stdout(self.sink):  # EMF metrics lines; formatted, not shown
                response = self.fn.lambda_handler(event, self.ctx)
            times.append(time.perf_counter() - t)
            assert response["statusCode"] == 201, response
            self.sink.seek(0)
            self.sink.truncate()
        self.cpu["handler"].append((time.thread_time() - cpu) / n)
        return times

    def bare_insert(self, session: str, n: int, start: int = 0) -> list[float]:
        times = []
        for i in range(start, start + n):
            doc = bare_doc(session, i)
            t = time.perf_counter()
            self.bare.insert_one(doc)
            times.append(time.perf_counter() - t)
        return times

    def record_commands(self, session: str, n: int, start: int = 0) -> list[float]:
        """The record path's own two commands, sent from bare pymongo (no validation, logging, metrics)."""
        from datetime import UTC, datetime, timedelta

        from pymongo import ReturnDocument

        key = f"default|bench-user|{session}"
        if start == 0:  # the session exists before its first turn, as the record path's does
            self.rec_sessions.insert_one(
                {
                    "_id": key,
                    "tenant": "default",
                    "user_id": "bench-user",
                    "session_id": session,
                    "agent_id": None,
                    "created_at": datetime.now(UTC),
                    "last_seq": 0,
                    "pending": 0,
                    "promoted_through_seq": 0,
                    "unpromoted_tokens": 0,
                }
            )
        times = []
        cpu = time.thread_time()
        for _ in range(n):
            t = time.perf_counter()
            now = datetime.now(UTC)
            seq = self.rec_sessions.find_one_and_update(
                {"_id": key},
                {
                    "$inc": {"last_seq": 1, "pending": 1, "unpromoted_tokens": 14},
                    "$set": {"last_turn_at": now, "idle_due_at": now + timedelta(seconds=900)},
                },
                return_document=ReturnDocument.AFTER,
                projection={"last_seq": 1},
            )["last_seq"]
            doc = {
                **bare_doc(session, seq - 1),
                "timestamp": now,
                "recorded_at": now,
                "recall_indexed": False,
            }
            self.bare.insert_many([doc], ordered=True)
            times.append(time.perf_counter() - t)
        self.cpu["record_commands"].append((time.thread_time() - cpu) / n)
        return times

    def floor(self, session: str, n: int, start: int = 0) -> list[float]:
        """The two commands the record path cannot avoid, bare: a session $inc and the turn insert."""
        times = []
        for i in range(start, start + n):
            doc = bare_doc(session, i)
            t = time.perf_counter()
            self.bare_sessions.find_one_and_update({"_id": session}, {"$inc": {"last_seq": 1}}, upsert=True)
            self.bare.insert_one(doc)
            times.append(time.perf_counter() - t)
        return times


def copy_indexes(source: Any, target: Any) -> None:
    for index in source.list_indexes():
        if index["name"] != "_id_":
            options = {k: index[k] for k in ("unique", "partialFilterExpression") if k in index}
            target.create_index(list(index["key"].items()), name=index["name"], **options)


def worker(args: argparse.Namespace) -> None:
    """One concurrent writer (its own process): set up, wait for the start line, write, print latencies."""
    sides = Sides(args.uri, args.db)
    run = sides.handler if args.worker == "handler" else sides.floor
    run(f"{args.session}-warm", 20)
    print("ready", flush=True)
    sys.stdin.readline()
    times = run(args.session, args.turns)
    print(json.dumps(times), flush=True)


def concurrent(uri: str, db: str, side: str, writers: int, turns: int, tag: str) -> list[float]:
    """Latencies of `writers` processes writing at once, each to its own session."""
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--worker",
                side,
                "--uri",
                uri,
                "--db",
                db,
                "--session",
                f"{tag}-{side}-{w}",
                "--turns",
                str(turns),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for w in range(writers)
    ]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    for proc in procs:  # all set up: start them together
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    samples: list[float] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, out
        samples.extend(json.loads(out.strip().splitlines()[-1]))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=400, help="turns per side per round (one writer)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--writers", type=int, default=8, help="concurrent writers (processes)")
    parser.add_argument("--concurrent-turns", type=int, default=150, help="turns per concurrent writer")
    parser.add_argument("--concurrent-rounds", type=int, default=3)
    parser.add_argument("--import-runs", type=int, default=9)
    parser.add_argument("--worker", choices=["handler", "floor"], help=argparse.SUPPRESS)
    parser.add_argument("--uri", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--session", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return

    from mongomem.local.mongod import EmbeddedMongo
    from mongomem.runtime import configure

    with tempfile.TemporaryDirectory() as tmp, EmbeddedMongo(Path(tmp)) as server:
        db = f"bench_{uuid.uuid4().hex[:8]}"
        sides = Sides(server.uri, db)
        sides.handler("warmup", 50)
        sides.bare_insert("warmup", 50)
        sides.floor("warmup-f", 50)
        sides.record_commands("warmup-r", 50)
        sides.cpu = {side: [] for side in sides.cpu}
        medians_h, medians_b, medians_f, medians_r, rate_h, rate_b = [], [], [], [], [], []
        for r in range(args.rounds):
            h: list[float] = []
            b: list[float] = []
            f: list[float] = []
            c: list[float] = []
            # the sides take turns every few writes, so a shared machine's load changes hit all of them alike
            for start in range(0, args.turns, CHUNK):
                n = min(CHUNK, args.turns - start)
                h += sides.handler(f"h{r}", n, start)
                b += sides.bare_insert(f"b{r}", n, start)
                f += sides.floor(f"f{r}", n, start)
                c += sides.record_commands(f"r{r}", n, start)
            medians_h.append(statistics.median(h))
            medians_b.append(statistics.median(b))
            medians_f.append(statistics.median(f))
            medians_r.append(statistics.median(c))
            rate_h.append(len(h) / sum(h))
            rate_b.append(len(b) / sum(b))
            print(
                f"round {r + 1}: handler {statistics.median(h) * 1000:.2f} ms, record commands "
                f"{statistics.median(c) * 1000:.2f} ms, floor {statistics.median(f) * 1000:.2f} ms, "
                f"bare insert_one {statistics.median(b) * 1000:.2f} ms (medians)",
                file=sys.stderr,
                flush=True,
            )
        p99_h, p99_f, p50_h, p50_f = [], [], [], []
        for r in range(args.concurrent_rounds):
            ch = concurrent(server.uri, db, "handler", args.writers, args.concurrent_turns, f"c{r}")
            cf = concurrent(server.uri, db, "floor", args.writers, args.concurrent_turns, f"c{r}")
            p99_h.append(percentile(ch, 0.99))
            p99_f.append(percentile(cf, 0.99))
            p50_h.append(statistics.median(ch))
            p50_f.append(statistics.median(cf))
            print(
                f"{args.writers} writers, round {r + 1}: handler p50 {p50_h[-1] * 1000:.1f} / p99 {p99_h[-1] * 1000:.1f} ms, "
                f"floor p50 {p50_f[-1] * 1000:.1f} / p99 {p99_f[-1] * 1000:.1f} ms",
                file=sys.stderr,
                flush=True,
            )
        write_concern = sides.write_concern
        cold_import, cold_first = cold_starts(server.uri, db, args.import_runs)
        configure(None)

    med_h, med_b, med_f = (
        statistics.median(medians_h),
        statistics.median(medians_b),
        statistics.median(medians_f),
    )
    med_r = statistics.median(medians_r)
    cpu_h, cpu_r = (statistics.median(sides.cpu[side]) for side in ("handler", "record_commands"))
    imp_handler = statistics.median(import_seconds(HANDLER_IMPORT, args.import_runs))
    imp_base = statistics.median(import_seconds(BASELINE_IMPORT, args.import_runs))
    cpu_handler, cpu_base = (
        statistics.median(import_seconds(code, args.import_runs, "process_time"))
        for code in (HANDLER_IMPORT, BASELINE_IMPORT)
    )
    result = {
        "handler_turns_per_s": round(statistics.median(rate_h)),
        "bare_insert_turns_per_s": round(statistics.median(rate_b)),
        "handler_median_ms": round(med_h * 1000, 3),
        "bare_median_ms": round(med_b * 1000, 3),
        "two_command_floor_median_ms": round(med_f * 1000, 3),
        "ratio_handler_vs_bare": round(med_h / med_b, 2),
        "floor_vs_bare": round(med_f / med_b, 2),
        "ratio_handler_vs_floor": round(med_h / med_f, 3),
        "goal_ratio_handler_vs_floor": 1.15,
        "record_commands_median_ms": round(med_r * 1000, 3),
        "ratio_handler_vs_record_commands": round(med_h / med_r, 3),
        "record_commands_vs_floor": round(med_r / med_f, 3),
        # the client's CPU per turn (thread_time, median of the chunks): the handler's own Python is the
        # difference; on a shared machine the wall ratio above swings with the server's latency, this does not
        "handler_cpu_ms": round(cpu_h * 1000, 3),
        "record_commands_cpu_ms": round(cpu_r * 1000, 3),
        "own_cpu_ms_per_turn": round((cpu_h - cpu_r) * 1000, 3),
        # the wall ratio our Python alone would give over this run's record commands
        "ratio_handler_vs_record_commands_by_cpu": round((med_r + cpu_h - cpu_r) / med_r, 3),
        "writers": args.writers,
        "handler_p50_ms_concurrent": round(statistics.median(p50_h) * 1000, 2),
        "handler_p99_ms_concurrent": round(statistics.median(p99_h) * 1000, 2),
        "floor_p50_ms_concurrent": round(statistics.median(p50_f) * 1000, 2),
        "floor_p99_ms_concurrent": round(statistics.median(p99_f) * 1000, 2),
        "p99_handler_vs_floor_concurrent": round(statistics.median(p99_h) / statistics.median(p99_f), 3),
        "import_handler_ms": round(imp_handler * 1000, 1),
        "import_baseline_ms": round(imp_base * 1000, 1),
        "own_import_ms": round((imp_handler - imp_base) * 1000, 1),
        # the same difference in CPU time (process_time): the figure to trust on a loaded machine
        "own_import_cpu_ms": round((cpu_handler - cpu_base) * 1000, 1),
        "import_handler_cpu_ms": round(cpu_handler * 1000, 1),
        "import_baseline_cpu_ms": round(cpu_base * 1000, 1),
        "goal_own_import_ms": 15,
        # a fresh interpreter's import plus its first request (MongoDB connection and handshake included):
        # what deferring work from the import to first use costs or saves overall
        "cold_import_ms": round(statistics.median(cold_import) * 1000, 1),
        "cold_first_request_ms": round(statistics.median(cold_first) * 1000, 1),
        "rounds": args.rounds,
        "turns_per_round": args.turns,
        # every side writes with the stores' durable write concern (docs/adr/0002-durability-what-a-2xx-means.md)
        "write_concern": write_concern,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
