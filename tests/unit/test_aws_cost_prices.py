"""bench/aws_cost.py's price table: every price names its AWS (or Atlas) pricing page and says where its
figure was read, or says plainly that no stored page gave it (issue 34)."""

from __future__ import annotations

import importlib.util
import json
import sys
from types import ModuleType

import pytest

from tests.conftest import ROOT


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("aws_cost", ROOT / "bench" / "aws_cost.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["aws_cost"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


PAGES = ("https://aws.amazon.com/", "https://www.mongodb.com/docs/atlas/")


def test_every_price_names_its_pricing_page_and_where_its_figure_was_read() -> None:
    bench = _bench()
    assert set(bench.PRICES) >= {"eu-west-1", "us-east-1"}
    for region, table in bench.PRICES.items():
        for key, price in table.items():
            # the page the price belongs to is the vendor's own pricing page, never a copy of it
            assert price.source.startswith(PAGES), (region, key, price.source)
            assert price.seen in bench.SEEN, (region, key, price.seen)
            # a figure read from a copy, or already in the repository, says which; "not found" says so plainly
            if price.seen in ("copy", "repo"):
                assert price.where, (region, key)
            if price.seen == "copy":
                assert price.where.startswith("https://"), (region, key, price.where)


def test_agentcore_memory_is_priced_as_its_page_publishes() -> None:
    # 0.25 USD per 1,000 short-term events, 0.75 per 1,000 long-term records a month (built-in strategies),
    # 0.50 per 1,000 retrievals: the figures issue 34 quotes, as AWS's agent toolkit quotes the page
    table = _bench().PRICES["us-east-1"]
    assert round(table["agentcore_event"].usd * 1000, 6) == 0.25
    assert round(table["agentcore_record_month"].usd * 1000, 6) == 0.75
    assert round(table["agentcore_retrieval"].usd * 1000, 6) == 0.50


def test_a_region_without_its_own_figures_says_so_in_the_bench_output(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench = _bench()
    bench.main(["1m", "--region", "eu-west-1"])
    out = json.loads(capsys.readouterr().out)
    eu = bench.PRICES["eu-west-1"]
    assert out["prices_not_found"] == sorted(k for k, p in eu.items() if p.seen == "not found")
    assert sum(out["prices_seen"].values()) == len(eu)


def test_one_extraction_lane_bills_one_queues_polls_and_fewer_alarms() -> None:
    # the small-team configuration runs ExtractionLanes=one (docs/adr/0071): one queue polled, not six
    bench = _bench()
    month = bench.PROFILES["10k"]
    prices = bench.PRICES["us-east-1"]
    lane = bench.small_team(month)
    per_kind = bench.Config(lane.name, lane.search, lane.atlas, lane.kinds, lane.vpc_endpoints, queues=6)
    one, six = bench.bill(month, lane, prices), bench.bill(month, per_kind, prices)
    assert lane.queues == 1 and one["sqs"] < six["sqs"] and one["cloudwatch"] < six["cloudwatch"]
    assert bench.alarm_metrics(6) == 46 and bench.alarm_metrics(1) == 26
    assert {k: v for k, v in one.items() if k not in ("sqs", "cloudwatch")} == {
        k: v for k, v in six.items() if k not in ("sqs", "cloudwatch")
    }
