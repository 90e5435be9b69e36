"""One extraction lane for small accounts (ExtractionLanes=one, issue 34 finding 5, ADR 0071).

A new account's Lambda concurrency quota is 10, and an SQS event source runs at least 2 executions
(ScalingConfig MaximumConcurrency, AWS's minimum). With a queue per kind, a backlog of the five default
kinds runs 10 extractions and leaves the API nothing; with one lane, one queue and one function take every
kind's messages, at most 2 at a time. The template cases resolve the built template (as
test_template_parameters does); the last one deploys the one-lane stack in the twin and extracts through it.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from tests.conftest import ROOT, load_event
from tests.twin.test_template_parameters import Resolved, functions, resolve

ONE = {"ExtractionLanes": "one"}
NEW_ACCOUNT_QUOTA = 10
# What the API must keep to answer at all: one execution each for the authorizer, the turn recorder and
# the memory API (API Gateway calls the authorizer, then the route's function).
API_FUNCTIONS = ("AuthorizerFunction", "RecordTurnsFunction", "MemoryApiFunction")
KINDS = ("semantic", "episodic", "procedural", "taxonomic", "preference")


def _rate_seconds(expression: str) -> int:
    number, unit = re.fullmatch(r"rate\((\d+) (\w+?)s?\)", expression).groups()  # type: ignore[union-attr]
    return int(number) * {"minute": 60, "hour": 3600, "day": 86400}[unit]


def background_worst_case(stack: Resolved) -> dict[str, int]:
    """The most executions the background can hold at once: each extraction source its MaximumConcurrency
    (those whose queue gets messages: an enabled kind's, or the one lane's), each schedule's function as
    many runs as overlap (a run lasts at most its timeout; the schedule starts one each rate)."""
    fns = functions(stack)
    enabled = set(stack.parameters.get("EnabledExtractions", ",".join(KINDS)).split(","))
    worst: dict[str, int] = {}
    for m in stack.of_type("AWS::Lambda::EventSourceMapping").values():
        name = m["FunctionName"]
        kind = fns[name]["Environment"]["Variables"].get("MONGOMEM_EXTRACTION_TYPE")
        if kind is None or kind in enabled:
            worst[name] = worst.get(name, 0) + int(m["ScalingConfig"]["MaximumConcurrency"])
    for schedule in stack.of_type("AWS::Scheduler::Schedule").values():
        name = schedule["Target"]["Arn"].removesuffix(".Arn")
        rate = _rate_seconds(schedule["ScheduleExpression"])
        worst[name] = math.ceil(int(fns[name]["Timeout"]) / rate)
    return worst


def test_one_lane_is_one_queue_and_one_function_at_a_maximum_concurrency_of_2() -> None:
    stack = resolve(**ONE)
    # Then there is exactly one extraction event source, held to 2 executions, on the one queue ...
    (mapping,) = stack.of_type("AWS::Lambda::EventSourceMapping").values()
    assert int(mapping["ScalingConfig"]["MaximumConcurrency"]) == 2
    assert mapping["EventSourceArn"] == "ExtractionQueue.Arn" and mapping["FunctionName"] == "ExtractFunction"
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    extract = functions(stack)["ExtractFunction"]
    assert int(stack.props("ExtractionQueue")["VisibilityTimeout"]) >= 6 * int(extract["Timeout"])
    # ... whose function takes every kind (it names none: each message does)
    assert "MONGOMEM_EXTRACTION_TYPE" not in extract["Environment"]["Variables"]
    # no per-kind queue, DLQ or function is created
    queues = {
        props["QueueName"] for props in stack.of_type("AWS::SQS::Queue").values() if "QueueName" in props
    }
    assert queues == {"mongomem-test-extraction", "mongomem-test-extraction-dlq"}
    assert not [
        k for k in functions(stack) if re.fullmatch(r"Extract\w+Function", k) and k != "ExtractFunction"
    ]
    # every function that publishes snapshots (scan, flush, history import, retry) sends every kind there
    targets = {
        f["Environment"]["Variables"]["MONGOMEM_QUEUE_URL_TEMPLATE"] for f in functions(stack).values()
    }
    assert targets == {"https://sqs.eu-west-1.amazonaws.com/123456789012/mongomem-test-extraction"}
    # and may: the send policy and the extraction role name the one queue
    send = stack.props("QueueSendPolicy")["PolicyDocument"]["Statement"][0]["Resource"]
    (role_policy,) = stack.props("ExtractionRole")["Policies"]
    assert send == ["ExtractionQueue.Arn"] == role_policy["PolicyDocument"]["Statement"][0]["Resource"]
    # its failures alarm: the DLQ, the queue's age, the function's errors and throttles
    alarms = stack.of_type("AWS::CloudWatch::Alarm")
    watched = {d["Value"] for a in alarms.values() for d in a.get("Dimensions") or []}
    assert {"ExtractionDLQ.QueueName", "ExtractionQueue.QueueName"} <= watched
    for alarm in ("BackgroundFunctionErrorsAlarm", "BackgroundFunctionThrottlesAlarm"):
        named = {
            d["Value"]
            for m in alarms[alarm]["Metrics"]
            if "MetricStat" in m
            for d in m["MetricStat"]["Metric"]["Dimensions"]
        }
        assert named == {"ScanSessionsFunction", "IndexSyncFunction", "MigrateFunction", "ExtractFunction"}
    # the CLI finds the lane (`memory status`, `snapshots retry`) through the outputs
    assert {"ExtractionQueueUrl", "ExtractionDLQUrl", "ExtractFunctionName"} <= set(stack.outputs)
    assert not [k for k in stack.outputs if k.startswith(("Semantic", "Custom", "ExtractSemantic"))]


def test_per_kind_stays_the_default_layout() -> None:
    stack = resolve()
    mappings = stack.of_type("AWS::Lambda::EventSourceMapping")
    kinds = {
        functions(stack)[m["FunctionName"]]["Environment"]["Variables"]["MONGOMEM_EXTRACTION_TYPE"]
        for m in mappings.values()
    }
    assert kinds == {*KINDS, "custom"} and len(mappings) == 6
    assert "ExtractionQueue" not in stack.resources and "ExtractFunction" not in stack.resources


@pytest.mark.parametrize(("params", "busy", "left"), [(ONE, 5, 5), ({}, 13, -3)], ids=["one", "per-kind"])
def test_a_new_accounts_quota_leaves_the_api_its_share_only_with_one_lane(
    params: dict[str, str], busy: int, left: int
) -> None:
    # Given a new account's quota of 10 and no reservation possible (Lambda keeps 100 unreserved)
    stack = resolve(**params)
    worst = background_worst_case(stack)
    # When every background source runs at its most (an extraction backlog, a slow scan, index_sync)
    assert worst["ScanSessionsFunction"] == 2 and worst["IndexSyncFunction"] == 1
    # Then one lane holds 2 + 2 + 1 = 5 of 10 and the API keeps 5, an execution for each of its functions
    # and more; a queue per kind holds 5 x 2 + 3 = 13 and leaves the API nothing
    assert sum(worst.values()) == busy and NEW_ACCOUNT_QUOTA - busy == left
    assert (NEW_ACCOUNT_QUOTA - busy >= len(API_FUNCTIONS)) == (params == ONE)
    # (what ExtractionLanes' description promises)
    described = " ".join(str(resolve_description(stack, "ExtractionLanes")).split())
    assert "2 x 5 = 10" in described and "5 of 10, and the API keeps 5" in described


def resolve_description(stack: Resolved, parameter: str) -> str:
    from twin.cfn import load_template

    del stack
    built = load_template(ROOT / ".aws-sam" / "build" / "template.yaml")
    return str(built["Parameters"][parameter]["Description"])


# -- the twin: a snapshot published in one-lane mode is extracted by the one function ---------------------


@pytest.fixture(scope="module")
def lanes(twin: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    params = {
        "Stage": "lanes",
        "ExtractionLanes": "one",
        "MongoDbName": "mongomem_lanes",
        "OpenSearchIndex": "mongomem-lanes",
        "ConfigMaxAgeSeconds": "5",
    }
    return twin.deploy("mongomem-lanes", params, tmp_path_factory.mktemp("lanes"))


def test_one_lane_extracts_every_kind_of_a_flushed_and_an_imported_snapshot(
    lanes: Any, twin: Any, aws_cli_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    from mongomem.client import MemoryClient
    from tests.twin.test_deployed_twin import _key

    # Given a one-lane stack: one extraction function, one queue (+ DLQ) besides the schedules' DLQs
    extraction = [k for k in lanes.functions if k.startswith("Extract")]
    assert extraction == ["ExtractFunction"] and len(lanes.event_sources) == 1
    key = _key(capsys, "mongomem-lanes")
    fact = {"subject": "user", "attribute": "home airport", "value": "LIS", "evidence_seqs": [1]}
    twin.bedrock.script(
        "semantic_memories", {"items": [fact]}, "Memory kind: semantic", "home airport is LIS"
    )
    # When the events/ sample records two turns and the session is flushed (POST .../flush publishes it)
    event = load_event("record_turns_post.json")
    event["headers"]["x-api-key"] = key
    assert lanes.api.dispatch(event)["statusCode"] == 201
    mem = MemoryClient(lanes.api_url, api_key=key)
    assert mem.flush("sess-42", "user-7").snapshot is not None
    extract = lanes.functions["ExtractFunction"]
    before = len(twin.bedrock.converses())
    # Then the one function extracts every enabled kind, one after another through the one queue
    assert lanes.drain_queues() == len(KINDS)
    asked = twin.bedrock.converses()[before:]
    assert sorted(k for c in asked for k in re.findall(r"Memory kind: (\w+)", c["prompt"])) == sorted(KINDS)
    assert extract.invocations == len(KINDS)  # each kind's message, in its own batch
    # ... the fact is a semantic memory ...
    listed = mem.list_memories("user-7", type="semantic").memories
    assert [(m.type, "LIS" in m.text) for m in listed] == [("semantic", True)], listed
    # ... and each kind's figures keep their memory_type dimension
    latency = [doc for doc in lanes.emf() if "ExtractionLatencyMs" in doc]
    assert {doc.get("memory_type") for doc in latency} == set(KINDS)
    for doc in latency:
        dimension_sets = [set(d) for m in doc["_aws"]["CloudWatchMetrics"] for d in m["Dimensions"]]
        assert {"service", "memory_type"} in dimension_sets, doc
    # A history import (POST /v1/import) goes through the same lane
    old = [
        {
            "session_id": "lanes-old",
            "role": "user",
            "content": "I moved to Porto.",
            "timestamp": "2023-05-08T10:00:00Z",
        },
        {
            "session_id": "lanes-old",
            "role": "assistant",
            "content": "Nice!",
            "timestamp": "2023-05-08T10:01:00Z",
        },
    ]
    imported = mem.import_history("user-7", format="turns", turns=old)
    assert imported.snapshots == 1 and imported.extraction_queued == len(KINDS)
    assert lanes.drain_queues() == len(KINDS) and extract.invocations == 2 * len(KINDS)
