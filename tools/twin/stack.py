"""The deployed twin: the stack `sam build` made, "deployed" for one stage and parameter set.

`Twin` holds what every stack shares: a moto server (SQS, SSM, Secrets Manager, CloudFormation,
CloudWatch, CloudWatch Logs, SNS), the Bedrock Runtime stand-in, the Lambda Invoke API, the
libraries a function interpreter sees, and the SAM-transformed template. `Twin.deploy(stage,
parameters)` walks that template in dependency order as CloudFormation would: queues, log groups,
alarms and the dashboard are created in moto; functions become isolated execution environments
with the environment CloudFormation would resolve for them; the HTTP API is served from the
template's own OpenAPI body; custom resources (the deploy-time migration) are invoked with the
custom-resource protocol and must answer SUCCESS; the stack (its parameters and outputs) is
registered in moto's CloudFormation for the CLI. Nothing in the functions knows it is a twin: AWS is
reached through the SDK's standard AWS_ENDPOINT_URL_* variables.

Every stack runs in one account with one Lambda concurrency quota (`Account`), SSM is reached through
its read-rate throttle (ssm.py), SQS runs on a clock the tests can move (clock.py), custom resources
get Create, Update and Delete requests as CloudFormation sends them (asynchronous invocations that must
answer), schedules invoke asynchronously: docs/aws-rules.md lists each rule and its source.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from .aoss import SearchProxy
from .apigw import ApiGateway
from .bedrock import BedrockStandIn
from .cfn import Resolver, load_template, references, sam_transform
from .clock import QueueClock
from .lambda_api import LambdaApi
from .lambda_rt import Account, FunctionSpec, InvocationError, LambdaFunction
from .layer import host_layer, runtime_libraries
from .runtimes import lifecycle_refusal
from .ssm import SsmThrottle

REGION = "eu-west-1"
ACCOUNT = "123456789012"  # moto's default account


@dataclass
class Resource:
    logical_id: str
    type: str
    properties: dict[str, Any]
    ref: Any = None
    attrs: dict[str, Any] = field(default_factory=dict)


class Twin:
    def __init__(
        self,
        root: Path,
        mongodb_uri: str,
        opensearch_url: str,
        cache: Path | None = None,
        build_dir: Path | None = None,
        concurrency: int = 1000,
        search_visibility_seconds: float = 3.0,
        missing_types: frozenset[str] = frozenset(),
    ) -> None:
        import logging

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's request log

        root = root.resolve()
        self.root = root
        self.build_dir = (build_dir or root / ".aws-sam" / "build").resolve()
        self.cache = (cache or root / ".cache" / "twin").resolve()
        self.mongodb_uri = mongodb_uri
        self.opensearch_url = opensearch_url
        built = self.build_dir / "template.yaml"
        if not built.exists():
            raise RuntimeError(f"{built} not found: run `make sam-build` first")
        self.built = load_template(built)
        self.missing_types = missing_types  # resource types the twin's region lacks (nested stacks only)
        self.sam_python = root / ".venv-sam" / "bin" / "python"
        self._transformed: dict[str, dict[str, Any]] = {}
        self._sys_paths: dict[str, list[Path]] = {}
        self._clients: dict[str, Any] = {}
        self._clients_lock = threading.Lock()
        self.account = Account(concurrency)  # the Lambda concurrency quota every stack here shares
        self.clock = QueueClock().install()
        self.moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.moto.start()
        self.moto_url = f"http://127.0.0.1:{self.moto._server.server_address[1]}"
        self.ssm = SsmThrottle(self.moto_url)  # SSM's read rate in front of moto's SSM
        self.bedrock = BedrockStandIn().start()
        # OpenSearch Serverless (a VECTORSEARCH collection: its rules, writes visible after a few seconds)
        # and OpenSearch Service domains, both answered by the real node (tools/twin/aoss.py)
        self.collection = SearchProxy(opensearch_url, visibility_seconds=search_visibility_seconds).start()
        self.domain = SearchProxy(opensearch_url, service="es").start()
        self.stacks: dict[str, DeployedStack] = {}
        self.lambda_api = LambdaApi(self.invoke)
        self.responses = _CfnResponses()

    def sys_path(self, runtime: str = "python3.13") -> list[Path]:
        """What a function of `runtime` imports besides its code: the layer (built for this machine
        first), then the runtime's own libraries (layer.py)."""
        if runtime not in self._sys_paths:
            layer_python = self.build_dir / "CoreLayer" / "python"
            self._sys_paths[runtime] = [
                host_layer(layer_python, self.cache, runtime),
                layer_python,
                runtime_libraries(self.cache, runtime),
            ]
        return self._sys_paths[runtime]

    # -- what every AWS client here uses -------------------------------------------------------------
    def aws_env(self) -> dict[str, str]:
        """Credentials, region and the endpoints (the SDK's standard variables) of the twin's AWS."""
        env = {
            "AWS_ACCESS_KEY_ID": "ASIATWINTWINTWIN0001",
            "AWS_SECRET_ACCESS_KEY": "twin-secret-access-key",
            "AWS_SESSION_TOKEN": "twin-session-token",
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": self.bedrock.url,
            "AWS_ENDPOINT_URL_LAMBDA": self.lambda_api.url,
            "AWS_ENDPOINT_URL_SSM": self.ssm.url,
        }
        for service in (
            "SQS",
            "SECRETS_MANAGER",
            "CLOUDFORMATION",
            "CLOUDWATCH",
            "CLOUDWATCH_LOGS",
            "SNS",
            "STS",
        ):
            env[f"AWS_ENDPOINT_URL_{service}"] = self.moto_url
        return env

    def client(self, service: str) -> Any:
        """A client of the twin's AWS (moto's server), one per service (clients are thread-safe)."""
        import boto3

        with self._clients_lock:
            if service not in self._clients:
                env = self.aws_env()
                self._clients[service] = boto3.session.Session(
                    aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                    aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
                    aws_session_token=env["AWS_SESSION_TOKEN"],
                    region_name=REGION,
                ).client(service, endpoint_url=self.moto_url)
            return self._clients[service]

    def transformed(self, parameters: dict[str, str]) -> dict[str, Any]:
        """The SAM transform of the built template for these parameter values (CloudFormation passes them)."""
        key = json.dumps(parameters, sort_keys=True)
        if key not in self._transformed:
            self._transformed[key] = sam_transform(self.built, self.sam_python, REGION, parameters)
        return self._transformed[key]

    # -- stacks --------------------------------------------------------------------------------------
    def deploy(
        self,
        stack_name: str,
        parameters: dict[str, str],
        logs: Path,
        mongodb_uri: str | None = None,
        timeouts: dict[str, float] | None = None,
    ) -> DeployedStack:
        """Create a stack; its MongoDB secret holds `mongodb_uri` (default: the twin's SecantusDB).

        `timeouts` replaces functions' Timeout by logical id (a test's way to make work outlast one)."""
        stack = DeployedStack(self, stack_name, parameters, logs, mongodb_uri or self.mongodb_uri)
        stack.timeouts = dict(timeouts or {})
        self.stacks[stack_name] = stack
        stack.create()
        return stack

    def invoke(self, name_or_arn: str, event: Any, invocation_type: str = "RequestResponse") -> Any:
        """Invoke a function of any deployed stack by name or ARN (the Lambda API's view)."""
        return self.function(name_or_arn).invoke(event, invocation_type)

    def function(self, name_or_arn: str) -> LambdaFunction:
        name = name_or_arn.rsplit(":function:", 1)[-1].split(":")[0]
        for stack in self.stacks.values():
            fn = stack.by_name.get(name)
            if fn is not None:
                return fn
        raise KeyError(name)

    def close(self) -> None:
        for stack in self.stacks.values():
            stack.delete()
        self.lambda_api.stop()
        self.bedrock.stop()
        self.ssm.stop()
        self.collection.stop()
        self.domain.stop()
        self.responses.stop()
        self.moto.stop()


