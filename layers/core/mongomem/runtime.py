"""The composition root: settings, the adapters and services built from them, and the handler wrapper.

A Lambda execution environment builds one `Runtime` at module scope (`lambda_runtime()`); each
invocation goes through `Runtime.handler`, which
- answers control requests (`{"mongomem_control": {...}}`) with the config version and readiness this
  function runs (what `mongomem memory apply --wait` and `status` ask every function),
- re-reads the stack's applied project config when its max age has passed and rebuilds the services
  when it changed,
- on a MongoDB authentication failure refetches the secret once (a rotated password) and retries.
Tests and the local stack install their own `Services` with `configure()`: every `Runtime` of the
process then hands those to its handlers.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

# Every function talks to MongoDB: the driver, the record path's repositories and its logic load with the
# function (its init phase), not on its first request. Everything else is imported where it is built.
from mongomem.adapters.mongo.driver import MongoDatabase, get_client, write_concern_for
from mongomem.adapters.mongo.sessions import MongoSessionRepository
from mongomem.adapters.mongo.turns import MongoTurnRepository
from mongomem.config import (
    ConfigError,
    ProjectConfig,
    Settings,
    parse_project_config,
    settings_from_env,
)
from mongomem.shortterm.record import TurnRecorder

if TYPE_CHECKING:
    from mongomem.adapters.memory_store import MemoryStore
    from mongomem.adapters.mongo.api_keys import MongoApiKeyRepository
    from mongomem.adapters.mongo.erasure import MongoErasureRepository
    from mongomem.adapters.mongo.snapshots import MongoSnapshotRepository
    from mongomem.directory import DirectoryRepository
    from mongomem.extraction.commit import Committer
    from mongomem.extraction.extractor import Extractor
    from mongomem.extraction.proposal import Proposer
    from mongomem.extraction.reconcile import Reconciler
    from mongomem.kinds import KindRegistry
    from mongomem.kinds.declared import KindSchemaRepository
    from mongomem.longterm.procedures import ProcedureService
    from mongomem.longterm.service import MemoryService
    from mongomem.models.turns import Turn
    from mongomem.ports import EmbeddingProvider, LLMProvider, QueuePort
    from mongomem.requestlog import RecentRequestLog
    from mongomem.retrieval.context import ContextBuilder
    from mongomem.retrieval.indexing import MemoryIndexer
    from mongomem.retrieval.pending import Pending
    from mongomem.retrieval.recall import Recall
    from mongomem.retrieval.reembed import EmbeddingDrift
    from mongomem.retrieval.search import MemorySearch
    from mongomem.retrieval.turn_indexing import TurnIndexer
    from mongomem.shortterm.history import History
    from mongomem.shortterm.importing import Importer
    from mongomem.shortterm.policy import PromotionPolicy
    from mongomem.shortterm.promotion import Promoter
    from mongomem.shortterm.topics import TopicSegmenter
    from mongomem.status import BacklogRepository
    from mongomem.vectors.port import VectorIndex
    from mongomem.workingmemory.config import WorkingMemoryConfig
    from mongomem.workingmemory.ports import WorkingMemoryPort
    from mongomem.workingmemory.service import WorkingMemoryService
    from mongomem.workingmemory.threads import Threads

R = TypeVar("R")
CONTROL_KEY = "mongomem_control"
# Set while an invocation runs again after refetching the MongoDB secret: a second failure is final.
_auth_retry: ContextVar[bool] = ContextVar("mongomem_auth_retry", default=False)
# Builds a memory kind's extractor from the services (Services(extractors=...) replaces the default;
# None there: the kind has no extractor, its snapshots' status becomes `skipped`). Keys are kind names.
ExtractorFactory = Callable[["Services"], "Extractor"] | None


def store_auth_final() -> bool:
    """True when a MongoDB authentication failure now would be the second of this invocation."""
    return _auth_retry.get()


class Services:
    """The composition root: every repository and service of one process, each built on first use.

    Nothing else builds them: handlers receive this object from `Runtime.handler`, API routes read it
    from the resolver's context (mongomem.api.app.services_of), logic gets the pieces it needs passed
    in. The record path builds only `database`, `sessions`, `turns` and `recorder`. Tests build their
    own, replacing any collaborator through the constructor.
    """

    def __init__(
        self,
        settings: Settings,
        queue: QueuePort | None = None,
        queue_factory: Callable[[Services], QueuePort] | None = None,
        llm: LLMProvider | None = None,
        embedder: EmbeddingProvider | None = None,
        vector_index: VectorIndex | None = None,
        mongodb_uri: str | None = None,
        extractors: Mapping[str, ExtractorFactory] | None = None,
        working_memory_config: WorkingMemoryConfig | None = None,
    ) -> None:
        self.settings = settings
        self._queue = queue
        self._queue_factory = queue_factory
        self._llm = llm
        self._embedder = embedder
        self._vector_index = vector_index
        self._mongodb_uri = mongodb_uri
        self._extractors: dict[str, ExtractorFactory] = {str(k): f for k, f in (extractors or {}).items()}
        self._built: dict[str, Extractor | None] = {}
        self._working_memory_config = working_memory_config

    def replaced(self, **changes: Any) -> Services:
        """A new root with the same constructor arguments except `changes` (e.g. other extractors)."""
        args: dict[str, Any] = {
            "settings": self.settings,
            "queue": self._queue,
            "queue_factory": self._queue_factory,
            "llm": self._llm,
            "embedder": self._embedder,
            "vector_index": self._vector_index,
            "mongodb_uri": self._mongodb_uri,
            "extractors": self._extractors,
            "working_memory_config": self._working_memory_config,
        }
        args.update(changes)
        return Services(**args)

    def for_migration(self) -> Services:
        """The same deployment with index creation on (what `migrate` runs with)."""
        settings = self.settings.model_copy(update={"ensure_indexes": True, "create_search_index": True})
        return Services(settings, mongodb_uri=self.mongodb_uri)

    # -- MongoDB -------------------------------------------------------------------------------
    @cached_property
    def mongodb_uri(self) -> str:
        if self._mongodb_uri:
            return self._mongodb_uri
        if self.settings.mongodb_secret_arn:
            from mongomem.adapters.secrets import mongodb_uri_from_secret

            return mongodb_uri_from_secret(self.settings.mongodb_secret_arn)
        return self.settings.mongodb_uri

    @cached_property
    def database(self) -> MongoDatabase:
        s = self.settings
        client = get_client(self.mongodb_uri, maxPoolSize=s.mongo_max_pool_size, appname=_appname(s))
        # A 2xx means kept: every write through these repositories is journaled (and majority-replicated
        # where the deployment replicates), see docs/adr/0002-durability-what-a-2xx-means.md.
        return MongoDatabase(
            client, s.db_name, write_concern_for(client, s.write_concern, s.write_concern_timeout_ms)
        )

    @property
    def db(self) -> Any:
        """The raw pymongo database (for tools and tests; logic uses the repositories)."""
        return self.database.db

    def _indexed(self, repository: R) -> R:
        if self.settings.ensure_indexes:
            repository.ensure_indexes()  # type: ignore[attr-defined]
        return repository

    @cached_property
    def sessions(self) -> MongoSessionRepository:
        return self._indexed(MongoSessionRepository(self.database))

    @cached_property
    def turns(self) -> MongoTurnRepository:
        return self._indexed(MongoTurnRepository(self.database))

    @cached_property
    def snapshots(self) -> MongoSnapshotRepository:
        from mongomem.adapters.mongo.snapshots import MongoSnapshotRepository

        return self._indexed(MongoSnapshotRepository(self.database))

    @cached_property
    def api_keys(self) -> MongoApiKeyRepository:
        from mongomem.adapters.mongo.api_keys import MongoApiKeyRepository

        return self._indexed(MongoApiKeyRepository(self.database))

    @cached_property
    def working_memory_store(self) -> WorkingMemoryPort:
        from mongomem.adapters.mongo.working_memory import MongoWorkingMemoryRepository

        return self._indexed(MongoWorkingMemoryRepository(self.database))

    @cached_property
    def erasure(self) -> MongoErasureRepository:
        from mongomem.adapters.mongo.erasure import MongoErasureRepository

        return self._indexed(MongoErasureRepository(self.database))

    @cached_property
    def backlog(self) -> BacklogRepository:
        from mongomem.adapters.mongo.backlog import MongoBacklogRepository

        return MongoBacklogRepository(self.database)

    @cached_property
    def directory(self) -> DirectoryRepository:
        from mongomem.adapters.mongo.directory import MongoDirectoryRepository

        return MongoDirectoryRepository(self.database)

    @cached_property
    def recent_requests(self) -> RecentRequestLog:
        from mongomem.adapters.mongo.recent_requests import MongoRecentRequestLog

        return self._indexed(MongoRecentRequestLog(self.database))

    @cached_property
    def kind_schemas(self) -> KindSchemaRepository:
        from mongomem.adapters.mongo.kind_schemas import MongoKindSchemaRepository

        return MongoKindSchemaRepository(self.database)

    def check_custom_types(self, record: bool = True) -> None:
        """Refuse (ConfigError) custom types whose declaration changes a stored one incompatibly; with
        `record`, store new ones (a type is created the first time a deployment runs with it)."""
        if not self.settings.memory.custom_types:
            return
        from mongomem.kinds.declared import check_declared
        from mongomem.models.common import utcnow

        check_declared(self.kind_schemas, list(self.settings.memory.custom_types), utcnow(), record=record)

    @cached_property
    def memory_store(self) -> MemoryStore:
        from mongomem.adapters.memory_store import MemoryStore

        store = MemoryStore(self.database.db)
        if self.settings.ensure_indexes:
            store.ensure_indexes()
            _ = self.erasure  # the memories' retention index
        return store

    def ensure_short_term_indexes(self) -> None:
        """Every index of sessions, turns and snapshots (the migration; `ensure_indexes` does it on use)."""
        for repository in (self.sessions, self.turns, self.snapshots):
            repository.ensure_indexes()

    def ensure_other_indexes(self) -> None:
        """Every index of memories, retention, API keys and threads."""
        self.memory_store.ensure_indexes()
        self.working_memory_store.ensure_indexes()  # type: ignore[attr-defined]
        self.erasure.ensure_indexes()
        self.api_keys.ensure_indexes()
        self.recent_requests.ensure_indexes()  # type: ignore[attr-defined]

    def store_reachable(self) -> bool:
        return self.database.ping()

    # -- queue, providers, index -----------------------------------------------------------------
    @cached_property
    def queue(self) -> QueuePort:
        if self._queue is not None:
            return self._queue
        if self._queue_factory is not None:
            return self._queue_factory(self)
        from mongomem.adapters.queues import queue_for

        return queue_for(self.settings)

    @cached_property
    def llm(self) -> LLMProvider:
        if self._llm is not None:
            return self._llm
        from mongomem.providers.factory import llm_from_config

        cfg = self.settings.llm_config
        return llm_from_config(cfg, self.provider_env, refused=self.settings.demo_refusal(cfg.kind))

    @cached_property
    def embedder(self) -> EmbeddingProvider:
        if self._embedder is not None:
            return self._embedder
        from mongomem.providers.factory import embedder_from_config

        cfg = self.settings.embedding_config
        return embedder_from_config(cfg, self.provider_env, refused=self.settings.demo_refusal(cfg.kind))

    @cached_property
    def provider_env(self) -> dict[str, str]:
        """What the provider factories may read: the named keys (env or provider secret) and the region."""
        env = dict(self.settings.provider_secrets)
        if self.settings.provider_secret_arn:
            from mongomem.adapters.secrets import provider_keys

            env.update(provider_keys(self.settings.provider_secret_arn))
        if self.settings.aws_region:
            env["AWS_REGION"] = self.settings.aws_region
        return env

    def readiness(self) -> dict[str, Any]:
        """Whether an LLM and an embedding provider are usable, and why not (the LLM server's cached probe
        is the only network call)."""
        from mongomem.providers.factory import readiness

        return readiness(self.llm, self.embedder)

    def embedding_drift(self, tenant: str | None) -> EmbeddingDrift | None:
        """Whether stored vectors (of one tenant, None: all) come from another model than the embedder's."""
        from mongomem.retrieval.reembed import drift

        return drift(self.memory_store, self.embedder, tenant)

    @cached_property
    def vector_index(self) -> VectorIndex | None:
        if self._vector_index is not None:
            return self._vector_index
        s = self.settings
        if s.opensearch_endpoint:
            from mongomem.vectors.opensearch import OpenSearchIndex, make_client

            client = make_client(s.opensearch_endpoint, auth=s.opensearch_auth, region=s.aws_region)
            # SigV4 for `aoss` is a Serverless collection: its rules (no custom ids, no refresh) apply
            return OpenSearchIndex(
                client,
                s.opensearch_index,
                engine=s.opensearch_engine,
                create_missing=s.create_search_index,
                serverless=s.opensearch_auth == "sigv4-aoss",
            )
        if s.vector_index_path:
            from pathlib import Path

            from mongomem.vectors.embedded import EmbeddedIndex

            return EmbeddedIndex(Path(s.vector_index_path))
        return None

    # -- short-term memory -----------------------------------------------------------------------
    @cached_property
    def recorder(self) -> TurnRecorder:
        return TurnRecorder(self.sessions, self.turns, self.settings.memory)

    @cached_property
    def policy(self) -> PromotionPolicy:
        from mongomem.shortterm.policy import PromotionPolicy

        return PromotionPolicy.from_config(self.settings.memory)

    @cached_property
    def promoter(self) -> Promoter:
        from mongomem.shortterm.promotion import Promoter

        topics = None
        if self.settings.memory.snapshot.topic_shift.enabled:
            topics = self._topic_segmenter
        return Promoter(self.sessions, self.turns, self.snapshots, self.queue, self.settings, topics=topics)

    def _topic_segmenter(self) -> TopicSegmenter:
        from mongomem.shortterm.topics import TopicSegmenter

        return TopicSegmenter(self.embedder, self.settings.memory.snapshot.topic_shift)

    @cached_property
    def importer(self) -> Importer:
        from mongomem.shortterm.importing import Importer

        return Importer(self.turns, self.recorder, self.promoter, self.settings.memory)

    @cached_property
    def history(self) -> History:
        from mongomem.shortterm.history import History

        return History(
            self.sessions,
            self.turns,
            self.snapshots,
            self.promoter,
            self.policy,
            self.settings.memory.limits.max_response_bytes,
        )

    @cached_property
    def turn_indexer(self) -> TurnIndexer:
        from mongomem.retrieval.turn_indexing import TurnIndexer

        return TurnIndexer(self.turns, self.vector_index, self.embedder, self.settings.memory.recall)

    @property
    def turn_indexing(self) -> Callable[[], TurnIndexer] | None:
        """What the scan runs after promotion: the recall indexer, built when it runs (None: recall off)."""
        if not self.settings.memory.recall.enabled:
            return None
        return lambda: self.turn_indexer

    # -- long-term memory, retrieval ------------------------------------------------------------
    @cached_property
    def indexer(self) -> MemoryIndexer:
        from mongomem.retrieval.indexing import MemoryIndexer

        return MemoryIndexer(
            self.memory_store, self.vector_index, self.settings.memory.metadata.partition_keys
        )

    @cached_property
    def reconciler(self) -> Reconciler:
        from mongomem.extraction.reconcile import Reconciler, thresholds_for

        reinforce_at, ambiguous_from = thresholds_for(self.embedder)
        # an LLM that answers nothing (the offline setting): ambiguous matches are decided by rules
        llm = self.llm if "answers" in self.llm.capabilities else None
        return Reconciler(self.memory_store, self.vector_index, llm, reinforce_at, ambiguous_from)

    @cached_property
    def kinds(self) -> KindRegistry:
        """The built-in memory kinds and the project's custom types."""
        from mongomem.kinds import project_registry

        return project_registry(self.settings.memory.custom_types)

    @cached_property
    def committer(self) -> Committer:
        from mongomem.extraction.commit import Committer

        extraction = self.settings.memory.extraction
        visibilities = {
            kind.name: chosen for kind in self.kinds if (chosen := extraction.of(kind.name).visibility)
        }
        return Committer(self.memory_store, self.reconciler, self.embedder, self.indexer, visibilities)

    @cached_property
    def proposer(self) -> Proposer:
        from mongomem.providers.factory import proposer_for

        return proposer_for(self.llm, self.kinds)

    @cached_property
    def memories(self) -> MemoryService:
        from mongomem.longterm.service import MemoryService

        return MemoryService(
            self.memory_store,
            self.kinds,
            self.committer,
            self.indexer,
            self.settings.memory.metadata.partition_keys,
        )

    @cached_property
    def procedures(self) -> ProcedureService:
        from mongomem.longterm.procedures import ProcedureService

        return ProcedureService(self.memory_store, self.search)

    @cached_property
    def search(self) -> MemorySearch:
        from mongomem.retrieval.search import MemorySearch

        return MemorySearch(
            self.memory_store,
            self.vector_index,
            self.embedder,
            self.kinds,
            self.settings.memory.metadata.partition_keys,
            pending=self.pending,
        )

    @cached_property
    def recall(self) -> Recall:
        from mongomem.retrieval.recall import Recall

        memory = self.settings.memory
        return Recall(
            self.turns, self.vector_index, self.embedder, memory.recall, memory.limits.max_response_bytes
        )

    @cached_property
    def context_builder(self) -> ContextBuilder:
        from mongomem.retrieval.context import ContextBuilder

        wm = self.working_memory_config
        return ContextBuilder(
            self.turns,
            self.working_memory,
            wm.scope,
            self.search,
            self.recall,
            self.kinds,
            pending=self.pending,
        )

    @cached_property
    def pending(self) -> Pending:
        """The "not yet" figures search and context answers carry."""
        from mongomem.retrieval.pending import Pending

        return Pending(self.backlog, self.settings.memory.recall.enabled)

    # -- working memory --------------------------------------------------------------------------
    @cached_property
    def working_memory_config(self) -> WorkingMemoryConfig:
        if self._working_memory_config is not None:
            return self._working_memory_config
        from mongomem.workingmemory.config import parse_working_memory_config

        return parse_working_memory_config(self.settings.memory.working_memory)

    @cached_property
    def working_memory(self) -> WorkingMemoryService:
        from mongomem.workingmemory.service import WorkingMemoryService

        return WorkingMemoryService(self.working_memory_store, self.working_memory_config)

    def forget_turns(self, turns: list[Turn]) -> int:
        """Remove deleted turns' recall index entries (no embedder is built for it)."""
        if not turns:
            return 0
        from mongomem.retrieval.turn_indexing import forget_turns

        return forget_turns(self.vector_index, self.settings.memory.recall, turns)

    @cached_property
    def threads(self) -> Threads:
        from mongomem.workingmemory.threads import Threads

        return Threads(self.working_memory, self.sessions, self.turns, self.snapshots, self.forget_turns)

    # -- extraction ------------------------------------------------------------------------------
    def extractor(self, kind: str) -> Extractor | None:
        """The kind's extractor: the factory `extractors` names (None: none), else the built-in one
        (None for a kind nobody knows or the project turned off). Built once per kind."""
        kind = str(getattr(kind, "value", kind))
        if kind not in self._built:
            if kind in self._extractors:
                factory = self._extractors[kind]
                self._built[kind] = factory(self) if factory is not None else None
            else:
                enabled = kind in {str(t) for t in self.settings.enabled_extractions}
                self._built[kind] = self.builtin_extractor(kind) if enabled and kind in self.kinds else None
        return self._built[kind]

    def builtin_extractor(self, kind: str) -> Extractor:
        """The extractor every known kind has: its proposer, then the one commit step (what
        `extractors` may wrap or replace)."""
        from mongomem.extraction.extractor import KindExtractor

        kind = str(getattr(kind, "value", kind))
        configured = self.settings.memory.extraction.of(kind)
        return KindExtractor(
            self.kinds[kind],
            self.proposer,
            self.committer,
            configured.roles,
            configured.prompt,
            self.settings.memory.metadata.partition_keys,
        )


