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
* tokens: what the response says the block uses;
* context p50 / p95 (ms) of that budget's calls, over HTTP.
Evidence and answer words are scored on the corrected labels (`answer`, `evidence`: the audit's, see
the dev split's README) and on the original ones beside them (`original_answer`, `original_evidence`
where a question was corrected; `*_original` keys). A file with a `question_date` (LongMemEval in this
layout, bench/lme_context.py) is asked as of that date (`as_of`), and its figures are also given per
`question_type`.
Both baselines render a turn exactly as the context does (`[8 May 2023] Caroline: ...`) and fill the same
budget (about 4 characters a token): `bm25` packs the best BM25 turns of the whole history for the
question (the repository's own BM25: stemming, stop words), `recent` the last turns of the history (a plain
chat history). `whole_history` is the answer-words share of the entire history, the ceiling of what a
block can hold. Context latency p50/p95 is measured over all the calls, over HTTP.

    .venv/bin/python bench/locomo_context.py DATA_DIR [--budgets 1000,2000,4000] [--limit-questions N]
    .venv/bin/python bench/locomo_context.py tests/data/locomo_priya.json --budgets 300,600   # the smoke run

--keep DIR keeps the loaded stack there and reuses it (loading a long history takes minutes);
--per-question FILE writes each question's figures (and, with --with-context, its block: bench/qa.py
reads it).

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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from locomo_recall import conversations, http, log, session_time

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT / "layers" / "core", ROOT / "sdk"):
    if extra.is_dir() and str(extra) not in sys.path:
        sys.path.append(str(extra))

BUDGETS = (1000, 2000, 4000)
# Words of a gold answer that do not have to appear: articles, conjunctions, prepositions.
FUNCTION_WORDS = frozenset(
    "a an the and or of to in on at for with by from as is are was were be it its that this s".split()
)
GOALS = {"evidence_share@2000": 0.90, "answer_words@2000": 0.70}  # issue 32, corrected labels


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


def labelled(qa: list[dict[str, Any]], dia_ids: set[str]) -> list[dict[str, Any]]:
    """The questions of categories 1-4 with evidence in the history: corrected and original labels."""

    def cited(evidence: Any) -> set[str]:
        return {e.strip() for x in evidence or [] for e in str(x).split(";") if e.strip()} & dia_ids

    out = []
    for q in qa:
        if q.get("category") not in (1, 2, 3, 4):
            continue
        evidence = cited(q.get("evidence"))
        original = cited(q["original_evidence"]) if "original_evidence" in q else evidence
        if evidence or original:
            out.append(
                {
                    "question": q["question"],
                    "answer": q.get("answer"),
                    "original_answer": q.get("original_answer", q.get("answer")),
                    "evidence": evidence,
                    "original_evidence": original,
                    "corrected": q.get("corrected"),
                    "type": q.get("question_type") or f"category {q.get('category')}",
                }
            )
    return out


def question_date(conv: dict[str, Any]) -> str | None:
    """LongMemEval's '2023/11/08 (Wed) 09:08' as ISO-8601 UTC (None without one)."""
    text = conv.get("question_date")
    m = re.fullmatch(r"(\d{4})/(\d{2})/(\d{2}) \(\w+\) (\d{2}):(\d{2})", str(text or "").strip())
    if not m:
        return None
    y, mo, d, h, mi = (int(g) for g in m.groups())
    return datetime(y, mo, d, h, mi, tzinfo=UTC).isoformat()


def share(found: set[str], wanted: set[str]) -> float:
    return len(found & wanted) / len(wanted) if wanted else 1.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def parser(description: str = __doc__ or "") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data_dir", type=Path)
    p.add_argument("--budgets", default=",".join(str(b) for b in BUDGETS))
    p.add_argument("--limit-questions", type=int, default=0, help="per conversation (0: all)")
    p.add_argument("--limit-conversations", type=int, default=0, help="the first N files (0: all)")
    p.add_argument("--embeddings", default="local", choices=["local", "hashing"])
    p.add_argument("--settle-timeout", type=float, default=3600.0)
    p.add_argument("--keep", type=Path, help="keep the loaded stack here and reuse it")
    p.add_argument("--no-as-of", action="store_true", help="ignore the files' question_date")
    p.add_argument("--per-question", type=Path, help="write each question's figures here (JSON lines)")
    p.add_argument("--with-context", action="store_true", help="--per-question rows carry the blocks")
    return p


