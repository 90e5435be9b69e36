"""`mongomem memory configure | apply | status`: the memory configuration of a stack, local or deployed.

- configure: validate project-config.yaml and upload it (SSM Parameter Store for a deployed stack;
  `<data dir>/project-config.yaml` for the local stack, which `mongomem dev` starts with).
- apply: push the uploaded config into the functions and wait (--wait) until the service is ready.
  It refuses, before changing anything, a config whose LLM provider has no usable key here.
- status: the applied config, provider readiness, queue and DLQ depths, the promotion and
  extraction backlog.

A deployed stack is found by name (--stack, or MONGOMEM_STACK); otherwise the local stack at
http://127.0.0.1:3000 is used. A running local stack takes a new config through `LocalControl`,
which `mongomem dev` runs next to the stack: apply drops a request in the data dir, the stack
reloads its settings and acknowledges, and apply then waits for GET /v1/status to say ready.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mongomem.client import MemoryClient, MemoryClientError
from mongomem.config import ConfigError, MemoryType, ProjectConfig, environment, parse_project_config
from mongomem.local.queue import local_queue_factory

if TYPE_CHECKING:
    from mongomem.local.stack import LocalStack
    from mongomem.local.worker import Every

DEFAULT_URL = "http://127.0.0.1:3000"
DEFAULT_DATA_DIR = ".mongomem"
STAGED = "project-config.yaml"
REQUEST = "config-apply.json"
APPLIED = "config-applied.json"
STACK_FILE = "stack.json"  # written by LocalStack.start (mongomem.local.stack.STACK_FILE)
PARAMETER = "/mongomem/{stack}/project-config"
# Lambda's limit on all of a function's environment variables together.
LAMBDA_ENV_LIMIT = 4096
OPENAI_HOST = "api.openai.com"


class CommandError(Exception):
    """A failure the user can act on; `code` is the process exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


# -- config and provider checks -------------------------------------------------------------------


def parse_config_text(text: str, source: str) -> ProjectConfig:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid configuration in {source}: not valid YAML ({exc})") from exc
    return parse_project_config(data, source)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def key_variables(cfg: ProjectConfig) -> list[str]:
    """The environment variables that hold the configured providers' API keys."""
    llm, emb = cfg.memory.providers.llm, cfg.memory.providers.embeddings
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


def provider_problems(cfg: ProjectConfig, environ: Mapping[str, str]) -> list[str]:
    """Why the configured providers could not work with these variables (no network calls)."""
    from mongomem.providers.factory import embedder_from_config, llm_from_config

    problems = []
    llm_cfg, emb_cfg = cfg.memory.providers.llm, cfg.memory.providers.embeddings
    try:
        ok, reason = llm_from_config(llm_cfg, environ).ready()
        if not ok:
            problems.append(f"llm ({llm_cfg.kind}): {reason}")
    except ConfigError as exc:
        problems.append(str(exc))
    # Key-based embedders only: the local model's readiness means loading it, which is not a key check.
    if emb_cfg.kind in ("voyage", "openai-compatible"):
        try:
            ok, reason = embedder_from_config(emb_cfg, environ).ready()
            if not ok:
                problems.append(f"embeddings ({emb_cfg.kind}): {reason}")
        except ConfigError as exc:
            problems.append(str(exc))
    return problems


def _check_providers(cfg: ProjectConfig, environ: Mapping[str, str]) -> dict[str, str]:
    """The key variables to hand to the service; CommandError naming each unusable provider."""
    problems = provider_problems(cfg, environ)
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise CommandError(f"not applied (nothing was changed): the providers are not usable:\n{lines}")
    return {name: environ[name] for name in key_variables(cfg) if environ.get(name)}


def _enabled(cfg: ProjectConfig) -> list[str]:
    return [t.value for t in cfg.memory.extraction.enabled]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# -- waiting for the service --------------------------------------------------------------------------


