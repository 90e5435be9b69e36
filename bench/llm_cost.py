"""Benchmark: LLM tokens and cost per 1,000 recorded turns, with and without prompt caching.

The LoCoMo-format conversations of DATA_DIR (default: the one written for the tests, tests/data/locomo-mini;
the documented figures are of the LoCoMo dev split, which is not shipped) are recorded with
the record path (`svc.recorder.record`: user_id = conversation, one session per LoCoMo session, `name` = the
speaker), each session is promoted to snapshots (`Promoter.flush`, at most `max_messages` turns each)
and every snapshot is extracted for every enabled kind through the real extract handler
(functions/extract, an SQS event per kind, the kinds of one snapshot one after another as the four
queues deliver them). The LLM and the embedder are the Bedrock providers (Converse, Titan v2) pointed
at the twin's Bedrock Runtime stand-in (tools/twin/bedrock.py) through AWS_ENDPOINT_URL_BEDROCK_RUNTIME:
it speaks the wire format and counts tokens the way Converse reports them, prompt cache included
(`cachePoint`, per-model minimums, 5-minute entries). Its answers are what the offline extractor
proposes for the same snapshot and kind, so output sizes and reconciliation look like real work.

Floor: the snapshot transcripts' tokens x the enabled kinds (each kind must read its snapshot), the
transcript being one line per turn, "[seq] speaker (timestamp): content".

One JSON line: `input_tokens_per_1k_turns` (everything sent: uncached + cache read + cache write),
`output_tokens_per_1k_turns`, `prompt_overhead` (input / floor - 1; goal <= 0.15), `billed_input_overhead`
(the input as billed with caching / the floor at the input price - 1), `cacheable_share`
(share of input tokens behind a cache point that a later call read from the cache; goal >= 0.70), the
estimated cost per 1,000 turns with and without caching at `--prices`, where the input goes
(tool schema, system text, transcript, framing, reconciliation calls), which of it repeats across the
kinds of one snapshot, and `what_if` layouts replayed against the same stand-in.

    .venv/bin/python bench/llm_cost.py                    # all kinds, 3 rounds (~1-2 min)
    .venv/bin/python bench/llm_cost.py DATA_DIR --kinds semantic,episodic --prices input=0.3,output=2.5
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
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


def compact_schema(schema: Any) -> str:
    """A JSON Schema as short text: no titles, no spaces."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "title"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(schema), separators=(",", ":"))


LAYOUTS = {
    "per_kind_tools": "system: common text; user: transcript, cachePoint, the kind's text; the kind's own tool",
    "one_tool": "as per_kind_tools, but one generic tool for all kinds and the kind's item schema (compact) "
    "as text after the cache point",
    "schemas_in_prefix": "one generic tool; system: common text + every kind's text and schema (the same for "
    "all calls); user: transcript, cachePoint, which kind to extract now",
    "all_kinds_one_call": "one call per snapshot: system: common text + every kind's text; one tool whose "
    "schema holds every kind's items; no cache point",
}


