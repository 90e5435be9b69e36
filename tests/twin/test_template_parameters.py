"""The built template, resolved for a parameter set: what CloudFormation would create is what the parameters say.

Each case runs AWS's SAM transform on `.aws-sam/build/template.yaml` with the parameter values (as
CloudFormation hands them to the transform), then evaluates its rules, conditions and intrinsics the way
the deployed twin does (tools/twin/cfn.py), with each resource's Ref being its logical id and each
GetAtt `Logical.Attr`. No moto, no functions: these are the settings a deploy would get wrong silently
(an API without throttling, a CORS list API Gateway cannot read, functions outside the VPC, a search
role nobody can map).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import ROOT

BUILT = ROOT / ".aws-sam" / "build" / "template.yaml"
SAM_PYTHON = ROOT / ".venv-sam" / "bin" / "python"
REGION, ACCOUNT = "eu-west-1", "123456789012"


@dataclass
class Resolved:
    parameters: dict[str, str]
    resources: dict[str, tuple[str, dict[str, Any]]]  # logical id -> (type, resolved properties)
    outputs: dict[str, Any]
    failed_rules: list[str]
    # logical id -> the resource's other attributes (DeletionPolicy, UpdatePolicy, DependsOn, ...)
    attributes: dict[str, dict[str, Any]]

    def of_type(self, kind: str) -> dict[str, dict[str, Any]]:
        return {k: p for k, (t, p) in self.resources.items() if t == kind}

    def props(self, logical: str) -> dict[str, Any]:
        return self.resources[logical][1]


_CACHE: dict[str, Resolved] = {}


def resolve(**parameters: str) -> Resolved:
    """The stack a deploy with these parameters (`stack_name` mongomem-test) would create."""
    key = json.dumps(parameters, sort_keys=True)
    if key in _CACHE:
        return _CACHE[key]
    if not BUILT.exists():
        pytest.fail(
            "these tests read the built template: run `make sam-build` (make twin does)", pytrace=False
        )
    from twin.cfn import Resolver, load_template, sam_transform

    template = sam_transform(load_template(BUILT), SAM_PYTHON, REGION, parameters)
    active: set[str] = set()

    def ref(logical: str) -> str:
        if logical not in active:
            raise KeyError(f"Ref {logical}: the resource is not created with these parameters")
        return logical

    def get_att(logical: str, attr: str) -> str:
        return f"{ref(logical)}.{attr}"

    pseudo = {
        "AWS::Region": REGION,
        "AWS::AccountId": ACCOUNT,
        "AWS::StackName": "mongomem-test",
        "AWS::StackId": f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/mongomem-test/1",
        "AWS::Partition": "aws",
        "AWS::URLSuffix": "amazonaws.com",
    }
    resolver = Resolver(template, parameters, pseudo, ref, get_att)
    failed = resolver.failed_rules()
    specs = template["Resources"]
    active |= {k for k, v in specs.items() if resolver.active(v)}
    resources = {k: (specs[k]["Type"], resolver.resolve(specs[k].get("Properties") or {})) for k in active}
    for logical, (kind, props) in list(resources.items()):
        if kind == "AWS::CloudFormation::Stack":  # a nested stack: its resources count as the stack's
            resources.update(_nested(logical, props, pseudo))
    outputs = {
        k: resolver.resolve(v["Value"])
        for k, v in (template.get("Outputs") or {}).items()
        if "Condition" not in v or resolver.condition(v["Condition"])
    }
    attributes = {k: {a: v for a, v in specs[k].items() if a not in ("Type", "Properties")} for k in active}
    _CACHE[key] = Resolved(dict(parameters), resources, outputs, failed, attributes)
    return _CACHE[key]


def _nested(
    parent: str, props: dict[str, Any], pseudo: dict[str, str]
) -> dict[str, tuple[str, dict[str, Any]]]:
    from twin.cfn import Resolver, load_template
    from twin.stack import PACKAGED_PREFIX

    child = load_template(BUILT.parent / str(props["TemplateURL"]).removeprefix(PACKAGED_PREFIX))
    params = {k: str(v) for k, v in (props.get("Parameters") or {}).items()}
    resolver = Resolver(child, params, pseudo, lambda logical: logical, lambda lg, attr: f"{lg}.{attr}")
    specs = child["Resources"]
    out = {}
    for k, spec in specs.items():
        if resolver.active(spec):
            assert k not in (parent,), k
            out[k] = (spec["Type"], resolver.resolve(spec.get("Properties") or {}))
    return out


def functions(stack: Resolved) -> dict[str, dict[str, Any]]:
    return stack.of_type("AWS::Lambda::Function")


def search_endpoint(stack: Resolved, name: str, function: dict[str, Any]) -> str:
    """The search endpoint a function works with: its environment's, or, for the migration (which exists
    before the search domain), the one the Migration custom resource hands it."""
    if name == "MigrateFunction":
        assert function["Environment"]["Variables"]["MONGOMEM_OPENSEARCH_ENDPOINT"] == ""
        return str(stack.props("Migration")["SearchEndpoint"])
    return str(function["Environment"]["Variables"]["MONGOMEM_OPENSEARCH_ENDPOINT"])


def role_of(function: dict[str, Any]) -> str:
    role = function["Role"]  # "<RoleLogicalId>.Arn"
    assert isinstance(role, str) and role.endswith(".Arn"), role
    return role.removesuffix(".Arn")


# -- API: throttling, access logs, CORS, custom domain ------------------------------------------------


@pytest.mark.parametrize(
    ("environment", "rate", "burst"),
    [(None, 100, 200), ("prod", 200, 400)],
    ids=["defaults", "samconfig-prod"],
)
def test_the_api_stage_is_throttled_and_logged_as_the_parameters_say(
    environment: str | None, rate: int, burst: int
) -> None:
    from twin.stack import samconfig

    params = samconfig(ROOT, environment)[1] if environment else {}
    stack = resolve(**params)
    (stage,) = stack.of_type("AWS::ApiGatewayV2::Stage").values()
    # Given the deploy's parameters, every route of the stage is held to its rate and burst
    assert stage["StageName"] == "$default"
    settings = stage["DefaultRouteSettings"]
    assert (int(settings["ThrottlingRateLimit"]), int(settings["ThrottlingBurstLimit"])) == (rate, burst)
    # the routes anyone may call (no API key) have a cap of their own, far below the stage's: the internet
    # cannot spend the account's Lambda concurrency through them
    public = {"GET /console", "GET /console/{proxy+}", "GET /v1/docs", "GET /v1/openapi.json"}
    from twin.cfn import load_template

    unauthenticated = {
        f"{event['Properties']['Method']} {event['Properties']['Path']}"
        for spec in load_template(BUILT)["Resources"].values()
        for event in ((spec.get("Properties") or {}).get("Events") or {}).values()
        if event["Type"] == "HttpApi" and (event["Properties"].get("Auth") or {}).get("Authorizer") == "NONE"
    }
    assert unauthenticated == public
    capped = stage["RouteSettings"]
    assert set(capped) == public
    for key in public:
        assert int(capped[key]["ThrottlingRateLimit"]) == int(capped[key]["ThrottlingBurstLimit"]) == 5, key
    # and every request is logged as one JSON line to a log group kept for the stage's retention
    assert stage["AccessLogSettings"]["DestinationArn"] == "ApiAccessLogs.Arn"
    line = json.loads(stage["AccessLogSettings"]["Format"])
    assert {"requestId", "route", "status", "latencyMs", "integrationError", "tenant"} <= set(line)
    retention = params.get("LogRetentionDays", "30")
    assert str(stack.props("ApiAccessLogs")["RetentionInDays"]) == retention


def _cors(stack: Resolved) -> Any:
    (api,) = stack.of_type("AWS::ApiGatewayV2::Api").values()
    return api["Body"].get("x-amazon-apigateway-cors")


def test_cors_is_off_unless_origins_are_given_and_then_allows_exactly_them() -> None:
    assert _cors(resolve()) is None
    # API Gateway reads allowOrigins as an array: each origin one item, never the raw "a,b" text
    cors = _cors(resolve(**CORS_TWO, **CUSTOM))
    assert cors["allowOrigins"] == ["https://app.example.com", "https://admin.example.com"]
    assert {"x-api-key", "content-type"} <= set(cors["allowHeaders"])
    assert {"GET", "POST", "DELETE", "OPTIONS"} <= set(cors["allowMethods"])
    assert "retry-after" in cors["exposeHeaders"]
    assert _cors(resolve(**DOMAIN, CorsAllowOrigins="https://app.example.com"))["allowOrigins"] == [
        "https://app.example.com"
    ]


# Parameter sets shared by several tests (each set is one SAM transform, ~6 s).
CUSTOM = {"ExtractionMaxConcurrency": "7", "ExtractionBatchSize": "5"}
CORS_TWO = {"CorsAllowOrigins": "https://app.example.com,https://admin.example.com"}
# what CloudFormation refuses before creating anything
INCOMPLETE = {"OpenSearchMode": "existing", "DomainName": "memory.example.com"}
DOMAIN = {
    "DomainName": "memory.example.com",
    "CertificateArn": f"arn:aws:acm:{REGION}:{ACCOUNT}:certificate/0f0e0d0c",
}


def test_a_custom_domain_maps_the_api_and_becomes_its_url() -> None:
    plain = resolve()
    assert not plain.of_type("AWS::ApiGatewayV2::DomainName") and not plain.of_type("AWS::Route53::RecordSet")
    assert plain.outputs["ApiUrl"] == f"https://HttpApi.execute-api.{REGION}.amazonaws.com"
    # Given a domain and its certificate (and a hosted zone), the API answers there
    stack = resolve(**DOMAIN, HostedZoneId="Z0123456789ABC")
    domain = stack.props("ApiDomain")
    assert domain["DomainName"] == "memory.example.com"
    assert domain["DomainNameConfigurations"] == [
        {"CertificateArn": DOMAIN["CertificateArn"], "EndpointType": "REGIONAL"}
    ]
    mapping = stack.props("ApiDomainMapping")
    assert (mapping["DomainName"], mapping["ApiId"], mapping["Stage"]) == ("ApiDomain", "HttpApi", "$default")
    record = stack.props("ApiDomainRecord")
    assert record["HostedZoneId"] == "Z0123456789ABC" and record["Name"] == "memory.example.com"
    assert record["AliasTarget"]["DNSName"] == "ApiDomain.RegionalDomainName"
    assert stack.outputs["ApiUrl"] == "https://memory.example.com"
    # without a hosted zone the record is the user's to make; a domain without a certificate is refused
    assert "ApiDomainRecord" not in resolve(**DOMAIN, CorsAllowOrigins="https://app.example.com").resources
    assert "DomainName needs CertificateArn." in resolve(**INCOMPLETE).failed_rules
    assert plain.failed_rules == [] and stack.failed_rules == []


# -- network: the functions in a VPC, with the endpoints they call -------------------------------------

VPC = {"VpcId": "vpc-0abc", "SubnetIds": "subnet-a,subnet-b", "SecurityGroupIds": "sg-fn"}
ENDPOINT_SERVICES = {
    f"com.amazonaws.{REGION}.{s}" for s in ("sqs", "secretsmanager", "ssm", "bedrock-runtime", "xray")
}


def _managed_policies(stack: Resolved, role: str) -> list[Any]:
    return list(stack.props(role).get("ManagedPolicyArns") or [])


def test_without_vpc_parameters_no_function_runs_in_a_vpc() -> None:
    stack = resolve()
    assert all("VpcConfig" not in f for f in functions(stack).values())
    assert not [k for k, (t, _) in stack.resources.items() if t.startswith("AWS::EC2::")]
    assert not stack.of_type("AWS::OpenSearchServerless::VpcEndpoint")


def test_vpc_parameters_put_every_function_in_the_subnets_with_the_endpoints_it_calls() -> None:
    stack = resolve(**VPC, CreateVpcEndpoints="true", OpenSearchMode="serverless")
    fns = functions(stack)
    # every function (the deploy-time migration included) runs in the given subnets and security group
    for name, fn in fns.items():
        assert fn["VpcConfig"] == {"SubnetIds": ["subnet-a", "subnet-b"], "SecurityGroupIds": ["sg-fn"]}, name
        # ... with a role that may create its network interfaces (else Lambda refuses the function)
        vpc_policy = "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole"
        assert vpc_policy in _managed_policies(stack, role_of(fn)), name
    # the interface endpoints of what the functions call besides MongoDB, private DNS on, in those subnets
    endpoints = stack.of_type("AWS::EC2::VPCEndpoint")
    assert {e["ServiceName"] for e in endpoints.values()} == ENDPOINT_SERVICES
    for e in endpoints.values():
        assert e["VpcId"] == "vpc-0abc" and e["SubnetIds"] == ["subnet-a", "subnet-b"]
        assert e["PrivateDnsEnabled"] is True and e["SecurityGroupIds"] == ["EndpointsSecurityGroup"]
    ingress = stack.props("EndpointsSecurityGroup")["SecurityGroupIngress"]
    assert ingress == [
        {"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "SourceSecurityGroupId": "sg-fn"}
    ]
    # the Serverless collection is then reachable only through its VPC endpoint, not from the internet
    (aoss,) = stack.of_type("AWS::OpenSearchServerless::VpcEndpoint").values()
    assert aoss["SubnetIds"] == ["subnet-a", "subnet-b"]
    network = json.loads(stack.props("SearchNetworkPolicy")["Policy"])
    assert network[0]["AllowFromPublic"] is False and network[0]["SourceVPCEs"] == ["SearchVpcEndpoint"]
    # the deploy-time migration reads its secret, its config and the collection through those endpoints:
    # CloudFormation creates them before it runs (without them it would wait for its own answer an hour)
    assert stack.props("Migration")["Endpoints"] == [
        "SecretsManagerEndpoint",
        "SsmEndpoint",
        "SearchCollectionStack.Outputs.VpcEndpointId",
    ]
    # with the subnets' route tables, an S3 gateway endpoint: the custom resources answer CloudFormation
    # through pre-signed S3 URLs, so a VPC without internet needs it (without route tables: none, the docs say)
    gateway = resolve(**VPC, CreateVpcEndpoints="true", RouteTableIds="rtb-1,rtb-2")
    (s3,) = [
        e for e in gateway.of_type("AWS::EC2::VPCEndpoint").values() if e["VpcEndpointType"] == "Gateway"
    ]
    assert s3["ServiceName"] == f"com.amazonaws.{REGION}.s3" and s3["RouteTableIds"] == ["rtb-1", "rtb-2"]
    # subnets without the functions' security group or the VPC are refused before anything is created
    assert sorted(resolve(SubnetIds="subnet-a").failed_rules) == [
        "SubnetIds needs SecurityGroupIds (the functions' security group).",
        "SubnetIds needs VpcId (the VPC of the subnets).",
    ]
    # without CreateVpcEndpoints the functions still run in the VPC (reaching AWS through a NAT)
    nat = resolve(**VPC, OpenSearchMode="serverless")
    assert all("VpcConfig" in f for f in functions(nat).values())
    assert not nat.of_type("AWS::EC2::VPCEndpoint")
    assert json.loads(nat.props("SearchNetworkPolicy")["Policy"])[0]["AllowFromPublic"] is True


# -- search: an existing domain or collection ----------------------------------------------------------

EXISTING = {
    "OpenSearchMode": "existing",
    "OpenSearchEndpoint": "https://search-memories-abc123.eu-west-1.es.amazonaws.com",
    "OpenSearchResourceArn": f"arn:aws:es:{REGION}:{ACCOUNT}:domain/memories",
}


def test_existing_opensearch_is_used_as_given_and_the_roles_to_map_are_output() -> None:
    stack = resolve(**EXISTING)
    # no collection or policies of its own
    assert not [k for k, (t, _) in stack.resources.items() if t.startswith("AWS::OpenSearchServerless::")]
    # every function is pointed at the given endpoint, signing for a managed domain
    for name, fn in functions(stack).items():
        env = fn["Environment"]["Variables"]
        assert search_endpoint(stack, name, fn) == EXISTING["OpenSearchEndpoint"], name
        assert env["MONGOMEM_OPENSEARCH_AUTH"] == "sigv4-es", name
    assert stack.outputs["SearchEndpoint"] == EXISTING["OpenSearchEndpoint"]
    # the search policy grants the domain (and its indexes) only
    statement = stack.props("SearchAccessPolicy")["PolicyDocument"]["Statement"][0]
    arn = EXISTING["OpenSearchResourceArn"]
    assert statement["Resource"] == [arn, f"{arn}/*"]
    # SearchRoleArns lists exactly the roles holding that policy: what the user maps in the domain
    holders = {
        role
        for role, props in stack.of_type("AWS::IAM::Role").items()
        if "SearchAccessPolicy" in (props.get("ManagedPolicyArns") or [])
    }
    output = set(stack.outputs["SearchRoleArns"].split(","))
    assert output == {f"{r}.Arn" for r in holders} and len(holders) == 5
    # the migration creates the index there on deploy
    assert stack.props("Migration")["SearchIndex"] == "mongomem-memories"
    # a Serverless collection of one's own is signed for aoss
    aoss = resolve(
        **{
            **EXISTING,
            "OpenSearchAuth": "sigv4-aoss",
            "OpenSearchEndpoint": "https://abc123.eu-west-1.aoss.amazonaws.com",
        }
    )
    env = functions(aoss)["MemoryApiFunction"]["Environment"]["Variables"]
    assert env["MONGOMEM_OPENSEARCH_AUTH"] == "sigv4-aoss"


def test_existing_opensearch_without_its_endpoint_or_arn_is_refused_by_the_template() -> None:
    assert sorted(resolve(**INCOMPLETE).failed_rules) == [
        "DomainName needs CertificateArn.",
        "OpenSearchMode=existing needs OpenSearchEndpoint.",
        "OpenSearchMode=existing needs OpenSearchResourceArn (what the functions may call).",
    ]
    assert resolve(**EXISTING).failed_rules == []


def test_the_default_search_is_an_encrypted_domain_reached_with_iam() -> None:
    stack = resolve()
    (domain,) = stack.of_type("AWS::OpenSearchService::Domain").values()
    assert not [k for k, (t, _) in stack.resources.items() if t.startswith("AWS::OpenSearchServerless::")]
    # a first deploy's size: one t3.small.search node, 10 GiB gp3, in no VPC
    assert domain["ClusterConfig"]["InstanceType"] == "t3.small.search"
    assert (
        str(domain["ClusterConfig"]["InstanceCount"]) == "1"
        and domain["ClusterConfig"]["ZoneAwarenessEnabled"] is False
    )
    assert domain["EBSOptions"] == {"EBSEnabled": True, "VolumeType": "gp3", "VolumeSize": "10"}
    assert "VPCOptions" not in domain
    # encrypted at rest and between nodes, HTTPS only; the domain trusts the account, IAM decides who
    assert domain["EncryptionAtRestOptions"] == {"Enabled": True}
    assert domain["NodeToNodeEncryptionOptions"] == {"Enabled": True}
    assert domain["DomainEndpointOptions"]["EnforceHTTPS"] is True
    # TLS 1.2 with forward secrecy (the newest policy that still admits TLS 1.2 clients)
    assert domain["DomainEndpointOptions"]["TLSSecurityPolicy"] == "Policy-Min-TLS-1-2-PFS-2023-10"
    # AWS's recommended domain alarms: red, yellow, writes blocked, storage nearly full
    watched = {
        a["MetricName"]
        for a in stack.of_type("AWS::CloudWatch::Alarm").values()
        if a.get("Namespace") == "AWS/ES"
    }
    assert watched == {
        "ClusterStatus.red",
        "ClusterStatus.yellow",
        "ClusterIndexWritesBlocked",
        "FreeStorageSpace",
    }
    (trust,) = domain["AccessPolicies"]["Statement"]
    assert trust["Principal"] == {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}
    # the functions sign for es and reach it over HTTPS; exactly the five search roles may call it
    for name, fn in functions(stack).items():
        env = fn["Environment"]["Variables"]
        assert env["MONGOMEM_OPENSEARCH_AUTH"] == "sigv4-es", name
        assert search_endpoint(stack, name, fn) == "https://SearchDomain.DomainEndpoint", name
        # a one-node domain's index gets no replica (one it cannot place leaves the cluster yellow for good)
        assert env["MONGOMEM_OPENSEARCH_REPLICAS"] == "0", name
    statement = stack.props("SearchAccessPolicy")["PolicyDocument"]["Statement"][0]
    arn = f"arn:aws:es:{REGION}:{ACCOUNT}:domain/mongomem-dev"
    assert statement["Resource"] == [arn, f"{arn}/*"] and domain["DomainName"] == "mongomem-dev"
    assert "IndexLagAlarm" in stack.resources
    # in a VPC: one subnet for one node, every subnet (one per zone) for two or three, behind its own group
    vpc = resolve(**VPC)
    options = vpc.props("SearchDomain")["VPCOptions"]
    assert options == {"SubnetIds": ["subnet-a"], "SecurityGroupIds": ["SearchDomainSecurityGroup"]}
    ingress = vpc.props("SearchDomainSecurityGroup")["SecurityGroupIngress"]
    assert ingress == [
        {"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "SourceSecurityGroupId": "sg-fn"}
    ]
    two_nodes = resolve(**VPC, OpenSearchDomainInstanceCount="2")
    two = two_nodes.props("SearchDomain")
    assert two["VPCOptions"]["SubnetIds"] == ["subnet-a", "subnet-b"]
    assert two["ClusterConfig"]["ZoneAwarenessConfig"] == {"AvailabilityZoneCount": "2"}
    # two nodes in two zones hold one replica of each shard
    assert (
        functions(two_nodes)["MemoryApiFunction"]["Environment"]["Variables"]["MONGOMEM_OPENSEARCH_REPLICAS"]
        == "1"
    )
    # a Serverless collection decides its replicas itself (it refuses the setting)
    serverless = functions(resolve(OpenSearchMode="serverless"))["MemoryApiFunction"]
    assert serverless["Environment"]["Variables"]["MONGOMEM_OPENSEARCH_REPLICAS"] == ""


def test_serverless_refuses_the_lucene_engine() -> None:
    # vector search collections offer faiss (and nmslib), not lucene: the template says so before AWS does
    assert resolve(OpenSearchMode="serverless", OpenSearchEngine="lucene").failed_rules == [
        "OpenSearchMode=serverless needs OpenSearchEngine=faiss (vector search collections do not offer the "
        "lucene engine)."
    ]
    assert resolve(OpenSearchMode="serverless").failed_rules == []
    assert resolve(OpenSearchEngine="lucene").failed_rules == []  # a domain builds lucene indexes


def test_serverless_collection_grants_what_the_functions_call() -> None:
    stack = resolve(OpenSearchMode="serverless")
    (rule, collection_rule) = json.loads(stack.props("SearchDataAccess")["Policy"])[0]["Rules"]
    # reindex --re-embed drops and recreates the index: DELETE <index> needs aoss:DeleteIndex
    assert set(rule["Permission"]) == {
        "aoss:CreateIndex",
        "aoss:DescribeIndex",
        "aoss:UpdateIndex",
        "aoss:DeleteIndex",
        "aoss:ReadDocument",
        "aoss:WriteDocument",
    }
    assert collection_rule["Permission"] == ["aoss:DescribeCollectionItems"]
    for name, fn in functions(stack).items():
        env = fn["Environment"]["Variables"]
        assert env["MONGOMEM_OPENSEARCH_AUTH"] == "sigv4-aoss", name
        assert env["MONGOMEM_OPENSEARCH_ENGINE"] == "faiss", name


def test_no_search_mode_leaves_search_out_entirely() -> None:
    stack = resolve(OpenSearchMode="none")
    for fn in functions(stack).values():
        assert fn["Environment"]["Variables"]["MONGOMEM_OPENSEARCH_ENDPOINT"] == ""
    assert "SearchAccessPolicy" not in stack.resources and "IndexLagAlarm" not in stack.resources
    assert "SearchEndpoint" not in stack.outputs
    assert stack.props("Migration")["SearchIndex"] == ""


# -- extraction: concurrency and batch size per kind ---------------------------------------------------


@pytest.mark.parametrize(
    ("params", "concurrency", "batch"),
    [({}, 2, 2), ({**CORS_TWO, **CUSTOM}, 7, 5), (None, 4, 2)],
    ids=["defaults", "custom", "samconfig-prod"],
)
def test_every_extraction_queue_is_consumed_with_the_configured_concurrency(
    params: dict[str, str] | None, concurrency: int, batch: int
) -> None:
    from twin.stack import samconfig

    stack = resolve(**(params if params is not None else samconfig(ROOT, "prod")[1]))
    mappings = stack.of_type("AWS::Lambda::EventSourceMapping")
    extract = {
        k for k, f in functions(stack).items() if "MONGOMEM_EXTRACTION_TYPE" in f["Environment"]["Variables"]
    }
    # one SQS event source per extraction function, none elsewhere ...
    assert {m["FunctionName"] for m in mappings.values()} == extract and len(mappings) == len(extract) >= 4
    for name, m in mappings.items():
        # ... each held to MaximumConcurrency (the LLM's quota) and the batch size, reporting partial failures
        assert int(m["ScalingConfig"]["MaximumConcurrency"]) == concurrency, name
        assert int(m["BatchSize"]) == batch, name
        assert m["FunctionResponseTypes"] == ["ReportBatchItemFailures"], name
        # and its queue hides a message for 6x the function's timeout (AWS's advice for SQS triggers)
        queue = m["EventSourceArn"].removesuffix(".Arn")
        timeout = int(functions(stack)[m["FunctionName"]]["Timeout"])
        assert int(stack.props(queue)["VisibilityTimeout"]) >= 6 * timeout, name


# -- the runtime layer ships the runtime, not the tools ------------------------------------------------

TOOLS = ("cli", "local", "client.py", "mcp_server.py", "integrations", "ops")


def test_the_built_layer_and_functions_hold_no_tools_package() -> None:
    build = BUILT.parent
    if not build.exists():
        pytest.fail("run `make sam-build` first", pytrace=False)
    layer = build / "CoreLayer" / "python"
    package = layer / "mongomem"
    assert (package / "runtime" / "lifecycle.py").exists(), "the layer has no runtime package"
    # Given the layer sam build made: none of the tools' modules (CLI, local stack, SDK, MCP server)
    shipped = sorted(p.name for p in package.iterdir())
    assert not [t for t in TOOLS if (package / t).exists()], shipped
    # ... nor the tools' distribution, and no function bundles them beside its handler either
    dists = [p.name for p in layer.glob("*.dist-info")]
    assert not [d for d in dists if d.lower().startswith("mongomem-")], dists
    for fn in build.iterdir():
        if fn.is_dir() and fn.name != "CoreLayer":
            assert not (fn / "mongomem").exists(), f"{fn.name} bundles a mongomem package"
    # and nothing the layer ships imports them (it would fail on the first cold start that reached it)
    offenders = [
        str(py.relative_to(layer))
        for py in package.rglob("*.py")
        if any(f"mongomem.{t.removesuffix('.py')}" in py.read_text(encoding="utf-8") for t in TOOLS)
    ]
    assert not offenders, offenders


def test_every_compiled_wheel_in_the_layer_loads_on_the_functions_runtime() -> None:
    from twin.runtimes import wheel_refusal

    # Given the layer sam build made for the template's runtime and architecture
    targets = {(f["Runtime"], *f["Architectures"]) for f in functions(resolve()).values()}
    assert len(targets) == 1, f"one layer serves functions of several runtimes: {targets}"
    ((runtime, architecture),) = targets
    layer = BUILT.parent / "CoreLayer" / "python"
    # Then every wheel it unpacked is tagged for that machine and a glibc the runtime's OS has
    # (a manylinux_2_39 or x86_64 wheel installs fine here and fails its first import on Lambda)
    refused = {}
    for wheel in sorted(layer.glob("*.dist-info/WHEEL")):
        lines = wheel.read_text().splitlines()
        tags = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Tag:")]
        why = wheel_refusal(runtime, architecture, tags)
        if why:
            refused[wheel.parent.name] = why
    assert not refused, refused


# -- what AWS refuses at deploy time -------------------------------------------------------------------


def test_a_third_party_model_may_subscribe_through_marketplace_and_amazons_need_not() -> None:
    def statements(**params: str) -> dict[str, Any]:
        policy = resolve(**params).props("LlmAccessPolicy")["PolicyDocument"]["Statement"]
        return {s.get("Sid"): s for s in policy}

    # Bedrock subscribes the account to a third-party model on its first call, as the caller: the roles
    # calling the LLM hold the marketplace permissions AWS lists for it ("Request access to models")
    for model in ("global.anthropic.claude-haiku-4-5-20251001-v1:0", "meta.llama3-70b-instruct-v1:0"):
        market = statements(LlmModelId=model)["MarketplaceSubscription"]
        assert set(market["Action"]) == {
            "aws-marketplace:Subscribe",
            "aws-marketplace:Unsubscribe",
            "aws-marketplace:ViewSubscriptions",
        }, model
    # Amazon's models (the default Nova profile, a Nova model id) are not sold through it: no such grant
    for model in ("global.amazon.nova-2-lite-v1:0", "amazon.nova-lite-v1:0"):
        assert "MarketplaceSubscription" not in statements(LlmModelId=model), model


def test_the_migrations_answer_within_a_service_timeout_and_check_atlas_before_the_domain() -> None:
    from twin.cfn import load_template, references

    stack = resolve()
    store, full = stack.props("StoreMigration"), stack.props("Migration")
    timeout = int(functions(stack)["MigrateFunction"]["Timeout"])
    # CloudFormation waits for an answer up to ServiceTimeout (an hour by default): 15 minutes here, more
    # than the function's own timeout, so a function that never starts costs 15 minutes, not an hour
    for migration in (store, full):
        assert timeout < int(migration["ServiceTimeout"]) <= 900
    # MongoDB is migrated (and Atlas reached) before the domain's 15-30 minutes start: a first deploy that
    # cannot reach Atlas fails in a minute, and its rollback has no domain to delete
    assert store["Part"] == "store"
    assert "StoreMigration" in stack.attributes["SearchDomain"]["DependsOn"]
    # which needs the migrate function (its role, its policies) not to depend on the domain: it gets the
    # search endpoint with the Migration's request
    template = sam_template()
    chain = {"MigrateFunction", "MigrateFunctionRole", "SearchAccessPolicy", "StoreAccessPolicy"}
    for logical in chain:
        assert "SearchDomain" not in references(template["Resources"][logical]), logical
    assert full["SearchEndpoint"] == "https://SearchDomain.DomainEndpoint"
    assert load_template(BUILT)["Resources"]["SearchDomain"]["UpdatePolicy"] == {"EnableVersionUpgrade": True}


def sam_template(**parameters: str) -> dict[str, Any]:
    from twin.cfn import load_template, sam_transform

    template: dict[str, Any] = sam_transform(load_template(BUILT), SAM_PYTHON, REGION, parameters)
    return template


def test_titan_v2_dimensions_are_a_template_rule() -> None:
    # Titan Text Embeddings V2 gives 256, 512 or 1024 dimensions: any other is refused before anything is
    # created (not by the first embedding call after the deploy)
    assert resolve(EmbeddingDimension="512").failed_rules == []
    refused = resolve(EmbeddingDimension="768").failed_rules
    assert any("Titan Text Embeddings V2" in r for r in refused), refused
    # another provider may take it
    assert resolve(EmbeddingDimension="768", EmbeddingProvider="voyage").failed_rules == []


def test_reserved_concurrency_is_off_unless_asked_for() -> None:
    # a new account's quota (10) refuses any reservation (Lambda keeps 100 unreserved): off by default
    assert not [k for k, f in functions(resolve()).items() if "ReservedConcurrentExecutions" in f]
    reserved = {
        k: f["ReservedConcurrentExecutions"]
        for k, f in functions(resolve(ReserveConcurrency="true")).items()
        if "ReservedConcurrentExecutions" in f
    }
    extraction = {
        k
        for k, f in functions(resolve()).items()
        if "MONGOMEM_EXTRACTION_TYPE" in f["Environment"]["Variables"]
    }
    assert {k: int(v) for k, v in reserved.items()} == {
        "ScanSessionsFunction": 2,
        "IndexSyncFunction": 1,
        **{k: 2 for k in extraction},
    }


@pytest.mark.parametrize(
    ("params", "concurrency"),
    [({"ReserveConcurrency": "true"}, 2), ({"ReserveConcurrency": "true", **CUSTOM}, 7)],
    ids=["defaults", "custom"],
)
def test_reserved_extraction_holds_its_queues_maximum_so_it_never_takes_the_apis_share(
    params: dict[str, str], concurrency: int
) -> None:
    stack = resolve(**params)
    fns = functions(stack)
    sources: dict[str, int] = {}
    for m in stack.of_type("AWS::Lambda::EventSourceMapping").values():
        sources[m["FunctionName"]] = sources.get(m["FunctionName"], 0) + int(
            m["ScalingConfig"]["MaximumConcurrency"]
        )
    assert len(sources) >= 5
    for name, total in sources.items():
        # AWS ("Configuring scaling behavior for SQS event source mappings"): a function's reserved
        # concurrency at least the sum of its SQS sources' maximum concurrency, or Lambda throttles messages
        # (each throttled batch spends a receive toward the DLQ)
        assert int(fns[name]["ReservedConcurrentExecutions"]) >= total == concurrency, name
    # and so extraction runs inside its own reservations: the API function draws on the unreserved pool,
    # which Lambda keeps at 100 or more ("Configuring reserved concurrency"), whatever the queues hold
    api = [k for k, f in fns.items() if "ReservedConcurrentExecutions" not in f]
    assert "MemoryApiFunction" in api, api
    reserved = sum(
        int(f["ReservedConcurrentExecutions"]) for f in fns.values() if "ReservedConcurrentExecutions" in f
    )
    # the quota ReserveConcurrency's description asks for: 100 unreserved + 3 + 6 x ExtractionMaxConcurrency
    assert 100 + reserved == 103 + len(sources) * concurrency


def test_scheduled_functions_are_not_retried_by_lambda() -> None:
    stack = resolve()
    configs = {c["FunctionName"]: c for c in stack.of_type("AWS::Lambda::EventInvokeConfig").values()}
    for schedule in stack.of_type("AWS::Scheduler::Schedule").values():
        target = schedule["Target"]["Arn"].removesuffix(".Arn")
        assert int(configs[target]["MaximumRetryAttempts"]) == 0, target
        assert int(configs[target]["MaximumEventAgeInSeconds"]) <= 300, target


def test_every_dlq_keeps_messages_longer_than_its_queue_and_none_keeps_them_14_days() -> None:
    stack = resolve()
    queues = stack.of_type("AWS::SQS::Queue")
    # SQS keeps a moved message's first enqueue time: a DLQ must keep messages longer than its queue
    # ("Using dead-letter queues"), or they expire there before anyone looks
    for name, queue in queues.items():
        policy = queue.get("RedrivePolicy")
        if policy:
            dlq = queues[policy["deadLetterTargetArn"].removesuffix(".Arn")]
            assert int(dlq["MessageRetentionPeriod"]) > int(queue["MessageRetentionPeriod"]), name
    # messages name snapshots and users: no queue keeps them the 14-day maximum
    assert all(int(q["MessageRetentionPeriod"]) <= 7 * 86400 for q in queues.values())


def test_the_authorizer_gives_up_before_api_gateway_stops_waiting_for_it() -> None:
    from twin.apigw import AUTHORIZER_TIMEOUT

    stack = resolve()
    # API Gateway waits 10 s for a Lambda authorizer, its cold start (init phase) included, then answers
    # 500 ("Quotas for configuring and running an HTTP API"); issue 21: the authorizer's Timeout was 10 s
    schemes = stack.props("HttpApi")["Body"]["components"]["securitySchemes"].values()
    uris = [
        s["x-amazon-apigateway-authorizer"]["authorizerUri"]
        for s in schemes
        if "x-amazon-apigateway-authorizer" in s
    ]
    [function] = [name for name in functions(stack) for uri in uris if f"/functions/{name}.Arn/" in uri]
    # so the function's own timeout leaves a cold start's seconds before that limit
    assert int(functions(stack)[function]["Timeout"]) + 3 <= AUTHORIZER_TIMEOUT, function