def quiet() -> None:
    os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mongomem")
    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "mongomem-bench")
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")


def run(args: argparse.Namespace) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Load the conversations into a local stack (or reuse --keep's) and ask every question at every
    budget; each question's row and what the run took."""
    quiet()
    from mongomem.local.stack import LocalStack

    budgets = [int(b) for b in args.budgets.split(",")]
    convs = _conversations(args.data_dir)
    if args.limit_conversations:
        convs = convs[: args.limit_conversations]
    if not convs:
        raise SystemExit(f"no LoCoMo JSON files in {args.data_dir}")
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="locomo-context-") as tmp:
        home = args.keep or Path(tmp)
        home.mkdir(parents=True, exist_ok=True)
        config = home / "project-config.yaml"
        config.write_text(
            f"memory:\n  providers: {{llm: {{kind: offline}}, embeddings: {{kind: {args.embeddings}}}}}\n"
        )
        stack = LocalStack(data_dir=home / "data", port=0, scan_seconds=1.0, config_file=config).start()
        try:
            base = stack.url
            loaded = home / "loaded.json"
            done = set(json.loads(loaded.read_text())) if loaded.exists() else set()
            for name, conv, _ in convs:
                if name in done:
                    continue
                status, body = http(  # a ~500-turn history on a busy 2-core machine takes minutes
                    "POST",
                    f"{base}/v1/import",
                    {"user_id": name, "format": "locomo", "data": conv},
                    timeout=900,
                )
                if status not in (200, 201, 202):
                    raise SystemExit(f"importing {name} failed: {status} {body}")
                log(f"imported {name}: {body}")
            settle_s = wait_idle(base, args.settle_timeout)
            loaded.write_text(json.dumps(sorted(done | {n for n, _, _ in convs})))
            log(f"settled after {time.monotonic() - started:.0f} s")
            for name, conv, qa in convs:
                rows += _ask(base, name, conv, qa, budgets, args)
        finally:
            stack.stop()
    if args.per_question:
        args.per_question.write_text("".join(json.dumps(r, default=sorted) + "\n" for r in rows))
    return rows, {
        "conversations": len(convs),
        "budgets": budgets,
        "settle_s": round(settle_s, 1),
        "wall_s": round(time.monotonic() - started),
        "embeddings": args.embeddings,
    }


