"""Every bench under bench/ runs at a small size in the suite, so none can rot unnoticed.

Each one is started as a user starts it (`python bench/<name>.py ...`, a real process), at a size that
takes seconds, and must exit 0 with its one JSON line of named keys on stdout. The figures of a run
this small are not judged (docs/benchmarks.md has the real ones); what is checked is that the bench
measures what it says: its named keys are there, its ratios are numbers and its correctness figures
(recall, duplicates) hold even at this size. A new bench without an entry here fails
`test_every_bench_has_a_small_run`.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
MINI = "tests/data/locomo-mini"  # the LoCoMo-format conversation written for the tests

# bench file -> (arguments of a small run, keys its JSON line must carry)
SMALL: dict[str, tuple[list[str], list[str]]] = {
    "user_keys.py": (
        ["--turns", "20", "--rounds", "1"],
        ["plain_ms_per_turn", "encrypted_warm_ms_per_turn", "warm_vs_plain", "cold_vs_plain", "seal_us"],
    ),
    "context_latency.py": (
        [
            "--users",
            "4",
            "--memories-per-user",
            "5",
            "--turn-users-every",
            "2",
            "--turns-per-user",
            "20",
            "--turns-per-session",
            "10",
            "--dim",
            "32",
            "--queries",
            "4",
            "--rounds",
            "1",
            "--profile",
            "0",
        ],
        ["search_vs_floor", "context_vs_floor", "recall_vs_floor", "search_source_recall@10"],
    ),
    "aws_cost.py": (
        ["1m"],
        ["ours_vs_agentcore", "ours_by_service_usd", "agentcore_usd", "fixed_floor_usd", "break_even_turns"],
    ),
    "context_compare.py": (
        [
            MINI,
            "--embeddings",
            "hashing",
            "--rounds",
            "1",
            "--questions",
            "3",
            "--warmup",
            "1",
            "--budgets",
            "300",
            "--floor-budget",
            "300",
            # LongMemEval-S's questions asked of one loaded history (the long-history latency run)
            "--questions-from",
            "tests/data/lme-mini",
        ],
        ["base_p95_ms", "head_p95_ms", "p50_ratio", "p95_ratio", "head_context_over_recall_p95"],
    ),
    "lme_context.py": (
        ["tests/data/lme-mini", "--budgets", "300,600", "--embeddings", "hashing"],
        ["n", "context_p50_ms", "context_p95_ms", "whole_history_answer_words"],
    ),
    "qa.py": (
        ["tests/data/lme-mini", "--budget", "600", "--embeddings", "hashing"],
        ["accuracy", "accuracy_original", "tokens_per_question", "context_p95_ms"],
    ),
    "dedup.py": (
        ["--users", "1", "--embedder", "hashing", "--path", "both"],
        ["duplicate_rate", "reinforced_share", "wrong_merges", "duplicate_rate_llm", "missed_facts_llm"],
    ),
    "extraction_quality.py": (
        [MINI, "--sessions", "1"],
        [
            "recall",
            "recall_other_speaker",
            "precision",
            "wrong_subject_rate",
            "invented_rate",
            "empty_answer_share",
            "org_items",
            "org_precision",
            "memories_per_snapshot",
            "seconds_per_snapshot",
            "llm_tokens_per_snapshot",
            "share_outside_llm",
            "per_kind",
        ],
    ),
    "extraction.py": (
        ["--snapshots", "2", "--slow-snapshots", "1", "--rounds", "1", "--embedder", "hashing"],
        ["zero_latency_median_ms_per_snapshot", "share_outside_llm"],
    ),
    "import.py": (
        ["--rounds", "1", "--sessions", "2", "--turns-per-session", "20", "--stretch", "10"],
        ["turns_per_s", "record_floor_turns_per_s", "import_vs_floor", "reimport_recorded"],
    ),
    "llm_cost.py": (
        [MINI, "--rounds", "1"],
        ["billed_input_vs_floor", "billed_input_tokens_per_1k_turns", "floor_tokens_per_1k_turns", "fan_out"],
    ),
    "llm_models.py": (["--models", "none"], ["facts_in_conversation", "results"]),
    "locomo_recall.py": ([MINI, "--embeddings", "hashing"], ["R@1", "R@5", "R@10", "ratio_R@10"]),
    "observations.py": (
        [MINI, "--embeddings", "hashing", "--budgets", "600,1200", "--replay-sessions", "2"],
        ["600", "1200", "stability"],
    ),
    "offline_rules.py": ([MINI, "--rounds", "1"], ["propose_turns_per_s", "floor_turns_per_s"]),
    "recall_indexing.py": (
        [MINI, "--embeddings", "hashing", "--rounds", "2", "--turns", "0"],
        ["turns_per_s", "tokens_per_s", "floor_turns_per_s", "indexer_vs_floor", "lme_history_s"],
    ),
    "record_turn.py": (
        [
            "--turns",
            "20",
            "--rounds",
            "1",
            "--writers",
            "2",
            "--concurrent-turns",
            "10",
            "--concurrent-rounds",
            "1",
            "--import-runs",
            "1",
        ],
        ["ratio_handler_vs_floor", "ratio_handler_vs_record_commands_by_cpu", "own_import_ms"],
    ),
    "scan_scale.py": (
        ["--small", "50", "--large", "200", "--due", "5", "--active", "5", "--rounds", "1"],
        ["keys_examined_per_due_session", "scan_growth", "index_sync_growth"],
    ),
    "vector_search.py": (
        ["--docs", "600", "--users", "6", "--queries", "10", "--rounds", "1", "--dim", "64"],
        ["embedded", "opensearch"],
    ),
}
# modules of the benches that are not benches themselves
HELPERS = {"harness.py", "extraction_match.py"}
# benches whose small run is a test of its own (it needs more than a subprocess and its JSON line)
ELSEWHERE = {"locomo_context.py": "tests/e2e/test_bench_locomo_context.py"}
# benches that search through OpenSearch take the session's node instead of starting their own
NODE_OPTION = {"context_latency.py": "--opensearch-url", "vector_search.py": "--url"}


def run_bench(name: str, args: list[str], timeout: float = 240) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MONGOMEM_", "POWERTOOLS_"))}
    proc = subprocess.run(
        [sys.executable, str(BENCH / name), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    assert proc.returncode == 0, f"bench/{name} exited {proc.returncode}:\n{proc.stderr[-4000:]}"
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines, f"bench/{name} printed no result line:\n{proc.stderr[-2000:]}"
    result = json.loads(lines[-1])
    assert isinstance(result, dict)
    return result


def test_every_bench_has_a_small_run() -> None:
    benches = {p.name for p in BENCH.glob("*.py") if p.name not in HELPERS}
    assert all((ROOT / test).exists() for test in ELSEWHERE.values())
    assert benches == set(SMALL) | set(ELSEWHERE), (
        "give every bench a small run in SMALL (and drop removed ones)"
    )


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(SMALL))
def test_bench_runs_at_a_small_size(name: str, request: pytest.FixtureRequest) -> None:
    args, keys = SMALL[name]
    if name in NODE_OPTION:
        node = request.getfixturevalue("opensearch_node")
        args = [*args, NODE_OPTION[name], node.url]
    # When the bench runs as a user runs it, at a small size
    result = run_bench(name, args)
    # Then its JSON line carries its named figures, each a real number
    missing = [k for k in keys if k not in result]
    assert not missing, f"bench/{name} lacks {missing}: {sorted(result)}"
    for key in keys:
        value = result[key]
        if isinstance(value, int | float):
            assert math.isfinite(value), (key, value)
    # ... and what it checks for correctness holds at this size too
    if name == "vector_search.py":
        assert result["embedded"]["recall_at_10"] >= 0.98 and result["opensearch"]["recall_at_10"] >= 0.9
    if name == "dedup.py":
        assert result["duplicate_rate"] == 0.0 and result["wrong_merges"] == 0
        # the scripted model's path stores every fact (it stored none while its transcript reader was stale)
        assert result["missed_facts_llm"] == 0 and result["wrong_merges_llm"] == 0
    if name == "locomo_recall.py":
        assert result["n"] == 15 and result["R@25"] >= result["R@10"] >= result["R@1"]
    if name == "lme_context.py":  # each question asked as of its date, the triple per budget
        assert result["n"] == 2 and set(result["by_type@600"]) == {"knowledge-update", "temporal-reasoning"}
        assert all(0 < result[b]["tokens_used"] <= int(b) for b in ("300", "600"))
        assert result["600"]["p95_ms"] >= result["600"]["p50_ms"] > 0
    if name == "qa.py":
        assert result["n"] == 2 and 0 <= result["accuracy"] <= 1 and result["tokens_per_question"] <= 600
    if name == "import.py":
        assert result["reimport_recorded"] == 0
    if name == "recall_indexing.py":  # every turn of the conversation indexed, each round
        assert result["turns"] == 36 and result["texts_per_round"] >= 2 * 36
    if name == "llm_cost.py":  # the chain reads the cache: it bills less than every kind at once
        fan_out = result["fan_out"]
        assert (
            fan_out["in_sequence (after)"]["billed_input_vs_floor"]
            < fan_out["at_once (before)"]["billed_input_vs_floor"]
        )
    if name == "extraction_quality.py":  # the offline rules on session 1 of the written conversation
        assert result["snapshots"] == 1 and result["observations"] == 5
        assert set(result["per_kind"]) == {"semantic", "episodic", "preference", "taxonomic", "procedural"}
        # they state some of Ines's facts (her move to Porto, her job), nothing made up or misattributed
        assert 0.2 <= result["recall"] <= 1 and result["precision"] >= 0.6
        assert result["invented_rate"] == 0 and result["wrong_subject_rate"] == 0
        assert 0 <= result["empty_answer_share"] < 1 and result["memories_per_snapshot"] > 0
        assert result["share_outside_llm"] is None and result["llm_tokens_per_snapshot"] == 0  # no LLM
    if name == "observations.py":  # the block costs part of the budget, within it, and is stable
        for b in ("600", "1200"):
            assert 0 < result[b]["observation_tokens"] < int(b) and result[b]["tokens_with"] <= int(b)
            assert 0 <= result[b]["answer_words_with"] <= 1 and 0 <= result[b]["evidence_share_with"] <= 1
        stable = result["stability"]
        # the log changes once per observed session, never between the calls of one session
        assert stable["block_changes"] == 1 and stable["unchanged_share"] > 0.8
        assert stable["whole_block_unchanged_share"] < stable["unchanged_share"]
    if name == "llm_models.py":  # the floor: the offline rules find facts of the contract conversation
        [floor] = result["results"]
        assert 0 < floor["facts_found"] <= result["facts_in_conversation"]


@pytest.mark.timeout(300)
def test_extraction_quality_scores_what_an_openai_compatible_server_answered() -> None:
    """The issue 31 case on the wire: a llama.cpp-like server answering `{"items": []}` for every kind but
    one, and for that one a made-up fact and the friend's fact credited to the user. The bench counts the
    empty answers, the calls and their tokens, and scores what was stored as not right."""
    from llm_servers import ChatServer

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if "Memory kind: semantic" not in json.dumps(body):
            return {"items": []}
        return {
            "items": [
                {"subject": "user", "attribute": "favourite sport", "value": "curling", "evidence_seqs": [1]},
                {
                    "subject": "user",
                    "attribute": "dog",
                    "value": "a greyhound named Luna",
                    "evidence_seqs": [6],
                },
            ]
        }

    server = ChatServer("llama_cpp", model="local", answer=answer).start()
    try:
        args = [MINI, "--sessions", "1", "--kinds", "semantic,episodic,preference,taxonomic,procedural"]
        result = run_bench(
            "extraction_quality.py",
            [*args, "--provider", "openai-compatible", "--base-url", server.url, "--model", "local"],
        )
    finally:
        server.stop()
    # the calls reached the server's own path, and it accepted every one
    assert {seen.path for seen in server.chats()} == {"/v1/chat/completions"}
    assert result["llm_calls_refused_by_server"] == 0 and result["kinds_not_done"] == {}
    assert result["provider"] == "openai-compatible" and result["snapshots"] == 1
    # five kinds, one call each (and the writer's reconciliation calls, if any): four answered no item
    assert result["llm_calls_per_snapshot"] >= 5 and result["empty_answer_share"] == 0.8
    assert result["llm_tokens_per_snapshot"] > 0 and 0 <= result["share_outside_llm"] <= 1
    # whatever of the two answers was stored is not right: made up, or Marco's dog credited to Ines
    assert result["recall"] == 0 and result["memories"] <= 2
    if result["memories"]:
        assert result["precision"] == 0
        assert result["invented_rate"] + result["wrong_subject_rate"] == 1


@pytest.mark.timeout(300)
def test_extraction_quality_rescores_a_models_recorded_answers_without_the_model(tmp_path: Path) -> None:
    """`--answers FILE` records the server's answers by request; a second run answers from FILE alone (the
    server is gone) and scores the same memories: a screen change re-scored without the model."""
    from llm_servers import ChatServer

    def answer(body: dict[str, Any]) -> dict[str, Any]:
        if "Memory kind: semantic" not in json.dumps(body):
            return {"items": []}
        return {"items": [{"subject": "user", "attribute": "city", "value": "Porto", "evidence_seqs": [1]}]}

    answers = tmp_path / "answers.jsonl.gz"
    args = [MINI, "--sessions", "1", "--kinds", "semantic,episodic", "--provider", "openai-compatible"]
    server = ChatServer("llama_cpp", model="local", answer=answer).start()
    try:
        first = run_bench(
            "extraction_quality.py",
            [*args, "--base-url", server.url, "--model", "local", "--answers", str(answers)],
        )
        asked = len(server.chats())
    finally:
        server.stop()
    assert asked >= 2 and first["answers_replayed"] == 0 and answers.exists()
    # the server is stopped: every answer comes from the file, and the figures are the same
    again = run_bench(
        "extraction_quality.py",
        [*args, "--base-url", server.url, "--model", "local", "--answers", str(answers)],
    )
    assert again["answers_replayed"] == asked and again["llm_calls_refused_by_server"] == 0
    for key in ("memories", "recall", "precision", "empty_answer_share", "llm_tokens_per_snapshot"):
        assert again[key] == first[key], key
    assert again["seconds_per_snapshot"] > 0 and 0 <= again["share_outside_llm"] <= 1


@pytest.mark.timeout(300)
def test_extraction_quality_can_try_a_prompt_without_a_sentence() -> None:
    """`--strip TEXT` cuts TEXT out of every prompt on its way to the server: a prompt trial on the bench
    without a code change (issue 31: the same request without one sentence answered differently)."""
    from llm_servers import ChatServer

    server = ChatServer("llama_cpp", model="local").start()
    try:
        run_bench(
            "extraction_quality.py",
            [
                *[MINI, "--sessions", "1", "--kinds", "semantic", "--provider", "openai-compatible"],
                *["--base-url", server.url, "--model", "local", "--strip", "Memory kind: semantic"],
            ],
        )
    finally:
        server.stop()
    bodies = [json.dumps(seen.body) for seen in server.chats()]
    assert bodies and not any("Memory kind: semantic" in body for body in bodies)
    assert all("Ines" in body for body in bodies)  # the rest of the prompt went through


@pytest.mark.timeout(300)
def test_extraction_quality_with_rules_keeps_the_rules_items_and_still_counts_the_empty_answers() -> None:
    """`--with-rules` (memory.extraction.with_rules): beside a model answering no item at all, the offline
    rules' items are stored and scored, and the model's empty answers are still counted as empty."""
    from llm_servers import ChatServer

    server = ChatServer("llama_cpp", model="local", answer=lambda body: {"items": []}).start()
    try:
        args = [MINI, "--sessions", "1", "--provider", "openai-compatible", "--with-rules"]
        result = run_bench("extraction_quality.py", [*args, "--base-url", server.url, "--model", "local"])
    finally:
        server.stop()
    assert result["with_rules"] is True and result["empty_answer_share"] == 1.0
    # the rules' own figures on this session: some of Ines's facts, nothing made up or misattributed
    assert result["memories"] > 0 and 0.2 <= result["recall"] <= 1 and result["precision"] >= 0.6
    assert result["invented_rate"] == 0 and result["wrong_subject_rate"] == 0
