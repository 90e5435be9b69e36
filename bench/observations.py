"""Observational memory (ADR 0050) on LoCoMo conversations: the context with the observation block against
without it at the same token budget, and how often the block stays byte-identical between calls.

Every conversation of a folder of LoCoMo-format files is imported through the public API into a fresh
local stack (offline extractor and observer; --embeddings local or hashing), as bench/locomo_context.py
does. Then every question of categories 1-4 is asked twice at each budget, in a new session:

* without: `sources` = memories (top 20), then recalled turns (hybrid, top 50);
* with: the same, after `observations` (the user's log: the block opens with it).

Both are packed by the same rules within the same budget, so the difference is what the observation block
brings and what it pushes out. Evidence share (the question's evidence turns among the block's turn ids,
an observation counting for the turn it was observed in, a memory for the turns it cites) and answer words
(every word of the gold answer in the block) are scored as in bench/locomo_context.py (corrected labels).

Stability: the first --replay-sessions sessions of each conversation are replayed turn by turn for a new
user (the offline observer, each session flushed and extracted at its end, as idle promotion would);
before each of the speaker's turns the agent asks for its context with the observation block.
`unchanged_share` is the share of consecutive calls whose observation block is byte-identical (the prefix a
provider's prompt cache keeps), `whole_block_unchanged_share` the same for the whole block (recent turns
change it at every turn), `block_changes` how often the log changed under the replay.

    .venv/bin/python bench/observations.py DATA_DIR [--budgets 1000,2000] [--limit-questions N]
    .venv/bin/python bench/observations.py tests/data/locomo-mini --embeddings hashing   # a small run

Prints progress on stderr and one JSON line on stdout.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from locomo_context import (
    Provenance,
    _conversations,
    answer_words,
    block_evidence,
    labelled,
    quiet,
    share,
    turn_map,
    wait_idle,
    words,
)
from locomo_recall import http, log, session_time

WITHOUT: list[dict[str, Any]] = [
    {"source": "memories", "top_k": 20},
    {"source": "turns", "mode": "hybrid", "top_k": 50},
]
WITH = [{"source": "observations"}, *WITHOUT]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data_dir", type=Path)
    p.add_argument("--budgets", default="1000,2000")
    p.add_argument("--limit-questions", type=int, default=0, help="per conversation (0: all)")
    p.add_argument("--limit-conversations", type=int, default=0, help="the first N files (0: all)")
    p.add_argument("--replay-sessions", type=int, default=3, help="sessions replayed per conversation")
    p.add_argument("--embeddings", default="local", choices=["local", "hashing"])
    p.add_argument("--settle-timeout", type=float, default=3600.0)
    p.add_argument("--max-tokens", type=int, default=400, help="the stack's memory.observations.max_tokens")
    return p


def context(base: str, request: dict[str, Any]) -> dict[str, Any]:
    status, body = http("POST", f"{base}/v1/context", request)
    if status != 200:
        raise SystemExit(f"context failed: {status} {body}")
    return dict(body)


def observed(body: dict[str, Any]) -> dict[str, Any]:
    return next((s for s in body["sections"] if s["name"] == "observations"), {"text": "", "version": None})


def ask(
    base: str, name: str, conv: dict[str, Any], qa: list[dict[str, Any]], args: argparse.Namespace
) -> list[dict[str, Any]]:
    sessions = sorted({k for k in conv if re.fullmatch(r"session_\d+", k)})
    turns = turn_map(base, name, sessions)
    provenance = Provenance(base, name, turns)
    asked = labelled(qa, set(turns.values()))
    if args.limit_questions:
        asked = asked[: args.limit_questions]
    rows = []
    for n, q in enumerate(asked):
        wanted = answer_words(q["answer"])
        row: dict[str, Any] = {}
        for budget in args.budget_list:
            for label, sources in (("without", WITHOUT), ("with", WITH)):
                request = {
                    "user_id": name,
                    "session_id": f"ask-{n}",
                    "query": q["question"],
                    "token_budget": budget,
                    "sources": sources,
                }
                body = context(base, request)
                found = block_evidence(body, turns, provenance)
                row[f"{budget}:{label}"] = {
                    "evidence": share(found, q["evidence"]),
                    "answer": wanted <= set(words(body["context"])),
                    "tokens": body["tokens"],
                    "observation_tokens": next(
                        (s["tokens"] for s in body["sections"] if s["name"] == "observations"), 0
                    ),
                }
        rows.append(row)
    log(f"{name}: {len(rows)} questions asked")
    return rows


def replay(base: str, name: str, conv: dict[str, Any], sessions: int, timeout: float) -> dict[str, int]:
    """The first `sessions` sessions said again for a new user, the context asked before each of the first
    speaker's turns; each session flushed and extracted at its end."""
    user = f"replay-{name}"
    speaker = None
    calls: list[tuple[str, str]] = []
    numbers = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
    for number in numbers[:sessions]:
        start = session_time(conv[f"session_{number}_date_time"])
        session = f"replay-{number}"
        for i, t in enumerate(conv[f"session_{number}"]):
            speaker = speaker or t["speaker"]
            role = "user" if t["speaker"] == speaker else "assistant"
            if role == "user":
                body = context(
                    base,
                    {
                        "user_id": user,
                        "session_id": session,
                        "query": t["text"][:2000],
                        "token_budget": 2000,
                        "sources": [
                            {"source": "observations"},
                            {"source": "turns", "mode": "text", "top_k": 6},
                        ],
                    },
                )
                calls.append((observed(body)["text"], body["context"]))
            turn = {
                "role": role,
                "name": t["speaker"],
                "content": t["text"],
                "timestamp": (start + timedelta(seconds=30 * i)).isoformat(),
            }
            status, out = http(
                "POST", f"{base}/v1/sessions/{session}/turns", {"user_id": user, "turns": [turn]}
            )
            if status != 201:
                raise SystemExit(f"recording failed: {status} {out}")
        http("POST", f"{base}/v1/sessions/{session}/flush?user_id={user}", None)
        wait_idle(base, timeout)
    pairs = list(itertools.pairwise(calls))
    return {
        "calls": len(calls),
        "pairs": len(pairs),
        "unchanged": sum(1 for a, b in pairs if a[0] == b[0]),
        "whole_unchanged": sum(1 for a, b in pairs if a[1] == b[1]),
        "prefix_kept": sum(
            1 for a, b in pairs if a[0] == b[0] and b[1].startswith(a[1][: a[1].find(a[0]) + len(a[0])])
        ),
        "block_changes": sum(1 for a, b in pairs if a[0] != b[0]),
    }