def _appname(settings: Settings) -> str:
    return f"mongomem:{settings.function_name}" if settings.function_name else "mongomem"


class Runtime:
    """One execution environment's settings and services, kept in step with the applied project config."""

    def __init__(
        self,
        environ: Mapping[str, str] | None = None,
        build: Callable[[Settings], Services] = Services,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._environ = environ
        self._build = build
        self._clock = clock
        self._lock = threading.RLock()
        self._services: Services | None = None
        self._checked_at = float("-inf")
        self._config: dict[str, Any] = {
            "sha256": None,
            "source": "(defaults)",
            "loaded_at": None,
            "error": None,
        }

    # -- the services -----------------------------------------------------------------------------
    def services(self, force_config: bool = False) -> Services:
        """The current services; re-reads the applied config when its max age has passed.

        Services installed with `configure()` (the local stack, tests) win: they are the process's.
        """
        installed = _installed
        if installed is not None:
            return installed
        with self._lock:
            if self._services is None or force_config or self._config_due():
                self._load(force_config)
            assert self._services is not None
            return self._services

    def _config_due(self) -> bool:
        svc = self._services
        if svc is None or not svc.settings.config_parameter:
            return False
        return self._clock() - self._checked_at >= svc.settings.config_max_age

    def _load(self, force: bool) -> None:
        base = settings_from_env(self._environ)
        if not base.config_parameter:
            self._checked_at = self._clock()
            if self._services is None:
                self._services = self._build(base)
                self._config.update(source=_file_source(self._environ), loaded_at=_now())
            return
        from mongomem.adapters.config_source import ConfigSourceError, read_applied

        try:
            # This runtime keeps the config's age, so every read goes to SSM; the age counts from when
            # the read returned, as Powertools' cache would (stamped before the read, a busy function
            # could serve a value cached just after it for up to twice the max age).
            applied = read_applied(base.config_parameter, base.config_max_age, force=True)
        except ConfigSourceError as exc:
            self._checked_at = self._clock()
            if self._services is None:
                # Serving the template's defaults instead of the applied config would change what the
                # function does without anyone noticing: fail this invocation (the API answers 503).
                from mongomem.errors import ConfigUnavailable
                from mongomem.observability import logger

                logger.warning("project config not readable; serving nothing yet", extra={"error": str(exc)})
                raise ConfigUnavailable(
                    f"the project configuration could not be read: {exc}", {"retry_after_seconds": 2}
                ) from exc
            self._failed(base, str(exc))
            return
        self._checked_at = self._clock()
        sha = hashlib.sha256(applied.text.encode()).hexdigest() if applied.text is not None else None
        if self._services is not None and sha == self._config["sha256"] and not self._config["error"]:
            return
        try:
            project = _parse(applied.text, applied.source) if applied.text is not None else base.project
            settings = settings_from_env(
                self._environ,
                project=project,
                config_sha256=sha,
                config_source="deployed" if sha else "defaults",
            )
        except ConfigError as exc:
            self._failed(base, str(exc), sha)
            return
        built = self._build(settings)
        try:
            built.check_custom_types()  # a custom type's schema may not change incompatibly
        except ConfigError as exc:
            self._failed(base, str(exc), sha)
            return
        self._services = built
        self._config = {"sha256": sha, "source": applied.source, "loaded_at": _now(), "error": None}
        _log_config(self._config)

    def _failed(self, base: Settings, error: str, sha: str | None = None) -> None:
        """Keep serving the last good config; with none yet, run on the template defaults and say why."""
        from mongomem.observability import logger

        logger.error("project config not loaded; keeping the previous one", extra={"error": error})
        if self._services is None:
            self._services = self._build(base)
        self._config.update(error=error, failed_sha256=sha)

    def config_report(self) -> dict[str, Any]:
        """What `mongomem memory status` shows for this function: the config it runs, and why not another."""
        with self._lock:
            return dict(self._config)

    # -- the handler wrapper ----------------------------------------------------------------------
    def handler(self, fn: Callable[[dict[str, Any], Any, Services], R]) -> Callable[[Any, Any], Any]:
        """Wrap a Lambda handler `fn(event, context, services)` (see the module docstring)."""

        @functools.wraps(fn)
        def wrapped(event: Any, context: Any) -> Any:
            if isinstance(event, dict) and CONTROL_KEY in event:
                return self.control(event.get(CONTROL_KEY) or {})
            from mongomem.errors import ConfigUnavailable, StoreAuthFailed

            try:
                svc = self.services()
            except ConfigUnavailable as exc:
                if _is_http_api(event):  # the caller gets a retryable 503, not API Gateway's 500
                    return _unavailable_response(exc)
                raise
            try:
                return fn(event, context, svc)
            except StoreAuthFailed:
                # A changed secret: run again on it. Unchanged: run again anyway, as the final attempt, so
                # the API answers its retryable 503 instead of a gateway 500 (other handlers raise again).
                self._reconnect(svc)
            token = _auth_retry.set(True)
            try:
                return fn(event, context, self.services())
            finally:
                _auth_retry.reset(token)

        return wrapped

    def bare_handler(self, fn: Callable[[Any, Any], R]) -> Callable[[Any, Any], Any]:
        """Wrap a handler that builds its services itself, inside its own error handling (the deploy-time
        custom resource); control invocations are answered as `handler` answers them."""

        @functools.wraps(fn)
        def wrapped(event: Any, context: Any) -> Any:
            if isinstance(event, dict) and CONTROL_KEY in event:
                return self.control(event.get(CONTROL_KEY) or {})
            return fn(event, context)

        return wrapped

    def _reconnect(self, failed: Services) -> bool:
        """Refetch the MongoDB secret; rebuild the services when it changed (a rotated password)."""
        from mongomem.observability import logger

        arn = failed.settings.mongodb_secret_arn
        if not arn:
            return False
        from mongomem.adapters.secrets import mongodb_uri_from_secret

        uri = mongodb_uri_from_secret(arn, force=True)
        if uri == failed.mongodb_uri:
            logger.error("MongoDB authentication failed and the secret is unchanged")
            return False
        logger.warning("MongoDB authentication failed; the secret changed (rotation), reconnecting")
        with self._lock:
            self._services = self._build(failed.settings)
        return True

    def control(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Answer a control invocation: the config this function runs and whether it is ready."""
        svc = self.services(force_config=bool(request.get("refresh")))
        report = svc.readiness()
        config = self.config_report()
        if config.get("error"):
            report["ready"] = False
            report["reasons"].append(f"config: {config['error']}")
        return {
            "function": svc.settings.function_name,
            "stage": svc.settings.stage,
            "config": config,
            "ready": report["ready"],
            "reasons": report["reasons"],
            "llm": report["llm"],
            "embeddings": report["embeddings"],
            "extraction": [str(t) for t in svc.settings.enabled_extractions],
        }


def _is_http_api(event: Any) -> bool:
    return isinstance(event, dict) and "http" in (event.get("requestContext") or {}) and "routeKey" in event


def _unavailable_response(exc: Any) -> dict[str, Any]:
    body = {"error": {"code": exc.code, "message": exc.message, "details": exc.details}}
    return {
        "statusCode": 503,
        "headers": {"Content-Type": "application/json", "Retry-After": "2"},
        "body": json.dumps(body),
    }


def _parse(text: str, source: str) -> ProjectConfig:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"invalid configuration in {source}: not valid JSON ({exc})") from exc
    return parse_project_config(data, source)


def _file_source(environ: Mapping[str, str] | None) -> str:
    import os

    env = os.environ if environ is None else environ
    return env.get("MONGOMEM_CONFIG_FILE") or "(defaults)"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _log_config(config: dict[str, Any]) -> None:
    from mongomem.observability import logger

    logger.info(
        "project config loaded", extra={"config_sha256": config["sha256"], "source": config["source"]}
    )


_installed: Services | None = None
_lock = threading.Lock()
_root: Runtime | None = None


def lambda_runtime() -> Runtime:
    """The process's composition root (one per Lambda execution environment)."""
    global _root
    with _lock:
        if _root is None:
            _root = Runtime()
        return _root


def configure(new: Services | None) -> None:
    """Install services explicitly (the local stack, tests); None goes back to the composition root's."""
    global _installed
    with _lock:
        _installed = new
