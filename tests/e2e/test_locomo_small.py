"""Semantic recall end to end on a LoCoMo-format conversation: the local stack, the bundled local embedder,
HTTP only.

The three sessions of the conversation written for the tests (tests/data/locomo-mini, 36 turns) are
recorded through the public API, the stack's scan job indexes them, and its 15 questions with evidence
are asked through POST /v1/recall (message_range 0), as bench/locomo_recall.py does for a whole data set.
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import time
from pathlib import Path
from typing import Any

from mongomem.local.stack import LocalStack
from tests.e2e.test_local_stack import http

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "locomo-mini" / "ines-marco.json"
SESSIONS = 3


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("locomo_recall", ROOT / "bench" / "locomo_recall.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_recall_finds_the_evidence_turns_of_locomo_questions(tmp_path: Path) -> None:
    bench = _bench()
    conv = json.loads(DATA.read_text())
    config = tmp_path / "project-config.yaml"
    config.write_text(
        "memory:\n  extraction: {enabled: []}\n  snapshot: {max_messages: 1000, idle_seconds: 3600}\n"
        "  providers: {llm: {kind: offline}, embeddings: {kind: local}}\n"
    )
    stack = LocalStack(data_dir=tmp_path / "data", port=0, scan_seconds=0.5, config_file=config).start()
    try:
        base = stack.url
        # Given the first three sessions, recorded as a user's agent would record them
        dia_ids: set[str] = set()
        for n, start, turns in bench.sessions(conv)[:SESSIONS]:
            body = bench.api_turns(conv, start, turns)
            dia_ids |= {t["metadata"]["dia_id"] for t in body}
            status, _ = http(
                "POST", f"{base}/v1/sessions/session_{n}/turns", {"user_id": "conv-mini", "turns": body}
            )
            assert status == 201
        # When the scheduled scan has indexed them (never the record path)
        deadline = time.monotonic() + 45
        while http("GET", f"{base}/v1/status")[1]["recall"]["pending_turns"]:
            assert time.monotonic() < deadline, "turns were not indexed in time"
            time.sleep(0.3)
        # Then recall puts the evidence turns of the questions near the top
        every_turn = {t["dia_id"] for _, _, turns in bench.sessions(conv) for t in turns}
        questions = [
            (q, ev)
            for q, ev in bench.questions(conv["qa"], every_turn)
            if {e.split(":")[0] for e in ev} <= {"D1", "D2", "D3"}
        ]
        assert len(questions) == 15
        r1, r5, r10 = [], [], []
        for question, evidence in questions:
            status, body = http(
                "POST",
                f"{base}/v1/recall",
                {"user_id": "conv-mini", "query": question, "top_k": 10, "message_range": 0},
            )
            assert status == 200, body
            turns = {t["turn_id"]: t for g in body["threads"] for t in g["turns"]}
            assert all(t["matched"] for t in turns.values())  # message_range 0: matches only
            ranked = [turns[i]["metadata"]["dia_id"] for i in body["matched"]]
            r1.append(len(set(ranked[:1]) & evidence) / len(evidence))
            r5.append(len(set(ranked[:5]) & evidence) / len(evidence))
            r10.append(len(set(ranked[:10]) & evidence) / len(evidence))
        figures = {k: round(statistics.fmean(v), 3) for k, v in (("R@1", r1), ("R@5", r5), ("R@10", r10))}
        # Measured 0.7 / 0.933 / 1.0; a random ranking of 36 turns would give ~0.03 / 0.14 / 0.28.
        assert figures["R@10"] >= 0.9 and figures["R@5"] >= 0.8 and figures["R@1"] >= 0.5, figures
    finally:
        stack.stop()