def summarize(
    rows: list[dict[str, Any]], budgets: list[int], stability: list[dict[str, int]]
) -> dict[str, Any]:
    def mean(budget: int, label: str, key: str) -> float:
        return round(statistics.fmean(float(r[f"{budget}:{label}"][key]) for r in rows), 3) if rows else 0.0

    out: dict[str, Any] = {"n": len(rows)}
    for b in budgets:
        out[str(b)] = {
            "evidence_share_with": mean(b, "with", "evidence"),
            "evidence_share_without": mean(b, "without", "evidence"),
            "answer_words_with": mean(b, "with", "answer"),
            "answer_words_without": mean(b, "without", "answer"),
            "tokens_with": mean(b, "with", "tokens"),
            "tokens_without": mean(b, "without", "tokens"),
            "observation_tokens": mean(b, "with", "observation_tokens"),
        }
        out[str(b)]["answer_words_gain"] = round(
            out[str(b)]["answer_words_with"] - out[str(b)]["answer_words_without"], 3
        )
        out[str(b)]["evidence_share_gain"] = round(
            out[str(b)]["evidence_share_with"] - out[str(b)]["evidence_share_without"], 3
        )
    pairs = sum(s["pairs"] for s in stability)
    out["stability"] = {
        "calls": sum(s["calls"] for s in stability),
        "unchanged_share": round(sum(s["unchanged"] for s in stability) / pairs, 3) if pairs else None,
        "prefix_kept_share": round(sum(s["prefix_kept"] for s in stability) / pairs, 3) if pairs else None,
        "whole_block_unchanged_share": round(sum(s["whole_unchanged"] for s in stability) / pairs, 3)
        if pairs
        else None,
        "block_changes": sum(s["block_changes"] for s in stability),
    }
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    quiet()
    from mongomem.local.stack import LocalStack

    args.budget_list = [int(b) for b in args.budgets.split(",")]
    convs = _conversations(args.data_dir)
    if args.limit_conversations:
        convs = convs[: args.limit_conversations]
    if not convs:
        raise SystemExit(f"no LoCoMo JSON files in {args.data_dir}")
    started = time.monotonic()
    rows: list[dict[str, Any]] = []
    stability: list[dict[str, int]] = []
    with tempfile.TemporaryDirectory(prefix="observations-bench-") as home:
        config = Path(home) / "project-config.yaml"
        config.write_text(
            f"memory:\n  providers: {{llm: {{kind: offline}}, embeddings: {{kind: {args.embeddings}}}}}\n"
            f"  observations: {{max_tokens: {args.max_tokens}}}\n"
        )
        stack = LocalStack(data_dir=Path(home) / "data", port=0, scan_seconds=1.0, config_file=config).start()
        try:
            base = stack.url
            for name, conv, _ in convs:
                status, body = http(
                    "POST", f"{base}/v1/import", {"user_id": name, "format": "locomo", "data": conv}
                )
                if status not in (200, 201, 202):
                    raise SystemExit(f"importing {name} failed: {status} {body}")
            wait_idle(base, args.settle_timeout)
            for name, conv, qa in convs:
                rows += ask(base, name, conv, qa, args)
                stability.append(replay(base, name, conv, args.replay_sessions, args.settle_timeout))
        finally:
            stack.stop()
    return {
        "bench": "observations",
        "conversations": len(convs),
        "budgets": args.budget_list,
        "embeddings": args.embeddings,
        "max_tokens": args.max_tokens,
        "wall_s": round(time.monotonic() - started),
        **summarize(rows, args.budget_list, stability),
    }


def main() -> None:
    args = parser().parse_args()
    result_out, sys.stdout = sys.stdout, sys.stderr  # stdout carries only the result line
    print(json.dumps(run(args)), file=result_out, flush=True)


if __name__ == "__main__":
    main()
