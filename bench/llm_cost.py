"""Benchmark: the LLM input a team is billed for per 1,000 recorded turns, with Bedrock's prompt cache.

The LoCoMo-format conversations of DATA_DIR (default: the one written for the tests, tests/data/locomo-mini;
the documented figures are of the LoCoMo dev split, which is not shipped) are recorded with
the record path (`svc.recorder.record`: user_id = conversation, one session per LoCoMo session, `name` = the
speaker), each session is promoted to snapshots (`Promoter.flush`, at most `max_messages` turns each)
and every snapshot is extracted for every enabled kind through the real extract handler. Two fan-out
designs run side by side in every round:

- `at_once` (before): one message per kind, the kinds' queues delivering together, so the snapshot's
  calls start at the same time;
- `in_sequence` (after, what the scan does now): the first kind's message names the others and each
  kind's handler passes the snapshot on once its call is done.

The LLM and the embedder are the Bedrock providers (Converse, Titan v2) pointed at the twin's Bedrock
Runtime stand-in (tools/twin/bedrock.py) through AWS_ENDPOINT_URL_BEDROCK_RUNTIME: it counts tokens the
way Converse reports them and models the cache as AWS documents it (`cachePoint`, per-model minimums,
5-minute entries, an entry readable only once the call that writes it has completed; each call takes
`--latency` seconds). Its answers are what the offline extractor proposes for the same snapshot and kind.

Floor: the snapshot transcripts' tokens x the enabled kinds (each kind must read its snapshot, at the
full input price), the transcript being one line per turn, "[seq] speaker (timestamp): content".

One JSON line: `billed_input_vs_floor` (the judged ratio: input billed with caching, in input-price
tokens, over the floor), and per design the billed input per 1,000 turns, the share of extraction calls
that read the cache, tokens sent, read and written, `prompt_overhead`, cost with and without caching at
`--prices`.

    .venv/bin/python bench/llm_cost.py                    # all kinds, 3 rounds
    .venv/bin/python bench/llm_cost.py DATA_DIR --kinds semantic,episodic --prices input=0.3,output=2.5
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from harness import ROOT, emit, log, machine, median, quiet, r

MODEL = "global.amazon.nova-2-lite-v1:0"
# USD per 1M tokens: illustrative Nova 2 Lite on-demand list prices (cache reads at a 75 % discount,
# cache writes at the input price); pass --prices with your own.
PRICES = {"input": 0.30, "output": 2.50, "cache_read": 0.075, "cache_write": 0.30}


def parse_prices(text: str) -> dict[str, float]:
    prices = dict(PRICES)
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        if name not in prices:
            raise SystemExit(f"--prices: unknown price {name!r} (use {', '.join(prices)})")
        prices[name] = float(value)
    return prices


def floor_text(turns: list[Any]) -> str:
    """The least an extractor must read of a snapshot: one line per turn (`Turn` models)."""
    lines = []
    for t in turns:
        speaker = t.name or t.role
        lines.append(f"[{t.seq}] {speaker} ({t.timestamp.isoformat()}): {t.content}")
    return "\n".join(lines)


def common_prefix(texts: list[str]) -> str:
    """The longest string every text starts with."""
    if not texts:
        return ""
    first, last = min(texts), max(texts)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def lcp_tokens(seqs: list[list[tuple[str, int, Any]]]) -> int:
    """Tokens of the longest prefix (Bedrock's order: tools, system, messages) all requests share."""
    from twin.bedrock import CACHE_POINT, tokens

    total = 0
    items = [[p for p in s if p[2] is not CACHE_POINT] for s in seqs]
    for column in zip(*items, strict=False):
        contents = [c for _, _, c in column]
        if all(c == contents[0] for c in contents) and len({s for s, _, _ in column}) == 1:
            total += column[0][1]
            continue
        common = common_prefix([str(c) for c in contents])
        return total + (tokens(common) if common else 0)
    return total


def cacheable(calls: list[dict[str, Any]]) -> int:
    """Input tokens behind a cache point that a later call read: all reads, and writes read later."""
    read_keys = {c.get("cache_read_key") for c in calls if c.get("cache_read_key")}
    reads = sum(int(c["usage"].get("cacheReadInputTokens", 0)) for c in calls)
    reused_writes = sum(
        int(c["usage"].get("cacheWriteInputTokens", 0))
        for c in calls
        if any(k in read_keys for k in c.get("cache_write_keys") or [])
    )
    return reads + reused_writes


def sent(call: dict[str, Any]) -> int:
    u = call["usage"]
    return (
        int(u["inputTokens"]) + int(u.get("cacheReadInputTokens", 0)) + int(u.get("cacheWriteInputTokens", 0))
    )


def run_round(
    server: Any, stand_in: Any, args: argparse.Namespace, convs: list[Any], fan_out: str
) -> dict[str, Any]:
    import locomo_recall as locomo
    from twin.bedrock import prompt_parts, tokens

    from mongomem.config import parse_project_config, settings_from_env
    from mongomem.extraction.proposal import TurnView
    from mongomem.kindnames import BuiltinKind
    from mongomem.local.queue import LocalQueue, local_queue_factory
    from mongomem.models.common import Scope
    from mongomem.models.turns import RecordTurnsRequest
    from mongomem.offline.rules.proposer import OfflineProposer
    from mongomem.providers import llm_bedrock
    from mongomem.runtime import Services, configure
    from mongomem.vectors.embedded import EmbeddedIndex
    from tests.conftest import Ctx, load_event, load_function

    stand_in.reset()
    llm_bedrock._clients.clear()
    project = parse_project_config(
        {
            "memory": {
                "extraction": {"enabled": args.kinds},
                "snapshot": {"max_messages": args.max_messages},
                "recall": {"enabled": False},
                "observations": {"enabled": False},  # extraction's calls only (bench/observations.py)
                "providers": {
                    "llm": {"kind": "bedrock", "model": MODEL, "region": "eu-west-1"},
                    "embeddings": {"kind": "bedrock-titan-v2", "region": "eu-west-1"},
                },
            }
        }
    )
    db = f"llm_cost_{uuid.uuid4().hex[:8]}"
    env = {"MONGOMEM_MONGODB_URI": server.uri, "MONGOMEM_DB_NAME": db}
    for t in BuiltinKind:
        env[f"MONGOMEM_QUEUE_URL_{t.value.upper()}"] = f"local:extract-{t.value}"
    svc = Services(
        settings_from_env(env, project=project),
        queue_factory=local_queue_factory,
        vector_index=EmbeddedIndex(None),
    )
    configure(svc)
    template = load_event("extract_sqs.json")["Records"][0]
    ctx = Ctx()
    proposer = OfflineProposer()
    queue = LocalQueue(svc.db)
    functions = {kind: load_function("extract") for kind in args.kinds}  # one function per queue
    started = time.perf_counter()
    snapshots: list[dict[str, Any]] = []
    try:
        for name, conv, _ in convs:
            scope = Scope(tenant="default", user_id=name)
            for n, start, turns in locomo.sessions(conv):
                body = locomo.api_turns(conv, start, turns)
                for i in range(0, len(body), 100):
                    svc.recorder.record(
                        scope,
                        f"session_{n}",
                        RecordTurnsRequest.model_validate({"turns": body[i : i + 100]}),
                    )
                for snap in svc.promoter.flush(scope, f"session_{n}"):
                    snapshots.append({"id": snap.snapshot_id, "scope": scope, "doc": snap})
        # the scan's messages: the first kind of each snapshot, naming the others (the chain)
        fanned = {
            json.loads(b)["snapshot_id"]: json.loads(b) for b in queue.bodies(f"extract-{args.kinds[0]}")
        }
        queue.coll.delete_many({})
        for snap in snapshots:
            doc = snap["doc"]
            turns = svc.turns.in_range(snap["scope"], doc.session_id, doc.from_seq, doc.to_seq)
            snap["turns"] = len(turns)
            snap["floor_tokens"] = tokens(floor_text(turns))
            views = [TurnView(t.seq, t.role, t.content, t.timestamp, t.name) for t in turns]
            answers = {
                f"{k}_memories": {"items": proposer.propose(k, views, doc.user_id)} for k in args.kinds
            }
            stand_in.responder = lambda tool, _b, _p, a=answers: a.get(tool)
            before = len(stand_in.calls)

            def deliver(body: dict[str, Any], kind: str) -> None:
                event = {"Records": [dict(template, body=json.dumps(body))]}
                with quiet():
                    response = functions[kind].lambda_handler(event, ctx)
                if response != {"batchItemFailures": []}:
                    raise SystemExit(f"extraction of {body['snapshot_id']} ({kind}) failed: {response}")

            if fan_out == "at_once":
                # the design before: one message per kind, the kinds' queues delivering together
                together = threading.Barrier(len(args.kinds))

                def at_once(kind: str, sid: str = snap["id"], barrier: threading.Barrier = together) -> None:
                    barrier.wait()
                    deliver({"snapshot_id": sid, "type": kind}, kind)

                threads = [threading.Thread(target=at_once, args=(k,)) for k in args.kinds]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            else:
                # the chain: the first kind's message; each handler sends the next kind's when it is done
                body: dict[str, Any] | None = fanned[snap["id"]]
                while body is not None:
                    deliver(body, body["type"])
                    nxt = [
                        json.loads(b)
                        for k in args.kinds
                        for b in queue.bodies(f"extract-{k}")
                        if json.loads(b)["snapshot_id"] == snap["id"]
                    ]
                    queue.coll.delete_many({})
                    body = nxt[0] if nxt else None
            snap["extract_calls"], snap["reconcile_calls"] = [], []
            for call in stand_in.calls[before:]:
                if call["api"] != "converse":
                    continue
                call["kind"] = call["tool"].removesuffix("_memories")
                (snap["reconcile_calls"] if call["tool"] == "reconcile" else snap["extract_calls"]).append(
                    call
                )
    finally:
        configure(None)
        stand_in.responder = None
    wall = time.perf_counter() - started

    converses = stand_in.converses()
    extract_calls = [c for s in snapshots for c in s["extract_calls"]]
    reconcile_calls = [c for s in snapshots for c in s["reconcile_calls"]]
    turns_total = sum(s["turns"] for s in snapshots)
    per_1k = 1000.0 / turns_total
    input_total = sum(sent(c) for c in converses)
    output_total = sum(int(c["usage"]["outputTokens"]) for c in converses)
    uncached = sum(int(c["usage"]["inputTokens"]) for c in converses)
    read = sum(int(c["usage"].get("cacheReadInputTokens", 0)) for c in converses)
    write = sum(int(c["usage"].get("cacheWriteInputTokens", 0)) for c in converses)
    floor = sum(s["floor_tokens"] for s in snapshots) * len(args.kinds)
    p = args.prices
    with_cache = (
        uncached * p["input"] + read * p["cache_read"] + write * p["cache_write"] + output_total * p["output"]
    ) / 1e6
    without_cache = (input_total * p["input"] + output_total * p["output"]) / 1e6

    # where the extraction calls' input goes, and what repeats across the kinds of one snapshot
    parts: dict[str, int] = defaultdict(int)
    common_prefix = repeated = 0
    for s in snapshots:
        seqs = []
        seen_blocks: set[str] = set()
        for call in s["extract_calls"]:
            for section, n in call["parts"].items():
                parts[section] += n
            seq = prompt_parts(call["body"])
            seqs.append(seq)
            for _, n, content in seq:
                key = str(content)
                if key in seen_blocks:
                    repeated += n
                seen_blocks.add(key)
        parts["transcript (floor text)"] += s["floor_tokens"] * len(s["extract_calls"])
        common_prefix += lcp_tokens(seqs) * max(len(seqs) - 1, 0)
    extract_input = sum(sent(c) for c in extract_calls)
    # the transcript is a system block (before the cache point); the rest is instructions and the kind's part
    parts["text beyond the transcript"] = (
        parts["system"] + parts["messages"] - parts["transcript (floor text)"]
    )
    n_calls = max(len(extract_calls), 1)
    return {
        "snapshots": snapshots,
        "figures": {
            "input_tokens_per_1k_turns": input_total * per_1k,
            "output_tokens_per_1k_turns": output_total * per_1k,
            "prompt_overhead": input_total / floor - 1,
            "cacheable_share": cacheable(converses) / input_total if input_total else 0.0,
            "cost_with_caching": with_cache * per_1k,
            # what the input is billed with caching (reads at the cache-read price) against the floor
            # billed at the input price: the overhead a team pays, beside the overhead in tokens sent
            "billed_input_overhead": (
                uncached * p["input"] + read * p["cache_read"] + write * p["cache_write"]
            )
            / (floor * p["input"])
            - 1,
            # the input as billed, in input-price tokens: what the provider charges for, per 1,000 turns
            "billed_input_tokens_per_1k_turns": (
                uncached + read * p["cache_read"] / p["input"] + write * p["cache_write"] / p["input"]
            )
            * per_1k,
            "extraction_calls_reading_the_cache": sum(
                1 for c in extract_calls if int(c["usage"].get("cacheReadInputTokens", 0)) > 0
            )
            / max(len(extract_calls), 1),
            "cost_without_caching": without_cache * per_1k,
            "floor_tokens_per_1k_turns": floor * per_1k,
            "extraction_overhead": extract_input / floor - 1,
            "reconcile_input_tokens_per_1k_turns": sum(sent(c) for c in reconcile_calls) * per_1k,
            "cache_read_tokens_per_1k_turns": read * per_1k,
            "cache_write_tokens_per_1k_turns": write * per_1k,
            "repeated_share": repeated / extract_input if extract_input else 0.0,
            "shareable_prefix_share": common_prefix / extract_input if extract_input else 0.0,
        },
        "counts": {
            "turns": turns_total,
            "snapshots": len(snapshots),
            "extraction_calls": len(extract_calls),
            "reconcile_calls": len(reconcile_calls),
            "mean_floor_tokens_per_snapshot": round(
                sum(s["floor_tokens"] for s in snapshots) / len(snapshots)
            ),
            "snapshots_below_1000_floor_tokens": sum(s["floor_tokens"] < 1000 for s in snapshots),
        },
        "per_call": {k: round(v / n_calls) for k, v in parts.items()},
        "wall_s": wall,
    }


def default_kinds() -> list[str]:
    """memory.extraction.enabled's default: what a deployment extracts unless told otherwise."""
    from mongomem.config import ExtractionConfig

    return [str(k) for k in ExtractionConfig().enabled]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data_dir", nargs="?", type=Path, default=ROOT / "tests" / "data" / "locomo-mini")
    p.add_argument(
        "--kinds",
        default="",
        help="comma-separated; default: the kinds a deployment enables (every built-in)",
    )
    p.add_argument("--max-messages", type=int, default=50, help="memory.snapshot.max_messages")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--latency", type=float, default=0.2, help="seconds one Converse call takes (stand-in)")
    p.add_argument(
        "--prices", default="", help="USD per 1M tokens, e.g. input=0.3,output=2.5,cache_read=0.075"
    )
    args = p.parse_args()
    args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()] or default_kinds()
    args.prices = parse_prices(args.prices)

    import locomo_recall as locomo
    from twin.bedrock import BedrockStandIn

    from mongomem.local.mongod import EmbeddedMongo

    convs = locomo.conversations(args.data_dir)
    if not convs:
        raise SystemExit(f"no LoCoMo JSON files in {args.data_dir}")
    stand_in = BedrockStandIn().start()
    os.environ.update(
        {
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": stand_in.url,
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "AWS_REGION": "eu-west-1",
        }
    )
    # Each Converse call takes this long, so the calls the old fan-out made at once overlap as on Bedrock
    stand_in.delay_seconds = args.latency
    started = time.perf_counter()
    rounds: dict[str, list[dict[str, Any]]] = {"at_once": [], "in_sequence": []}
    try:
        with (
            tempfile.TemporaryDirectory(prefix="llm-cost-") as tmp,
            EmbeddedMongo(Path(tmp) / "mongo") as server,
        ):
            for i in range(args.rounds):
                for fan_out, done in rounds.items():  # side by side in every round
                    result = run_round(server, stand_in, args, convs, fan_out)
                    done.append(result)
                    f = result["figures"]
                    log(
                        f"round {i + 1} {fan_out}: {result['counts']['snapshots']} snapshots, "
                        f"billed input/floor {f['billed_input_tokens_per_1k_turns'] / f['floor_tokens_per_1k_turns']:.3f}, "
                        f"calls reading the cache {f['extraction_calls_reading_the_cache']:.2f}, {result['wall_s']:.0f} s"
                    )
    finally:
        stand_in.stop()

    def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
        figures = {k: median([x["figures"][k] for x in runs]) for k in runs[0]["figures"]}
        floor = figures["floor_tokens_per_1k_turns"]
        return {
            "billed_input_tokens_per_1k_turns": round(figures["billed_input_tokens_per_1k_turns"]),
            "billed_input_vs_floor": r(figures["billed_input_tokens_per_1k_turns"] / floor, 3),
            "extraction_calls_reading_the_cache": r(figures["extraction_calls_reading_the_cache"], 3),
            "input_tokens_per_1k_turns": round(figures["input_tokens_per_1k_turns"]),
            "cache_read_tokens_per_1k_turns": round(figures["cache_read_tokens_per_1k_turns"]),
            "cache_write_tokens_per_1k_turns": round(figures["cache_write_tokens_per_1k_turns"]),
            "cacheable_share": r(figures["cacheable_share"], 3),
            "prompt_overhead": r(figures["prompt_overhead"], 3),
            "billed_input_overhead": r(figures["billed_input_overhead"], 3),
            "cost_per_1k_turns_usd": {
                "with_caching": r(figures["cost_with_caching"], 5),
                "without_caching": r(figures["cost_without_caching"], 5),
            },
            "reconcile_input_tokens_per_1k_turns": round(figures["reconcile_input_tokens_per_1k_turns"]),
            "output_tokens_per_1k_turns": round(figures["output_tokens_per_1k_turns"]),
            "floor_tokens_per_1k_turns": round(floor),
        }

    before, after = summary(rounds["at_once"]), summary(rounds["in_sequence"])
    last = rounds["in_sequence"][-1]
    result = {
        "bench": "llm_cost",
        # the judged figure: billed input of the design in use against reading each snapshot's transcript
        # once per kind at the full input price (the floor), with the cache semantics Bedrock documents
        "billed_input_vs_floor": after["billed_input_vs_floor"],
        "billed_input_tokens_per_1k_turns": after["billed_input_tokens_per_1k_turns"],
        "floor_tokens_per_1k_turns": after["floor_tokens_per_1k_turns"],
        "fan_out": {"at_once (before)": before, "in_sequence (after)": after},
        "prices_usd_per_1m_tokens": args.prices,
        "model": MODEL,
        "kinds": args.kinds,
        "call_latency_s": args.latency,
        "input_per_extraction_call": last["per_call"],
        **last["counts"],
        "rounds": args.rounds,
        "round_wall_s": [round(x["wall_s"], 1) for x in rounds["in_sequence"]],
        "data": str(args.data_dir),
        "wall_s": round(time.perf_counter() - started),
        "machine": machine(),
    }
    emit(result)


if __name__ == "__main__":
    main()