class DeployedStack:
    def __init__(
        self, twin: Twin, name: str, parameters: dict[str, str], logs: Path, mongodb_uri: str
    ) -> None:
        self.twin = twin
        self.name = name
        self.mongodb_uri = mongodb_uri
        self.logs = logs
        self.template = twin.transformed(parameters)
        self.resources: dict[str, Resource] = {}
        self.functions: dict[str, LambdaFunction] = {}
        self.by_name: dict[str, LambdaFunction] = {}
        self.api: ApiGateway | None = None
        self.api_url = ""
        self.event_sources: list[dict[str, Any]] = []
        self.schedules: dict[str, dict[str, Any]] = {}
        self.policies: dict[str, dict[str, Any]] = {}
        self.dashboard: dict[str, Any] = {}
        self.custom: dict[str, dict[str, Any]] = {}
        self.delete_answers: dict[str, dict[str, Any]] = {}
        self.timeouts: dict[str, float] = {}
        self.resolver = Resolver(
            self.template,
            parameters,
            {
                "AWS::Region": REGION,
                "AWS::AccountId": ACCOUNT,
                "AWS::StackName": name,
                "AWS::StackId": f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/{name}/{uuid.uuid4()}",
                "AWS::Partition": "aws",
                "AWS::URLSuffix": "amazonaws.com",
            },
            self._ref,
            self._get_att,
        )
        self.outputs: dict[str, str] = {}

    # -- intrinsic callbacks -------------------------------------------------------------------------
    def _ref(self, logical: str) -> Any:
        if logical not in self.resources:
            raise KeyError(f"{logical} is referenced before it exists (or is not created for this stack)")
        return self.resources[logical].ref

    def _get_att(self, logical: str, attr: str) -> Any:
        resource = self.resources.get(logical)
        if resource is None:
            raise KeyError(f"Fn::GetAtt {logical}.{attr}: no such resource in this stack")
        if attr not in resource.attrs:
            raise KeyError(f"Fn::GetAtt {logical}.{attr}: the twin has no such attribute for {resource.type}")
        return resource.attrs[attr]

    def physical(self, logical: str, limit: int = 64) -> str:
        suffix = hashlib.sha256(f"{self.name}/{logical}".encode()).hexdigest()[:12].upper()
        head = f"{self.name}-{logical}"[: limit - 13]
        return f"{head}-{suffix}"

    # -- create --------------------------------------------------------------------------------------
    def _order(self) -> list[str]:
        return creation_order(self.template, self.resolver)

    def create(self) -> None:
        # The root template deploys in every region: it may name no type some region lacks (a nested stack
        # may, and is refused where the twin's region lacks it: Twin(missing_types=...)).
        refuse_region_limited_types(self.template, REGION_LIMITED_TYPES)
        self._seed_mongodb_secret()
        for logical in self._order():
            spec = self.template["Resources"][logical]
            props = self.resolver.resolve(spec.get("Properties") or {})
            resource = Resource(logical, spec["Type"], props)
            self.resources[logical] = resource
            self._create_resource(resource)
        for key, spec in (self.template.get("Outputs") or {}).items():
            if "Condition" in spec and not self.resolver.condition(spec["Condition"]):
                continue
            self.outputs[key] = str(self.resolver.resolve(spec["Value"]))
        self._register()

    def _create_resource(self, resource: Resource) -> None:
        kind = resource.type
        handler = getattr(self, "_create_" + re.sub(r"\W+", "_", kind), None)
        if handler is None and (kind.startswith("Custom::") or kind == "AWS::CloudFormation::CustomResource"):
            handler = self._create_custom
        if handler is None:
            raise NotImplementedError(
                f"the twin cannot create {kind} ({resource.logical_id}); teach tools/twin/stack.py"
            )
        handler(resource)

    def _seed_mongodb_secret(self) -> None:
        """The one thing a user creates by hand before deploying: the Atlas URI in Secrets Manager."""
        stage = self.resolver.parameters["Stage"]
        if self.resolver.parameters.get("MongoDbSecretArn"):
            return
        client = self.twin.client("secretsmanager")
        name = f"mongomem/{stage}/mongodb"
        secret = json.dumps({"uri": self.mongodb_uri})
        try:
            client.create_secret(Name=name, SecretString=secret)
        except client.exceptions.ResourceExistsException:
            client.put_secret_value(SecretId=name, SecretString=secret)

    def _register(self) -> None:
        """The stack as `describe-stacks` shows it: parameters and outputs (what the CLI reads).

        The API's execute-api host name resolves, in the twin's network, to the API Gateway stand-in.
        """
        outputs = dict(self.outputs)
        if re.fullmatch(
            r"https://[a-z0-9]+\.execute-api\.[a-z0-9-]+\.amazonaws\.com", outputs.get("ApiUrl", "")
        ):
            outputs["ApiUrl"] = self.api_url
        params = {
            k: ",".join(v) if isinstance(v, list) else str(v) for k, v in self.resolver.parameters.items()
        }
        body = {
            "Parameters": {k: {"Type": "String", "Default": v} for k, v in params.items()},
            "Resources": {"Deployed": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
            "Outputs": {k: {"Value": v} for k, v in outputs.items()},
        }
        self.twin.client("cloudformation").create_stack(
            StackName=self.name,
            TemplateBody=json.dumps(body),
            Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in params.items()],
        )

    # -- resource types ------------------------------------------------------------------------------
    def _create_AWS_CloudFormation_Stack(self, r: Resource) -> None:
        """A nested stack (what SAM makes of an AWS::Serverless::Application): its template, from the built
        folder (`sam package` would upload it), created in dependency order; its outputs become the
        parent's `Outputs.<Name>` attributes. Its resources join this stack's (their logical ids are
        distinct), so the tests see them as the stack's."""
        url = str(r.properties["TemplateURL"])
        child = load_template(self.twin.build_dir / url.removeprefix(PACKAGED_PREFIX))
        refuse_region_limited_types(child, self.twin.missing_types)
        params = {k: _cfn_string(v) for k, v in (r.properties.get("Parameters") or {}).items()}
        name = f"{self.name}-{r.logical_id}-{hashlib.sha256(r.logical_id.encode()).hexdigest()[:12].upper()}"
        own: dict[str, Resource] = {}

        def ref(logical: str) -> Any:
            if logical not in own:
                raise KeyError(f"{logical} is referenced before it exists in nested stack {r.logical_id}")
            return own[logical].ref

        def get_att(logical: str, attr: str) -> Any:
            return own[logical].attrs[attr]

        pseudo = {**self.resolver.pseudo, "AWS::StackName": name}
        pseudo["AWS::StackId"] = f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/{name}/{uuid.uuid4()}"
        resolver = Resolver(child, params, pseudo, ref, get_att)
        for logical in creation_order(child, resolver):
            spec = child["Resources"][logical]
            resource = Resource(logical, spec["Type"], resolver.resolve(spec.get("Properties") or {}))
            if logical in self.resources:
                raise RuntimeError(f"nested stack {r.logical_id}: {logical} is also a resource of the parent")
            own[logical] = self.resources[logical] = resource
            self._create_resource(resource)
        r.ref = pseudo["AWS::StackId"]
        r.attrs = {
            f"Outputs.{k}": _cfn_string(resolver.resolve(v["Value"]))
            for k, v in (child.get("Outputs") or {}).items()
            if "Condition" not in v or resolver.condition(v["Condition"])
        }

    def _create_AWS_SQS_Queue(self, r: Resource) -> None:
        p = r.properties
        name = p.get("QueueName") or self.physical(r.logical_id, 80)
        attrs = {
            k: str(p[k])
            for k in (
                "VisibilityTimeout",
                "MessageRetentionPeriod",
                "DelaySeconds",
                "ReceiveMessageWaitTimeSeconds",
            )
            if k in p
        }
        if "RedrivePolicy" in p:
            attrs["RedrivePolicy"] = json.dumps(p["RedrivePolicy"])
        sqs = self.twin.client("sqs")
        url = sqs.create_queue(QueueName=name, Attributes=attrs)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        # functions address queues by the URL CloudFormation gives them; moto finds them by name
        aws_url = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{name}"
        r.ref, r.attrs = aws_url, {"Arn": arn, "QueueName": name, "QueueUrl": aws_url}

    def _create_AWS_Logs_LogGroup(self, r: Resource) -> None:
        name = r.properties.get("LogGroupName") or self.physical(r.logical_id, 512)
        logs = self.twin.client("logs")
        logs.create_log_group(logGroupName=name)
        if "RetentionInDays" in r.properties:
            logs.put_retention_policy(logGroupName=name, retentionInDays=int(r.properties["RetentionInDays"]))
        r.ref, r.attrs = name, {"Arn": f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:{name}:*"}

    def _create_AWS_SNS_Topic(self, r: Resource) -> None:
        arn = self.twin.client("sns").create_topic(Name=self.physical(r.logical_id, 256))["TopicArn"]
        r.ref, r.attrs = arn, {"TopicArn": arn, "TopicName": arn.rsplit(":", 1)[-1]}

    def _create_AWS_IAM_Role(self, r: Resource) -> None:
        name = self.physical(r.logical_id)
        r.ref = name
        r.attrs = {"Arn": f"arn:aws:iam::{ACCOUNT}:role/{name}", "RoleId": f"AROA{name[:16].upper()}"}
        self.policies[r.logical_id] = r.properties

    def _create_AWS_IAM_ManagedPolicy(self, r: Resource) -> None:
        name = self.physical(r.logical_id)
        r.ref = f"arn:aws:iam::{ACCOUNT}:policy/{name}"
        r.attrs = {"PolicyArn": r.ref}
        self.policies[r.logical_id] = r.properties

    def _create_AWS_Lambda_LayerVersion(self, r: Resource) -> None:
        r.ref = f"arn:aws:lambda:{REGION}:{ACCOUNT}:layer:{r.properties.get('LayerName', r.logical_id)}:1"

    def _create_AWS_Lambda_Function(self, r: Resource) -> None:
        p = r.properties
        name = p.get("FunctionName") or self.physical(r.logical_id)
        arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}"
        task_root = self.twin.build_dir / p["Code"]["S3Key"]
        runtime = str(p.get("Runtime") or "")
        lifecycle_refusal(runtime)  # a runtime whose function creation Lambda blocks fails the deploy
        env = {k: _cfn_string(v) for k, v in ((p.get("Environment") or {}).get("Variables") or {}).items()}
        # The template reaches a domain over HTTPS (its endpoint is a bare host); the stand-in speaks HTTP.
        env = {k: self._domain_over_http(v) for k, v in env.items()}
        spec = FunctionSpec(
            logical_id=r.logical_id,
            name=name,
            arn=arn,
            handler=p["Handler"],
            timeout=self.timeouts.get(r.logical_id, float(p.get("Timeout", 3))),
            memory=int(p.get("MemorySize", 128)),
            task_root=task_root,
            sys_path=list(self.twin.sys_path(runtime)),
            environment=env,
            log_path=self.logs / f"{r.logical_id}.log",
            aws_env=self.twin.aws_env(),
            runtime=runtime,
            reserved=int(p["ReservedConcurrentExecutions"]) if "ReservedConcurrentExecutions" in p else None,
        )
        for var in ("AWS_ENDPOINT_URL_LAMBDA", "AWS_ENDPOINT_URL_CLOUDFORMATION"):
            spec.aws_env.pop(var, None)  # functions call neither; keep their view of AWS minimal
        try:
            function = LambdaFunction(spec, self.twin.account)
        except InvocationError as exc:  # CloudFormation's CREATE_FAILED, with Lambda's message
            raise RuntimeError(f"{r.logical_id}: {exc.payload['errorMessage']}") from exc
        self.functions[r.logical_id] = function
        self.by_name[name] = function
        r.ref, r.attrs = name, {"Arn": arn}

    def _domain_over_http(self, value: str) -> str:
        """The template reaches a domain over HTTPS (its endpoint is a bare host); the stand-in speaks HTTP."""
        domain = "https://" + self.twin.domain.url.removeprefix("http://")
        return self.twin.domain.url if value == domain else value

    def _create_AWS_Lambda_EventInvokeConfig(self, r: Resource) -> None:
        """Retries and maximum event age of the function's asynchronous invocations."""
        p = r.properties
        spec = self.by_name[str(p["FunctionName"])].spec
        spec.async_retries = int(p.get("MaximumRetryAttempts", 2))
        spec.async_max_age = int(p.get("MaximumEventAgeInSeconds", 6 * 3600))
        r.ref = f"{p['FunctionName']}:{p.get('Qualifier', '$LATEST')}"

    def _create_AWS_Lambda_Permission(self, r: Resource) -> None:
        r.ref = r.logical_id

    def _create_AWS_Lambda_EventSourceMapping(self, r: Resource) -> None:
        self.event_sources.append(r.properties)
        r.ref = str(uuid.uuid4())

    def _create_AWS_ApiGatewayV2_Api(self, r: Resource) -> None:
        api_id = hashlib.sha256(self.name.encode()).hexdigest()[:10]
        r.ref = api_id
        self.api = ApiGateway(r.properties["Body"], self.twin.invoke, api_id, ACCOUNT, REGION)
        self.api_url = self.api.serve()
        r.attrs = {"ApiEndpoint": self.api_url}

    def _create_AWS_ApiGatewayV2_Stage(self, r: Resource) -> None:
        self.api_stage = r.properties
        r.ref = r.properties.get("StageName", "$default")

    def _create_AWS_Scheduler_Schedule(self, r: Resource) -> None:
        self.schedules[r.logical_id] = r.properties
        r.ref = r.properties.get("Name") or self.physical(r.logical_id)
        r.attrs = {"Arn": f"arn:aws:scheduler:{REGION}:{ACCOUNT}:schedule/default/{r.ref}"}

    def _create_AWS_CloudWatch_Alarm(self, r: Resource) -> None:
        p = dict(r.properties)
        name = p.pop("AlarmName", None) or self.physical(r.logical_id, 255)
        self.twin.client("cloudwatch").put_metric_alarm(AlarmName=name, **p)
        r.ref, r.attrs = name, {"Arn": f"arn:aws:cloudwatch:{REGION}:{ACCOUNT}:alarm:{name}"}

    def _create_AWS_CloudWatch_Dashboard(self, r: Resource) -> None:
        name = r.properties.get("DashboardName") or self.physical(r.logical_id)
        body = r.properties["DashboardBody"]
        self.dashboard = json.loads(body)  # a dashboard body CloudWatch would refuse fails the deploy here
        self.twin.client("cloudwatch").put_dashboard(DashboardName=name, DashboardBody=body)
        r.ref = name

    def _create_AWS_OpenSearchServerless_SecurityPolicy(self, r: Resource) -> None:
        json.loads(r.properties["Policy"])
        r.ref = r.properties["Name"]
        self.policies[r.logical_id] = r.properties

    def _create_AWS_OpenSearchServerless_AccessPolicy(self, r: Resource) -> None:
        self._create_AWS_OpenSearchServerless_SecurityPolicy(r)

    def _create_AWS_OpenSearchServerless_Collection(self, r: Resource) -> None:
        collection = hashlib.sha256(f"{self.name}/{r.logical_id}".encode()).hexdigest()[:20]
        r.ref = collection
        if r.properties.get("Type") != "VECTORSEARCH":
            raise NotImplementedError("the twin's collection stand-in is a VECTORSEARCH collection")
        # The collection's endpoint is the Serverless stand-in in front of the real node: SigV4 for aoss,
        # a vector search collection's rules, writes searchable after a delay.
        r.attrs = {
            "Arn": f"arn:aws:aoss:{REGION}:{ACCOUNT}:collection/{collection}",
            "CollectionEndpoint": self.twin.collection.url,
            "Id": collection,
        }

    def _create_AWS_OpenSearchService_Domain(self, r: Resource) -> None:
        name = r.properties["DomainName"]
        if not re.fullmatch(r"[a-z][a-z0-9-]{2,27}", name):
            raise RuntimeError(
                f"{r.logical_id}: domain name {name!r} is not 3-28 lowercase letters, digits, hyphens"
            )
        json.dumps(r.properties["AccessPolicies"])
        self.policies[r.logical_id] = r.properties
        # A domain's endpoint is a host name (DomainEndpoint has no scheme): the stand-in's, SigV4 for es
        r.ref = name
        r.attrs = {
            "Arn": f"arn:aws:es:{REGION}:{ACCOUNT}:domain/{name}",
            "DomainArn": f"arn:aws:es:{REGION}:{ACCOUNT}:domain/{name}",
            "DomainEndpoint": self.twin.domain.url.removeprefix("http://"),
            "Id": name,
        }

    def _create_custom(self, r: Resource) -> None:
        answer = self.custom_request(r.logical_id, "Create")
        if answer.get("Status") != "SUCCESS":
            raise RuntimeError(f"custom resource {r.logical_id} failed: {answer.get('Reason')}")
        self.custom[r.logical_id] = answer
        r.ref = answer.get("PhysicalResourceId")
        r.attrs = dict(answer.get("Data") or {})

    def custom_request(
        self, logical: str, request_type: str, properties: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """One custom-resource request, as CloudFormation sends it, and the function's answer.

        CloudFormation invokes the ServiceToken function asynchronously (so Lambda retries a failed
        invocation twice) and waits for a PUT to the pre-signed ResponseURL until the resource's
        ServiceTimeout (3600 s by default). The twin cannot wait an hour: once the invocations have ended
        without a response, nothing else would ever answer, so that is the stack stuck until the
        timeout, and a RuntimeError here.
        """
        resource = self.resources[logical]
        props = properties if properties is not None else resource.properties
        token = uuid.uuid4().hex
        event: dict[str, Any] = {
            "RequestType": request_type,
            "ServiceToken": props["ServiceToken"],
            "ResponseURL": self.twin.responses.url(token),
            "StackId": self.resolver.pseudo["AWS::StackId"],
            "RequestId": str(uuid.uuid4()),
            "LogicalResourceId": logical,
            "ResourceType": resource.type,
            "ResourceProperties": {
                k: self._domain_over_http(v) if isinstance(v, str) else v for k, v in props.items()
            },
        }
        if request_type in ("Update", "Delete"):
            event["PhysicalResourceId"] = resource.ref or f"{logical}-{token[:8]}"
        if request_type == "Update":
            event["OldResourceProperties"] = resource.properties
        failure = ""
        try:
            self.twin.invoke(props["ServiceToken"], event, "Event")
        except InvocationError as exc:
            failure = f" (the function failed: {exc})"
        answer = self.twin.responses.get(token, timeout=5)
        if answer is None:
            raise RuntimeError(
                f"custom resource {logical} never answered its {request_type} request{failure}: "
                "CloudFormation would wait for the resource's ServiceTimeout (an hour by default)"
            )
        if request_type != "Delete" and answer.get("Status") == "SUCCESS":
            resource.properties = props
        return answer

    # -- running it ----------------------------------------------------------------------------------
    def invoke(self, logical: str, event: Any) -> Any:
        return self.functions[logical].invoke(event)

    def schedule(self, logical: str, event: dict[str, Any]) -> Any:
        """What EventBridge Scheduler does at a tick: invoke the schedule's target with its event."""
        target = self.schedules[logical]["Target"]["Arn"]
        return self.twin.invoke(target, event, "Event")  # Scheduler invokes Lambda asynchronously

    def drain_queues(self, rounds: int = 20) -> int:
        """Deliver queued messages like Lambda's SQS event source mappings (batch size, partial failures)."""
        sqs = self.twin.client("sqs")
        delivered = 0
        for _ in range(rounds):
            moved = 0
            for mapping in self.event_sources:
                queue = _queue_url(self, mapping["EventSourceArn"])
                got = sqs.receive_message(
                    QueueUrl=queue,
                    MaxNumberOfMessages=min(int(mapping.get("BatchSize", 10)), 10),
                    AttributeNames=["All"],
                    MessageAttributeNames=["All"],
                ).get("Messages", [])
                if not got:
                    continue
                event = {"Records": [_sqs_record(m, mapping["EventSourceArn"]) for m in got]}
                try:
                    answer = self.twin.invoke(mapping["FunctionName"], event)
                except InvocationError:
                    continue  # the whole batch becomes visible again after its visibility timeout
                failed = set()
                if "ReportBatchItemFailures" in (mapping.get("FunctionResponseTypes") or []):
                    failed = _batch_item_failures(answer, [m["MessageId"] for m in got])
                for message in got:
                    if message["MessageId"] not in failed:
                        sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])
                        delivered += 1
                        moved += 1
            if not moved:
                break
        return delivered

    def log_text(self, logical: str) -> str:
        path = self.logs / f"{logical}.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def emf(self) -> list[dict[str, Any]]:
        """Every EMF metric document the functions printed (what CloudWatch would turn into metrics)."""
        docs = []
        for path in self.logs.glob("*.log"):
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith('{"_aws"'):
                    try:
                        docs.append(json.loads(line))
                    except ValueError:
                        pass
        return docs

    def publish_metrics(self) -> int:
        """What CloudWatch would hold for this stack so far, put into moto's CloudWatch: every EMF document
        the functions printed (CloudWatch turns those log lines into metrics, one per dimension set), each
        function's Invocations, Errors and Throttles (AWS/Lambda), each queue's visible messages (AWS/SQS).
        Returns the data points put."""
        cloudwatch, sqs = self.twin.client("cloudwatch"), self.twin.client("sqs")
        put = 0

        def one(namespace: str, name: str, dims: dict[str, str], value: float, unit: str = "Count") -> None:
            nonlocal put
            dimensions = [{"Name": k, "Value": v} for k, v in dims.items()]
            datum = {"MetricName": name, "Dimensions": dimensions, "Value": value, "Unit": unit}
            cloudwatch.put_metric_data(Namespace=namespace, MetricData=[datum])
            put += 1

        for doc in self.emf():
            for directive in doc["_aws"]["CloudWatchMetrics"]:
                for dims in directive["Dimensions"]:
                    for metric in directive["Metrics"]:
                        values = doc.get(metric["Name"])
                        for value in values if isinstance(values, list) else [values]:
                            labels = {d: str(doc[d]) for d in dims}
                            one(
                                directive["Namespace"],
                                metric["Name"],
                                labels,
                                float(value),
                                metric.get("Unit", "None"),
                            )
        for fn in self.functions.values():
            for name, count in fn.counts.items():
                one("AWS/Lambda", name, {"FunctionName": fn.spec.name}, float(count))
        for r in self.resources.values():
            if r.type == "AWS::SQS::Queue":
                attrs = sqs.get_queue_attributes(
                    QueueUrl=r.ref, AttributeNames=["ApproximateNumberOfMessages"]
                )
                visible = float(attrs["Attributes"]["ApproximateNumberOfMessages"])
                one(
                    "AWS/SQS",
                    "ApproximateNumberOfMessagesVisible",
                    {"QueueName": r.attrs["QueueName"]},
                    visible,
                )
        return put

    def delete(self) -> None:
        """Delete the stack: custom resources get their Delete request (it must be answered), then
        everything else goes."""
        for logical, resource in self.resources.items():
            if logical in self.custom and resource.type.startswith("Custom::"):
                try:
                    self.delete_answers[logical] = self.custom_request(logical, "Delete")
                except RuntimeError as exc:
                    self.delete_answers[logical] = {"Status": "NO ANSWER", "Reason": str(exc)}
        for env in self.functions.values():
            env.close()
        if self.api is not None:
            self.api.stop()