def wait_until_ready(
    client: MemoryClient,
    enabled: list[str],
    timeout: float,
    out: TextIO,
    interval: float = 1.0,
) -> dict[str, Any]:
    """Poll GET /v1/status until ready with the expected extraction types; prints each change."""
    deadline = time.monotonic() + timeout
    last = ""
    while True:
        try:
            status = client.status()
            problem = ""
            if status.get("extraction", {}).get("enabled") != enabled:
                problem = f"still serving extraction {status.get('extraction', {}).get('enabled')}"
            elif not status.get("ready"):
                problem = "; ".join(status.get("reasons") or ["not ready"])
        except MemoryClientError as err:
            status, problem = {}, f"status unavailable ({err.code}: {err.message})"
        line = f"  service: {problem or 'ready'}"
        if line != last:
            print(line, file=out, flush=True)
            last = line
        if not problem:
            return status
        if time.monotonic() >= deadline:
            raise CommandError(f"the memory service did not become ready within {timeout:g}s: {problem}")
        time.sleep(interval)


# -- the local stack ------------------------------------------------------------------------------


def _write_json(path: Path, value: Any, private: bool = False) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(value, fh, indent=2)
    os.replace(tmp, path)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


class LocalTarget:
    def __init__(
        self,
        data_dir: Path,
        base_url: str | None = None,
        mongodb_uri: str | None = None,
        api_key: str | None = None,
        timeout: float = 10,
    ) -> None:
        self.data_dir = data_dir
        self.running = _read_json(data_dir / STACK_FILE) or {}
        self.base_url = base_url or self.running.get("api") or DEFAULT_URL
        self.mongodb_uri = mongodb_uri or self.running.get("mongodb_uri")
        self.client = MemoryClient(self.base_url, timeout=timeout, retries=1, backoff=0.2, api_key=api_key)

    def describe(self) -> str:
        return f"local stack {self.base_url} (data in {self.data_dir})"

    def configure(self, text: str, cfg: ProjectConfig) -> str:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        (self.data_dir / STAGED).write_text(text, encoding="utf-8")
        return str(self.data_dir / STAGED)

    def uploaded(self) -> tuple[str, str]:
        path = self.data_dir / STAGED
        if not path.exists():
            raise CommandError(f"no configuration uploaded to {path}: run `mongomem memory configure` first")
        return path.read_text(encoding="utf-8"), str(path)

    def apply(
        self, cfg: ProjectConfig, text: str, secrets: dict[str, str], wait: bool, timeout: float, out: TextIO
    ) -> None:
        try:
            self.client.status()
            running = True
        except MemoryClientError:
            running = False
        if not running and wait:
            raise CommandError(
                f"not applied (nothing was changed): no local stack answers at {self.base_url}; "
                "start it with `make dev` (or `mongomem dev`)"
            )
        digest = sha256(text)
        _write_json(
            self.data_dir / REQUEST,
            {"sha256": digest, "requested_at": _now(), "secrets": secrets},
            private=True,
        )
        if not running:
            print(
                f"the local stack is not running; `mongomem dev --data-dir {self.data_dir}` starts with it",
                file=out,
            )
            return
        print(f"requested: the local stack reloads with config {digest[:12]}", file=out, flush=True)
        if not wait:
            return
        deadline = time.monotonic() + timeout
        while True:
            ack = _read_json(self.data_dir / APPLIED) or {}
            if ack.get("sha256") == digest:
                if ack.get("error"):
                    raise CommandError(f"the local stack refused the config: {ack['error']}")
                print(
                    f"  local stack: config {digest[:12]} loaded at {ack.get('applied_at')}",
                    file=out,
                    flush=True,
                )
                break
            if time.monotonic() >= deadline:
                raise CommandError(
                    f"the local stack at {self.base_url} did not load the config within {timeout:g}s; is it "
                    f"`mongomem dev --data-dir {self.data_dir}` of this version?"
                )
            time.sleep(0.2)
        wait_until_ready(self.client, _enabled(cfg), max(1.0, deadline - time.monotonic()), out, interval=0.3)

    def status(self) -> dict[str, Any]:
        report: dict[str, Any] = {"target": self.describe()}
        ack = _read_json(self.data_dir / APPLIED)
        staged = self.data_dir / STAGED
        uploaded = sha256(staged.read_text(encoding="utf-8")) if staged.exists() else None
        report["config"] = {
            "applied": {k: v for k, v in (ack or {}).items() if k != "secrets"} or None,
            "uploaded_sha256": uploaded,
            "pending_apply": bool(uploaded and (ack or {}).get("sha256") != uploaded),
        }
        report["service"] = _service_status(self.client)
        report["queues"] = self._queues()
        report["backlog"] = self._backlog()
        return report

    def _backlog(self) -> dict[str, Any]:
        """Every tenant's backlog, read from the stack's MongoDB (the API shows a caller only its own)."""
        uri = self.mongodb_uri
        if not uri:
            return {"error": "the local stack's MongoDB address is unknown (is `mongomem dev` running?)"}
        from pymongo import MongoClient
        from pymongo.errors import PyMongoError

        from mongomem.adapters.mongo import MongoStore
        from mongomem.status import backlog

        client: MongoClient[dict[str, Any]] = MongoClient(uri, serverSelectionTimeoutMS=3000, tz_aware=True)
        try:
            figures = backlog(MongoStore(client, self.running.get("db_name") or "mongomem"), None)
            return {"scope": "all tenants", **figures}
        except PyMongoError as exc:
            return {"error": f"cannot read the backlog at {uri}: {type(exc).__name__}"}
        finally:
            client.close()

    def _queues(self) -> dict[str, Any]:
        uri = self.mongodb_uri
        if not uri:
            return {"error": "the local stack's MongoDB address is unknown (is `mongomem dev` running?)"}
        from pymongo import MongoClient
        from pymongo.errors import PyMongoError

        db_name = self.running.get("db_name") or "mongomem"
        client: MongoClient[dict[str, Any]] = MongoClient(uri, serverSelectionTimeoutMS=3000)
        try:
            coll = client[db_name]["local_queue"]
            now = datetime.now(UTC)
            queues: dict[str, Any] = {}
            for t in MemoryType:
                name = f"extract-{t.value}"
                queues[t.value] = {
                    "visible": coll.count_documents({"queue": name, "visible_at": {"$lte": now}}),
                    "in_flight": coll.count_documents({"queue": name, "visible_at": {"$gt": now}}),
                    "dlq": coll.count_documents({"queue": name + "-dlq"}),
                }
            return queues
        except PyMongoError as exc:
            return {"error": f"cannot read the local queues at {uri}: {type(exc).__name__}"}
        finally:
            client.close()


