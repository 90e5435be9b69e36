"""Experiments on the LoCoMo dev split: one local stack loaded once (kept in a data dir), then strategies
evaluated in-process against its services (no HTTP), with the bench's definitions.

    .venv/bin/python bench/studies/context/harness.py DATA_DIR STACK_DIR [strategy ...]
"""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]  # bench/studies/context -> the repository
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mongomem")
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "x")

from locomo_context import History, answer_words, wait_idle, words  # noqa: E402
from locomo_recall import conversations, http, log, questions  # noqa: E402

CONFIG = "memory:\n  providers: {llm: {kind: offline}, embeddings: {kind: local}}\n"


def open_stack(data_dir: Path, stack_dir: Path) -> Any:
    from mongomem.local.stack import LocalStack

    stack_dir.mkdir(parents=True, exist_ok=True)
    config = stack_dir / "project-config.yaml"
    config.write_text(CONFIG)
    marker = stack_dir / "loaded"
    stack = LocalStack(data_dir=stack_dir / "data", port=0, scan_seconds=1.0, config_file=config).start()
    if not marker.exists():
        for name, conv, _ in conversations(data_dir):
            status, body = http(
                "POST", f"{stack.url}/v1/import", {"user_id": name, "format": "locomo", "data": conv}
            )
            log(f"imported {name}: {status} {body}")
        wait_idle(stack.url, 7200)
        marker.write_text("ok")
    return stack


class Case:
    def __init__(self, conv: str, question: str, evidence: set[str], answer: Any, category: int) -> None:
        self.conv, self.question, self.evidence, self.answer, self.category = (
            conv,
            question,
            evidence,
            answer,
            category,
        )
        self.wanted = answer_words(answer)


def cases(data_dir: Path, stack: Any) -> tuple[list[Case], dict[str, dict[str, str]], dict[str, History]]:
    """The questions, the public turn id -> dia_id map per conversation, the baselines' histories."""
    from mongomem.models.common import Scope

    svc = stack.services
    out: list[Case] = []
    maps: dict[str, dict[str, str]] = {}
    hist: dict[str, History] = {}
    for name, conv, qa in conversations(data_dir):
        scope = Scope(tenant="default", user_id=name)
        sessions = sorted({f"session_{m.group(1)}" for k in conv if (m := re.fullmatch(r"session_(\d+)", k))})
        mapping: dict[str, str] = {}
        for s in sessions:
            for t in svc.turns.latest(scope, s, 10000):
                dia = (t.metadata or {}).get("dia_id")
                if dia:
                    mapping[t.public_id] = dia
        maps[name] = mapping
        hist[name] = History(conv)
        cats = {q["question"]: q.get("category") for q in qa}
        answers = {q["question"]: q.get("answer") for q in qa}
        for question, evidence in questions(qa, set(mapping.values())):
            out.append(Case(name, question, evidence, answers[question], cats[question]))
    return out, maps, hist


class Provenance:
    def __init__(self, stack: Any, maps: dict[str, dict[str, str]]) -> None:
        self.svc, self.maps = stack.services, maps
        self.cache: dict[str, set[str]] = {}
        self.snap: dict[str, str | None] = {}

    def of(self, conv: str, memory_id: str) -> set[str]:
        from mongomem.models.common import Scope
        from mongomem.models.memory import MemoryView

        if memory_id not in self.cache:
            scope = Scope(tenant="default", user_id=conv)
            rec = self.svc.memory_store.get(MemoryView(scope), memory_id)
            found: set[str] = set()
            for ev in rec.evidence if rec else []:
                if ev.snapshot_id not in self.snap:
                    s = self.svc.snapshots.get_for(scope, ev.snapshot_id) if ev.snapshot_id else None
                    self.snap[ev.snapshot_id] = s.session_id if s else None
                session = self.snap.get(ev.snapshot_id)
                for seq in ev.seqs:
                    dia = self.maps[conv].get(f"{session}:{seq}")
                    if dia:
                        found.add(dia)
            self.cache[memory_id] = found
        return self.cache[memory_id]


Strategy = Callable[[Any, Case, int], tuple[set[str], str, int]]


def evaluate(
    name: str,
    strategy: Strategy,
    stack: Any,
    all_cases: list[Case],
    budgets: list[int],
    dump: Path | None = None,
) -> dict[str, Any]:
    rows: dict[int, list[tuple[float, bool, int]]] = {b: [] for b in budgets}
    per_cat: dict[tuple[int, int], list[float]] = {}
    started = time.perf_counter()
    for case in all_cases:
        for b in budgets:
            ids, text, tokens = strategy(stack, case, b)
            ev = len(ids & case.evidence) / len(case.evidence)
            present = set(words(text))
            ans = case.wanted <= present
            if dump is not None:
                with dump.open("a") as f:
                    f.write(
                        json.dumps(
                            {
                                "strategy": name,
                                "budget": b,
                                "q": case.question,
                                "cat": case.category,
                                "answer": str(case.answer),
                                "ev": ev,
                                "ans": ans,
                                "missing_ev": sorted(case.evidence - ids),
                                "missing_words": sorted(case.wanted - present),
                            }
                        )
                        + "\n"
                    )
            rows[b].append((ev, ans, tokens))
            per_cat.setdefault((b, case.category), []).append(ev)
    out: dict[str, Any] = {"strategy": name, "s": round(time.perf_counter() - started)}
    for b in budgets:
        r = rows[b]
        out[str(b)] = {
            "ev": round(statistics.fmean(x[0] for x in r), 3),
            "ans": round(statistics.fmean(x[1] for x in r), 3),
            "tok": round(statistics.fmean(x[2] for x in r)),
            "ev_by_cat": {
                c: round(statistics.fmean(v), 3) for (bb, c), v in sorted(per_cat.items()) if bb == b
            },
        }
    return out