def what_if(
    client: Any,
    stand_in: Any,
    snapshots: list[dict[str, Any]],
    kinds: int,
    output: int,
    prices: dict[str, float],
) -> dict[str, Any]:
    """Replay each snapshot's extraction requests in other layouts (the same texts) against the stand-in.

    The pieces come from the requests the extract handler sent: the system texts' common prefix, the rest
    of each kind's system text, the user message (framing + transcript) and each kind's tool."""
    generic = {
        "toolSpec": {
            "name": "record_memories",
            "description": "Record the memories of the kind the instructions name.",
            "inputSchema": {
                "json": {
                    "type": "object",
                    "properties": {"items": {"type": "array", "items": {"type": "object"}}},
                    "required": ["items"],
                }
            },
        }
    }
    floor = sum(s["floor_tokens"] for s in snapshots) * kinds
    turns = sum(s["turns"] for s in snapshots)
    out: dict[str, Any] = {}
    for layout, description in LAYOUTS.items():
        stand_in.reset()
        for snap in snapshots:
            bodies = [call["body"] for call in snap["extract_calls"]]
            systems = [" ".join(b.get("text", "") for b in body.get("system") or []) for body in bodies]
            common = common_prefix(systems)
            kind_texts = [system[len(common) :].strip() for system in systems]
            # the shared user part: the blocks before the request's cache point (the transcript)
            blocks = bodies[0]["messages"][0]["content"]
            cut = next((i for i, b in enumerate(blocks) if "cachePoint" in b), len(blocks))
            user = " ".join(b.get("text", "") for b in blocks[:cut] if "text" in b)
            kind_parts = [
                " ".join(b.get("text", "") for b in body["messages"][0]["content"][cut + 1 :] if "text" in b)
                for body in bodies
            ]
            # what differs per kind: the rest of its system text and its part after the cache point
            kind_texts = [f"{t}\n{k}".strip() for t, k in zip(kind_texts, kind_parts, strict=True)]
            tools = [body["toolConfig"]["tools"][0] for body in bodies]
            schemas = [compact_schema(t["toolSpec"]["inputSchema"]["json"]) for t in tools]
            names = [t["toolSpec"]["name"] for t in tools]
            requests: list[dict[str, Any]] = []
            if layout == "all_kinds_one_call":
                combined = {
                    "toolSpec": {
                        "name": "record_all_memories",
                        "description": "Record the memories of every kind.",
                        "inputSchema": {
                            "json": {
                                "type": "object",
                                "properties": {
                                    n: t["toolSpec"]["inputSchema"]["json"]
                                    for n, t in zip(names, tools, strict=True)
                                },
                            }
                        },
                    }
                }
                system = common.strip() + "\n\n" + "\n\n".join(kind_texts)
                requests.append({"system": system, "content": [{"text": user}], "tools": [combined]})
            else:
                for name, kind_text, schema, tool in zip(names, kind_texts, schemas, tools, strict=True):
                    system, tail, spec = common.strip(), kind_text, tool
                    if layout == "one_tool":
                        tail = f"{kind_text}\nCall record_memories with JSON matching: {schema}"
                        spec = generic
                    elif layout == "schemas_in_prefix":
                        every = "\n\n".join(
                            f"{n}: {t}\nJSON: {sc}"
                            for n, t, sc in zip(names, kind_texts, schemas, strict=True)
                        )
                        system = f"{common.strip()}\n\n{every}"
                        tail, spec = f"Extract {name} now; call record_memories.", generic
                    requests.append(
                        {
                            "system": system,
                            "content": [{"text": user}, {"cachePoint": {"type": "default"}}, {"text": tail}],
                            "tools": [spec],
                        }
                    )
            for req in requests:
                client.converse(
                    modelId=MODEL,
                    system=[{"text": req["system"]}],
                    messages=[{"role": "user", "content": req["content"]}],
                    toolConfig={
                        "tools": req["tools"],
                        "toolChoice": {"tool": {"name": req["tools"][0]["toolSpec"]["name"]}},
                    },
                    inferenceConfig={"maxTokens": 4096, "temperature": 0.0},
                )
        calls = stand_in.converses()
        total = sum(sent(c) for c in calls)
        uncached = sum(int(c["usage"]["inputTokens"]) for c in calls)
        read = sum(int(c["usage"].get("cacheReadInputTokens", 0)) for c in calls)
        write = sum(int(c["usage"].get("cacheWriteInputTokens", 0)) for c in calls)
        cost = (
            uncached * prices["input"] + read * prices["cache_read"] + write * prices["cache_write"]
        ) / 1e6
        cost += output * prices["output"] / 1e6
        out[layout] = {
            "layout": description,
            "prompt_overhead": r(total / floor - 1, 3),
            "cacheable_share": r(cacheable(calls) / total, 3) if total else None,
            "input_tokens_per_1k_turns": round(total * 1000 / turns),
            "cost_per_1k_turns_usd_with_caching": r(cost * 1000 / turns, 5),
        }
    stand_in.reset()
    return out


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