class LocalControl:
    """Runs beside a LocalStack (`mongomem dev`): applies the configs that `apply` requests."""

    def __init__(self, stack: LocalStack, data_dir: Path | None = None, interval: float = 0.5) -> None:
        if data_dir is None and stack.data_dir is None:
            raise ValueError("LocalControl needs a data dir")
        self.stack = stack
        self.data_dir = Path(data_dir or stack.data_dir)  # type: ignore[arg-type]
        self.interval = interval
        self.applied_sha: str | None = None
        self.thread: Every | None = None

    def start(self) -> LocalControl:
        from mongomem.local.worker import Every

        settings = self.stack.settings
        assert settings is not None, "start the stack first"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        source = self.stack.config_file
        text = source.read_text(encoding="utf-8") if source and source.exists() else ""
        self.applied_sha = sha256(text)
        self._ack(
            self.applied_sha,
            source=str(source) if source else "(defaults)",
            enabled=_settings_enabled(settings),
        )
        self.check()
        self.thread = Every("config-control", self.interval, self.check).start()
        return self

    def stop(self) -> None:
        if self.thread is not None:
            self.thread.stop()

    def check(self) -> None:
        request = _read_json(self.data_dir / REQUEST)
        if not request or request.get("sha256") == self.applied_sha:
            return
        staged = self.data_dir / STAGED
        digest = str(request.get("sha256"))
        try:
            text = staged.read_text(encoding="utf-8")
            if sha256(text) != digest:
                raise ConfigError(
                    f"{staged} changed after apply was requested; run `mongomem memory apply` again"
                )
            cfg = parse_config_text(text, str(staged))
            reload_stack(self.stack, staged, cfg, dict(request.get("secrets") or {}))
        except (OSError, ConfigError) as exc:
            self.applied_sha = digest
            self._ack(digest, source=str(staged), error=str(exc))
            return
        self.applied_sha = digest
        self._ack(digest, source=str(staged), enabled=_enabled(cfg))
        # The keys were needed once, to build the providers; do not leave them on disk.
        _write_json(
            self.data_dir / REQUEST, {k: v for k, v in request.items() if k != "secrets"}, private=True
        )

    def _ack(self, digest: str, **fields: Any) -> None:
        _write_json(self.data_dir / APPLIED, {"sha256": digest, "applied_at": _now(), **fields})


