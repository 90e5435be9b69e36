"""What `POST /v1/context` gives an agent on LoCoMo conversations, against two packings of the same budget.

Every conversation of a folder of LoCoMo-format files is imported through the public API
(`POST /v1/import`, format locomo: speaker_a is the user, the session's date on every turn) into a fresh
local stack (offline extractor, the bundled local embedder); its scan job cuts the snapshots, extracts the
memories and indexes the turns for recall. Then every question of categories 1-4 is asked in a new
session, as an agent would ask it, with the defaults (`{user_id, session_id, query, token_budget}`), at
each budget. Per question and budget:

* evidence share: the share of the question's evidence turns (its LoCoMo `dia_id`s) the block holds,
  directly (a turn id of the response) or through a memory of the response whose evidence cites the turn
  (memory provenance);
* answer words: 1 when every word of the gold answer (lower case, letters and digits, a few function
  words left out) is a word of the block, else 0;
* tokens: what the response says the block uses.
Both baselines render a turn exactly as the context does (`[8 May 2023] Caroline: ...`) and fill the same
budget (about 4 characters a token): `bm25` packs the best BM25 turns of the whole history for the
question (the repository's own BM25: stemming, stop words), `recent` the last turns of the history (a plain
chat history). `whole_history` is the answer-words share of the entire history, the ceiling of what a
block can hold. Context latency p50/p95 is measured over all the calls, over HTTP.

    .venv/bin/python bench/locomo_context.py DATA_DIR [--budgets 1000,2000,4000] [--limit-questions N]
    .venv/bin/python bench/locomo_context.py tests/data/locomo_priya.json --budgets 300,600   # the smoke run

Prints progress on stderr and one JSON line on stdout (per budget: evidence share, answer words and tokens
of mongomem and of both baselines; the goals of issue 24 at 2,000 and 1,000 tokens beside them).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from locomo_recall import conversations, http, log, questions, session_time

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT / "layers" / "core", ROOT / "sdk"):
    if extra.is_dir() and str(extra) not in sys.path:
        sys.path.append(str(extra))

BUDGETS = (1000, 2000, 4000)
# Words of a gold answer that do not have to appear: articles, conjunctions, prepositions.
FUNCTION_WORDS = frozenset(
    "a an the and or of to in on at for with by from as is are was were be it its that this s".split()
)
GOALS = {"evidence_share@2000": 0.90, "answer_words@2000": 0.65}


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower().replace("'", "").replace("\u2019", ""))


def answer_words(answer: Any) -> set[str]:
    return {w for w in words(str(answer)) if w not in FUNCTION_WORDS}


def estimate_tokens(text: str) -> int:
    """About 4 characters a token, as mongomem counts its block."""
    return len(text) // 4 + 1


def day_text(when: datetime) -> str:
    return f"{when.day} {when:%B %Y}"


class History:
    """One conversation as the baselines see it: its turns (dia_id, date, speaker, text) in time order."""

    def __init__(self, conv: dict[str, Any]) -> None:
        from mongomem.retrieval.lexical import BM25Index

        self.lines: list[tuple[str, str]] = []  # (dia_id, rendered line)
        numbers = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
        for n in numbers:
            when = session_time(conv[f"session_{n}_date_time"])
            for t in conv[f"session_{n}"]:
                text = t["text"] + (
                    f" [shared a photo: {t['blip_caption']}]" if t.get("blip_caption") else ""
                )
                self.lines.append((t["dia_id"], f"[{day_text(when)}] {t['speaker']}: {text}"))
        self.index = BM25Index()
        for i, (_, line) in enumerate(self.lines):
            self.index.add(str(i), line)

    def whole(self) -> str:
        return "\n".join(line for _, line in self.lines)

    def bm25(self, query: str, budget: int) -> tuple[set[str], str]:
        ranked = [int(doc) for doc, _ in self.index.search(query, k=len(self.lines))]
        return _pack([self.lines[i] for i in ranked], budget)

    def recent(self, budget: int) -> tuple[set[str], str]:
        ids, text = _pack(list(reversed(self.lines)), budget)
        return ids, text


def _pack(lines: list[tuple[str, str]], budget: int) -> tuple[set[str], str]:
    """The lines, in the given order, that fit the budget together (a line that does not fit is skipped)."""
    kept: list[str] = []
    ids: set[str] = set()
    used = 0
    for dia, line in lines:
        cost = len(line) + 1
        if (used + cost) // 4 + 1 > budget:
            continue
        kept.append(line)
        ids.add(dia)
        used += cost
    return ids, "\n".join(kept)


# -- the stack ---------------------------------------------------------------------------------------
def wait_idle(base: str, timeout: float) -> float:
    """Until nothing waits: no session to promote, no snapshot to extract, no turn to index."""
    started = time.monotonic()
    last = None
    while True:
        status, body = http("GET", f"{base}/v1/status")
        body = body or {}
        waiting = (
            body.get("sessions_pending_promotion"),
            sum(
                sum(v.get(s, 0) for s in ("queued", "running"))
                for v in body.get("snapshots_pending_extraction", {}).values()
            ),
            (body.get("recall") or {}).get("pending_turns"),
        )
        if status == 200 and waiting == (0, 0, 0):
            return time.monotonic() - started
        if waiting != last:
            log(f"waiting: sessions to promote, snapshots to extract, turns to index = {waiting}")
            last = waiting
        if time.monotonic() - started > timeout:
            raise SystemExit(f"the stack did not settle in {timeout:.0f} s: {waiting}")
        time.sleep(2.0)


def turn_map(base: str, user: str, sessions: list[str]) -> dict[str, str]:
    """public turn id (session:seq) -> LoCoMo dia_id, read back through the API."""
    out: dict[str, str] = {}
    for session in sessions:
        before: int | None = None
        while True:
            query = f"user_id={user}&limit=200" + (f"&before_seq={before}" if before else "")
            status, body = http("GET", f"{base}/v1/sessions/{session}/turns?{query}")
            if status != 200:
                raise SystemExit(f"listing {session} failed: {status} {body}")
            for t in body["turns"]:
                dia = (t.get("metadata") or {}).get("dia_id")
                if dia:
                    out[f"{session}:{t['seq']}"] = dia
            before = body.get("next_before_seq")
            if not before:
                break
    return out


class Provenance:
    """A memory's evidence turns as dia_ids (memory -> evidence (snapshot, seqs) -> session -> turn)."""

    def __init__(self, base: str, user: str, turns: dict[str, str]) -> None:
        self.base, self.user, self.turns = base, user, turns
        self.memories: dict[str, set[str]] = {}
        self.snapshots: dict[str, str] = {}

    def of(self, memory_id: str) -> set[str]:
        if memory_id not in self.memories:
            status, body = http("GET", f"{self.base}/v1/memories/{memory_id}?user_id={self.user}")
            found: set[str] = set()
            for ev in ((body or {}).get("memory") or {}).get("evidence", []) if status == 200 else []:
                session = self._session(ev.get("snapshot_id"))
                for seq in ev.get("seqs") or []:
                    dia = self.turns.get(f"{session}:{seq}") if session else None
                    if dia:
                        found.add(dia)
            self.memories[memory_id] = found
        return self.memories[memory_id]

    def _session(self, snapshot_id: str | None) -> str | None:
        if not snapshot_id:
            return None
        if snapshot_id not in self.snapshots:
            status, body = http("GET", f"{self.base}/v1/snapshots/{snapshot_id}?user_id={self.user}")
            self.snapshots[snapshot_id] = (body or {}).get("session_id") if status == 200 else None
        return self.snapshots[snapshot_id]


