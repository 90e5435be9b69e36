"""The monthly AWS bill of a workload on the deployed stack, per service, beside AgentCore Memory's.

    .venv/bin/python bench/aws_cost.py 1m                  # 1M turns a month, eu-west-1, the defaults
    .venv/bin/python bench/aws_cost.py 10k --region us-east-1 --config small-team
    .venv/bin/python bench/aws_cost.py 10m --table         # + the bill per service as a table on stderr

A profile is a month of use: turns recorded, context and search calls, users, memories kept. The bill is
worked out from what the stack does for it (template.yaml: 12 functions at 512 MB on arm64, an HTTP API, six
extraction queues, the schedules, ~100 EMF metrics, the alarms and the dashboard) and from figures measured
in this repository (docs/benchmarks.md: handler durations, LLM tokens per 1,000 turns), at the prices of one
dated table per region (PRICES, each row citing its page, or saying that the stored pages lacked it).
Side by side: the same month at Amazon Bedrock AgentCore Memory's published prices (short-term events,
long-term records kept, retrievals).

One JSON line on stdout (the judged figure `ours_vs_agentcore`, goal <= 1/3 at 1M turns, beside its floor
`fixed_floor_usd` and `break_even_turns`: below that volume the stack's fixed floor makes it dearer).
Nothing here calls AWS: it is arithmetic over the table, repeatable, and runs in `make test` (tests/bench).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, replace
from typing import Any

HOURS = 730  # a month, as AWS's pricing pages count it

# -- prices ------------------------------------------------------------------------------------------------
# One dated table per region. `source` is the AWS (or Atlas) pricing page the figure belongs to; `seen` says
# where it was read, in the stored pages this repository's tools search (AWS's pricing pages mostly render
# their figures with scripts, so the stored copies of those pages hold the prose, not the figures):
#   "page"      the AWS or Atlas page itself (`where`: the copy of it that was read, when not `source`);
#   "copy"      a page quoting the figure for that region (`where`: which page, and what it says of its date);
#   "repo"      a figure already in this repository (docs/operations.md, bench/llm_cost.py); no stored page
#               gives it;
#   "not found" no stored page gives it for this region: another region's figure stands in. Check the page.
PRICES_DATE = "2026-12-06"
LAMBDA = "https://aws.amazon.com/lambda/pricing/"
APIGW = "https://aws.amazon.com/api-gateway/pricing/"
SQS = "https://aws.amazon.com/sqs/pricing/"
BEDROCK = "https://aws.amazon.com/bedrock/pricing/"
OPENSEARCH = "https://aws.amazon.com/opensearch-service/pricing/"
CLOUDWATCH = "https://aws.amazon.com/cloudwatch/pricing/"
VPC = "https://aws.amazon.com/privatelink/pricing/"
ATLAS_FLEX = "https://www.mongodb.com/docs/atlas/billing/atlas-flex-costs/"
ATLAS_BILLING = "https://www.mongodb.com/docs/atlas/billing/billing-breakdown-optimization/"
ATLAS_INVOICE = "https://www.mongodb.com/docs/atlas/billing/invoice-breakdown/"
AGENTCORE = "https://aws.amazon.com/bedrock/agentcore/pricing/"
# the copies the figures were read from (each quotes the AWS page for us-east-1)
LAMBDA_COPY = "https://cloudchipr.com/blog/aws-lambda-pricing (US East; Arm: first 7.5 billion GB-s)"
APIGW_COPY = "https://awsforengineers.com/blog/aws-api-gateway-pricing-explained (US East, May 2025)"
SQS_COPY = "https://cloudburn.io/blog/amazon-sqs-pricing (US East, March 2026)"
CW_COPY = "https://signoz.io/guides/cloudwatch-pricing (Feb 2026; metrics)"
CW_COPY_2 = (
    "https://www.factualminds.com/blog/amazon-cloudwatch-pricing-metrics-logs-alarms-dashboards/ (June 2026)"
)
AOSS_COPY = "https://awsnegotiations.com/opensearch-serverless-cost (Feb 2026: 'about 0.24 USD per OCU-hour')"
AGENTCORE_COPY = (
    "https://raw.githubusercontent.com/aws/agent-toolkit-for-aws/main/plugins/aws-agents/skills/"
    "agents-optimize/references/cost.md (AWS's own repository, quoting the page; 'verify for current')"
)
ATLAS_MIRROR = (
    "a mirror of the Atlas page (mongodb.prakticum-team.ru): dedicated clusters 'start at $60 per month'"
)
# docs/operations.md's figures, whose pages (or any copy) the stored pages lack
REPO = "docs/operations.md"


SEEN = ("page", "copy", "repo", "not found")


@dataclass(frozen=True)
class Price:
    usd: float
    unit: str
    source: str
    seen: str
    where: str = ""


US_EAST_1: dict[str, Price] = {
    "lambda_request": Price(0.20 / 1e6, "request", LAMBDA, "copy", LAMBDA_COPY),
    "lambda_gb_s_arm": Price(0.0000133334, "GB-second (arm64)", LAMBDA, "copy", LAMBDA_COPY),
    "apigw_http_request": Price(1.00 / 1e6, "request (HTTP API, first 300M)", APIGW, "copy", APIGW_COPY),
    "sqs_request": Price(0.40 / 1e6, "request (standard, after 1M free)", SQS, "copy", SQS_COPY),
    "llm_input_token": Price(0.30 / 1e6, "input token (Nova 2 Lite)", BEDROCK, "repo", "bench/llm_cost.py"),
    "llm_output_token": Price(2.50 / 1e6, "output token (Nova 2 Lite)", BEDROCK, "repo", "bench/llm_cost.py"),
    "embed_token": Price(0.02 / 1e6, "token (Titan Text Embeddings V2)", BEDROCK, "not found"),
    "os_t3_small_hour": Price(0.036, "t3.small.search hour", OPENSEARCH, "repo", REPO),
    "os_r7g_large_hour": Price(0.167, "r7g.large.search hour", OPENSEARCH, "not found"),
    "os_gp3_gb_month": Price(0.122, "gp3 GB-month", OPENSEARCH, "repo", REPO),
    "aoss_ocu_hour": Price(0.24, "OCU-hour (Serverless)", OPENSEARCH, "copy", AOSS_COPY),
    "cw_metric_month": Price(0.30, "custom metric-month (first 10k)", CLOUDWATCH, "copy", CW_COPY),
    "cw_alarm_metric_month": Price(0.10, "standard alarm metric-month", CLOUDWATCH, "not found"),
    "cw_dashboard_month": Price(3.00, "dashboard-month (beyond 3 free)", CLOUDWATCH, "copy", CW_COPY_2),
    "cw_logs_gb": Price(0.50, "GB of logs ingested", CLOUDWATCH, "copy", CW_COPY_2),
    # the stored page gives the data-processing price (0.01 USD per GB), not the hourly one
    "vpce_az_hour": Price(0.01, "interface endpoint hour per AZ", VPC, "not found"),
    "atlas_flex_month": Price(8.00, "Flex base month (to 100 ops/s; capped at 30)", ATLAS_FLEX, "page"),
    "atlas_m10_hour": Price(
        60.0 / HOURS, "M10 hour (AWS; 60 USD a month)", ATLAS_BILLING, "page", ATLAS_MIRROR
    ),
    "atlas_m30_hour": Price(0.54, "M30 hour (AWS, default settings)", ATLAS_INVOICE, "page"),
    # AgentCore Memory: the page is stored (its Chinese and Japanese versions) but not its Memory section's
    # figures; AWS's own agent toolkit quotes them, as issue 34 does (built-in strategies: 0.75 USD per 1,000
    # records a month; built-in overrides and self-managed 0.25)
    "agentcore_event": Price(0.25 / 1000, "short-term event", AGENTCORE, "copy", AGENTCORE_COPY),
    "agentcore_record_month": Price(
        0.75 / 1000, "long-term record kept a month (built-in)", AGENTCORE, "copy", AGENTCORE_COPY
    ),
    "agentcore_retrieval": Price(0.50 / 1000, "retrieval", AGENTCORE, "copy", AGENTCORE_COPY),
}
# eu-west-1: no stored page or copy gives this region's figures (the copies quote US East), so each
# us-east-1 figure stands in, marked "not found"; Atlas's figures are its pages' (AWS, any region they name).
EU_WEST_1: dict[str, Price] = {
    k: p if k.startswith("atlas") else replace(p, seen="not found", where=f"us-east-1 figure ({p.seen})")
    for k, p in US_EAST_1.items()
}
PRICES = {"us-east-1": US_EAST_1, "eu-west-1": EU_WEST_1}

# -- what the stack does -------------------------------------------------------------------------------
MEMORY_GB = 0.5  # every function (template.yaml Globals)
# Handler durations (ms) per call: docs/benchmarks.md (record p50 88 ms under 8 writers; context p50 75,
# search 41 on the context bench); the authorizer's key lookup; a scan or index_sync tick that finds
# little; an extraction call is the LLM's latency (3 s, an assumption: Nova 2 Lite, ~8k tokens in, ~200 out).
DURATION_MS = {
    "record": 88,
    "context": 75,
    "search": 41,
    "authorizer": 20,
    "scan_tick": 300,
    "index_sync_tick": 200,
    "extract": 3000,
}
# Measured by bench/llm_cost.py on LoCoMo dev, kinds in sequence with the prompt cache (docs/benchmarks.md):
# input tokens billed at the input price per 1,000 turns, and output tokens per 1,000 turns for 4 kinds.
LLM_INPUT_PER_1K_TURNS = 241_551
LLM_OUTPUT_PER_1K_TURNS_4_KINDS = 3_453
TURNS_PER_SNAPSHOT = 20  # assumption: max_messages 50, most sessions cut by idle_seconds first
EMBED_TOKENS = {"turn": 60, "query": 15, "memory": 40}  # per turn recalled, per query, per memory kept
MEMORIES_PER_1K_TURNS = 40  # assumption: long-term memories a month's 1,000 turns leave (after reconcile)
KEPT_MONTHS = 12  # memories kept: a year of them
LOG_BYTES_PER_INVOCATION = 1_500  # a JSON line or three per invocation, the access log's line
SQS_POLLERS = 5  # Lambda's SQS event source mapping polls each queue with 5 long polls to start
QUEUES = 6
# EMF metric series (name x dimension values) the code emits: per kind latency, 2 token counts, 4
# reconcile decisions, 2 refusal reasons; plus TurnsRecorded, SnapshotsPromoted x 4 reasons, IndexLag,
# the two service-only alarm metrics and a handful of others
METRICS_PER_KIND = 9
METRICS_OTHER = 14
# 26 alarms with a domain: 22 on one metric (12 of them a DLQ and an age alarm per extraction queue), 4
# metric-math ones over the functions' Errors and Throttles (3 API functions, 9 background ones: 6 of them
# extraction's); CloudWatch bills an alarm per metric it evaluates


def alarm_metrics(queues: int) -> int:
    """The alarm metrics billed with `queues` extraction queues (6 per kind, 1 with ExtractionLanes=one)."""
    return 22 - 2 * (QUEUES - queues) + 2 * (3 + 9 - (QUEUES - queues))


@dataclass(frozen=True)
class Profile:
    turns: int
    context_calls: int
    searches: int
    users: int


PROFILES = {
    "10k": Profile(turns=10_000, context_calls=10_000, searches=1_000, users=100),
    "1m": Profile(turns=1_000_000, context_calls=1_000_000, searches=100_000, users=10_000),
    "10m": Profile(turns=10_000_000, context_calls=10_000_000, searches=1_000_000, users=100_000),
}


@dataclass(frozen=True)
class Config:
    """What the deploy chose: search mode and size, Atlas tier, kinds extracted, VPC endpoints."""

    name: str
    search: str  # t3.small | 2x r7g.large | serverless
    atlas: str  # flex | m10 | m30
    kinds: int
    vpc_endpoints: int  # interface endpoints in 2 zones
    queues: int = 6  # extraction queues and functions: one per kind, or 1 (ExtractionLanes=one, ADR 0071)


def default_config(p: Profile) -> Config:
    """The template's defaults, sized for the volume (a bigger domain and Atlas tier at scale)."""
    if p.turns <= 100_000:
        return Config("defaults", "t3.small", "flex", 5, 0)
    if p.turns <= 3_000_000:
        return Config("defaults", "t3.small", "m10", 5, 0)
    return Config("defaults", "2x r7g.large", "m30", 5, 0)