def _settings_enabled(settings: Any) -> list[str]:
    return [t.value for t in settings.enabled_extractions]


def reload_stack(stack: LocalStack, config_file: Path, cfg: ProjectConfig, secrets: dict[str, str]) -> None:
    """Swap a running local stack onto a new project config (new services; pollers for new types)."""
    import functools

    from mongomem.local.lambdas import find_functions_dir, load_handler
    from mongomem.local.worker import Every, deliver_batch
    from mongomem.runtime import Services, configure

    old = stack.settings
    assert old is not None and stack.queue is not None
    settings = old.model_copy(
        update={
            "project": cfg,
            "enabled_extractions": list(cfg.memory.extraction.enabled),
            "provider_secrets": {**old.provider_secrets, **secrets},
        }
    )
    configure(Services(settings, queue_factory=local_queue_factory))
    stack.settings = settings
    stack.config_file = config_file
    polled = {t.thread.name for t in stack.threads}
    extract = None
    for t in settings.enabled_extractions:
        if f"poll-{t.value}" in polled:
            continue
        extract = extract or load_handler(find_functions_dir(), "extract")
        poll = functools.partial(
            deliver_batch, stack.queue, f"extract-{t.value}", extract, stack.queue_policy
        )
        stack.threads.append(Every(f"poll-{t.value}", stack.poll_seconds, poll).start())


def _service_status(client: MemoryClient) -> dict[str, Any]:
    try:
        return client.status()
    except MemoryClientError as err:
        return {"error": f"{err.code}: {err.message}"}


# -- a deployed stack -----------------------------------------------------------------------------


