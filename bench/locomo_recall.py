"""LoCoMo evidence recall of POST /v1/recall, end to end through a fresh local stack.

Every conversation of a folder of LoCoMo-format files is recorded through the public API
(one session per LoCoMo session, user_id = conversation id, turn `name` = speaker, the session's
date as timestamp, a photo's caption appended as " [shared a photo: ...]", dia_id in metadata).
The stack's scan job indexes the turns for recall; then every question of categories 1-4 goes
through POST /v1/recall (message_range 0, top_k 25) and the share of its evidence turns among the
first k matches is averaged (evidence recall@k).

    .venv/bin/python bench/locomo_recall.py DATA_DIR [--limit-questions N]

DATA_DIR: the LoCoMo dev split for the documented figures (not shipped: CC BY-NC 4.0), or
tests/data/locomo-mini, the small conversation written for the tests.

Prints progress on stderr and one JSON line on stdout; judged by R@10 against the best baseline
of the data set's README (BM25 + MiniLM with RRF: 0.542).
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
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

KS = (1, 5, 10, 25)
BASELINE_R10 = 0.542  # README of the LoCoMo dev split: BM25 + all-MiniLM-L6-v2, RRF
BATCH = 100  # turns per record request (memory.limits.max_batch)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def http(method: str, url: str, body: Any = None, timeout: float = 120) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


# -- data ------------------------------------------------------------------------------------------
def conversations(folder: Path) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """(conversation id, conversation, qa) for each conversation in the folder's JSON files."""
    out = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        samples = data if isinstance(data, list) else [data]
        for i, sample in enumerate(samples):
            conv = sample.get("conversation", sample)
            name = str(sample.get("sample_id") or (path.stem if len(samples) == 1 else f"{path.stem}-{i}"))
            out.append((re.sub(r"[^A-Za-z0-9._:@-]", "-", name), conv, sample.get("qa", [])))
    return out


def session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> a UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def sessions(conv: dict[str, Any]) -> list[tuple[int, datetime, list[dict[str, Any]]]]:
    numbers = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
    return [(n, session_time(conv[f"session_{n}_date_time"]), conv[f"session_{n}"]) for n in numbers]