def _ask(
    base: str,
    name: str,
    conv: dict[str, Any],
    qa: list[dict[str, Any]],
    budgets: list[int],
    args: argparse.Namespace,
) -> list[dict[str, Any]]:
    sessions = sorted({f"session_{m.group(1)}" for k in conv if (m := re.fullmatch(r"session_(\d+)", k))})
    turns = turn_map(base, name, sessions)
    provenance = Provenance(base, name, turns)
    history = History(conv)
    whole = set(words(history.whole()))
    as_of = None if args.no_as_of else question_date(conv)
    asked = labelled(qa, set(turns.values()))
    if args.limit_questions:
        asked = asked[: args.limit_questions]
    rows = []
    for n, q in enumerate(asked):
        wanted, wanted_original = answer_words(q["answer"]), answer_words(q["original_answer"])
        evidence, original = q["evidence"], q["original_evidence"]
        row: dict[str, Any] = {
            "conversation": name,
            "question_id": conv.get("question_id"),
            "question": q["question"],
            "answer": q["answer"],
            "original_answer": q["original_answer"],
            "type": q["type"],
            "corrected": q["corrected"],
            "as_of": as_of,
            "whole_history": wanted <= whole,
        }
        for budget in budgets:
            request = {
                "user_id": name,
                "session_id": f"ask-{n}",
                "query": q["question"],
                "token_budget": budget,
            }
            if as_of:
                request["as_of"] = as_of
            t0 = time.perf_counter()
            status, body = http("POST", f"{base}/v1/context", request)
            ms = (time.perf_counter() - t0) * 1000
            if status != 200:
                raise SystemExit(f"context failed: {status} {body}")
            got = block_evidence(body, turns, provenance)
            present = set(words(body["context"]))
            bm_ids, bm_text = history.bm25(q["question"], budget)
            rc_ids, rc_text = history.recent(budget)
            row[str(budget)] = {
                "evidence": share(got, evidence),
                "evidence_original": share(got, original),
                "answer": wanted <= present,
                "answer_original": wanted_original <= present,
                "tokens": body["tokens"],
                "ms": ms,
                "bm25_evidence": share(bm_ids, evidence),
                "bm25_answer": wanted <= set(words(bm_text)),
                "bm25_tokens": estimate_tokens(bm_text),
                "recent_evidence": share(rc_ids, evidence),
                "recent_answer": wanted <= set(words(rc_text)),
                **({"context": body["context"]} if args.with_context else {}),
            }
        rows.append(row)
        if len(rows) % 25 == 0:
            b = str(budgets[len(budgets) // 2])
            log(
                f"{name}: {len(rows)} questions; at {b}: evidence "
                f"{statistics.fmean(r[b]['evidence'] for r in rows):.3f}, answer words "
                f"{statistics.fmean(r[b]['answer'] for r in rows):.3f}"
            )
    return rows


def summarize(rows: list[dict[str, Any]], budgets: list[int]) -> dict[str, Any]:
    """Per budget: the triple (evidence share and answer words on both labels, tokens, p50/p95 ms) and
    the baselines; per question type at the middle budget."""

    def mean(group: list[dict[str, Any]], budget: int, key: str) -> float:
        return round(statistics.fmean(float(r[str(budget)][key]) for r in group), 3) if group else 0.0

    result: dict[str, Any] = {"n": len(rows), "corrected_questions": sum(1 for r in rows if r["corrected"])}
    for b in budgets:
        ms = [r[str(b)]["ms"] for r in rows]
        result[str(b)] = {
            "evidence_share": mean(rows, b, "evidence"),
            "evidence_share_original": mean(rows, b, "evidence_original"),
            "answer_words": mean(rows, b, "answer"),
            "answer_words_original": mean(rows, b, "answer_original"),
            "tokens_used": mean(rows, b, "tokens"),
            "p50_ms": round(percentile(ms, 50), 1) if ms else None,
            "p95_ms": round(percentile(ms, 95), 1) if ms else None,
            "bm25_evidence_share": mean(rows, b, "bm25_evidence"),
            "bm25_answer_words": mean(rows, b, "bm25_answer"),
            "bm25_tokens_used": mean(rows, b, "bm25_tokens"),
            "recent_evidence_share": mean(rows, b, "recent_evidence"),
            "recent_answer_words": mean(rows, b, "recent_answer"),
        }
    middle = budgets[len(budgets) // 2]
    types = sorted({r["type"] for r in rows})
    result[f"by_type@{middle}"] = {
        t: {
            "n": len(group),
            "evidence_share": mean(group, middle, "evidence"),
            "answer_words": mean(group, middle, "answer"),
        }
        for t in types
        if (group := [r for r in rows if r["type"] == t])
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
    every = [r[str(b)]["ms"] for r in rows for b in budgets]
    result["context_p50_ms"] = round(percentile(every, 50), 1) if every else None
    result["context_p95_ms"] = round(percentile(every, 95), 1) if every else None
    return result


def main(bench: str = "locomo_context", goals: dict[str, Any] | None = None, description: str = "") -> None:
    args = parser(description or __doc__ or "").parse_args()
    result_out, sys.stdout = sys.stdout, sys.stderr  # stdout carries only the result line
    rows, meta = run(args)
    result = {"bench": bench, **meta, **summarize(rows, meta["budgets"])}
    result["goals"] = goals if goals is not None else {**GOALS, "1000_ahead_of_bm25_4000": True}
    print(json.dumps(result), file=result_out, flush=True)


if __name__ == "__main__":
    main()
