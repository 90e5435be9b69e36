"""Shared infrastructure of the composition root: settings, MongoDB, the queue, providers, the index.

Every context's root (short-term, long-term, retrieval, identity) builds on this class; each piece is
built on first use. `Services` (runtime/services.py) is all of them together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, TypeVar
from urllib.parse import urlsplit

# Every function talks to MongoDB: the driver loads with the function (its init phase), not on its first
# request. Everything else is imported where it is built.
from mongomem import markerkey
from mongomem.adapters.mongo.driver import MongoDatabase, get_client, write_concern_for

if TYPE_CHECKING:
    from typing import Unpack

    from mongomem.adapters.mongo.erasure import MongoErasureRepository
    from mongomem.config import Settings
    from mongomem.extraction.extractor import Extractor
    from mongomem.ports import EmbeddingProvider, LLMProvider, QueuePort
    from mongomem.status import BacklogRepository
    from mongomem.vectors.port import VectorIndex
    from mongomem.workingmemory.config import WorkingMemoryConfig


class Indexed(Protocol):
    """A repository that creates its collection's indexes (on first use locally; `migrate` when deployed)."""

    def ensure_indexes(self) -> None: ...


R = TypeVar("R", bound=Indexed)
# Builds a memory kind's extractor from the services (Services(extractors=...) replaces the default;
# None there: the kind has no extractor, its snapshots' status becomes `skipped`). Keys are kind names.
# (typed Any: the argument is the whole `Services`, which imports this module; naming it here would be an
# import cycle, and the import contracts count TYPE_CHECKING imports)
ExtractorFactory = Callable[[Any], "Extractor"] | None


class Parts(TypedDict, total=False):
    """What a root is given instead of building it (tests, the local stack); each one not given (or None)
    is built on first use."""

    queue: QueuePort | None
    queue_factory: Callable[[Any], QueuePort] | None  # builds the queue from the services (the local stack's)
    llm: LLMProvider | None
    embedder: EmbeddingProvider | None
    vector_index: VectorIndex | None
    mongodb_uri: str | None
    # by kind name (a `BuiltinKind` member is one)
    extractors: Mapping[Any, ExtractorFactory] | None
    working_memory_config: WorkingMemoryConfig | None


class Infrastructure:
    """What every context builds on; the parts given replace any collaborator (tests)."""

    def __init__(self, settings: Settings, **parts: Unpack[Parts]) -> None:
        self.settings = settings
        self.parts = parts
        self._extractors = {str(k): f for k, f in (parts.get("extractors") or {}).items()}
        self._built: dict[str, Extractor | None] = {}

    @cached_property
    def mongodb_uri(self) -> str:
        if given := self.parts.get("mongodb_uri"):
            return given
        if self.settings.mongodb_secret_arn:
            from mongomem.adapters.secrets import mongodb_uri_from_secret  # lazy: 14 ms

            return mongodb_uri_from_secret(self.settings.mongodb_secret_arn)
        return self.settings.mongodb_uri

    @cached_property
    def database(self) -> MongoDatabase:
        s = self.settings
        _key_marker_tokens(self.mongodb_uri)
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
            repository.ensure_indexes()
        return repository

    @cached_property
    def erasure(self) -> MongoErasureRepository:
        from mongomem.adapters.mongo.erasure import MongoErasureRepository  # lazy: 32 ms

        return self._indexed(MongoErasureRepository(self.database, checkpoint=self.settings.erase_checkpoint))

    @cached_property
    def backlog(self) -> BacklogRepository:
        from mongomem.adapters.mongo.backlog import MongoBacklogRepository  # lazy: 36 ms

        return MongoBacklogRepository(self.database)

    def store_reachable(self) -> bool:
        return self.database.ping()

    @cached_property
    def queue(self) -> QueuePort:
        if (given := self.parts.get("queue")) is not None:
            return given
        if (factory := self.parts.get("queue_factory")) is not None:
            return factory(self)
        from mongomem.adapters.queues import queue_for  # lazy: 14 ms

        return queue_for(self.settings)

    @cached_property
    def llm(self) -> LLMProvider:
        if (given := self.parts.get("llm")) is not None:
            return given
        from mongomem.providers.factory import llm_from_config  # lazy: 23 ms

        cfg = self.settings.llm_config
        return llm_from_config(cfg, self.provider_env, refused=self.settings.demo_refusal(cfg.kind))

    @cached_property
    def embedder(self) -> EmbeddingProvider:
        if (given := self.parts.get("embedder")) is not None:
            return given
        from mongomem.providers.factory import embedder_from_config  # lazy: 19 ms

        cfg = self.settings.embedding_config
        return embedder_from_config(cfg, self.provider_env, refused=self.settings.demo_refusal(cfg.kind))

    @cached_property
    def provider_env(self) -> dict[str, str]:
        """What the provider factories may read: the named keys (env or provider secret) and the region."""
        env = dict(self.settings.provider_secrets)
        if self.settings.provider_secret_arn:
            from mongomem.adapters.secrets import provider_keys  # lazy: 15 ms

            env.update(provider_keys(self.settings.provider_secret_arn))
        if self.settings.aws_region:
            env["AWS_REGION"] = self.settings.aws_region
        return env

    def readiness(self) -> dict[str, Any]:
        """Whether an LLM and an embedding provider are usable, and why not (the LLM server's cached probe
        is the only network call)."""
        from mongomem.providers.factory import readiness  # lazy: 20 ms

        return readiness(self.llm, self.embedder)

    @cached_property
    def vector_index(self) -> VectorIndex | None:
        if (given := self.parts.get("vector_index")) is not None:
            return given
        s = self.settings
        if s.opensearch_endpoint:
            from mongomem.vectors.opensearch import OpenSearchIndex, make_client  # lazy: 101 ms

            client = make_client(s.opensearch_endpoint, auth=s.opensearch_auth, region=s.aws_region)
            # SigV4 for `aoss` is a Serverless collection: its rules (no custom ids, no refresh) apply
            return OpenSearchIndex(
                client,
                s.opensearch_index,
                engine=s.opensearch_engine,
                replicas=s.opensearch_replicas,
                create_missing=s.create_search_index,
                serverless=s.opensearch_auth == "sigv4-aoss",
            )
        if s.vector_index_path:
            from mongomem.vectors.embedded import EmbeddedIndex  # lazy: 10 ms

            return EmbeddedIndex(Path(s.vector_index_path))
        return None


def _appname(settings: Settings) -> str:
    return f"mongomem:{settings.function_name}" if settings.function_name else "mongomem"


def _key_marker_tokens(uri: str) -> None:
    """Key the blocks' tokens by the database's password where the URI holds one (a deployment's every
    process shares it, so a reader's context block starts with the same bytes whichever serves it: ADR
    0081); without one (the local stack) the process's own key stays."""
    try:
        password = urlsplit(uri).password
    except ValueError:
        return
    if password:
        markerkey.use_secret(uri)