def api_turns(conv: dict[str, Any], start: datetime, turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    first = conv.get("speaker_a")
    out = []
    for i, t in enumerate(turns):
        content = t["text"]
        if t.get("blip_caption"):
            content += f" [shared a photo: {t['blip_caption']}]"
        out.append(
            {
                "role": "user" if t["speaker"] == first else "assistant",
                "name": t["speaker"],
                "content": content,
                # a few seconds apart, so the session keeps its order and its date
                "timestamp": (start + timedelta(seconds=10 * i)).isoformat(),
                "metadata": {"dia_id": t["dia_id"]},
            }
        )
    return out


def questions(qa: list[dict[str, Any]], dia_ids: set[str]) -> list[tuple[str, set[str]]]:
    out = []
    for q in qa:
        if q.get("category") not in (1, 2, 3, 4):
            continue
        evidence = {e.strip() for x in q.get("evidence", []) for e in str(x).split(";") if e.strip()}
        evidence &= dia_ids
        if evidence:
            out.append((q["question"], evidence))
    return out


# -- run -------------------------------------------------------------------------------------------
def load(base: str, convs: list[tuple[str, dict[str, Any], list[dict[str, Any]]]]) -> dict[str, set[str]]:
    """Record every conversation through the API; returns the dia_ids per conversation."""
    ids: dict[str, set[str]] = {}
    for name, conv, _ in convs:
        ids[name] = set()
        for n, start, turns in sessions(conv):
            body_turns = api_turns(conv, start, turns)
            ids[name] |= {t["metadata"]["dia_id"] for t in body_turns}
            for i in range(0, len(body_turns), BATCH):
                status, body = http(
                    "POST",
                    f"{base}/v1/sessions/session_{n}/turns",
                    {"user_id": name, "turns": body_turns[i : i + BATCH]},
                )
                if status != 201:
                    raise SystemExit(f"recording conversation {name} session {n} failed: {status} {body}")
        log(f"recorded conversation {name}: {len(ids[name])} turns")
    return ids


def wait_indexed(base: str, total: int, timeout: float) -> float:
    started = time.monotonic()
    last = -1
    while True:
        status, body = http("GET", f"{base}/v1/status")
        pending = (body or {}).get("recall", {}).get("pending_turns") if status == 200 else None
        if pending == 0:
            return time.monotonic() - started
        if pending != last:
            log(f"waiting for recall indexing: {pending} of {total} turns pending")
            last = pending
        if time.monotonic() - started > timeout:
            raise SystemExit(f"turns not indexed after {timeout:.0f} s ({pending} pending)")
        time.sleep(2.0)


def evaluate(
    base: str,
    convs: list[tuple[str, dict[str, Any], list[dict[str, Any]]]],
    ids: dict[str, set[str]],
    limit: int,
) -> tuple[list[list[float]], list[float]]:
    rows: list[list[float]] = []
    latencies: list[float] = []
    for name, _, qa in convs:
        for question, evidence in questions(qa, ids[name]):
            if limit and len(rows) >= limit:
                return rows, latencies
            started = time.perf_counter()
            status, body = http(
                "POST",
                f"{base}/v1/recall",
                {"user_id": name, "query": question, "top_k": max(KS), "message_range": 0},
            )
            latencies.append((time.perf_counter() - started) * 1000)
            if status != 200:
                raise SystemExit(f"recall failed: {status} {body}")
            by_id = {t["turn_id"]: t for g in body["threads"] for t in g["turns"]}
            ranked = [(by_id[tid].get("metadata") or {}).get("dia_id") for tid in body["matched"]]
            rows.append([len(set(ranked[:k]) & evidence) / len(evidence) for k in KS])
            if len(rows) % 25 == 0:
                log(f"{len(rows)} questions, R@10 so far {statistics.fmean(r[2] for r in rows):.3f}")
    return rows, latencies


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--limit-questions", type=int, default=0, help="stop after N questions (0: all)")
    parser.add_argument("--embeddings", default="local", choices=["local", "hashing"])
    parser.add_argument("--index-timeout", type=float, default=3600.0)
    args = parser.parse_args()

    # As `mongomem dev` does: no metric lines on stdout (it carries only the result), quiet logs.
    os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mongomem")
    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "mongomem-bench")
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")  # stdout carries only the result line
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    from mongomem.local.stack import LocalStack

    # The handlers print their metrics (EMF) to stdout; keep stdout for the one result line.
    result_out, sys.stdout = sys.stdout, sys.stderr
    convs = conversations(args.data_dir)
    if not convs:
        raise SystemExit(f"no LoCoMo JSON files in {args.data_dir}")
    with tempfile.TemporaryDirectory(prefix="locomo-recall-") as tmp:
        config = Path(tmp) / "project-config.yaml"
        # No promotion or extraction during the run: only recall indexing competes for the CPU.
        config.write_text(
            "memory:\n"
            "  extraction: {enabled: []}\n"
            "  snapshot: {max_messages: 10000, idle_seconds: 86400}\n"
            f"  providers: {{llm: {{kind: offline}}, embeddings: {{kind: {args.embeddings}}}}}\n"
            "  recall: {enabled: true}\n"
        )
        stack = LocalStack(data_dir=Path(tmp) / "data", port=0, scan_seconds=1.0, config_file=config).start()
        try:
            started = time.monotonic()
            ids = load(stack.url, convs)
            total = sum(len(v) for v in ids.values())
            index_s = wait_indexed(stack.url, total, args.index_timeout)
            log(f"{total} turns recorded and indexed in {time.monotonic() - started:.0f} s")
            rows, latencies = evaluate(stack.url, convs, ids, args.limit_questions)
        finally:
            stack.stop()
    means = [statistics.fmean(r[j] for r in rows) for j in range(len(KS))] if rows else [0.0] * len(KS)
    result = {
        "bench": "locomo_recall",
        "conversations": len(convs),
        "turns": total,
        "n": len(rows),
        **{f"R@{k}": round(m, 3) for k, m in zip(KS, means, strict=True)},
        "baseline_R@10": BASELINE_R10,
        "ratio_R@10": round(means[2] / BASELINE_R10, 3),
        "embeddings": args.embeddings,
        "index_wait_s": round(index_s, 1),
        "recall_median_ms": round(statistics.median(latencies), 1) if latencies else None,
    }
    print(json.dumps(result), file=result_out, flush=True)


if __name__ == "__main__":
    main()
