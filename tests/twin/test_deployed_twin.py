"""The deployed twin: the stack `sam build` made, run with its own template defaults, proves it works.

Every function runs from .aws-sam/build in its own isolated interpreter (its code + the layer + boto3
as the Lambda runtime ships it) with the environment the built template resolves; AWS is moto's
server, a Bedrock Runtime stand-in and the Lambda/API Gateway stand-ins, all reached through the
SDK's standard AWS_ENDPOINT_URL_* settings; MongoDB is SecantusDB; search is the real OpenSearch node.
Two stages are deployed side by side. Operator commands are the CLI's, as docs/operations.md gives them.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from mongomem.cli import main
from mongomem.client import MemoryClient
from tests.conftest import ROOT, load_event

STEPS: list[str] = []  # the journey, printed at the end of the module

CONFIG = """
memory:
  extraction: {enabled: [semantic, episodic, procedural, taxonomic, preference, trip]}
  snapshot: {max_messages: 2, idle_seconds: 3600}
  custom_types:
    - name: trip
      schema:
        type: object
        properties:
          destination: {type: string}
          airport: {type: string}
        required: [destination]
      match_key: [destination]
      prompt: Extract TRIPS only - places the user travels to or from.
"""
OFFLINE = """
memory:
  providers:
    llm: {kind: offline}
"""


# What the twin changes of samconfig.toml's environments, and why: a short config max age so `apply
# --wait` is quick, and, for dev, OpenSearchMode=serverless: the journey runs against the Serverless
# stand-in, the strictest of the search services (no custom ids, no refresh, writes searchable only
# after a few seconds); staging runs the template's default (an OpenSearch Service domain). Everything
# else is the template's defaults and samconfig's lists.
TWIN = {"ConfigMaxAgeSeconds": "5"}
CONSOLE_ORIGIN = "https://console.example.com"


@pytest.fixture(scope="module")
def dev(twin: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from twin.stack import samconfig

    name, params = samconfig(ROOT, "default")  # `sam deploy`
    return twin.deploy(
        name, {**params, **TWIN, "OpenSearchMode": "serverless"}, tmp_path_factory.mktemp("dev")
    )


@pytest.fixture(scope="module")
def staging(twin: Any, dev: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from twin.stack import samconfig

    name, params = samconfig(ROOT, "staging")  # `sam deploy --config-env staging`
    # one SecantusDB and one OpenSearch node stand in for both stages' Atlas clusters and search services:
    # a database and an index of its own (the default mode: an OpenSearch Service domain); a browser
    # console on another origin calls its API (CORS)
    extra = {
        "MongoDbName": "mongomem_staging",
        "OpenSearchIndex": "mongomem-staging",
        "CorsAllowOrigins": CONSOLE_ORIGIN,
    }
    return twin.deploy(name, {**params, **TWIN, **extra}, tmp_path_factory.mktemp("staging"))


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def step(text: str) -> None:
    STEPS.append(text)


def eventually(probe: Any, timeout: float = 20.0) -> Any:
    """The search index is near-real-time (refreshed every second on a node, ~10 s on Serverless)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def test_the_deploy_creates_the_indexes_once_through_its_custom_resource(
    dev: Any, mongo_server: Any, opensearch_node: Any
) -> None:
    # Then the Migration custom resource answered SUCCESS ...
    assert dev.custom["Migration"]["Status"] == "SUCCESS"
    # ... and created every MongoDB index and the search index (1024-d: Titan v2's default)
    from pymongo import MongoClient

    db: Any = MongoClient(mongo_server.uri)["mongomem"]
    assert "session_seq" in db["turns"].index_information()
    assert "lineage_version" in db["memories"].index_information()
    with urllib.request.urlopen(f"{opensearch_node.url}/mongomem-memories/_mapping") as answer:
        mapping = json.loads(answer.read())
    assert next(iter(mapping.values()))["mappings"]["properties"]["vector"]["dimension"] == 1024
    # and no function creates indexes on a cold start (the deployed settings say so)
    env = dev.functions["RecordTurnsFunction"].spec.environment
    assert "MONGOMEM_ENSURE_INDEXES" not in env
    step("deploy: Migration custom resource SUCCESS (MongoDB indexes + 1024-d search index)")