def small_team(p: Profile) -> Config:
    """The cheapest honest configuration for a small team: the smallest domain (search still works), Atlas
    Flex, two kinds extracted (semantic facts and preferences), no VPC endpoints, one extraction lane
    (`ExtractionLanes=one`: one queue polled instead of six, and what a new account's quota of 10 needs)."""
    return Config("small-team", "t3.small", "flex", 2, 0, queues=1)


def bill(p: Profile, c: Config, prices: dict[str, Price]) -> dict[str, float]:
    """USD a month per service."""
    usd = {k: v.usd for k, v in prices.items()}
    snapshots = p.turns / TURNS_PER_SNAPSHOT
    extract_calls = snapshots * c.kinds
    scan_ticks, sync_ticks = HOURS * 60, HOURS * 12
    api_calls = p.turns + p.context_calls + p.searches
    # the authorizer's answer is cached 300 s per key: one call per user per active 5 minutes at most
    authorizer = min(api_calls, p.users * 30 * 24)
    invocations = (
        api_calls + authorizer + extract_calls / 2 + scan_ticks + sync_ticks
    )  # extraction batches of 2
    ms = (
        p.turns * DURATION_MS["record"]
        + p.context_calls * DURATION_MS["context"]
        + p.searches * DURATION_MS["search"]
        + authorizer * DURATION_MS["authorizer"]
        + scan_ticks * DURATION_MS["scan_tick"]
        + sync_ticks * DURATION_MS["index_sync_tick"]
        + extract_calls * DURATION_MS["extract"]
    )
    gb_s = ms / 1000 * MEMORY_GB
    lam = (
        max(0.0, invocations - 1e6) * usd["lambda_request"]
        + max(0.0, gb_s - 400_000) * usd["lambda_gb_s_arm"]
    )
    sqs_requests = (
        extract_calls * 3 + SQS_POLLERS * c.queues * 3 * 60 * HOURS
    )  # send, receive, delete; long polls
    output_tokens = p.turns / 1000 * LLM_OUTPUT_PER_1K_TURNS_4_KINDS * c.kinds / 4
    input_tokens = p.turns / 1000 * LLM_INPUT_PER_1K_TURNS * c.kinds / 5
    memories = p.turns / 1000 * MEMORIES_PER_1K_TURNS * c.kinds / 5
    embed_tokens = (
        p.turns * EMBED_TOKENS["turn"]
        + (p.context_calls + p.searches) * EMBED_TOKENS["query"]
        + memories * EMBED_TOKENS["memory"]
    )
    if c.search == "t3.small":
        search = HOURS * usd["os_t3_small_hour"] + 10 * usd["os_gp3_gb_month"]
    elif c.search == "2x r7g.large":
        search = 2 * HOURS * usd["os_r7g_large_hour"] + 2 * 100 * usd["os_gp3_gb_month"]
    else:
        search = HOURS * usd["aoss_ocu_hour"]  # 0.5 + 0.5 OCU
    atlas = {
        "flex": usd["atlas_flex_month"],
        "m10": HOURS * usd["atlas_m10_hour"],
        "m30": HOURS * usd["atlas_m30_hour"],
    }[c.atlas]
    metrics = METRICS_PER_KIND * (c.kinds + 1) + METRICS_OTHER
    logs_gb = invocations * LOG_BYTES_PER_INVOCATION / 1e9
    cloudwatch = (
        metrics * usd["cw_metric_month"]
        + alarm_metrics(c.queues) * usd["cw_alarm_metric_month"]
        + usd["cw_dashboard_month"]
        + logs_gb * usd["cw_logs_gb"]
    )
    return {
        "lambda": lam,
        "api_gateway": api_calls * usd["apigw_http_request"],
        "sqs": max(0.0, sqs_requests - 1e6) * usd["sqs_request"],
        "bedrock_llm": input_tokens * usd["llm_input_token"] + output_tokens * usd["llm_output_token"],
        "bedrock_embeddings": embed_tokens * usd["embed_token"],
        "atlas": atlas,
        "opensearch": search,
        "cloudwatch": cloudwatch,
        "vpc_endpoints": c.vpc_endpoints * 2 * HOURS * usd["vpce_az_hour"],
    }


