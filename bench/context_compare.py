"""Benchmark: `POST /v1/context` latency of this checkout against another one, side by side in one run.

Each side is a local stack (`LocalStack`: the embedded database, the embedded vector index, the bundled
local embedder, offline extraction) served by its own checkout's code in its own process (`BASE/.venv`'s
Python, cwd BASE), on the same LoCoMo conversations imported through `POST /v1/import` and settled
(snapshots extracted, turns indexed). Then the same questions are asked of both, as an agent asks them
(`{user_id, session_id, query, token_budget}`, a new session per question), at every budget, in rounds:
the sides take turns (base first in odd rounds, head first in even ones), so that what the machine does
meanwhile falls on both. Per side: p50 and p95 of the round's calls, then the median over the rounds;
`p95_ratio` = head p95 / base p95 (the goal of issue 24: <= 1, "no worse than before").

Each question is also asked of recall alone, as the block starts from it (`POST /v1/recall`, resource
scope, message range 0, as many matches as the block asks for at --floor-budget): issue 32's goal is
head context p95 at that budget <= 100 ms and <= 1.5 x that recall's p95 in the same run
(`head_context_over_recall_p95`).

    .venv/bin/python bench/context_compare.py DATA --base /path/to/other/checkout [--rounds 5]
    .venv/bin/python bench/context_compare.py tests/data/locomo_priya.json --rounds 1   # the smoke run
    .venv/bin/python bench/context_compare.py LME_DIR/27016adc.json --questions-from LME_DIR --base ...
        # LongMemEval-S: the dev split's 24 questions asked of one ~120k-token history

Without --base the checkout is compared with itself (the run-to-run spread of the measure). --keep DIR
keeps both loaded stacks there (DIR/head, DIR/base) and reuses them on the next run (loading the dev
split takes minutes). Prints progress on stderr and one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from locomo_context import _conversations, percentile, wait_idle
from locomo_recall import http, log, questions

ROOT = Path(__file__).resolve().parents[1]

# The child that serves one side: the checkout's own LocalStack, until its stdin closes.
SERVE = """
import sys
from pathlib import Path
from mongomem.local.stack import LocalStack
data, config = Path(sys.argv[1]), Path(sys.argv[2])
stack = LocalStack(data_dir=data, port=0, scan_seconds=1.0, config_file=config).start()
print(stack.url, flush=True)
try:
    sys.stdin.read()
finally:
    stack.stop()
