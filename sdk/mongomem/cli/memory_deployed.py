"""`mongomem memory ... --stack NAME`: the project config of a deployed stack.

The config is a versioned SSM parameter (the stack's `ConfigParameterName` output):
- configure uploads a new version (validated first; not live yet);
- apply moves the `applied` label onto a version; every function reads `<parameter>:applied` through
  Powertools Parameters with the stack's max age, so no function environment is ever changed
  outside CloudFormation. `--wait` asks each function (a control invocation) until it reports the
  version's digest and ready;
- status shows the uploaded and applied versions and which one each function runs.
Provider API keys stay in the stack's provider secret (Secrets Manager); apply checks the configured
providers can find theirs before it changes anything.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any, TextIO

from mongomem.config import (
    CUSTOM_QUEUE,
    DEMO_EMBEDDERS,
    DEMO_LLMS,
    EmbeddingProviderConfig,
    LLMProviderConfig,
    ProjectConfig,
    builtin_names,
)

APPLIED_LABEL = "applied"  # mongomem.adapters.config_source.APPLIED_LABEL
PARAMETER = "/mongomem/{stack}/project-config"
# The largest SSM parameter value (advanced tier).
SSM_MAX_BYTES = 8192
CONTROL = "mongomem_control"
# What `apply --wait` adds to the stack's config max age: the longest one config read takes (SSM's own
# latency and throttled retries). A function serves its config for at most max age counted from when its
# read returned; a read that started before the label moved may still return the old version.
READ_MARGIN_SECONDS = 3.0
OPENAI_HOST = "api.openai.com"


class DeployError(Exception):
    """A failure the user can act on (mongomem.cli.memory turns it into CommandError)."""


class ConfigRefused(DeployError):
    """A function loaded the applied config and refused it (it keeps serving the previous one)."""


def canonical(data: Any) -> str:
    """The text stored in SSM: compact JSON of the parsed YAML (what functions parse and digest)."""
    return json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def needed_keys(llm: LLMProviderConfig, emb: EmbeddingProviderConfig) -> list[str]:
    """The key names the configured providers read (fields of the stack's provider secret)."""
    names: list[str] = []
    if llm.kind == "openai-compatible":
        official = OPENAI_HOST in (llm.base_url or OPENAI_HOST)
        names.append(llm.api_key_env or ("OPENAI_API_KEY" if official else ""))
    if emb.kind == "voyage":
        names.append(emb.api_key_env or "VOYAGE_API_KEY")
    elif emb.kind == "openai-compatible":
        official = OPENAI_HOST in (emb.base_url or OPENAI_HOST)
        names.append(emb.api_key_env or ("OPENAI_API_KEY" if official else ""))
    return list(dict.fromkeys(n for n in names if n))


class DeployedTarget:
    def __init__(
        self,
        stack_name: str,
        region: str | None = None,
        profile: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        session: Any = None,
        poll_seconds: float = 2.0,
    ) -> None:
        import boto3  # lazy: 127 ms

        self.stack_name = stack_name
        self.session = session or boto3.session.Session(region_name=region, profile_name=profile)
        self.region = self.session.region_name
        if not self.region:
            raise DeployError("no AWS region: pass --region or set AWS_REGION")
        self.base_url = base_url
        self.api_key = api_key
        self.poll_seconds = poll_seconds
        self._stack: dict[str, Any] | None = None

    def describe(self) -> str:
        return f"stack {self.stack_name} ({self.region})"

    def _client(self, name: str) -> Any:
        return self.session.client(name)

    # -- the stack --------------------------------------------------------------------------------
    def _described(self) -> dict[str, Any]:
        if self._stack is None:
            from botocore.exceptions import ClientError  # lazy: 6.3 ms

            try:
                stacks = self._client("cloudformation").describe_stacks(StackName=self.stack_name)["Stacks"]
            except ClientError as exc:
                raise DeployError(
                    f"stack {self.stack_name} not found in {self.region}: {aws_message(exc)}"
                ) from exc
            self._stack = stacks[0]
        return self._stack

    def outputs(self) -> dict[str, str]:
        return {o["OutputKey"]: o["OutputValue"] for o in self._described().get("Outputs", [])}

    def parameters(self) -> dict[str, str]:
        return {
            p["ParameterKey"]: p.get("ParameterValue", "") for p in self._described().get("Parameters", [])
        }

    @property
    def parameter(self) -> str:
        return self.outputs().get("ConfigParameterName") or PARAMETER.format(stack=self.stack_name)

    def functions(self) -> dict[str, str]:
        """The stack's functions, {output name without 'FunctionName': physical name}."""
        found = {
            k[: -len("FunctionName")]: v for k, v in self.outputs().items() if k.endswith("FunctionName")
        }
        if not found:
            raise DeployError(
                f"stack {self.stack_name} has no *FunctionName outputs (is it a mongomem stack?)"
            )
        return dict(sorted(found.items()))

    def api(self) -> Any:
        from mongomem.client import MemoryClient, sigv4_auth  # lazy: 198 ms

        url = self.base_url or self.outputs().get("ApiUrl")
        if not url:
            raise DeployError(f"stack {self.stack_name} has no ApiUrl output; pass --base-url")
        auth = (
            None if self.api_key else sigv4_auth(str(self.region), credentials=self.session.get_credentials())
        )
        return MemoryClient(url, timeout=15, retries=2, auth=auth, api_key=self.api_key)

    # -- configure ----------------------------------------------------------------------------------
    def configure(self, data: Any) -> str:
        from botocore.exceptions import ClientError  # lazy: 7.6 ms

        text = canonical(data)
        size = len(text.encode("utf-8"))
        if size > SSM_MAX_BYTES:
            raise DeployError(
                f"the config is {size} bytes as JSON; an SSM parameter holds at most {SSM_MAX_BYTES} "
                "(shorten the prompts or schemas)"
            )
        try:
            version = self._client("ssm").put_parameter(
                Name=self.parameter,
                Value=text,
                Type="String",
                Overwrite=True,
                Tier="Advanced",
                Description=f"mongomem project config of stack {self.stack_name}",
            )["Version"]
        except ClientError as exc:
            if _code(exc) == "ParameterMaxVersionLimitExceeded":
                # SSM keeps a parameter's last 100 versions and deletes the oldest for a new one, unless
                # the oldest carries a label - here the applied one.
                raise DeployError(
                    f"{self.parameter} holds 100 versions, the most SSM keeps, and its oldest is the applied "
                    "one: apply a newer version first (`mongomem memory apply --version N`), then configure"
                ) from exc
            raise DeployError(f"could not upload to SSM {self.parameter}: {aws_message(exc)}") from exc
        return f"SSM parameter {self.parameter} version {version} (not applied yet)"

    def versions(self) -> list[dict[str, Any]]:
        """Every uploaded version, oldest first: {version, labels, sha256, modified}."""
        from botocore.exceptions import ClientError  # lazy: 8.8 ms

        ssm = self._client("ssm")
        rows: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"Name": self.parameter}
        try:
            while True:
                page = ssm.get_parameter_history(**kwargs)
                for p in page["Parameters"]:
                    rows.append(
                        {
                            "version": int(p["Version"]),
                            "labels": list(p.get("Labels") or []),
                            "sha256": digest(p["Value"]),
                            "modified": str(p.get("LastModifiedDate")),
                            "value": p["Value"],
                        }
                    )
                if not page.get("NextToken"):
                    break
                kwargs["NextToken"] = page["NextToken"]
        except ClientError as exc:
            if _code(exc) == "ParameterNotFound":
                return []
            raise DeployError(f"could not read SSM {self.parameter}: {aws_message(exc)}") from exc
        return sorted(rows, key=lambda r: r["version"])

    def uploaded(self, version: int | None = None) -> tuple[str, int]:
        rows = self.versions()
        if not rows:
            raise DeployError(
                f"no configuration uploaded to {self.parameter}: run `mongomem memory configure --stack "
                f"{self.stack_name}` first"
            )
        if version is None:
            return rows[-1]["value"], rows[-1]["version"]
        for row in rows:
            if row["version"] == version:
                return row["value"], version
        raise DeployError(
            f"{self.parameter} has no version {version} (versions: {[r['version'] for r in rows]})"
        )

    # -- apply --------------------------------------------------------------------------------------
    def check(self, cfg: ProjectConfig) -> list[str]:
        """Why the stack could not run this config (no network call to any provider)."""
        params = self.parameters()
        llm = _effective_llm(cfg, params)
        emb = _effective_embeddings(cfg, params)
        problems: list[str] = []
        demo_ok = params.get("AllowDemoProviders", "false") == "true"
        if llm.kind in DEMO_LLMS and not demo_ok:
            problems.append(
                f"llm: {llm.kind!r} is a local demo provider; the stack refuses it (AllowDemoProviders=false)"
            )
        if emb.kind in DEMO_EMBEDDERS and not demo_ok:
            problems.append(
                f"embeddings: {emb.kind!r} is a local demo embedder; the stack refuses it (AllowDemoProviders=false)"
            )
        if llm.kind in ("openai-compatible",) and not llm.model:
            problems.append("llm: no model configured (memory.providers.llm.model)")
        wanted = needed_keys(llm, emb)
        if wanted:
            arn = params.get("ProviderSecretArn", "")
            if not arn:
                problems.append(
                    f"{', '.join(wanted)}: the stack has no provider secret (deploy with ProviderSecretArn=<secret>)"
                )
            else:
                have = self._secret_keys(arn, problems)
                problems += [
                    f"{name}: not in the provider secret {arn}"
                    for name in wanted
                    if have is not None and name not in have
                ]
        return problems

    def _secret_keys(self, arn: str, problems: list[str]) -> set[str] | None:
        from botocore.exceptions import ClientError  # lazy: 7.3 ms

        try:
            raw = self._client("secretsmanager").get_secret_value(SecretId=arn)["SecretString"]
            data = json.loads(raw)
        except ClientError as exc:
            problems.append(f"cannot read the provider secret {arn}: {aws_message(exc)}")
            return None
        except ValueError:
            problems.append(f"the provider secret {arn} is not a JSON object of API keys")
            return None
        return {k for k, v in data.items() if isinstance(v, str) and v} if isinstance(data, dict) else set()

    def apply(self, version: int, text: str, wait: bool, timeout: float, out: TextIO) -> None:
        from botocore.exceptions import ClientError  # lazy: 7.4 ms

        previous = self._applied_version()
        try:
            self._client("ssm").label_parameter_version(
                Name=self.parameter, ParameterVersion=version, Labels=[APPLIED_LABEL]
            )
        except ClientError as exc:
            raise DeployError(f"could not apply version {version}: {aws_message(exc)}") from exc
        labelled = time.monotonic()
        print(f"  {self.parameter}: version {version} is now the applied one", file=out, flush=True)
        if not wait:
            return
        want = digest(text)
        deadline = labelled + timeout
        try:
            for name, physical in self.functions().items():
                self._wait_function(name, physical, want, version, deadline, out)
        except ConfigRefused as exc:
            # a function refused the config itself (e.g. a custom type's schema changed incompatibly):
            # the applied label goes back, so that no new execution environment starts on it
            if previous is not None and previous != version:
                self._client("ssm").label_parameter_version(
                    Name=self.parameter, ParameterVersion=previous, Labels=[APPLIED_LABEL]
                )
                raise DeployError(
                    f"{exc} - not applied: version {previous} is the applied one again"
                ) from exc
            raise
        # A control invocation reaches one execution environment of a function; Lambda cannot address
        # the others. Each of them re-reads the config before serving once its max age (counted from
        # when its last read returned) has passed: after max age + one read's time from the label, no
        # environment serves the old version any more.
        max_age = float(self.parameters().get("ConfigMaxAgeSeconds") or 60)
        rest = labelled + max_age + READ_MARGIN_SECONDS - time.monotonic()
        if rest > 0:
            print(
                f"  every other execution environment re-reads it within {max_age:g}s of its last read; "
                f"waiting {rest:.0f}s",
                file=out,
                flush=True,
            )
            time.sleep(min(rest, max(0.0, deadline - time.monotonic())))

    def _wait_function(
        self, name: str, physical: str, want: str, version: int, deadline: float, out: TextIO
    ) -> None:
        last = ""
        while True:
            report = self.control(physical, refresh=True)
            config = report.get("config") or {}
            have = config.get("sha256")
            if config.get("error") and config.get("failed_sha256") == want:
                raise ConfigRefused(f"{name} refused version {version}: {config['error']}")
            if "error" in report:
                problem = report["error"]
            elif have != want:
                problem = f"still runs {_short(have)}"
            elif not report.get("ready"):
                problem = "not ready: " + "; ".join(report.get("reasons") or ["no reason given"])
            else:
                problem = ""
            line = f"  {name}: {problem or f'runs version {version}, ready'}"
            if line != last:
                print(line, file=out, flush=True)
                last = line
            if not problem:
                return
            if time.monotonic() >= deadline:
                raise DeployError(f"{name} did not run version {version} ready in time: {problem}")
            time.sleep(self.poll_seconds)

    def _applied_version(self) -> int | None:
        from botocore.exceptions import ClientError  # lazy: 6.8 ms

        try:
            found = self._client("ssm").get_parameter(Name=f"{self.parameter}:{APPLIED_LABEL}")
        except ClientError:
            return None  # nothing applied yet
        return int(found["Parameter"]["Version"])

    def control(self, physical: str, refresh: bool = False) -> dict[str, Any]:
        """Ask one function which config it runs and whether it is ready (a control invocation)."""
        from botocore.exceptions import BotoCoreError, ClientError  # lazy: 8.4 ms

        try:
            response = self._client("lambda").invoke(
                FunctionName=physical, Payload=json.dumps({CONTROL: {"refresh": refresh}}).encode()
            )
            payload = json.loads(response["Payload"].read() or b"{}")
        except (ClientError, BotoCoreError, ValueError) as exc:
            return {"error": f"cannot invoke {physical}: {exc}"}
        if response.get("FunctionError"):
            return {"error": f"{physical} failed: {payload.get('errorMessage') or payload}"}
        return dict(payload) if isinstance(payload, dict) else {"error": f"{physical} answered {payload!r}"}

    # -- status -------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        rows = self.versions()
        by_sha = {r["sha256"]: r["version"] for r in rows}
        applied = next((r["version"] for r in rows if APPLIED_LABEL in r["labels"]), None)
        functions: dict[str, Any] = {}
        for name, physical in self.functions().items():
            answer = self.control(physical)
            sha = (answer.get("config") or {}).get("sha256")
            functions[name] = {
                "function": physical,
                "version": by_sha.get(sha) if sha else None,
                "config": "template defaults" if sha is None and "error" not in answer else _short(sha),
                "ready": bool(answer.get("ready")),
                "reasons": answer.get("reasons") or ([answer["error"]] if "error" in answer else []),
            }
        report: dict[str, Any] = {
            "target": self.describe(),
            "config": {
                "parameter": self.parameter,
                "uploaded": rows[-1]["version"] if rows else None,
                "applied": applied,
                "pending_apply": bool(rows) and applied != rows[-1]["version"],
                "functions": functions,
            },
        }
        try:
            report["service"] = self._service_status()
        except DeployError as exc:
            report["service"] = {"error": str(exc)}
        report["queues"] = self._queues()
        return report

    def _service_status(self) -> dict[str, Any]:
        from mongomem.client import MemoryClientError  # lazy: 205 ms

        client = self.api()
        try:
            if self.api_key:
                return dict(client.status())
            return dict(client.request("GET", "/v1/admin/status"))
        except MemoryClientError as err:
            return {"error": f"{err.code}: {err.message}"}

    def _queues(self) -> dict[str, Any]:
        from botocore.exceptions import ClientError  # lazy: 5.6 ms

        sqs = self._client("sqs")
        outputs = self.outputs()
        attrs = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        queues: dict[str, Any] = {}
        for t in [*builtin_names(), CUSTOM_QUEUE, "extraction"]:  # extraction: ExtractionLanes=one
            prefix = t.capitalize()
            row: dict[str, Any] = {}
            for key, label in ((f"{prefix}QueueUrl", "queue"), (f"{prefix}DLQUrl", "dlq")):
                url = outputs.get(key)
                if not url:
                    continue
                try:
                    got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=attrs)["Attributes"]
                except ClientError as exc:
                    row["error"] = aws_message(exc)
                    continue
                if label == "queue":
                    row["visible"] = int(got.get("ApproximateNumberOfMessages", 0))
                    row["in_flight"] = int(got.get("ApproximateNumberOfMessagesNotVisible", 0))
                else:
                    row["dlq"] = int(got.get("ApproximateNumberOfMessages", 0))
            if row:
                queues[t] = row
        return queues


def _effective_llm(cfg: ProjectConfig, params: dict[str, str]) -> LLMProviderConfig:
    chosen = cfg.memory.providers.llm
    if chosen.kind is not None:
        return chosen
    default = LLMProviderConfig.model_validate(
        {"kind": params.get("LlmProvider") or "bedrock", "model": params.get("LlmModelId") or None}
    )
    return default.model_copy(update=chosen.model_dump(exclude_unset=True, exclude={"kind"}))


def _effective_embeddings(cfg: ProjectConfig, params: dict[str, str]) -> EmbeddingProviderConfig:
    chosen = cfg.memory.providers.embeddings
    if chosen.kind is not None:
        return chosen
    return EmbeddingProviderConfig.model_validate(
        {"kind": params.get("EmbeddingProvider") or "bedrock-titan-v2"}
    )


def _short(sha: str | None) -> str:
    return sha[:12] if sha else "template defaults"


def _code(exc: Any) -> str:
    return str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))


def aws_message(exc: Any) -> str:
    error = getattr(exc, "response", {}).get("Error", {})
    return f"{error.get('Code', type(exc).__name__)}: {error.get('Message', str(exc))}"