def block_evidence(body: dict[str, Any], turns: dict[str, str], provenance: Provenance) -> set[str]:
    found: set[str] = set()
    for ids in body.get("ids", {}).values():
        for item in ids:
            if item in turns:
                found.add(turns[item])
            elif item.startswith("mem-"):
                found |= provenance.of(item)
    return found


def _conversations(path: Path) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """The LoCoMo conversations of a folder's JSON files, or of one file."""
    if path.is_file():
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / path.name).write_text(path.read_text())
            return conversations(Path(tmp))
    return conversations(path)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--budgets", default=",".join(str(b) for b in BUDGETS))
    parser.add_argument("--limit-questions", type=int, default=0, help="per conversation (0: all)")
    parser.add_argument("--embeddings", default="local", choices=["local", "hashing"])
    parser.add_argument("--settle-timeout", type=float, default=3600.0)
    parser.add_argument("--per-question", type=Path, help="write each question's figures here (JSON lines)")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]

    os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mongomem")
    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "mongomem-bench")
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    from mongomem.local.stack import LocalStack

    result_out, sys.stdout = sys.stdout, sys.stderr  # stdout carries only the result line
    convs = _conversations(args.data_dir)
    if not convs:
        raise SystemExit(f"no LoCoMo JSON files in {args.data_dir}")
    rows: list[dict[str, Any]] = []
    latencies: list[float] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="locomo-context-") as tmp:
        config = Path(tmp) / "project-config.yaml"
        config.write_text(
            f"memory:\n  providers: {{llm: {{kind: offline}}, embeddings: {{kind: {args.embeddings}}}}}\n"
        )
        stack = LocalStack(data_dir=Path(tmp) / "data", port=0, scan_seconds=1.0, config_file=config).start()
        try:
            base = stack.url
            for name, conv, _ in convs:
                status, body = http(
                    "POST", f"{base}/v1/import", {"user_id": name, "format": "locomo", "data": conv}
                )
                if status not in (200, 201, 202):
                    raise SystemExit(f"importing {name} failed: {status} {body}")
                log(f"imported {name}: {body}")
            settle_s = wait_idle(base, args.settle_timeout)
            log(f"settled after {time.monotonic() - started:.0f} s")
            for name, conv, qa in convs:
                sessions = sorted(
                    {f"session_{m.group(1)}" for k in conv if (m := re.fullmatch(r"session_(\d+)", k))}
                )
                turns = turn_map(base, name, sessions)
                provenance = Provenance(base, name, turns)
                history = History(conv)
                whole = set(words(history.whole()))
                answers = {q["question"]: q.get("answer") for q in qa}
                asked = questions(qa, set(turns.values()))
                if args.limit_questions:
                    asked = asked[: args.limit_questions]
                for n, (question, evidence) in enumerate(asked):
                    wanted = answer_words(answers[question])
                    row: dict[str, Any] = {
                        "conversation": name,
                        "question": question,
                        "whole_history": wanted <= whole,
                    }
                    for budget in budgets:
                        t0 = time.perf_counter()
                        status, body = http(
                            "POST",
                            f"{base}/v1/context",
                            {
                                "user_id": name,
                                "session_id": f"ask-{n}",
                                "query": question,
                                "token_budget": budget,
                            },
                        )
                        latencies.append((time.perf_counter() - t0) * 1000)
                        if status != 200:
                            raise SystemExit(f"context failed: {status} {body}")
                        got = block_evidence(body, turns, provenance)
                        present = set(words(body["context"]))
                        bm_ids, bm_text = history.bm25(question, budget)
                        rc_ids, rc_text = history.recent(budget)
                        row[str(budget)] = {
                            "evidence": len(got & evidence) / len(evidence),
                            "answer": wanted <= present,
                            "tokens": body["tokens"],
                            "bm25_evidence": len(bm_ids & evidence) / len(evidence),
                            "bm25_answer": wanted <= set(words(bm_text)),
                            "bm25_tokens": estimate_tokens(bm_text),
                            "recent_evidence": len(rc_ids & evidence) / len(evidence),
                            "recent_answer": wanted <= set(words(rc_text)),
                        }
                    rows.append(row)
                    if len(rows) % 25 == 0:
                        b = str(budgets[len(budgets) // 2])
                        log(
                            f"{len(rows)} questions; at {b}: evidence "
                            f"{statistics.fmean(r[b]['evidence'] for r in rows):.3f}, answer words "
                            f"{statistics.fmean(r[b]['answer'] for r in rows):.3f}"
                        )
        finally:
            stack.stop()
    if args.per_question:
        args.per_question.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def mean(budget: int, key: str) -> float:
        return round(statistics.fmean(float(r[str(budget)][key]) for r in rows), 3) if rows else 0.0

    result: dict[str, Any] = {
        "bench": "locomo_context",
        "conversations": len(convs),
        "n": len(rows),
        "budgets": budgets,
    }
    for b in budgets:
        result[str(b)] = {
            "evidence_share": mean(b, "evidence"),
            "answer_words": mean(b, "answer"),
            "tokens_used": mean(b, "tokens"),
            "bm25_evidence_share": mean(b, "bm25_evidence"),
            "bm25_answer_words": mean(b, "bm25_answer"),
            "bm25_tokens_used": mean(b, "bm25_tokens"),
            "recent_evidence_share": mean(b, "recent_evidence"),
            "recent_answer_words": mean(b, "recent_answer"),
        }
    result["whole_history_answer_words"] = (
        round(statistics.fmean(float(r["whole_history"]) for r in rows), 3) if rows else 0.0
    )
    if 1000 in budgets and 4000 in budgets:
        small, large = result["1000"], result["4000"]
        result["1000_vs_bm25_4000"] = {
            "evidence_share": round(small["evidence_share"] - large["bm25_evidence_share"], 3),
            "answer_words": round(small["answer_words"] - large["bm25_answer_words"], 3),
        }
    result["goals"] = {**GOALS, "1000_ahead_of_bm25_4000": True}
    result["context_p50_ms"] = round(percentile(latencies, 50), 1) if latencies else None
    result["context_p95_ms"] = round(percentile(latencies, 95), 1) if latencies else None
    result["settle_s"] = round(settle_s, 1)
    result["wall_s"] = round(time.monotonic() - started)
    result["embeddings"] = args.embeddings
    print(json.dumps(result), file=result_out, flush=True)


if __name__ == "__main__":
    main()