"""
QUIET = {
    "POWERTOOLS_SERVICE_NAME": "mongomem",
    "POWERTOOLS_METRICS_NAMESPACE": "mongomem-bench",
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
    "POWERTOOLS_TRACE_DISABLED": "true",
}


class Side:
    """One checkout serving one local stack in a child process."""

    def __init__(self, name: str, checkout: Path, home: Path, embeddings: str) -> None:
        self.name, self.checkout, self.home = name, checkout, home
        home.mkdir(parents=True, exist_ok=True)
        config = home / "project-config.yaml"
        # a loaded stack (--keep) is measured without extraction running beside it (deployed, it runs
        # on other functions); what it had extracted stays, the same on both sides when copied
        quiet = "  extraction: {enabled: []}\n" if (home / "loaded").exists() else ""
        config.write_text(
            f"memory:\n  providers: {{llm: {{kind: offline}}, embeddings: {{kind: {embeddings}}}}}\n{quiet}"
        )
        python = checkout / ".venv" / "bin" / "python"
        if not python.exists():
            raise SystemExit(f"{checkout} has no .venv (run `make setup` there)")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MONGOMEM_", "POWERTOOLS_"))}
        self.proc = subprocess.Popen(
            [str(python), "-c", SERVE, str(home / "data"), str(config)],
            cwd=checkout,
            env={**env, **QUIET},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http"):
            self.stop()
            raise SystemExit(f"the {name} stack did not start (from {checkout})")
        self.url = line
        self.latencies: list[list[float]] = []
        self.by_budget: dict[int, list[list[float]]] = {}
        self.recalls: list[list[float]] = []

    def load(self, convs: list[tuple[str, dict[str, Any], list[dict[str, Any]]]], timeout: float) -> None:
        marker = self.home / "loaded"
        if marker.exists():
            return
        for name, conv, _ in convs:
            status, body = http(
                "POST", f"{self.url}/v1/import", {"user_id": name, "format": "locomo", "data": conv}
            )
            if status not in (200, 201, 202):
                raise SystemExit(f"{self.name}: importing {name} failed: {status} {body}")
        wait_idle(self.url, timeout)
        marker.write_text("loaded\n")

    def ask(
        self, asked: list[tuple[str, str]], budgets: list[int], tag: str, recall_k: int = 0
    ) -> list[float]:
        """Every question at every budget (and of recall alone, with `recall_k`); the calls' latencies
        (ms), also kept per budget by `round`, recall's in `recall_last`."""
        out = []
        self.last: dict[int, list[float]] = {b: [] for b in budgets}
        self.recall_last: list[float] = []
        for n, (user, question) in enumerate(asked):
            if recall_k:
                body = {"user_id": user, "query": question, "top_k": recall_k, "message_range": 0}
                started = time.perf_counter()
                status, answer = http("POST", f"{self.url}/v1/recall", body)
                self.recall_last.append((time.perf_counter() - started) * 1000)
                if status != 200:
                    raise SystemExit(f"{self.name}: recall failed: {status} {answer}")
            for budget in budgets:
                body = {"user_id": user, "session_id": f"ask-{tag}-{n}", "query": question}
                started = time.perf_counter()
                status, answer = http("POST", f"{self.url}/v1/context", {**body, "token_budget": budget})
                out.append((time.perf_counter() - started) * 1000)
                self.last[budget].append(out[-1])
                if status != 200:
                    raise SystemExit(f"{self.name}: context failed: {status} {answer}")
        return out

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path, help="a folder of LoCoMo JSON files, or one file")
    parser.add_argument("--base", type=Path, default=ROOT, help="the other checkout (default: this one)")
    parser.add_argument("--budgets", default="1000,2000,4000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--questions", type=int, default=40, help="asked per round (spread over the data)")
    parser.add_argument("--warmup", type=int, default=3, help="questions asked of each side before round 1")
    parser.add_argument("--embeddings", default="local", choices=["local", "hashing"])
    parser.add_argument("--keep", type=Path, help="keep the loaded stacks here and reuse them")
    parser.add_argument("--settle-timeout", type=float, default=3600.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--questions-from",
        type=Path,
        help="ask this folder's questions of the first history loaded (latency on one long history: "
        "a LongMemEval-S history loads in minutes, the dev split's 24 in hours)",
    )
    parser.add_argument(
        "--floor-budget", type=int, default=2000, help="the budget whose recall query is timed alone"
    )
    args = parser.parse_args()
    # as many matches as the block asks recall for at that budget (Tuning.recall_pool's defaults)
    recall_k = max(8, min(100, args.floor_budget // 25))
    budgets = [int(b) for b in args.budgets.split(",")]
    convs = _conversations(args.data)
    if not convs:
        raise SystemExit(f"no LoCoMo JSON files in {args.data}")
    pool: list[tuple[str, str]] = []
    for name, conv, qa in convs:
        dia = {t["dia_id"] for k, v in conv.items() if re.fullmatch(r"session_\d+", k) for t in v}
        pool += [(name, q) for q, _ in questions(qa, dia)]
    if args.questions_from:
        first = convs[0][0]
        pool = [(first, q["question"]) for _, _, qa in _conversations(args.questions_from) for q in qa]
    asked = random.Random(args.seed).sample(pool, min(args.questions, len(pool)))

    home = args.keep or Path(tempfile.mkdtemp(prefix="context-compare-"))
    started = time.monotonic()
    sides: list[Side] = []
    try:
        for name, checkout in (("base", args.base.resolve()), ("head", ROOT)):
            sides.append(Side(name, checkout, home / name, args.embeddings))
            log(f"{name}: {checkout} at {sides[-1].url}")
        for side in sides:
            side.load(convs, args.settle_timeout)
            side.ask(asked[: args.warmup], budgets, "warmup")
        log(f"both stacks loaded and settled after {time.monotonic() - started:.0f} s")
        for rnd in range(args.rounds):
            for side in sides if rnd % 2 == 0 else list(reversed(sides)):
                side.latencies.append(side.ask(asked, budgets, f"r{rnd}", recall_k))
                side.recalls.append(side.recall_last)
                for budget, values in side.last.items():
                    side.by_budget.setdefault(budget, []).append(values)
            base, head = (s.latencies[-1] for s in sides)
            log(
                f"round {rnd + 1}: p95 base {percentile(base, 95):.0f} ms, head {percentile(head, 95):.0f} ms"
            )
    finally:
        for side in sides:
            side.stop()
        if args.keep is None:
            shutil.rmtree(home, ignore_errors=True)

    def figure(side: Side, q: float) -> float:
        return round(statistics.median(percentile(rnd, q) for rnd in side.latencies), 1)

    base, head = sides
    result: dict[str, Any] = {
        "bench": "context_compare",
        "base": str(args.base.resolve()) if args.base.resolve() != ROOT else "this checkout",
        "questions": len(asked),
        "budgets": budgets,
        "rounds": args.rounds,
        "base_p50_ms": figure(base, 50),
        "base_p95_ms": figure(base, 95),
        "head_p50_ms": figure(head, 50),
        "head_p95_ms": figure(head, 95),
    }
    for budget in budgets:  # where the time goes: a larger budget reads more turns
        for side in sides:
            rounds = side.by_budget.get(budget, [])
            result[f"{side.name}_p95_ms@{budget}"] = (
                round(statistics.median(percentile(v, 95) for v in rounds), 1) if rounds else None
            )
    for side in sides:
        result[f"{side.name}_recall_p95_ms"] = round(
            statistics.median(percentile(v, 95) for v in side.recalls), 1
        )
    result["recall_top_k"] = recall_k
    at = f"head_p95_ms@{args.floor_budget}"
    if result.get(at) is not None:
        result["head_context_over_recall_p95"] = round(result[at] / result["head_recall_p95_ms"], 3)
        result["base_context_over_recall_p95"] = round(
            result[f"base_p95_ms@{args.floor_budget}"] / result["base_recall_p95_ms"], 3
        )
        result["goal_context_over_recall_p95"] = 1.5
        result["goal_head_p95_ms"] = 100.0
    result["p50_ratio"] = round(result["head_p50_ms"] / result["base_p50_ms"], 3)
    result["p95_ratio"] = round(result["head_p95_ms"] / result["base_p95_ms"], 3)
    result["goal_p95_ratio"] = 1.0
    result["wall_s"] = round(time.monotonic() - started)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.exit(main())
