"""bench/locomo_context.py at a small size: a LoCoMo-format conversation written for the repository
(tests/data/locomo_priya.json, four sessions, 14 questions) through a fresh local stack."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_context_bench_prints_its_figures_beside_its_baselines() -> None:
    run = subprocess.run(
        [sys.executable, "bench/locomo_context.py", "tests/data/locomo_priya.json", "--budgets", "300,600"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    [line] = run.stdout.strip().splitlines()
    result = json.loads(line)
    assert result["bench"] == "locomo_context" and result["n"] == 14
    for budget in ("300", "600"):
        figures = result[budget]
        assert set(figures) >= {
            "evidence_share",
            "answer_words",
            "tokens_used",
            "bm25_evidence_share",
            "bm25_answer_words",
            "recent_evidence_share",
            "recent_answer_words",
        }
        assert 0.8 * int(budget) <= figures["tokens_used"] <= int(budget)  # the budget is spent
        # the block finds the evidence at least as well as packing the best BM25 turns into the same budget
        assert figures["evidence_share"] >= figures["bm25_evidence_share"]
        assert figures["evidence_share"] > figures["recent_evidence_share"]
    assert result["600"]["evidence_share"] >= result["300"]["evidence_share"]
    assert result["context_p50_ms"] > 0 and result["context_p95_ms"] >= result["context_p50_ms"]