class DeployedTarget:
    def __init__(
        self,
        stack_name: str,
        region: str | None = None,
        profile: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        parameter: str | None = None,
        session: Any = None,
        poll_seconds: float = 2.0,
    ) -> None:
        import boto3

        self.stack_name = stack_name
        self.session = session or boto3.session.Session(region_name=region, profile_name=profile)
        self.region = self.session.region_name
        if not self.region:
            raise CommandError("no AWS region: pass --region or set AWS_REGION", code=2)
        self.parameter = parameter or PARAMETER.format(stack=stack_name)
        self.base_url = base_url
        self.api_key = api_key
        self.poll_seconds = poll_seconds
        self._outputs: dict[str, str] | None = None

    def describe(self) -> str:
        return f"stack {self.stack_name} ({self.region})"

    def _client(self, name: str) -> Any:
        return self.session.client(name)

    def outputs(self) -> dict[str, str]:
        if self._outputs is None:
            from botocore.exceptions import ClientError

            try:
                stacks = self._client("cloudformation").describe_stacks(StackName=self.stack_name)["Stacks"]
            except ClientError as exc:
                raise CommandError(
                    f"stack {self.stack_name} not found in {self.region}: {_aws_message(exc)}"
                ) from exc
            self._outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}
        return self._outputs

    def functions(self) -> list[str]:
        """Every Lambda function of the stack (its resources, so none is missed for want of an output)."""
        pages = (
            self._client("cloudformation")
            .get_paginator("list_stack_resources")
            .paginate(StackName=self.stack_name)
        )
        names = [
            r["PhysicalResourceId"]
            for page in pages
            for r in page["StackResourceSummaries"]
            if r["ResourceType"] == "AWS::Lambda::Function" and r.get("PhysicalResourceId")
        ]
        if not names:
            names = [v for k, v in self.outputs().items() if k.endswith("FunctionName")]
        return sorted(set(names))

    def api(self) -> MemoryClient:
        from mongomem.client import sigv4_auth

        url = self.base_url or self.outputs().get("ApiUrl")
        if not url:
            raise CommandError(f"stack {self.stack_name} has no ApiUrl output; pass --base-url")
        auth = None if self.api_key else sigv4_auth(self.region, credentials=self.session.get_credentials())
        return MemoryClient(url, timeout=15, retries=2, auth=auth, api_key=self.api_key)

    def configure(self, text: str, cfg: ProjectConfig) -> str:
        from botocore.exceptions import ClientError

        try:
            version = self._client("ssm").put_parameter(
                Name=self.parameter,
                Value=text,
                Type="String",
                Overwrite=True,
                Tier="Intelligent-Tiering",
                Description=f"mongomem project-config.yaml of stack {self.stack_name}",
            )["Version"]
        except ClientError as exc:
            raise CommandError(f"could not upload to SSM {self.parameter}: {_aws_message(exc)}") from exc
        return f"SSM parameter {self.parameter} (version {version})"

    def uploaded(self) -> tuple[str, str]:
        from botocore.exceptions import ClientError

        try:
            param = self._client("ssm").get_parameter(Name=self.parameter)["Parameter"]
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ParameterNotFound":
                raise CommandError(
                    f"no configuration uploaded to {self.parameter}: run `mongomem memory configure --stack "
                    f"{self.stack_name}` first"
                ) from exc
            raise CommandError(f"could not read SSM {self.parameter}: {_aws_message(exc)}") from exc
        return str(param["Value"]), f"ssm:{self.parameter}:{param['Version']}"

    def apply(
        self,
        cfg: ProjectConfig,
        text: str,
        secrets: dict[str, str],
        wait: bool,
        timeout: float,
        out: TextIO,
        source: str = "",
    ) -> None:
        from botocore.exceptions import ClientError

        lam = self._client("lambda")
        functions = self.functions()
        if not functions:
            raise CommandError(f"stack {self.stack_name} has no functions")
        # Read everything first: a failure here leaves every function as it was.
        current = {name: lam.get_function_configuration(FunctionName=name) for name in functions}
        compact = json.dumps(cfg.model_dump(mode="json", exclude_defaults=True), separators=(",", ":"))
        changes: dict[str, dict[str, str]] = {}
        for name, conf in current.items():
            old = dict((conf.get("Environment") or {}).get("Variables") or {})
            new = {
                **old,
                "MONGOMEM_ENABLED_EXTRACTIONS": ",".join(_enabled(cfg)),
                "MONGOMEM_PROJECT_CONFIG": compact,
                "MONGOMEM_CONFIG_SHA256": sha256(text),
                **secrets,
            }
            size = sum(len(k) + len(v) for k, v in new.items())
            if size > LAMBDA_ENV_LIMIT:
                raise CommandError(
                    f"not applied (nothing was changed): {name}'s environment would be {size} bytes, over "
                    f"Lambda's {LAMBDA_ENV_LIMIT}"
                )
            if new != old:
                changes[name] = new
        print(f"applying {source or 'config'} to {len(functions)} functions of {self.describe()}", file=out)
        for name in functions:
            if name not in changes:
                print(f"  {name}: unchanged", file=out, flush=True)
                continue
            for attempt in range(30):
                try:
                    lam.update_function_configuration(
                        FunctionName=name, Environment={"Variables": changes[name]}
                    )
                    break
                except ClientError as exc:
                    # an update already in progress: wait for it, as the console does
                    if (
                        exc.response.get("Error", {}).get("Code") != "ResourceConflictException"
                        or attempt == 29
                    ):
                        raise CommandError(f"could not update {name}: {_aws_message(exc)}") from exc
                    time.sleep(self.poll_seconds)
            print(f"  {name}: updating", file=out, flush=True)
        if not wait:
            return
        deadline = time.monotonic() + timeout
        pending = set(changes)
        while pending:
            for name in sorted(pending):
                conf = lam.get_function_configuration(FunctionName=name)
                state = conf.get("LastUpdateStatus", "Successful")
                if state == "Failed":
                    raise CommandError(
                        f"{name}: update failed: {conf.get('LastUpdateStatusReason', 'no reason given')}"
                    )
                if state == "Successful":
                    print(f"  {name}: updated", file=out, flush=True)
                    pending.discard(name)
            if pending:
                if time.monotonic() >= deadline:
                    raise CommandError(
                        f"functions still updating after {timeout:g}s: {', '.join(sorted(pending))}"
                    )
                time.sleep(self.poll_seconds)
        wait_until_ready(
            self.api(), _enabled(cfg), max(1.0, deadline - time.monotonic()), out, self.poll_seconds
        )

    def status(self) -> dict[str, Any]:
        report: dict[str, Any] = {"target": self.describe()}
        lam = self._client("lambda")
        functions = self.functions()
        applied: dict[str, Any] = {}
        for name in functions:
            env = (lam.get_function_configuration(FunctionName=name).get("Environment") or {}).get(
                "Variables"
            ) or {}
            applied[name] = {
                "enabled": env.get("MONGOMEM_ENABLED_EXTRACTIONS"),
                "sha256": env.get("MONGOMEM_CONFIG_SHA256"),
            }
        try:
            uploaded_text, where = self.uploaded()
            uploaded: str | None = sha256(uploaded_text)
        except CommandError:
            uploaded, where = None, None
        shas = {v["sha256"] for v in applied.values()}
        report["config"] = {
            "applied": applied,
            "uploaded": where,
            "uploaded_sha256": uploaded,
            "pending_apply": bool(uploaded and shas != {uploaded}),
        }
        try:
            report["service"] = _service_status(self.api())
        except CommandError as exc:
            report["service"] = {"error": str(exc)}
        report["queues"] = self._queues()
        return report

    def _queues(self) -> dict[str, Any]:
        from botocore.exceptions import ClientError

        sqs = self._client("sqs")
        outputs = self.outputs()
        attrs = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        queues: dict[str, Any] = {}
        for t in MemoryType:
            prefix = t.value.capitalize()
            row: dict[str, Any] = {}
            for key, label in ((f"{prefix}QueueUrl", "queue"), (f"{prefix}DLQUrl", "dlq")):
                url = outputs.get(key)
                if not url:
                    continue
                try:
                    got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=attrs)["Attributes"]
                except ClientError as exc:
                    row["error"] = _aws_message(exc)
                    continue
                if label == "queue":
                    row["visible"] = int(got.get("ApproximateNumberOfMessages", 0))
                    row["in_flight"] = int(got.get("ApproximateNumberOfMessagesNotVisible", 0))
                else:
                    row["dlq"] = int(got.get("ApproximateNumberOfMessages", 0))
            if row:
                queues[t.value] = row
        return queues