def run_round(server: Any, stand_in: Any, args: argparse.Namespace, convs: list[Any]) -> dict[str, Any]:
    import locomo_recall as locomo
    from twin.bedrock import prompt_parts, tokens

    from mongomem.config import MemoryType, parse_project_config, settings_from_env
    from mongomem.extraction.offline.proposer import OfflineProposer
    from mongomem.extraction.proposal import TurnView
    from mongomem.local.queue import local_queue_factory
    from mongomem.models.common import Scope
    from mongomem.models.turns import RecordTurnsRequest
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
                "providers": {
                    "llm": {"kind": "bedrock", "model": MODEL, "region": "eu-west-1"},
                    "embeddings": {"kind": "bedrock-titan-v2", "region": "eu-west-1"},
                },
            }
        }
    )
    db = f"llm_cost_{uuid.uuid4().hex[:8]}"
    env = {"MONGOMEM_MONGODB_URI": server.uri, "MONGOMEM_DB_NAME": db}
    for t in MemoryType:
        env[f"MONGOMEM_QUEUE_URL_{t.value.upper()}"] = f"local:extract-{t.value}"
    svc = Services(
        settings_from_env(env, project=project),
        queue_factory=local_queue_factory,
        vector_index=EmbeddedIndex(None),
    )
    configure(svc)
    fn = load_function("extract")
    template = load_event("extract_sqs.json")["Records"][0]
    ctx = Ctx()
    proposer = OfflineProposer()
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
        for snap in snapshots:
            doc = snap["doc"]
            turns = svc.turns.in_range(snap["scope"], doc.session_id, doc.from_seq, doc.to_seq)
            snap["turns"] = len(turns)
            snap["floor_tokens"] = tokens(floor_text(turns))
            views = [TurnView(t.seq, t.role, t.content, t.timestamp, t.name) for t in turns]
            snap["extract_calls"], snap["reconcile_calls"] = [], []
            for kind in args.kinds:
                answer = {"items": proposer.propose(kind, views, doc.user_id)}
                stand_in.responder = lambda tool, _b, _p, a=answer: None if tool == "reconcile" else a
                before = len(stand_in.calls)
                event = {
                    "Records": [dict(template, body=json.dumps({"snapshot_id": snap["id"], "type": kind}))]
                }
                with quiet():
                    response = fn.lambda_handler(event, ctx)
                if response != {"batchItemFailures": []}:
                    raise SystemExit(f"extraction of {snap['id']} ({kind}) failed: {response}")
                for call in stand_in.calls[before:]:
                    if call["api"] != "converse":
                        continue
                    call["kind"] = kind
                    (
                        snap["reconcile_calls"] if call["tool"] == "reconcile" else snap["extract_calls"]
                    ).append(call)
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
    parts["messages beyond the transcript (framing)"] = parts["messages"] - parts["transcript (floor text)"]
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
    p.add_argument(
        "--prices", default="", help="USD per 1M tokens, e.g. input=0.3,output=2.5,cache_read=0.075"
    )
    args = p.parse_args()
    args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()] or default_kinds()
    args.prices = parse_prices(args.prices)

    import boto3
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
    started = time.perf_counter()
    rounds: list[dict[str, Any]] = []
    try:
        with (
            tempfile.TemporaryDirectory(prefix="llm-cost-") as tmp,
            EmbeddedMongo(Path(tmp) / "mongo") as server,
        ):
            for i in range(args.rounds):
                result = run_round(server, stand_in, args, convs)
                rounds.append(result)
                f = result["figures"]
                log(
                    f"round {i + 1}: {result['counts']['snapshots']} snapshots, {result['counts']['turns']} turns, "
                    f"overhead {f['prompt_overhead']:.3f}, cacheable {f['cacheable_share']:.3f}, {result['wall_s']:.0f} s"
                )
            client = boto3.client("bedrock-runtime", region_name="eu-west-1")
            last = rounds[-1]
            output = round(last["figures"]["output_tokens_per_1k_turns"] * last["counts"]["turns"] / 1000)
            alternatives = what_if(client, stand_in, last["snapshots"], len(args.kinds), output, args.prices)
    finally:
        stand_in.stop()
    figures = {k: median([x["figures"][k] for x in rounds]) for k in rounds[0]["figures"]}
    last = rounds[-1]
    result = {
        "bench": "llm_cost",
        "input_tokens_per_1k_turns": round(figures["input_tokens_per_1k_turns"]),
        "output_tokens_per_1k_turns": round(figures["output_tokens_per_1k_turns"]),
        "prompt_overhead": r(figures["prompt_overhead"], 3),
        "cacheable_share": r(figures["cacheable_share"], 3),
        "cost_per_1k_turns_usd": {
            "with_caching": r(figures["cost_with_caching"], 5),
            "without_caching": r(figures["cost_without_caching"], 5),
        },
        "goals": {"prompt_overhead": 0.15, "cacheable_share": 0.70},
        "billed_input_overhead": r(figures["billed_input_overhead"], 3),
        "prices_usd_per_1m_tokens": args.prices,
        "model": MODEL,
        "kinds": args.kinds,
        "floor_tokens_per_1k_turns": round(figures["floor_tokens_per_1k_turns"]),
        "extraction_calls_overhead": r(figures["extraction_overhead"], 3),
        "reconcile_input_tokens_per_1k_turns": round(figures["reconcile_input_tokens_per_1k_turns"]),
        "cache_read_tokens_per_1k_turns": round(figures["cache_read_tokens_per_1k_turns"]),
        "cache_write_tokens_per_1k_turns": round(figures["cache_write_tokens_per_1k_turns"]),
        "repeated_share": r(figures["repeated_share"], 3),
        "shareable_prefix_share": r(figures["shareable_prefix_share"], 3),
        "input_per_extraction_call": last["per_call"],
        **last["counts"],
        "what_if": alternatives,
        "rounds": args.rounds,
        "rounds_identical": all(x["figures"] == rounds[0]["figures"] for x in rounds),
        "round_wall_s": [round(x["wall_s"], 1) for x in rounds],
        "data": str(args.data_dir),
        "wall_s": round(time.perf_counter() - started),
        "machine": machine(),
    }
    emit(result)


if __name__ == "__main__":
    main()
