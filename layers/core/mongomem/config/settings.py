"""`Settings`: what one process runs with, every field declared once with its one default.

The environment sets the fields `FROM_ENVIRONMENT` names (mongomem.config.environment reads them, with these
fields' own types and bounds); the project config is the `project` field.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from mongomem.config.project import (
    DEMO_EMBEDDERS,
    DEMO_LLMS,
    EmbeddingKind,
    EmbeddingProviderConfig,
    LLMKind,
    LLMProviderConfig,
    MemoryConfig,
    ProjectConfig,
    Strict,
    parse_types,
    provider_choice,
    unknown_types,
)
from mongomem.kindnames import CUSTOM_QUEUE, KindName, builtin_names, queue_name

DEFAULT_DB_NAME = "mongomem"
DEFAULT_TENANT = "default"
PoolSize = Annotated[int, Field(ge=1, le=1000)]
ConfigMaxAge = Annotated[int, Field(ge=1, le=3600)]
LeaseSeconds = Annotated[int, Field(ge=5)]
HoleGraceSeconds = Annotated[int, Field(ge=1)]
ScanBatch = Annotated[int, Field(ge=1)]
Replicas = Annotated[int, Field(ge=0, le=5)]
WriteConcern = Literal["auto", "majority", "journaled"]
WriteConcernTimeout = Annotated[int, Field(ge=100, le=60_000)]
OpenSearchAuth = Literal["none", "sigv4-es", "sigv4-aoss"]
OpenSearchEngine = Literal["faiss", "lucene", "nmslib"]


# The providers a deployment uses where neither its template parameters nor the project config name one:
# the local demo ones (a deployed function refuses them unless AllowDemoProviders is set).
DEPLOYMENT_LLM: LLMKind = "offline"
DEPLOYMENT_EMBEDDER: EmbeddingKind = "local"


class Settings(Strict):
    """Runtime settings of one process (a Lambda execution environment or the local stack)."""

    mongodb_uri: str = "mongodb://127.0.0.1:27017/?directConnection=true"
    mongodb_secret_arn: str | None = None
    db_name: str = DEFAULT_DB_NAME
    # Inside Lambda (the runtime sets AWS_LAMBDA_FUNCTION_NAME): indexes come from the deploy-time
    # migration, demo providers are refused, and a request without an authorizer context is refused
    # (never served as the default tenant).
    in_lambda: bool = False
    function_name: str | None = None
    stage: str | None = None
    # Create MongoDB indexes on first use (local stack, tests); deployed stacks run `migrate` instead.
    ensure_indexes: bool = True
    # Create the search index when a write finds it missing (local); deployed: the migration creates it.
    create_search_index: bool = True
    # Connections per process, at most (pymongo opens them as threads need them): the local stack serves
    # many requests at once (IN_LAMBDA: what a Lambda environment runs with).
    mongo_max_pool_size: PoolSize = 100
    # The applied project config of a deployed stack (SSM parameter, read with this max age).
    config_parameter: str | None = None
    config_max_age: ConfigMaxAge = 60
    # The deployment's providers, used where the project config leaves `kind` unset.
    default_llm: LLMProviderConfig = Field(default_factory=lambda: LLMProviderConfig(kind=DEPLOYMENT_LLM))
    default_embeddings: EmbeddingProviderConfig = Field(
        default_factory=lambda: EmbeddingProviderConfig(kind=DEPLOYMENT_EMBEDDER)
    )
    allow_demo_providers: bool = True
    # Secrets Manager secret holding provider API keys ({"OPENAI_API_KEY": ...}); read on first use.
    provider_secret_arn: str | None = None
    tenant_default: str = DEFAULT_TENANT
    # Kind names: built-in ones and the project's custom types.
    enabled_extractions: list[KindName] = Field(default_factory=lambda: builtin_names())
    # Which queue's messages this extraction function takes: a built-in kind, or `custom` (every custom type).
    extraction_type: KindName | None = None
    # Queue URL per extraction queue (built-in kinds and `custom`); "local:<name>" addresses the local stack's.
    queue_urls: dict[str, str] = Field(default_factory=dict)
    opensearch_endpoint: str | None = None
    opensearch_auth: OpenSearchAuth = "none"
    opensearch_engine: OpenSearchEngine = "faiss"
    opensearch_index: str = "mongomem-memories"
    # Replicas of each shard of a new search index; None leaves OpenSearch's default (1). A one-node domain
    # cannot place a replica: 0, or the cluster stays yellow (the template sets it from the node count).
    opensearch_replicas: Replicas | None = None
    aws_region: str | None = None
    # The embedded in-process vector index (the local stack); None = no index unless OpenSearch is set.
    vector_index_path: str | None = None
    # After erasing a user, ask the database for a checkpoint (MongoDB's `fsync` command) so its storage
    # files keep no copy of the user (the local stack's SecantusDB retires its journal file then: see
    # docs/security.md "Erasure"). Off for managed databases (Atlas refuses `fsync` to applications).
    erase_checkpoint: bool = False
    # Provider API keys, read from the variables project-config names (providers.*.api_key_env).
    provider_secrets: dict[str, str] = Field(default_factory=dict, repr=False)
    lease_seconds: LeaseSeconds = 120
    # How long a hole in a session's seq range may wait for its writer before promotion skips over it.
    hole_grace_seconds: HoleGraceSeconds = 60
    scan_batch: ScanBatch = 100
    # The write concern of every acknowledged write (docs/adr/0002-durability-what-a-2xx-means.md): `auto` picks
    # `majority` + journal on a replica set, sharded cluster or Atlas and `{w: 1, j: true}` on a standalone.
    write_concern: WriteConcern = "auto"
    # How long a `majority` write may wait for replication before it fails (503, retry with the token).
    write_concern_timeout_ms: WriteConcernTimeout = 5000
    project: ProjectConfig = Field(default_factory=ProjectConfig)
    # Which project config this process runs with: the SHA-256 of the applied SSM version (a deployed
    # function), else that of the config file's text (what `mongomem memory status` compares).
    config_sha256: str | None = None
    config_source: Literal["deployed", "file", "defaults"] = "defaults"
    # The project config file MONGOMEM_CONFIG_FILE names (local runs), whether or not it exists.
    config_file: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _where_it_runs(cls, data: Any) -> Any:
        """Inside Lambda, the fields IN_LAMBDA names default to its values instead of their own."""
        if isinstance(data, dict) and data.get("in_lambda"):
            return {**IN_LAMBDA, **data}
        return data

    @field_validator("enabled_extractions", mode="before")
    @classmethod
    def _known_types(cls, value: Any) -> Any:
        return parse_types(value)

    @model_validator(mode="after")
    def _enabled_known(self) -> Settings:
        problem = unknown_types(list(self.enabled_extractions), self.memory.kind_names)
        if problem:
            raise ValueError(f"enabled_extractions: {problem}")
        if self.extraction_type is not None and self.extraction_type not in [*builtin_names(), CUSTOM_QUEUE]:
            raise ValueError(
                f"extraction_type: {self.extraction_type!r} is neither a built-in kind nor 'custom'"
            )
        return self

    @property
    def queue_kinds(self) -> list[str]:
        """The extraction queues the enabled kinds use (built-in kinds' own, `custom` for the rest)."""
        return list(dict.fromkeys(queue_name(k) for k in self.enabled_extractions))

    @property
    def memory(self) -> MemoryConfig:
        return self.project.memory

    @property
    def llm_config(self) -> LLMProviderConfig:
        """The LLM to use: the project config's choice, else the deployment's."""
        return provider_choice(self.default_llm, self.memory.providers.llm)

    @property
    def embedding_config(self) -> EmbeddingProviderConfig:
        """The embedder to use: the project config's choice, else the deployment's."""
        return provider_choice(self.default_embeddings, self.memory.providers.embeddings)

    def demo_refusal(self, kind: str | None) -> str | None:
        """Why a demo provider may not run here (inside Lambda without AllowDemoProviders), else None."""
        if not self.in_lambda or self.allow_demo_providers or kind not in DEMO_LLMS | DEMO_EMBEDDERS:
            return None
        return (
            f"{kind!r} is a local demo provider; a deployed stack refuses it unless the stack parameter "
            "AllowDemoProviders is true (configure bedrock, openai-compatible or voyage instead)"
        )


# What a Lambda execution environment runs with where Settings' own defaults are the local stack's (where
# the variable is unset): indexes and the search index come from the deploy-time migration, demo providers
# are refused, and a small connection pool. One environment serves one request at a time; the most that
# request reads at once is its own thread plus the read pool's (mongomem.retrieval.background, 6 workers,
# for a context block's sources), so a pool of 4 makes at most 3 of those reads wait for a connection,
# while it keeps a fleet of N concurrent environments within 4N connections of the database's limit (an
# Atlas tier's connection cap, which the local stack's 100 per environment would pass at a few hundred).
IN_LAMBDA: dict[str, Any] = {
    "ensure_indexes": False,
    "create_search_index": False,
    "allow_demo_providers": False,
    "mongo_max_pool_size": 4,
}

# The fields the environment sets (MONGOMEM_<FIELD>, read by mongomem.config.environment.EnvironmentSettings
# with these fields' own types and bounds); the rest come from the project config or are derived.
FROM_ENVIRONMENT = (
    "function_name",
    "aws_region",
    "stage",
    "config_file",
    "config_parameter",
    "config_max_age",
    "mongodb_uri",
    "mongodb_secret_arn",
    "db_name",
    "mongo_max_pool_size",
    "write_concern",
    "write_concern_timeout_ms",
    "ensure_indexes",
    "tenant_default",
    "enabled_extractions",
    "extraction_type",
    "lease_seconds",
    "hole_grace_seconds",
    "scan_batch",
    "opensearch_endpoint",
    "opensearch_auth",
    "opensearch_engine",
    "opensearch_index",
    "opensearch_replicas",
    "vector_index_path",
    "erase_checkpoint",
    "allow_demo_providers",
    "provider_secret_arn",
)