def _aws_message(exc: Any) -> str:
    error = getattr(exc, "response", {}).get("Error", {})
    return f"{error.get('Code', type(exc).__name__)}: {error.get('Message', str(exc))}"


# -- commands ------------------------------------------------------------------------------------


Target = LocalTarget | DeployedTarget


def _target(args: argparse.Namespace) -> Target:
    if args.stack and not args.local:
        return DeployedTarget(
            args.stack, region=args.region, profile=args.profile, base_url=args.base_url, api_key=args.api_key
        )
    return LocalTarget(Path(args.data_dir), args.base_url, mongodb_uri=args.mongodb_uri, api_key=args.api_key)


def cmd_configure(args: argparse.Namespace, out: TextIO) -> int:
    path = Path(args.config)
    if not path.exists():
        raise CommandError(f"{path} not found", code=2)
    text = path.read_text(encoding="utf-8")
    cfg = parse_config_text(text, str(path))
    where = _target(args).configure(text, cfg)
    print(
        f"{path} is valid (extraction: {', '.join(_enabled(cfg)) or 'none'}); uploaded to {where}", file=out
    )
    print("next: `mongomem memory apply --wait`" + (f" --stack {args.stack}" if args.stack else ""), file=out)
    return 0


def cmd_apply(args: argparse.Namespace, out: TextIO, environ: Mapping[str, str] | None = None) -> int:
    target = _target(args)
    text, where = target.uploaded()
    cfg = parse_config_text(text, where)
    env = environment() if environ is None else dict(environ)
    if isinstance(target, DeployedTarget):
        env.setdefault("AWS_REGION", str(target.region))
    secrets = _check_providers(cfg, env)
    print(
        f"applying {where} to the {target.describe()} (extraction: {', '.join(_enabled(cfg)) or 'none'})",
        file=out,
    )
    if isinstance(target, DeployedTarget):
        target.apply(cfg, text, secrets, args.wait, args.timeout, out, source=where)
    else:
        target.apply(cfg, text, secrets, args.wait, args.timeout, out)
    print("applied; the memory service is ready" if args.wait else "apply requested", file=out)
    return 0