def _batch_item_failures(answer: Any, batch: list[str]) -> set[str]:
    """The messages to keep, as Lambda reads a partial-batch response ("Handling errors for an SQS event
    source"): an item failure that is empty or names no message of the batch fails the whole batch."""
    items = (answer or {}).get("batchItemFailures") if isinstance(answer, dict) else None
    failed: set[str] = set()
    for item in items or []:
        ident = item.get("itemIdentifier") if isinstance(item, dict) else None
        if not ident or ident not in batch:
            return set(batch)
        failed.add(str(ident))
    return failed


# `sam package` uploads a nested template and puts its S3 URL in TemplateURL; the twin's translate.py
# writes this prefix before the built template's relative path.
PACKAGED_PREFIX = "https://twin.s3.amazonaws.com/"

# Resource types CloudFormation lacks in some commercial regions that have every other service the stack
# uses (Lambda, HTTP APIs, SQS, OpenSearch Service, Bedrock): the CloudFormation resource specification of
# il-central-1, me-central-1, ap-southeast-5, mx-central-1, ... has no OpenSearch Serverless type.
# CloudFormation validates a template's types before it evaluates conditions, so a root template that
# names one cannot be deployed there, whatever its parameters (docs/aws-rules.md).
REGION_LIMITED_TYPES = frozenset(
    {
        "AWS::OpenSearchServerless::Collection",
        "AWS::OpenSearchServerless::SecurityPolicy",
        "AWS::OpenSearchServerless::AccessPolicy",
        "AWS::OpenSearchServerless::VpcEndpoint",
        "AWS::OpenSearchServerless::LifecyclePolicy",
        "AWS::OpenSearchServerless::SecurityConfig",
        "AWS::OpenSearchServerless::Index",
    }
)


