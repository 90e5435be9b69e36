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
# --wait` is quick, and the lucene k-NN engine (the test node, assembled from Maven Central, has no
# faiss native library). Everything else is the template's defaults and samconfig's lists.
TWIN = {"ConfigMaxAgeSeconds": "5", "OpenSearchEngine": "lucene"}


@pytest.fixture(scope="module")
def dev(twin: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from twin.stack import samconfig

    name, params = samconfig(ROOT, "default")  # `sam deploy`
    return twin.deploy(name, {**params, **TWIN}, tmp_path_factory.mktemp("dev"))


@pytest.fixture(scope="module")
def staging(twin: Any, dev: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from twin.stack import samconfig

    name, params = samconfig(ROOT, "staging")  # `sam deploy --config-env staging`
    # one SecantusDB and one OpenSearch node stand in for both stages' Atlas clusters and collections:
    # a database of its own, and (to also deploy the no-search variant) no search index
    extra = {"MongoDbName": "mongomem_staging", "OpenSearchMode": "none"}
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

    db = MongoClient(mongo_server.uri)["mongomem"]
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
    twin.bedrock.script("memories", {"items": [fact, junk]}, "Memory kind: semantic", "home airport is LIS")
    # ... and one trip, the project's custom type (extracted by the shared custom function)
    trip = {"destination": "Lisbon", "airport": "LIS", "evidence_seqs": [1]}
    twin.bedrock.script("memories", {"items": [trip]}, "Memory kind: trip", "home airport is LIS")
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
    asked = [c for c in twin.bedrock.converses() if "home airport is LIS" in c["prompt"]]
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
    recalled = mem.recall(query="Lisbon", user_id="user-7", top_k=2)
    assert any("Lisbon" in t.content for g in recalled.threads for t in g.turns), recalled
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
    # Erasing the user removes everything, in MongoDB and in the index
    assert mem.request("DELETE", "/v1/users/user-7")["total"] > 0
    assert mem.search(user_id="user-7", query="airport", top_k=3).results == []
    step("erase: DELETE /v1/users/user-7 leaves nothing to find")


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
    # staging runs without a search index: no index-lag alarm there, one in dev
    alarms = {a["AlarmName"] for a in twin.client("cloudwatch").describe_alarms()["MetricAlarms"]}
    assert any("IndexLagAlarm" in a and a.startswith("mongomem-dev") for a in alarms)
    assert not any("IndexLagAlarm" in a and a.startswith("mongomem-staging") for a in alarms)
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
    step("two stages (dev, staging) side by side: no name collides, data and config stay per stage")


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


# Shipped though no journey step imports them, and why.
LAYER_UNUSED_ON_PURPOSE = {
    "dns": "pymongo resolves mongodb+srv:// (Atlas) hosts with dnspython; the twin connects with mongodb://",
    "tenacity": "the retry policy of the OpenAI-compatible providers (LlmProvider=openai); the twin runs Bedrock",
}


def test_the_layer_holds_what_the_functions_import(dev: Any, twin: Any) -> None:
    layer = twin.build_dir / "CoreLayer" / "python"
    shipped = {
        p.name.removesuffix(".py")
        for p in layer.iterdir()
        if not p.name.endswith((".dist-info", ".data")) and p.name not in ("__pycache__", "requirements.txt")
    }
    imported: set[str] = set()
    for modules in dev.logs.glob("*.modules"):
        for path in modules.read_text().splitlines():
            for root in twin.sys_path:
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
    bedrock = [s for _, s in statements if "bedrock:InvokeModel" in str(s["Action"])]
    resources = {
        r for s in bedrock for r in ([s["Resource"]] if isinstance(s["Resource"], str) else s["Resource"])
    }
    assert resources == {
        "arn:aws:bedrock:eu-west-1:123456789012:inference-profile/global.amazon.nova-2-lite-v1:0",
        "arn:aws:bedrock:*::foundation-model/amazon.nova-2-lite-v1:0",
        "arn:aws:bedrock:eu-west-1::foundation-model/amazon.titan-embed-text-v2:0",
    }
    for _, s in statements:
        res = s["Resource"]
        for r in [res] if isinstance(res, str) else res:
            assert r != "*", s
            if r.startswith("arn:aws:sqs"):
                assert r.startswith("arn:aws:sqs:eu-west-1:123456789012:mongomem-dev-"), s
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


def test_zz_print_the_journey() -> None:
    print("\ndeployed twin journey:\n  " + "\n  ".join(STEPS))
    assert len(STEPS) >= 8
