"""Compose the local stack: embedded MongoDB, the API front, the scan schedule, the extraction pollers."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mongomem.config import CUSTOM_QUEUE, Settings, builtin_names, settings_from_env
from mongomem.local.http import READ_TIMEOUT_SECONDS, ApiFront, LocalAuthorizer, RequestLog, make_server
from mongomem.local.lambdas import LocalContext, find_functions_dir, load_handler
from mongomem.local.mongod import EmbeddedMongo
from mongomem.local.queue import LocalQueue, QueuePolicy, local_queue_factory
from mongomem.local.worker import Every, deliver_batch, scheduled_event
from mongomem.observability import logger
from mongomem.runtime import Services, configure
from mongomem.shortterm.scan import SAFETY_MS

# Which function serves which path prefix (the same split as template.yaml's routes).
API_ROUTES = [
    ("/v1/sessions", "record_turns"),
    ("/v1/memories", "memory_api"),
    ("/v1/procedures", "memory_api"),
    ("/v1/domains", "memory_api"),
    ("/v1/recall", "memory_api"),
    ("/v1/context", "memory_api"),
    ("/v1/working-memory", "memory_api"),
    ("/v1/threads", "memory_api"),
    ("/v1/import", "memory_api"),
    ("/v1/status", "memory_api"),
    ("/v1/users", "memory_api"),
    ("/v1/admin", "memory_api"),
    ("/v1/snapshots", "memory_api"),
    ("/v1/stats", "memory_api"),
    ("/v1/pipeline", "memory_api"),
    ("/v1/openapi.json", "memory_api"),
    ("/v1/docs", "memory_api"),
    ("/console", "memory_api"),
]

# Served without a key, as template.yaml does (`Authorizer: NONE`): the API document, Swagger UI and
# the console's static files (they hold no user data; the console's data calls carry the key).
# Paths are the template's: `{proxy+}` matches the rest of a path.
PUBLIC_PATHS = frozenset({"/v1/openapi.json", "/v1/docs", "/console", "/console/{proxy+}"})

# Where a running stack tells other local commands (`mongomem keys`, `mongomem snapshots retry`) its database.
STACK_FILE = "stack.json"


@dataclass
class LocalStack:
    data_dir: Path | None
    host: str = "127.0.0.1"
    port: int = 3000
    scan_seconds: float = 5.0
    poll_seconds: float = 1.0
    mongodb_uri: str | None = None
    config_file: Path | None = None
    queue_policy: QueuePolicy = field(default_factory=QueuePolicy)
    environ: dict[str, str] = field(default_factory=dict)
    # API Gateway's authorizer result TTL (template.yaml: 300 s)
    auth_ttl_seconds: float = 300.0
    # how long the HTTP front waits for a request body its Content-Length announced
    read_timeout_seconds: float = READ_TIMEOUT_SECONDS
    # `mongomem dev`'s console: one call per served request, one line per event worth telling
    on_request: RequestLog | None = None
    on_event: Callable[[str], None] | None = None
    # how often the embedded database child is checked (and restarted when it died)
    watch_seconds: float = 1.0

    def __post_init__(self) -> None:
        self.mongo: EmbeddedMongo | None = None
        self.server: Any = None
        self.threads: list[Every] = []
        self.settings: Settings | None = None
        self.services: Services | None = None  # the composition root the stack's functions serve with
        self.queue: LocalQueue | None = None
        self.keys: Any = None  # the API key repository (mongomem.identity.ports.ApiKeyRepository)
        self.authorizer: LocalAuthorizer | None = None
        # what the pollers deliver with: `queue_policy` (the template's) stretched for the configured model
        self.delivery: QueuePolicy = self.queue_policy
        self.database_restarts = 0

    def start(self) -> LocalStack:
        """Start everything; a bad configuration (ConfigError) starts nothing, any later failure stops all."""
        env = local_environment(self.environ, self.data_dir, self.config_file)
        settings_from_env(env)  # validate the config and the environment before any child process starts
        try:
            self._start(env)
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, env: dict[str, str]) -> None:
        uri = self.mongodb_uri
        if uri is None:
            self.mongo = EmbeddedMongo(self.data_dir / "mongo" if self.data_dir else None)
            self.mongo.start()
            uri = self.mongo.uri
        env["MONGOMEM_MONGODB_URI"] = uri
        self.settings = settings_from_env(env)
        self.delivery = QueuePolicy.for_llm(self.settings.llm_config.timeout_seconds, self.queue_policy)
        services = self.services = Services(self.settings, queue_factory=local_queue_factory)
        services.check_custom_types()  # a stored custom type's schema may not change incompatibly
        configure(services)
        self.queue = LocalQueue(services.db)
        functions = find_functions_dir()
        self.keys = services.api_keys
        self.authorizer = LocalAuthorizer(
            _loader(functions, "authorizer"),
            self.keys.any,
            ttl_seconds=self.auth_ttl_seconds,
            public_paths=PUBLIC_PATHS,
        )
        front = ApiFront(
            [(prefix, _loader(functions, name), name) for prefix, name in API_ROUTES], self.authorizer
        )
        self.server = make_server(front, self.host, self.port, self.read_timeout_seconds, self.on_request)
        self.port = self.server.server_address[1]
        # the background handlers are imported before the API serves its first request: two threads
        # importing the same packages at once (the API's handler, the queue's) could each see the other's
        # half-imported module (a start under load failed with KeyError 'aws_lambda_powertools...')
        scan = load_handler(functions, "scan_sessions")
        pollers = {t: self.poller(t) for t in self.settings.queue_kinds}
        threading.Thread(target=self.server.serve_forever, name="api", daemon=True).start()
        if self.data_dir is not None:
            (self.data_dir / STACK_FILE).write_text(
                json.dumps({"mongodb_uri": uri, "db_name": self.settings.db_name, "api": self.url})
            )
        if self.mongo is not None:
            self.threads.append(Every("database-watch", self.watch_seconds, self._watch_database).start())
        interval, timeout = self.scan_seconds, 60.0
        recall = self.settings.memory.recall
        if recall.enabled and recall.embed_on_write:
            # The scan invocation follows recording (embed on write) for one scan interval, then the next
            # starts a poll later: turns are recallable within seconds, and stop() waits one interval at most.
            interval = recall.embed_on_write_poll_seconds
            timeout = min(self.scan_seconds, 25.0) + SAFETY_MS / 1000 + interval
        self.threads.append(
            Every("scan", interval, lambda: scan(scheduled_event(), _ctx("scan_sessions", timeout))).start()
        )
        for t, poll in pollers.items():
            # One handler per queue, as template.yaml has one function per queue: the handler's module
            # state (the SQS BatchProcessor) must not be shared by pollers running at the same time.
            self.threads.append(Every(f"poll-{t}", self.poll_seconds, poll).start())

    def poller(self, kind: str) -> Any:
        """One queue's poll: its own handler (as template.yaml has one function per queue: the handler's
        module state, the SQS BatchProcessor, must not be shared by pollers running at the same time),
        delivering with the stack's current policy."""
        assert self.queue is not None
        queue, extract = self.queue, load_handler(find_functions_dir(), "extract")
        return lambda: deliver_batch(queue, f"extract-{kind}", extract, self.delivery)

    def _note(self, message: str) -> None:
        if self.on_event is not None:
            self.on_event(message)
        else:
            logger.warning(message)

    def _watch_database(self) -> None:
        """Supervise the database child: when it died, start it again on the same port and data (the
        services' clients reconnect to the same URI); until then requests answer 503 store_unavailable."""
        mongo = self.mongo
        code = mongo.exited if mongo is not None else None
        if mongo is None or code is None:
            return
        self.database_restarts += 1
        self._note(
            f"the database process exited (code {code}); restarting it on port {mongo.port} "
            f"(restart {self.database_restarts}; its log: {mongo.log_path or 'none'})"
        )
        started = time.monotonic()
        mongo.restart()
        self._note(f"database restarted in {time.monotonic() - started:.1f} s: requests work again")

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def keys_required(self) -> bool:
        """False while no API key exists: `make dev` then runs open, as the default tenant."""
        return bool(self.keys.any())

    def stop(self) -> None:
        """Stop what started (safe after a partial start, and twice); the database child always."""
        try:
            if self.data_dir is not None:
                (self.data_dir / STACK_FILE).unlink(missing_ok=True)
            for thread in self.threads:
                thread.stop()
            self.threads = []
            if self.server is not None:
                self.server.shutdown()
                self.server.server_close()
                self.server = None
            configure(None)
        finally:
            if self.mongo is not None:
                self.mongo.stop()


def local_environment(
    environ: dict[str, str], data_dir: Path | None, config_file: Path | None
) -> dict[str, str]:
    """The MONGOMEM_* variables the local functions run with (the config, the embedded index, the queues)."""
    env = dict(environ)
    if config_file is not None:
        env["MONGOMEM_CONFIG_FILE"] = str(config_file)
    if data_dir is not None:
        env.setdefault("MONGOMEM_VECTOR_INDEX_PATH", str(data_dir / "vectors"))
        # an erased user leaves no copy in the data dir's files (docs/security.md "Erasure")
        env.setdefault("MONGOMEM_ERASE_CHECKPOINT", "true")
    for name in [*builtin_names(), CUSTOM_QUEUE]:
        env.setdefault(f"MONGOMEM_QUEUE_URL_{name.upper()}", f"local:extract-{name}")
    return env


def _loader(functions: Path, name: str) -> Any:
    return lambda: load_handler(functions, name)


def _ctx(name: str, timeout_seconds: float = 60.0) -> Any:
    return LocalContext(function_name=name, timeout_seconds=timeout_seconds)