def cmd_status(args: argparse.Namespace, out: TextIO) -> int:
    report = _target(args).status()
    if args.json:
        print(json.dumps(report, indent=2, default=str), file=out)
    else:
        print(render_status(report), file=out)
    service = report.get("service") or {}
    return 0 if service.get("ready") else 1


def render_status(report: dict[str, Any]) -> str:
    lines = [f"mongomem memory status: {report['target']}"]
    config = report.get("config") or {}
    applied = config.get("applied")
    if isinstance(applied, dict) and "sha256" in applied:
        lines.append(
            f"config      applied {str(applied['sha256'])[:12]} at {applied.get('applied_at')} from {applied.get('source')}"
        )
        if applied.get("error"):
            lines.append(f"            last apply refused: {applied['error']}")
    elif isinstance(applied, dict):
        for name, env in applied.items():
            lines.append(
                f"config      {name}: extraction {env.get('enabled')} config {str(env.get('sha256'))[:12]}"
            )
    if config.get("pending_apply"):
        lines.append("            the uploaded config is not applied yet: run `mongomem memory apply --wait`")
    service = report.get("service") or {}
    if "error" in service:
        lines.append(f"service     unavailable: {service['error']}")
    else:
        llm, emb = service.get("llm") or {}, service.get("embeddings") or {}
        lines.append(f"ready       {'yes' if service.get('ready') else 'no'}")
        for reason in service.get("reasons") or []:
            lines.append(f"            {reason}")
        lines.append(
            f"  llm         {llm.get('name')} ({llm.get('kind')}): {'ready' if llm.get('ready') else llm.get('reason')}"
        )
        lines.append(
            f"  embeddings  {emb.get('model')} dim {emb.get('dim')}: {'ready' if emb.get('ready') else emb.get('reason')}"
        )
        lines.append(
            f"extraction  {', '.join((service.get('extraction') or {}).get('enabled') or []) or 'none'}"
        )
    # every tenant's figures when the CLI could read MongoDB, else what the API shows its caller
    read = report.get("backlog") or {}
    figures = read if read and "error" not in read else service
    if figures and "error" not in figures:
        scope = read.get("scope") or service.get("backlog_scope") or "the API key's tenant"
        lines.append(f"backlog     ({scope})")
        lines.append(f"sessions pending promotion: {figures.get('sessions_pending_promotion', '?')}")
        pending = figures.get("snapshots_pending_extraction") or {}
        text = "; ".join(
            f"{t} " + ", ".join(f"{s} {n}" for s, n in sorted(v.items())) for t, v in sorted(pending.items())
        )
        lines.append(f"snapshots pending extraction: {text or 'none'}")
    queues = report.get("queues") or {}
    if "error" in queues:
        lines.append(f"queues      unavailable: {queues['error']}")
    else:
        lines.append(f"{'queue':<12}{'visible':>9}{'in flight':>11}{'dlq':>7}")
        for name, row in queues.items():
            lines.append(
                f"{name:<12}{row.get('visible', '-'):>9}{row.get('in_flight', '-'):>11}{row.get('dlq', '-'):>7}"
            )
    return "\n".join(lines)