def refuse_region_limited_types(template: dict[str, Any], missing: frozenset[str]) -> None:
    """What CloudFormation answers, before conditions, to a template naming a type its region lacks."""
    for logical, spec in (template.get("Resources") or {}).items():
        if spec.get("Type") in missing:
            raise RuntimeError(
                f"Template format error: Unrecognized resource types: [{spec['Type']}] ({logical}; "
                "the twin's region lacks it, as il-central-1 does)"
            )


def creation_order(template: dict[str, Any], resolver: Resolver) -> list[str]:
    """The active resources, each after those it names (Ref, GetAtt, Sub, DependsOn)."""
    all_resources = template["Resources"]
    active = [k for k, v in all_resources.items() if resolver.active(v)]
    deps: dict[str, set[str]] = {}
    for logical in active:
        spec = all_resources[logical]
        wanted = references(spec.get("Properties") or {})
        depends = spec.get("DependsOn") or []
        wanted |= set([depends] if isinstance(depends, str) else depends)
        deps[logical] = {d for d in wanted if d in all_resources and d in active and d != logical}
    ordered: list[str] = []
    done: set[str] = set()
    while len(ordered) < len(active):
        ready = sorted(k for k in active if k not in done and deps[k] <= done)
        if not ready:
            stuck = sorted(set(active) - done)
            raise RuntimeError(f"circular dependencies among {stuck}")
        for logical in ready:
            ordered.append(logical)
            done.add(logical)
    return ordered


