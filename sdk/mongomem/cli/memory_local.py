"""`mongomem memory ...` against the local stack (`mongomem dev`): files in its data dir, a reload.

configure writes `<data dir>/project-config.yaml`; apply drops a request the running stack's
`LocalControl` picks up (it reloads its settings and acknowledges), then waits for GET /v1/status.
"""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pymongo import MongoClient
from pymongo.errors import PyMongoError

from mongomem.cli.config_files import (
    APPLIED,
    REQUEST,
    STACK_FILE,
    STAGED,
    CommandError,
    parse_config_text,
    sha256,
)
from mongomem.cli.config_files import enabled_kinds as _enabled
from mongomem.cli.connection import DEFAULT_URL
from mongomem.client import MemoryClient, MemoryClientError
from mongomem.config import CUSTOM_QUEUE, ConfigError, ProjectConfig, builtin_names
from mongomem.local.queue import QueuePolicy, local_queue_factory

if TYPE_CHECKING:
    from mongomem.local.stack import LocalStack
    from mongomem.local.worker import Every


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
        self.check_custom_types(cfg)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        (self.data_dir / STAGED).write_text(text, encoding="utf-8")
        return str(self.data_dir / STAGED)

    def check_custom_types(self, cfg: ProjectConfig) -> None:
        """Refuse (ConfigError) custom types that change a stored one incompatibly, when the stack's
        MongoDB is known (the running stack records new ones when it applies the config)."""
        if not cfg.memory.custom_types or not self.mongodb_uri:
            return

        from mongomem.adapters.mongo import MongoDatabase  # lazy: 2.2 ms
        from mongomem.adapters.mongo.kind_schemas import MongoKindSchemaRepository  # lazy: 27 ms
        from mongomem.kinds.declared import problems  # lazy: 26 ms

        client: MongoClient[dict[str, Any]] = MongoClient(
            self.mongodb_uri, serverSelectionTimeoutMS=3000, tz_aware=True
        )
        try:
            database = MongoDatabase(client, self.running.get("db_name") or "mongomem")
            found = problems(MongoKindSchemaRepository(database).all(), cfg.memory.custom_types)
        except PyMongoError:
            return  # not reachable: `apply` checks again where the stack runs
        finally:
            client.close()
        if found:
            raise ConfigError("invalid configuration: " + "\n".join(found))

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
        report["service"] = _service_status(self.client, self.data_dir)
        report["queues"] = self._queues()
        report["backlog"] = self._backlog()
        return report

    def _not_running(self) -> str:
        return (
            f"no local stack runs on {self.data_dir.resolve()} (it writes {STACK_FILE} there when it "
            "starts): start `make dev`, or pass the --data-dir (MONGOMEM_DATA_DIR) of the one you run"
        )

    def _backlog(self) -> dict[str, Any]:
        """Every tenant's backlog, read from the stack's MongoDB (the API shows a caller only its own)."""
        uri = self.mongodb_uri
        if not uri:
            return {"error": self._not_running()}

        from mongomem.adapters.mongo import MongoDatabase  # lazy: 2.4 ms
        from mongomem.adapters.mongo.backlog import MongoBacklogRepository  # lazy: 22 ms
        from mongomem.status import backlog  # lazy: 15 ms

        client: MongoClient[dict[str, Any]] = MongoClient(uri, serverSelectionTimeoutMS=3000, tz_aware=True)
        try:
            database = MongoDatabase(client, self.running.get("db_name") or "mongomem")
            figures = backlog(MongoBacklogRepository(database), None)
            return {"scope": "all tenants", **figures}
        except PyMongoError as exc:
            return {"error": f"cannot read the backlog at {uri}: {type(exc).__name__}"}
        finally:
            client.close()

    def _queues(self) -> dict[str, Any]:
        uri = self.mongodb_uri
        if not uri:
            return {"error": self._not_running()}

        db_name = self.running.get("db_name") or "mongomem"
        client: MongoClient[dict[str, Any]] = MongoClient(uri, serverSelectionTimeoutMS=3000)
        try:
            coll = client[db_name]["local_queue"]
            now = datetime.now(UTC)
            queues: dict[str, Any] = {}
            for t in [*builtin_names(), CUSTOM_QUEUE]:
                name = f"extract-{t}"
                queues[t] = {
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
        from mongomem.local.worker import Every  # lazy: 12 ms

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
    return [str(t) for t in settings.enabled_extractions]


def reload_stack(stack: LocalStack, config_file: Path, cfg: ProjectConfig, secrets: dict[str, str]) -> None:
    """Swap a running local stack onto a new project config (new services; pollers for new types)."""
    from mongomem.local.worker import Every  # lazy: 12 ms
    from mongomem.runtime import Services, configure  # lazy: 17 ms

    old = stack.settings
    assert old is not None and stack.queue is not None
    settings = old.model_copy(
        update={
            "project": cfg,
            "enabled_extractions": cfg.memory.enabled_kinds,
            "provider_secrets": {**old.provider_secrets, **secrets},
            "config_sha256": sha256(config_file.read_text(encoding="utf-8")),
            "config_source": "file",
        }
    )
    services = Services(settings, queue_factory=local_queue_factory)
    services.check_custom_types()  # refused (ConfigError): the stack keeps its config
    configure(services)
    stack.settings, stack.services = settings, services
    stack.config_file = config_file
    stack.delivery = QueuePolicy.for_llm(settings.llm_config.timeout_seconds, stack.queue_policy)
    polled = {t.thread.name for t in stack.threads}
    for t in settings.queue_kinds:
        if f"poll-{t}" not in polled:
            stack.threads.append(Every(f"poll-{t}", stack.poll_seconds, stack.poller(t)).start())


def _service_status(client: MemoryClient, data_dir: Path) -> dict[str, Any]:
    try:
        return client.status()
    except MemoryClientError as err:
        if err.status is None:  # nothing answers: say where it looked and how to start it
            return {
                "error": f"nothing answers at {client.base_url}: {err.message}; start `make dev` ({data_dir})"
            }
        return {"error": str(err)}