def _run(handler: Callable[..., int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args, sys.stdout)
        except ConfigError as exc:
            print(str(exc), file=sys.stderr)
            return 2
        except CommandError as exc:
            print(str(exc), file=sys.stderr)
            return exc.code

    return run


def register(sub: Any) -> None:
    """Add `memory configure|apply|status` to the `mongomem` command's subparsers."""
    memory = sub.add_parser("memory", help="configure, apply and inspect the memory configuration of a stack")
    msub = memory.add_subparsers(dest="memory_command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        where = p.add_mutually_exclusive_group()
        where.add_argument(
            "--local", action="store_true", help="the local stack (the default without --stack)"
        )
        where.add_argument(
            "--stack",
            default=environment().get("MONGOMEM_STACK") or None,
            help="a deployed stack's name ($MONGOMEM_STACK)",
        )
        p.add_argument("--region", default=None, help="AWS region of the stack (default: your AWS config)")
        p.add_argument("--profile", default=None, help="AWS profile")
        p.add_argument(
            "--base-url",
            default=None,
            help=f"the memory API (local: the running stack's, else {DEFAULT_URL}; deployed: ApiUrl)",
        )
        p.add_argument(
            "--api-key",
            default=environment().get("MONGOMEM_API_KEY") or None,
            help="x-api-key for the API ($MONGOMEM_API_KEY); without it a deployed API is called with SigV4",
        )
        p.add_argument("--data-dir", default=DEFAULT_DATA_DIR, help="the local stack's data dir")
        p.add_argument(
            "--mongodb-uri", default=None, help="the local stack's MongoDB (default: found in the data dir)"
        )

    configure = msub.add_parser("configure", help="validate project-config.yaml and upload it")
    common(configure)
    configure.add_argument("--config", default="project-config.yaml")
    configure.set_defaults(func=_run(cmd_configure))

    apply = msub.add_parser("apply", help="apply the uploaded config to the functions")
    common(apply)
    apply.add_argument("--wait", action="store_true", help="wait until the memory service reports ready")
    apply.add_argument("--timeout", type=float, default=300.0, help="seconds --wait waits")
    apply.set_defaults(func=_run(cmd_apply))

    status = msub.add_parser("status", help="applied config, readiness, queues and backlog")
    common(status)
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=_run(cmd_status))


def register_mcp(sub: Any) -> None:
    """Add `mcp` (the MCP server) to the `mongomem` command's subparsers."""
    from mongomem import mcp_server

    parser = sub.add_parser("mcp", help="serve the memory to MCP clients (stdio or streamable HTTP)")
    mcp_server.add_arguments(parser)
    parser.set_defaults(func=mcp_server.run)