def _cfn_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _queue_url(stack: DeployedStack, arn: str) -> str:
    name = arn.rsplit(":", 1)[-1]
    return f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{name}"


def _sqs_record(message: dict[str, Any], arn: str) -> dict[str, Any]:
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": message.get("Attributes") or {},
        "messageAttributes": message.get("MessageAttributes") or {},
        "md5OfBody": message.get("MD5OfBody"),
        "eventSource": "aws:sqs",
        "eventSourceARN": arn,
        "awsRegion": REGION,
    }


class _CfnResponses:
    """The pre-signed ResponseURL of custom-resource requests: receives their PUT."""

    def __init__(self) -> None:
        self._answers: dict[str, dict[str, Any]] = {}
        self._cond = threading.Condition()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_PUT(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with outer._cond:
                    outer._answers[self.path.rsplit("/", 1)[-1]] = json.loads(body)
                    outer._cond.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, name="cfn-responses", daemon=True).start()

    def url(self, token: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/cfn-response/{token}"

    def get(self, token: str, timeout: float) -> dict[str, Any] | None:
        with self._cond:
            self._cond.wait_for(lambda: token in self._answers, timeout=timeout)
            return self._answers.get(token)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def samconfig(root: Path, environment: str) -> tuple[str, dict[str, str]]:
    """(stack name, parameters) of a samconfig.toml environment, as `sam deploy --config-env` uses them."""
    import shlex
    import tomllib

    config = tomllib.loads((root / "samconfig.toml").read_text(encoding="utf-8"))
    env = config[environment]
    stack = env["global"]["parameters"]["stack_name"]
    overrides = env["deploy"]["parameters"].get("parameter_overrides", "")
    params = dict(item.split("=", 1) for item in shlex.split(overrides))
    return stack, params