def agentcore(p: Profile, prices: dict[str, Price]) -> dict[str, float]:
    """The same month on AgentCore Memory: a turn is an event, a context or search call a retrieval, the
    memories kept (built-in strategies) a stored record each."""
    usd = {k: v.usd for k, v in prices.items()}
    records = p.turns / 1000 * MEMORIES_PER_1K_TURNS * KEPT_MONTHS
    return {
        "short_term_events": p.turns * usd["agentcore_event"],
        "long_term_records": records * usd["agentcore_record_month"],
        "retrievals": (p.context_calls + p.searches) * usd["agentcore_retrieval"],
    }


def scaled(p: Profile, turns: float) -> Profile:
    f = turns / p.turns
    return Profile(int(turns), int(p.context_calls * f), int(p.searches * f), max(1, int(p.users * f)))


def break_even(p: Profile, config: Any, prices: dict[str, Price]) -> int:
    """The monthly turns (same mix as `p`) below which our bill exceeds AgentCore's."""
    lo, hi = 1.0, 1e9

    def dearer(turns: float) -> bool:
        q = scaled(p, turns)
        return sum(bill(q, config(q), prices).values()) > sum(agentcore(q, prices).values())

    if not dearer(lo):
        return 0
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if dearer(mid) else (lo, mid)
    return int(hi)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("profile", choices=sorted(PROFILES))
    parser.add_argument("--region", choices=sorted(PRICES), default="eu-west-1")
    parser.add_argument("--config", choices=["defaults", "small-team"], default="defaults")
    parser.add_argument(
        "--table", action="store_true", help="also print the bill and the price table on stderr"
    )
    args = parser.parse_args(argv)
    prices = PRICES[args.region]
    profile = PROFILES[args.profile]
    choose = default_config if args.config == "defaults" else small_team
    config = choose(profile)
    ours = bill(profile, config, prices)
    theirs = agentcore(profile, prices)
    floor = bill(Profile(0, 0, 0, 0), config, prices)
    total, total_theirs = sum(ours.values()), sum(theirs.values())
    result = {
        "profile": args.profile,
        "region": args.region,
        "config": config.__dict__,
        "prices_date": PRICES_DATE,
        "ours_usd": round(total, 2),
        "ours_by_service_usd": {k: round(v, 2) for k, v in ours.items()},
        "agentcore_usd": round(total_theirs, 2),
        "agentcore_by_item_usd": {k: round(v, 2) for k, v in theirs.items()},
        "ours_vs_agentcore": round(total / total_theirs, 3) if total_theirs else None,
        "fixed_floor_usd": round(sum(floor.values()), 2),
        "break_even_turns": break_even(profile, choose, prices),
        "prices_not_found": sorted(k for k, v in prices.items() if v.seen == "not found"),
        "prices_seen": {s: sum(v.seen == s for v in prices.values()) for s in SEEN},
    }
    print(json.dumps(result))
    if args.table:
        for service, usd in ours.items():
            print(f"{service:20} {usd:12.2f} USD", file=sys.stderr)
        print(f"{'total':20} {total:12.2f} USD   AgentCore {total_theirs:.2f} USD", file=sys.stderr)
        for key, price in prices.items():
            print(
                f"{key:24} {price.usd:.10g} USD per {price.unit} ({price.seen}: {price.source}"
                f"{'; ' + price.where if price.where else ''})",
                file=sys.stderr,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