def test_journey_record_scan_extract_search_context_erase(
    dev: Any, twin: Any, aws_cli_env: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    stack = ["--stack", "mongomem-dev", "--region", "eu-west-1"]
    # An operator creates an API key through the IAM-signed admin API
    code, out, err = cli(capsys, "keys", "create", *stack, "--tenant", "acme", "--kind", "memory_service")
    assert code == 0, err
    key = re.search(r"^(mm_\S+)$", out, re.M).group(1)  # type: ignore[union-attr]
    step("mongomem keys create --stack: key made through /v1/admin/keys (SigV4)")
    # ... uploads a project config and applies it; every function reports that version, ready
    path = tmp_path / "project-config.yaml"
    path.write_text(CONFIG)
    code, out, err = cli(capsys, "memory", "configure", *stack, "--config", str(path))
    assert code == 0 and "version 1" in out, err
    code, out, err = cli(capsys, "memory", "apply", *stack, "--wait", "--timeout", "120")
    assert code == 0, err + out
    assert out.count("runs version 1, ready") == len(dev.functions), out
    step(f"mongomem memory configure/apply --wait: {len(dev.functions)} functions run version 1, ready")
    # The LLM (the Bedrock stand-in, Converse wire format) knows one fact about this conversation
    fact = {"subject": "user", "attribute": "home airport", "value": "LIS", "evidence_seqs": [1]}
    # (every kind answers through one tool, `memories`; the kind's part of the prompt names it)
    # ... and answers one placeholder too, which is refused and counted (ExtractionItemsRefused), not stored
    junk = {"subject": "user", "attribute": "phone number", "value": "unknown", "evidence_seqs": [1]}
    twin.bedrock.script(
        "semantic_memories", {"items": [fact, junk]}, "Memory kind: semantic", "home airport is LIS"
    )
    # ... and one trip, the project's custom type (extracted by the shared custom function)
    trip = {"destination": "Lisbon", "airport": "LIS", "evidence_seqs": [1]}
    twin.bedrock.script("trip_memories", {"items": [trip]}, "Memory kind: trip", "home airport is LIS")
    # When the events/ sample reaches the API (API Gateway -> authorizer -> record function)
    event = load_event("record_turns_post.json")
    event["headers"]["x-api-key"] = key
    response = dev.api.dispatch(event)
    assert response["statusCode"] == 201, response
    assert [t["seq"] for t in json.loads(response["body"])["turns"]] == [1, 2]
    step("API Gateway event (events/record_turns_post.json) -> authorizer -> record: 201, seqs 1-2")
    # ... and the scheduler's tick runs the scan: the size-due session becomes a snapshot, fanned out
    scan = dev.schedule("ScanSessionsFunctionSchedule", load_event("scan_schedule.json"))
    assert scan["snapshots"] == 1 and scan["recall"]["turns"] == 2, scan
    step("scheduler event -> scan: 1 snapshot, 6 SQS messages, 2 turns embedded for recall")
    # ... and each kind's SQS event source delivers its message to its extraction function (the custom
    # type's to the custom queue's)
    per_snapshot = dev.drain_queues()  # one message per enabled kind
    assert per_snapshot == 6
    # (the observer's call, observational memory, reads the same turns: it names no memory kind)
    asked = [
        c
        for c in twin.bedrock.converses()
        if "home airport is LIS" in c["prompt"] and "Memory kind:" in c["prompt"]
    ]
    assert sorted(re.search(r"Memory kind: (\w+)", c["prompt"]).group(1) for c in asked) == [  # type: ignore[union-attr]
        "episodic",
        "preference",
        "procedural",
        "semantic",
        "taxonomic",
        "trip",
    ]
    step("SQS receive -> 6 extraction functions -> Bedrock Converse (tool use) -> Titan embeddings")
    # Then the fact is a memory, indexed and found by meaning through the public API (the SDK over HTTP)
    mem = MemoryClient(dev.api_url, api_key=key)
    hits = eventually(
        lambda: mem.search(user_id="user-7", query="which airport does the user fly from?", top_k=3).results
    )
    assert hits and "LIS" in hits[0].text
    memory = mem.get_memory(hits[0].memory_id, "user-7").memory
    assert memory.index_state == "indexed" and memory.embedding_model == "amazon.titan-embed-text-v2:0"
    assert memory.embedding_dim == 1024
    step("search (hybrid k-NN + BM25 on the OpenSearch node, SigV4 aoss): the fact ranks first")
    trips = eventually(lambda: mem.search(user_id="user-7", query="Lisbon", types=["trip"], top_k=3).results)
    assert [(t.type, t.payload["destination"]) for t in trips] == [("trip", "Lisbon")]
    step("custom type: the ExtractCustom function stored the trip; search by types=[trip] finds it")
    recalled = eventually(lambda: mem.recall(query="Lisbon", user_id="user-7", top_k=2).threads)
    assert any("Lisbon" in t.content for g in recalled for t in g.turns), recalled
    context = mem.build_context(
        user_id="user-7", session_id="sess-42", query="travel plans", token_budget=800
    )
    assert "LIS" in context.context
    step("recall and context: the recorded turns and the fact come back within the token budget")
    # Past conversations import through the same API (POST /v1/import): original times, cut and fanned out
    old = [
        {
            "session_id": "2023-trip",
            "role": "user",
            "content": "I flew from LIS to Berlin.",
            "timestamp": "2023-05-08T10:00:00Z",
        },
        {
            "session_id": "2023-trip",
            "role": "assistant",
            "content": "How was Berlin?",
            "timestamp": "2023-05-08T10:01:00Z",
        },
    ]
    imported = mem.import_history("user-7", format="turns", turns=old)
    assert (imported.turns_recorded, imported.snapshots, imported.extraction_queued) == (
        2,
        1,
        per_snapshot,
    ), imported
    assert mem.import_history("user-7", format="turns", turns=old).already_imported == 2
    assert dev.drain_queues() == per_snapshot
    step(
        f"POST /v1/import: 2 past turns recorded with their times, 1 snapshot, {per_snapshot} extraction messages; again: 0"
    )
    # index_sync runs on its schedule (nothing pending: every write went through)
    assert dev.schedule("IndexSyncFunctionSchedule", load_event("index_sync_schedule.json"))["synced"] == 0
    # status shows which version each function runs
    code, out, err = cli(capsys, "memory", "status", *stack, "--json")
    report = json.loads(out)
    assert code == 0, err
    assert {row["version"] for row in report["config"]["functions"].values()} == {1}
    assert report["config"]["applied"] == 1 and report["service"]["ready"] is True
    step("mongomem memory status --stack: applied version 1 on every function; service ready")
    # Erasing the user removes everything, in MongoDB and in the index (the collection has no _refresh)
    erased = mem.request("DELETE", "/v1/users/user-7")
    assert erased["total"] > 0 and erased["erased"]["index_entries"] > 0, erased
    assert mem.search(user_id="user-7", query="airport", top_k=3).results == []
    twin.collection.settle()
    left = json.loads(
        urllib.request.urlopen(
            urllib.request.Request(
                f"{twin.opensearch_url}/mongomem-memories/_count",
                data=json.dumps({"query": {"term": {"user_id": "user-7"}}}).encode(),
                headers={"Content-Type": "application/json"},
            )
        ).read()
    )
    assert left["count"] == 0, left  # no vector or text of the user is left in the collection
    assert not [c for c in twin.collection.calls if c.status == 404 and "_refresh" in c.path]
    step(
        f"erase: DELETE /v1/users/user-7 deleted {erased['erased']['index_entries']} index entries by field; "
        "nothing of the user is left in the collection"
    )


def test_an_offline_llm_in_the_cloud_is_refused_with_its_reason(
    dev: Any, twin: Any, aws_cli_env: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    stack = ["--stack", "mongomem-dev", "--region", "eu-west-1"]
    path = tmp_path / "offline.yaml"
    path.write_text(OFFLINE)
    assert cli(capsys, "memory", "configure", *stack, "--config", str(path))[0] == 0
    # When it is applied, the CLI refuses before anything changes
    code, _, err = cli(capsys, "memory", "apply", *stack, "--wait", "--timeout", "30")
    assert code == 1 and "AllowDemoProviders" in err and "nothing was changed" in err
    ssm = twin.client("ssm")
    name = "/mongomem/mongomem-dev/project-config"
    assert ssm.get_parameter(Name=f"{name}:applied")["Parameter"]["Version"] == 1
    # And when it is applied anyway (the label moved by hand), the functions refuse it themselves
    ssm.label_parameter_version(Name=name, ParameterVersion=2, Labels=["applied"])
    try:
        answer = dev.invoke("ExtractSemanticFunction", {"mongomem_control": {"refresh": True}})
        assert answer["ready"] is False
        assert any("AllowDemoProviders" in r for r in answer["reasons"]), answer
        api_status = dev.invoke("MemoryApiFunction", {"mongomem_control": {"refresh": True}})
        assert api_status["ready"] is False and api_status["llm"]["name"] == "offline (refused)"
        assert "provider refused" in dev.log_text("ExtractSemanticFunction")
    finally:
        ssm.label_parameter_version(Name=name, ParameterVersion=1, Labels=["applied"])
        dev.invoke("ExtractSemanticFunction", {"mongomem_control": {"refresh": True}})
        dev.invoke("MemoryApiFunction", {"mongomem_control": {"refresh": True}})
    step(
        "offline LLM in the cloud: apply refused (AllowDemoProviders=false); forced, every function reports not ready"
    )


def test_an_incompatible_custom_type_change_is_refused_on_apply(
    dev: Any, twin: Any, aws_cli_env: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    stack = ["--stack", "mongomem-dev", "--region", "eu-west-1"]
    # Given the stack created the custom type `trip` (the journey applied it), a config changing its
    # field `airport` from a string to an integer is uploaded
    path = tmp_path / "retyped.yaml"
    path.write_text(CONFIG.replace("airport: {type: string}", "airport: {type: integer}"))
    assert cli(capsys, "memory", "configure", *stack, "--config", str(path))[0] == 0
    ssm = twin.client("ssm")
    name = "/mongomem/mongomem-dev/project-config"
    before = ssm.get_parameter(Name=f"{name}:applied")["Parameter"]["Version"]
    # When it is applied, the first function that loads it refuses it, naming the change
    code, _, err = cli(capsys, "memory", "apply", *stack, "--wait", "--timeout", "60")
    assert code == 1 and "custom type 'trip'" in err and "field 'airport' changes type" in err, err
    # and the applied label is back on the version every function still runs
    assert ssm.get_parameter(Name=f"{name}:applied")["Parameter"]["Version"] == before
    answer = dev.invoke("MemoryApiFunction", {"mongomem_control": {"refresh": True}})
    assert answer["ready"] is True, answer
    step(
        "custom type: an incompatible schema change is refused by the functions on apply; the label goes back"
    )


def test_two_stages_side_by_side(
    dev: Any, staging: Any, twin: Any, aws_cli_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    # Every named resource carries its stage or stack: nothing collides in one account and region
    unnamed = {"AWS::Lambda::Permission", "AWS::Lambda::EventSourceMapping", "AWS::ApiGatewayV2::Stage"}

    def names(s: Any) -> set[str]:
        return {r.ref for r in s.resources.values() if isinstance(r.ref, str) and r.type not in unnamed}

    assert not names(dev) & names(staging), names(dev) & names(staging)
    assert (
        dev.schedules["ScanSessionsFunctionSchedule"]["Name"]
        != staging.schedules["ScanSessionsFunctionSchedule"]["Name"]
    )
    # dev searches a Serverless collection, staging a domain (the default): each has its index-lag alarm
    alarms = {a["AlarmName"] for a in twin.client("cloudwatch").describe_alarms()["MetricAlarms"]}
    assert any("IndexLagAlarm" in a and a.startswith("mongomem-dev") for a in alarms)
    assert any("IndexLagAlarm" in a and a.startswith("mongomem-staging") for a in alarms)
    env = staging.functions["MemoryApiFunction"].spec.environment
    assert env["MONGOMEM_OPENSEARCH_AUTH"] == "sigv4-es" and "SearchDomain" in staging.resources
    with urllib.request.urlopen(f"{twin.opensearch_url}/mongomem-staging/_mapping") as answer:
        mapping = json.loads(answer.read())["mongomem-staging"]["mappings"]["properties"]["vector"]
    assert mapping["dimension"] == 1024  # the staging migration created its index through the domain
    # staging's domain has one node (the default): its index has no replica, so the cluster can be green
    # (OpenSearch's default of one replica stays unassigned on one node: yellow, and AWS's recommended
    # ClusterStatus.yellow alarm, for good)
    with urllib.request.urlopen(f"{twin.opensearch_url}/mongomem-staging/_settings") as answer:
        settings = json.loads(answer.read())["mongomem-staging"]["settings"]["index"]
    assert settings["number_of_replicas"] == "0"
    with urllib.request.urlopen(f"{twin.opensearch_url}/_cluster/health/mongomem-staging") as answer:
        assert json.loads(answer.read())["status"] == "green"
    # each stage has its own data: a key of staging cannot see dev's tenant data, and vice versa
    _, out, _ = cli(
        capsys,
        "keys",
        "create",
        "--stack",
        "mongomem-staging",
        "--region",
        "eu-west-1",
        "--tenant",
        "acme",
        "--kind",
        "memory_service",
    )
    key = re.search(r"^(mm_\S+)$", out, re.M).group(1)  # type: ignore[union-attr]
    mem = MemoryClient(staging.api_url, api_key=key)
    mem.record_turn("s-1", "ana", "user", "staging only")
    assert [t.content for t in mem.list_turns("s-1", "ana").turns] == ["staging only"]
    # staging never got a config: its functions run the template defaults, dev's run version 1
    _, out, _ = cli(
        capsys, "memory", "status", "--stack", "mongomem-staging", "--region", "eu-west-1", "--json"
    )
    report = json.loads(out)
    assert report["config"]["applied"] is None
    assert {row["config"] for row in report["config"]["functions"].values()} == {"template defaults"}
    step(
        "two stages side by side (dev: Serverless collection, staging: the default OpenSearch Service domain): "
        "no name collides, data, index and config stay per stage"
    )


def test_every_alarm_the_operations_need_exists(dev: Any, twin: Any) -> None:
    alarms = twin.client("cloudwatch").describe_alarms()["MetricAlarms"]
    mine = [a for a in alarms if a["AlarmName"].startswith("mongomem-dev-")]
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for alarm in mine:
        metrics = [alarm.get("MetricName")] + [
            m["MetricStat"]["Metric"]["MetricName"] for m in alarm.get("Metrics") or [] if "MetricStat" in m
        ]
        for name in set(filter(None, metrics)):
            by_metric.setdefault(name, []).append(alarm)
    # errors and throttles of every function
    watched = {
        d["Value"]
        for a in by_metric["Errors"]
        for m in a.get("Metrics") or []
        if "MetricStat" in m
        for d in m["MetricStat"]["Metric"]["Dimensions"]
    }
    functions = {env.spec.name for env in dev.functions.values()}
    assert watched == functions
    assert len(by_metric["Throttles"]) == 2
    assert by_metric["5xx"][0]["Namespace"] == "AWS/ApiGateway"
    # every DLQ (both schedules, every kind) and every kind's queue age
    dlqs = {d["Value"] for a in by_metric["ApproximateNumberOfMessagesVisible"] for d in a["Dimensions"]}
    assert {q for q in dlqs if q.endswith("-dlq")} == {
        f"mongomem-dev-{k}-dlq"
        for k in ("semantic", "episodic", "procedural", "taxonomic", "preference", "custom")
    }
    assert len(dlqs) == 8  # + the two scheduler DLQs
    assert len(by_metric["ApproximateAgeOfOldestMessage"]) == 6
    assert by_metric["IndexLagSeconds"][0]["Namespace"] == "mongomem-dev"
    # a provider refusing extraction for good (AccessDenied) alarms within a minute, on the metric and the
    # dimensions the extract handler emits (service only)
    (refused,) = by_metric["ExtractionConfigErrors"]
    assert refused["Namespace"] == "mongomem-dev" and refused["Period"] == 60
    assert refused["Dimensions"] == [{"Name": "service", "Value": "mongomem"}]
    # a kind that failed for good (done with, never in a DLQ) alarms too, on the service-only metric
    (final,) = by_metric["ExtractionFailures"]
    assert final["Namespace"] == "mongomem-dev" and final["Dimensions"] == [
        {"Name": "service", "Value": "mongomem"}
    ]
    # and every function's logs are kept for the stage's retention, not forever
    groups = twin.client("logs").describe_log_groups()["logGroups"]
    kept = {
        g["logGroupName"]: g.get("retentionInDays")
        for g in groups
        if g["logGroupName"].startswith("mongomem-dev-")
    }
    assert len(kept) == len(dev.functions) + 1 and set(kept.values()) == {14}  # + the API's access log
    step(
        f"alarms: {len(mine)} (errors and throttles of all {len(functions)} functions, API 5xx, 7 DLQs, 5 queue ages, index lag); log retention 14 days (samconfig's dev)"
    )


def _widget_metrics(dashboard: dict[str, Any]) -> list[tuple[str, str, frozenset[str]]]:
    found = []
    for widget in dashboard["widgets"]:
        for row in (widget.get("properties") or {}).get("metrics") or []:
            head = row[0]
            if isinstance(head, dict) and "expression" in head:
                search = re.search(r"SEARCH\('\{([^}]*)\}\s*MetricName=\"([^\"]+)\"", head["expression"])
                assert search, head
                ns, *dims = [p.strip() for p in search.group(1).split(",")]
                found.append((ns, search.group(2), frozenset(dims)))
            elif isinstance(head, str) and head != "...":
                found.append((head, row[1], frozenset(row[2::2])))
    return found


def test_every_dashboard_widget_names_a_metric_the_code_emits(dev: Any) -> None:
    emitted = set()
    for doc in dev.emf():
        for directive in doc["_aws"]["CloudWatchMetrics"]:
            for dims in directive["Dimensions"]:
                for metric in directive["Metrics"]:
                    emitted.add((directive["Namespace"], metric["Name"], frozenset(dims)))
    ours = [m for m in _widget_metrics(dev.dashboard) if not m[0].startswith("AWS/")]
    assert ours, "the dashboard has no widget on the code's own metrics"
    missing = [m for m in ours if m not in emitted]
    assert not missing, f"widgets naming metrics nothing emits: {missing}; emitted: {sorted(emitted)}"
    step(
        f"dashboard: all {len(ours)} widgets on the code's metrics match emitted EMF (metric + dimension set)"
    )


def test_every_dashboard_widget_shows_data_once_the_journey_ran(dev: Any, twin: Any) -> None:
    import datetime as dt

    # Given what CloudWatch holds after the journey (the EMF lines as metrics, Lambda's and SQS's own)
    assert dev.publish_metrics() > 0
    cloudwatch = twin.client("cloudwatch")
    now = dt.datetime.now(dt.UTC)

    def datapoints(namespace: str, name: str, dims: dict[str, str]) -> int:
        answer = cloudwatch.get_metric_statistics(
            Namespace=namespace,
            MetricName=name,
            Dimensions=[{"Name": k, "Value": v} for k, v in dims.items()],
            StartTime=now - dt.timedelta(hours=3),
            EndTime=now + dt.timedelta(hours=1),
            Period=300,
            Statistics=["SampleCount"],
        )
        return len(answer["Datapoints"])

    empty: list[tuple[Any, ...]] = []
    for widget in dev.dashboard["widgets"]:
        props = widget.get("properties") or {}
        for row in props.get("metrics") or []:
            head = row[0]
            if isinstance(head, dict):
                # a search expression: the metrics whose dimension names are exactly the schema's (CloudWatch's
                # rule), with every quoted value matched exactly
                search = re.search(r"SEARCH\('\{([^}]*)\}\s*(.*?)'", head["expression"])
                assert search, head
                ns, *schema = [p.strip() for p in search.group(1).split(",")]
                terms = dict(re.findall(r'(\w+)="([^"]*)"', search.group(2)))
                name = terms.pop("MetricName")
                found = [
                    m
                    for m in cloudwatch.list_metrics(Namespace=ns, MetricName=name)["Metrics"]
                    if {d["Name"] for d in m["Dimensions"]} == set(schema)
                    and all(
                        {d["Name"]: d["Value"] for d in m["Dimensions"]}.get(k) == v for k, v in terms.items()
                    )
                ]
                if not found:
                    empty.append((props["title"], head["expression"]))
            elif isinstance(head, str):
                dims = dict(zip(row[2::2], row[3::2], strict=True))
                if not datapoints(head, row[1], dims):
                    empty.append((props["title"], row[1], dims))
    # Then every widget's metric has data: none names a metric or a value nothing produces
    assert not empty, empty
    step("dashboard: every widget shows data in the twin's CloudWatch after the journey")


def test_every_dashboard_widget_on_aws_metrics_names_this_stacks_queues_and_functions(
    dev: Any, twin: Any
) -> None:
    sqs = twin.client("sqs")
    queues = {url.rsplit("/", 1)[-1] for url in sqs.list_queues(QueueNamePrefix="mongomem-dev-")["QueueUrls"]}
    functions = {env.spec.name for env in dev.functions.values()}
    named: list[tuple[str, str]] = []
    for widget in dev.dashboard["widgets"]:
        for row in (widget.get("properties") or {}).get("metrics") or []:
            head = row[0]
            if isinstance(head, dict) and "expression" in head:
                # a quoted value in a search expression is an exact match (CloudWatch "Search expression
                # syntax"): a quoted name prefix ("mongomem-dev-") matches no metric, the widget stays empty
                for name, value in re.findall(r'(\w+)="([^"]*)"', head["expression"]):
                    if name != "MetricName":
                        named.append((name, value))
            elif isinstance(head, str) and head.startswith("AWS/"):
                named += list(zip(row[2::2], row[3::2], strict=True))
    assert named, "the dashboard has no widget on the queues or functions"
    for name, value in named:
        # every dimension value is one of this stack's own queues or functions, exactly
        assert value in {"QueueName": queues, "FunctionName": functions}[name], (name, value)
    # and each queue (DLQs included) and each function is on the dashboard
    assert {v for n, v in named if n == "QueueName"} == {q for q in queues if "Schedule" not in q}
    assert {v for n, v in named if n == "FunctionName"} == functions


# Shipped though no journey step imports them, and why.
LAYER_UNUSED_ON_PURPOSE = {
    "dns": "pymongo resolves mongodb+srv:// (Atlas) hosts with dnspython; the twin connects with mongodb://",
    "tenacity": "the retry policy of the OpenAI-compatible providers (LlmProvider=openai); the twin runs Bedrock",
    "re2": "custom types' `pattern` keywords run on RE2 (linear time); the twin's project declares none",
    "_re2": "RE2's compiled module, beside re2 in the aarch64 wheel",
    "pymongo_auth_aws": "Atlas IAM authentication (authMechanism=MONGODB-AWS); the twin's SecantusDB takes SCRAM",
    "s3transfer": "boto3's S3 transfer manager, a dependency of the pinned boto3; no function moves S3 objects",
}


def test_the_layer_holds_what_the_functions_import(dev: Any, twin: Any) -> None:
    layer = twin.build_dir / "CoreLayer" / "python"
    shipped = {
        # a top-level extension module (_re2.cpython-311-aarch64-linux-gnu.so) by its module name
        p.name.split(".", 1)[0] if p.name.endswith(".so") else p.name.removesuffix(".py")
        for p in layer.iterdir()
        if not p.name.endswith((".dist-info", ".data")) and p.name not in ("__pycache__", "requirements.txt")
    }
    imported: set[str] = set()
    for modules in dev.logs.glob("*.modules"):
        for path in modules.read_text().splitlines():
            for root in twin.sys_path("python3.13"):
                if path.startswith(str(root) + "/"):
                    imported.add(
                        path[len(str(root)) + 1 :].split("/", 1)[0].removesuffix(".py").split(".")[0]
                    )
    unused = sorted(shipped - imported - set(LAYER_UNUSED_ON_PURPOSE))
    assert not unused, f"the layer ships packages no function imports: {unused}"
    size = sum(f.stat().st_size for f in layer.rglob("*") if f.is_file())
    step(
        f"layer: {len(shipped)} top-level packages, all imported by the functions; {size / 2**20:.1f} MiB unzipped"
    )


def test_iam_grants_only_what_each_function_calls(dev: Any) -> None:
    policies = {k: v for k, v in dev.policies.items()}
    docs = {k: v.get("PolicyDocument") for k, v in policies.items() if "PolicyDocument" in v}
    statements = [(k, s) for k, d in docs.items() if d for s in d["Statement"]]
    actions = {
        a for _, s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    }
    assert "bedrock:Converse" not in actions  # not an IAM action: Converse authorises as InvokeModel
    # a secret under a customer-managed key is decrypted through Secrets Manager only
    (kms,) = [s for _, s in statements if s["Action"] == "kms:Decrypt"]
    assert kms["Condition"] == {"StringEquals": {"kms:ViaService": "secretsmanager.eu-west-1.amazonaws.com"}}
    bedrock = [s for _, s in statements if "bedrock:InvokeModel" in str(s["Action"])]
    resources = {
        r for s in bedrock for r in ([s["Resource"]] if isinstance(s["Resource"], str) else s["Resource"])
    }
    assert resources == {
        "arn:aws:bedrock:eu-west-1:123456789012:inference-profile/global.amazon.nova-2-lite-v1:0",
        "arn:aws:bedrock:*::foundation-model/amazon.nova-2-lite-v1:0",
        "arn:aws:bedrock:eu-west-1::foundation-model/amazon.titan-embed-text-v2:0",
    }
    # queues are named by ARN, never by a `<stack>-*` pattern (which stack mongomem-dev-2's queues match)
    queues = {r.attrs["Arn"] for r in dev.resources.values() if r.type == "AWS::SQS::Queue"}
    inline = [
        (k, s)
        for k, v in policies.items()
        for p in v.get("Policies") or []
        for s in p["PolicyDocument"]["Statement"]
    ]
    for _, s in statements + inline:
        res = s["Resource"]
        acts = [s["Action"]] if isinstance(s["Action"], str) else s["Action"]
        for r in [res] if isinstance(res, str) else res:
            # "*" only where IAM has no resource to name (AWS Marketplace's subscription actions)
            assert r != "*" or all(a.startswith("aws-marketplace:") for a in acts), s
            assert "*" not in r or not r.startswith("arn:aws:sqs"), s
            if r.startswith("arn:aws:sqs"):
                assert r in queues, s
    # which role may call what: IndexSync, RecordTurns, the authorizer and Migrate never call Bedrock
    llm, embed = dev.resources["LlmAccessPolicy"].ref, dev.resources["EmbeddingAccessPolicy"].ref
    roles = {k: v.get("ManagedPolicyArns") or [] for k, v in policies.items() if k.endswith("Role")}
    assert {k for k, arns in roles.items() if llm in arns} == {"MemoryApiFunctionRole", "ExtractionRole"}
    assert {k for k, arns in roles.items() if embed in arns} == {
        "MemoryApiFunctionRole",
        "ExtractionRole",
        "ScanSessionsFunctionRole",
    }
    # the search collection's data-access policy names exactly the roles that read or write it
    access = json.loads(dev.policies["SearchDataAccess"]["Policy"])[0]["Principal"]
    assert sorted(access) == sorted(
        dev.resources[r].attrs["Arn"]
        for r in (
            "MemoryApiFunctionRole",
            "ScanSessionsFunctionRole",
            "IndexSyncFunctionRole",
            "ExtractionRole",
            "MigrateFunctionRole",
        )
    )
    step(
        "IAM: bedrock:InvokeModel on the two configured models only, for the 3 roles that call them; SQS, secrets, aoss scoped to the stack"
    )


def _key(capsys: pytest.CaptureFixture[str], stack: str) -> str:
    _, out, _ = cli(
        capsys,
        "keys",
        "create",
        "--stack",
        stack,
        "--region",
        "eu-west-1",
        "--tenant",
        "acme",
        "--kind",
        "memory_service",
    )
    return re.search(r"^(mm_\S+)$", out, re.M).group(1)  # type: ignore[union-attr]


def _http(stack: Any, key: str, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    """One request over HTTP as a client sends it (UTF-8 JSON, non-ASCII unescaped), no retries."""
    data = json.dumps(body, ensure_ascii=False).encode() if body is not None else None
    request = urllib.request.Request(
        stack.api_url + path,
        data=data,
        method=method,
        headers={"x-api-key": key, "content-type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def test_a_turn_page_of_cjk_text_stays_within_lambdas_response_limit(
    dev: Any, twin: Any, aws_cli_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    key = _key(capsys, "mongomem-dev")
    # Given three turns of 0.9 MiB of Japanese each (2.7 MiB of UTF-8: within every request limit)
    text = "記憶の" * 105_000  # 945,000 bytes (limits.max_content_bytes: 1 MiB)
    for _ in range(3):
        status, body = _http(
            dev, key, "POST", "/v1/sessions/cjk-1/turns", {"user_id": "kei", "role": "user", "content": text}
        )
        assert status == 201, body
    # When the session's turns are read
    status, body = _http(dev, key, "GET", "/v1/sessions/cjk-1/turns?user_id=kei")
    # Then they come back whole: escaped as \\uXXXX (6 bytes in the body, 7 in Lambda's response for a
    # 3-byte character) the page was over Lambda's 6 MB limit and API Gateway answered 500
    assert status == 200, body
    assert [t["content"] == text for t in body["turns"]] == [True, True, True]
    step(
        "3 turns of 0.9 MiB of CJK text: the page fits Lambda's 6 MB response (bodies unescaped, budget in sent bytes)"
    )


def test_a_browsers_preflight_never_reaches_the_authorizer_on_any_route(
    staging: Any, twin: Any, aws_cli_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    from mongomem.local.http import to_event

    api = staging.api
    authorizer = staging.functions["AuthorizerFunction"]
    before = authorizer.invocations
    refused = []
    for route in api.routes:
        if route.auth == "NONE":
            continue
        path = re.sub(r"\{[^}]+\}", "x-1", route.template)
        method = "GET" if route.method == "ANY" else route.method
        headers = {
            "origin": CONSOLE_ORIGIN,
            "access-control-request-method": method,
            "access-control-request-headers": "x-api-key,content-type",
        }
        answer = api.dispatch(to_event("OPTIONS", path, headers, b"", "203.0.113.9"))
        allowed = (answer.get("headers") or {}).get("access-control-allow-origin")
        if answer["statusCode"] not in (200, 204) or allowed != CONSOLE_ORIGIN:
            refused.append((route.key, answer["statusCode"]))
    # Then API Gateway answers every preflight itself (an ANY route would take OPTIONS to the authorizer,
    # which a preflight, carrying no x-api-key, fails with 401)
    assert not refused, refused
    assert authorizer.invocations == before
    # and a real request from that origin gets its CORS header on the function's answer
    key = _key(capsys, "mongomem-staging")
    event = to_event(
        "GET", "/v1/threads?user_id=ana", {"origin": CONSOLE_ORIGIN, "x-api-key": key}, b"", "203.0.113.9"
    )
    answer = api.dispatch(event)
    assert answer["statusCode"] == 200 and answer["headers"]["access-control-allow-origin"] == CONSOLE_ORIGIN
    step(
        f"CORS: preflights of all {len(api.routes)} routes answered by API Gateway (no ANY route, no authorizer)"
    )


def test_a_hanging_model_provider_gets_our_503_before_api_gateway_gives_up(
    dev: Any, twin: Any, aws_cli_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    import time

    from twin.faults import Blackhole

    key = _key(capsys, "mongomem-dev")
    fn = dev.functions["MemoryApiFunction"]
    with Blackhole() as hole:
        # Given Bedrock accepts the memory API's connections and never answers
        fn.spec.aws_env["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"] = hole.url
        fn.stop()
        try:
            started = time.monotonic()
            # When a search needs the query's embedding
            status, body = _http(
                dev, key, "POST", "/v1/memories/search", {"user_id": "ana", "query": "airport", "top_k": 3}
            )
            took = time.monotonic() - started
        finally:
            fn.spec.aws_env["AWS_ENDPOINT_URL_BEDROCK_RUNTIME"] = twin.bedrock.url
            fn.stop()
    # Then the client gets our own retryable error before API Gateway's 30 s (not its bare 503 while the
    # function goes on retrying 30 s x 4 behind it)
    assert status == 503 and body.get("error", {}).get("code") == "provider_unavailable", (status, body)
    assert took < 30, took
    step(
        f"a hanging Bedrock: the search answers 503 provider_unavailable after {took:.0f} s (API Gateway waits 30 s)"
    )


def test_a_busy_environment_serves_a_new_config_within_its_max_age_of_the_apply(
    dev: Any, twin: Any, aws_cli_env: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import time

    from mongomem.cli.memory_deployed import canonical, digest

    stack = ["--stack", "mongomem-dev", "--region", "eu-west-1"]
    name = "/mongomem/mongomem-dev/project-config"
    max_age, latency = 5.0, 1.0  # TWIN's ConfigMaxAgeSeconds; every config read takes a second here
    fn = dev.functions["MemoryApiFunction"]
    ssm = twin.client("ssm")
    # Given the journey's config is applied and a new version is uploaded (not applied yet) ...
    versions = []
    for text in (CONFIG, CONFIG.replace("idle_seconds: 3600", "idle_seconds: 3500")):
        path = tmp_path / "config.yaml"
        path.write_text(text)
        assert cli(capsys, "memory", "configure", *stack, "--config", str(path))[0] == 0
        versions.append(ssm.get_parameter(Name=name)["Parameter"]["Version"])
    want = digest(canonical(__import__("yaml").safe_load(path.read_text())))
    ssm.label_parameter_version(Name=name, ParameterVersion=versions[0], Labels=["applied"])
    version = versions[1]
    # ... and two warm execution environments of the memory API have just read the applied config
    a, b = fn.warm(2)
    twin.ssm.latency = latency
    try:
        for env in (a, b):
            env.invoke({"mongomem_control": {"refresh": True}})
        # When the new version is applied (the label moves) while the second one serves a request
        # every 0.2 s (a busy function)
        ssm.label_parameter_version(Name=name, ParameterVersion=version, Labels=["applied"])
        applied = time.monotonic()
        took = None
        while time.monotonic() - applied < 3 * max_age:
            if b.invoke({"mongomem_control": {"refresh": False}})["config"]["sha256"] == want:
                took = time.monotonic() - applied
                break
            time.sleep(0.2)
    finally:
        twin.ssm.latency = 0.0
    # Then it serves the new version within the max age (plus the read's own second) of the apply: the age
    # counts from when its read returned (stamped before the read, a busy environment renewed a value
    # Powertools had cached a second later, and served the old version up to twice the max age)
    assert took is not None and took <= max_age + latency + 1.0, took
    assert a.invoke({"mongomem_control": {"refresh": False}})["config"]["sha256"] == want
    # (so `apply --wait`, which reaches one environment per function, waits max age + a read after the
    # label before it returns: then no environment serves the old version)
    step(
        f"config: a busy environment served the applied version {took:.1f} s after the label (max age {max_age:g} s)"
    )


def test_a_cold_start_under_ssm_throttling_serves_the_applied_config_not_the_defaults(
    dev: Any, twin: Any, aws_cli_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    key = _key(capsys, "mongomem-dev")
    applied = twin.client("ssm").get_parameter(Name="/mongomem/mongomem-dev/project-config:applied")[
        "Parameter"
    ]
    from mongomem.cli.memory_deployed import digest

    fn = dev.functions["MemoryApiFunction"]
    fn.stop()  # the next request cold-starts
    # Given SSM throttles the next six reads (a burst of cold starts spends the account's 40 per second;
    # the SDK itself tries a read three times)
    assert _http(dev, key, "GET", "/v1/status")[0] == 200  # (API Gateway now caches the authorizer's answer)
    fn.stop()
    before = twin.ssm.throttled
    twin.ssm.throttle_next(6)
    # When a request reaches the cold function
    status, body = _http(dev, key, "GET", "/v1/status")
    # Then it serves the applied config, read again after the throttling, never the template's defaults
    assert twin.ssm.throttled - before == 6
    assert status == 200 and body["config"]["sha256"] == digest(applied["Value"]), body.get("config")
    # and when SSM cannot be read at all, the function says so (503) instead of serving the defaults
    fn.stop()
    twin.ssm.throttle_next(10_000)
    try:
        status, body = _http(dev, key, "GET", "/v1/status")
    finally:
        twin.ssm.throttle_next(0)
    assert status == 503 and body["error"]["code"] == "config_unavailable", body
    step(
        "SSM throttling at a cold start: the applied config after retries, or 503 config_unavailable; never defaults"
    )


def test_a_failing_message_comes_back_after_the_visibility_timeout_and_reaches_the_dlq(
    dev: Any, twin: Any
) -> None:
    sqs = twin.client("sqs")
    queue, dlq = dev.outputs["SemanticQueueUrl"], dev.outputs["SemanticDLQUrl"]
    attrs = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["VisibilityTimeout", "RedrivePolicy"])[
        "Attributes"
    ]
    visibility, receives = (
        int(attrs["VisibilityTimeout"]),
        json.loads(attrs["RedrivePolicy"])["maxReceiveCount"],
    )
    extract = dev.functions["ExtractSemanticFunction"]
    for url in (queue, dlq):  # (messages earlier tests left in flight would come back meanwhile)
        sqs.purge_queue(QueueUrl=url)
    # Given a message the semantic extractor fails on every time (it names another kind)
    sqs.send_message(
        QueueUrl=queue, MessageBody=json.dumps({"snapshot_id": "snap-misrouted", "type": "episodic"})
    )
    for receive in range(1, receives + 1):
        runs = extract.invocations
        # When the event source mapping receives it, the function reports it as a batch item failure ...
        assert dev.drain_queues(rounds=1) == 0
        assert extract.invocations == runs + 1, receive
        # ... and SQS hides it for the queue's visibility timeout: nothing is delivered before it ends
        twin.clock.advance(visibility - 1)
        assert dev.drain_queues(rounds=1) == 0 and extract.invocations == runs + 1
        twin.clock.advance(2)
    # Then after maxReceiveCount receives SQS moves it to the DLQ on the next receive (the DLQ alarm's)
    dev.drain_queues(rounds=1)
    moved = sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10).get("Messages", [])
    assert [json.loads(m["Body"])["snapshot_id"] for m in moved] == ["snap-misrouted"]
    for m in moved:
        sqs.delete_message(QueueUrl=dlq, ReceiptHandle=m["ReceiptHandle"])
    step(
        f"SQS: a failing message comes back every {visibility} s and reaches the DLQ after {receives} receives"
    )


def test_functions_run_python_313_with_the_layers_pinned_sdk(dev: Any, twin: Any) -> None:
    from twin.runtimes import deprecation

    runtime = dev.functions["MemoryApiFunction"].spec.runtime
    # The runtime stays supported: Lambda deprecates it no sooner than two years from now
    import datetime

    assert runtime == "python3.13"
    deprecated = deprecation(runtime)
    assert deprecated is None or deprecated > datetime.date.today() + datetime.timedelta(days=730), deprecated
    # Every function imported botocore from the layer (its pin), none from the runtime's own older SDK
    layer_roots = [str(p) for p in twin.sys_path(runtime)[:2]]
    runtime_root = str(twin.sys_path(runtime)[2])
    for modules in dev.logs.glob("*.modules"):
        files = modules.read_text().splitlines()
        botocore = [f for f in files if "/botocore/__init__.py" in f]
        assert botocore and all(f.startswith(tuple(layer_roots)) for f in botocore), (modules.name, botocore)
        assert not any(f.startswith(runtime_root + "/") for f in files), modules.name
        assert any("/python3.13/" in f for f in files), modules.name
    pins = dict(
        p.split("==")
        for p in __import__("twin.layer", fromlist=["pinned_dists"]).pinned_dists(
            twin.build_dir / "CoreLayer" / "python"
        )
    )
    step(
        f"runtime {runtime} (deprecated {deprecated}); every function runs the layer's boto3 {pins.get('boto3')}"
    )


def test_zz_print_the_journey() -> None:
    print("\ndeployed twin journey:\n  " + "\n  ".join(STEPS))
    assert len(STEPS) >= 8
