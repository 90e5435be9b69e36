"""Settings: the one place that reads the environment and project-config.yaml.

Everything else receives a `Settings` (or a part of it) as an argument.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AliasGenerator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

# Defined with the other errors so that modules validating parts of the config need not import this one.
from mongomem.errors import ConfigError
from mongomem.kindnames import BUILTIN_KINDS as BUILTIN_KINDS
from mongomem.kindnames import CUSTOM_QUEUE, MAX_CUSTOM_TYPES, KindName, builtin_names, queue_name
from mongomem.kindnames import KIND_NAME_PATTERN as KIND_NAME_PATTERN
from mongomem.models.base import Model

# Kind names live in mongomem.kindnames (re-exported here for the modules that read them with the config).
_M = TypeVar("_M", bound=BaseModel)


class _Strict(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _parse_types(value: Any) -> Any:
    """A list (or comma-separated string) of kind names, lower case, without repeats."""
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return list(dict.fromkeys(str(getattr(v, "value", v)).strip().lower() for v in value))
    return value


def _unknown_types(names: list[str], known: list[str]) -> str | None:
    bad = [n for n in names if n not in known]
    if not bad:
        return None
    return f"unknown memory type(s) {', '.join(repr(b) for b in bad)}; allowed: {', '.join(known)}"


TurnRole = Literal["user", "assistant", "system", "tool"]


class KindExtraction(_Strict):
    """`memory.extraction.<kind>`: what one kind's extraction reads and asks for."""

    # Which turns the kind is extracted from; None: the kind's default (never system turns; tool calls and
    # results only for procedures).
    roles: list[TurnRole] | None = Field(None, min_length=1)
    # Replaces the kind's instructions (what to extract); the shared rules (the conversation is data, the
    # answer format, evidence) and the item fields are not replaceable.
    prompt: str | None = Field(None, min_length=1, max_length=4096)
    # Who sees the kind's memories: one user (`private`) or every user of the tenant (`org`); None: the
    # kind's default (taxonomic and procedural org; semantic, episodic and preference private).
    visibility: Literal["private", "org"] | None = None


class ExtractionConfig(_Strict):
    """`memory.extraction`: which kinds are extracted, and beside `enabled` one `<kind>: {roles, prompt,
    visibility}` entry per built-in kind the project tunes (a mapping from kind name to KindExtraction).

    A custom type's extraction is set on the type itself (memory.custom_types[]), so only the kind registry's
    built-in names are keys here; any other key is refused with the names that are.
    """

    model_config = ConfigDict(extra="allow", frozen=True)
    # The per-kind settings: pydantic keeps the extra keys here, each checked as a KindExtraction.
    __pydantic_extra__: dict[str, KindExtraction] = Field(init=False)

    # Built-in kinds and the custom types of memory.custom_types (checked by MemoryConfig).
    enabled: list[KindName] = Field(default_factory=lambda: builtin_names())

    @property
    def kinds(self) -> dict[str, KindExtraction]:
        """The kinds the project tunes, by name."""
        return dict(self.__pydantic_extra__ or {})

    def of(self, kind: str) -> KindExtraction:
        return self.kinds.get(str(kind)) or KindExtraction()

    @model_validator(mode="before")
    @classmethod
    def _known_kinds(cls, data: Any) -> Any:
        if isinstance(data, dict):
            bad = [str(k) for k in data if k != "enabled" and k not in builtin_names()]
            if bad:
                where = ", ".join(f"memory.extraction.{b}" for b in bad)
                raise ValueError(
                    f"{where}: not a built-in kind; besides `enabled`, the keys are the built-in kinds "
                    f"({', '.join(builtin_names())}); a custom type's extraction is set on the type "
                    "(memory.custom_types[])"
                )
        return data

    @field_validator("enabled", mode="before")
    @classmethod
    def _known_types(cls, value: Any, info: ValidationInfo) -> Any:
        names = _parse_types(value)
        # parse_project_config passes the declared custom types' names, so that an unknown name is reported
        # with every other bad field (MemoryConfig checks again when validated without them)
        custom = (info.context or {}).get("custom_types")
        if isinstance(names, list) and custom is not None:
            problem = _unknown_types(names, [*builtin_names(), *custom])
            if problem:
                raise ValueError(problem)
        return names


class TopicShiftConfig(_Strict):
    """`memory.snapshot.topic_shift`: cut a session's unpromoted turns where the topic changes (scan job)."""

    enabled: bool = False
    # A cut goes where the cosine similarity of the `window` turns after a point and the `window` turns
    # before it falls below this. None: the embedder's measured value (the bundled e5 model: 0.915), else
    # 0.8 (docs/adr/0006-topic-shift-snapshots-memory-snapshot-topic-shift.md: the scale depends on the embedding model).
    threshold: float | None = Field(None, ge=-1.0, le=1.0)
    # User/assistant turns compared on each side of a point; a topic-shift snapshot holds at least this many.
    window: int = Field(4, ge=1, le=20)


class SnapshotConfig(_Strict):
    max_messages: int = Field(50, ge=1, le=10_000)
    max_tokens: int | None = Field(None, ge=1)
    idle_seconds: int = Field(900, ge=1)
    ttl_days: int = Field(365, ge=1)
    # Delete a snapshot's turns (and their recall index entries) as soon as every enabled kind is
    # extracted, instead of ttl_days later.
    delete_promoted: bool = False
    topic_shift: TopicShiftConfig = Field(default_factory=TopicShiftConfig)


LLMKind = Literal["bedrock", "openai-compatible", "offline", "scripted"]
EmbeddingKind = Literal["bedrock-titan-v2", "voyage", "openai-compatible", "local", "hashing"]

# Providers for local runs and demos: no network, no account. A deployed function refuses them
# (status says why) unless the stack sets AllowDemoProviders=true.
DEMO_LLMS = frozenset({"offline", "scripted"})
DEMO_EMBEDDERS = frozenset({"local", "hashing"})


class LLMProviderConfig(_Strict):
    # None: the deployment's default (template parameters in AWS; the offline extractor locally).
    kind: LLMKind | None = None
    model: str | None = None  # Bedrock model id / inference profile, or the OpenAI-compatible model name
    base_url: str | None = None  # openai-compatible only; default https://api.openai.com/v1
    # The key's name (never the key itself): a field of the stack's provider secret in AWS, an env var locally.
    api_key_env: str | None = None
    timeout_seconds: float = Field(30.0, gt=0)
    region: str | None = None  # bedrock only; default: the function's AWS_REGION
    max_retries: int = Field(3, ge=0, le=10)  # retries after the first attempt on throttling/5xx/timeouts
    temperature: float | None = Field(0.0, ge=0, le=2)  # None leaves it to the server
    script_file: str | None = None  # scripted only: JSON {task: [answer, ...]}
    # openai-compatible only: how the answer is held to its schema (docs/providers.md); auto: the first
    # mode the server accepts, learnt from its refusals
    structured_output: Literal[
        "auto", "json_schema", "json_object_schema", "tools", "json_object", "prompt"
    ] = "auto"
    # At most this many LLM calls at once in one process (the local stack's extraction pollers share it);
    # None: no limit. A deployed stack limits each extraction function with its queue's MaximumConcurrency.
    max_concurrency: int | None = Field(None, ge=1, le=256)

    @model_validator(mode="after")
    def _bedrock_temperature(self) -> LLMProviderConfig:
        # Converse's InferenceConfiguration takes a temperature in [0, 1] (docs/aws-rules.md, Bedrock Runtime)
        if self.kind == "bedrock" and self.temperature is not None and self.temperature > 1:
            raise ValueError(f"temperature {self.temperature} is above 1, the most Bedrock Converse accepts")
        return self


EmbeddingDim = Annotated[int, Field(ge=8, le=8192)]


class EmbeddingProviderConfig(_Strict):
    # None: the deployment's default (template parameters in AWS; the bundled local model locally).
    kind: EmbeddingKind | None = None
    model: str | None = None
    # None: the provider's default (Titan/Voyage 1024, hashing 256, text-embedding-3-* their own).
    dim: EmbeddingDim | None = None
    base_url: str | None = None
    api_key_env: str | None = None  # the key's name, as for the LLM (voyage default VOYAGE_API_KEY)
    timeout_seconds: float = Field(30.0, gt=0)
    region: str | None = None  # bedrock-titan-v2 only; default: the function's AWS_REGION
    max_retries: int = Field(3, ge=0, le=10)
    batch_size: int = Field(128, ge=1, le=1000)  # texts per HTTP request (voyage, openai-compatible)


class ProvidersConfig(_Strict):
    llm: LLMProviderConfig = Field(default_factory=LLMProviderConfig)
    embeddings: EmbeddingProviderConfig = Field(default_factory=EmbeddingProviderConfig)


class LimitsConfig(_Strict):
    # One turn's content (UTF-8 bytes). A request body stays within max_body_bytes (docs/operations.md
    # "Payload limits": API Gateway HTTP APIs take 10 MB, a synchronous Lambda invocation 6 MB).
    max_content_bytes: int = Field(1024 * 1024, ge=1, le=4 * 1024 * 1024)
    max_batch: int = Field(100, ge=1, le=1000)
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024, le=5 * 1024 * 1024)
    # What one recall or history answer may carry of turn content: Lambda's 6 MB response limit.
    max_response_bytes: int = Field(4 * 1024 * 1024, ge=64 * 1024, le=5 * 1024 * 1024)


class RecallConfig(_Strict):
    """Semantic recall of recorded user/assistant turns (indexed by the scan job, never on record)."""

    enabled: bool = True
    # Turns embedded per batch by the scan job, and at most per scan run (the rest wait for the next).
    index_batch: int = Field(64, ge=1, le=1000)
    index_max_per_run: int = Field(512, ge=1, le=100_000)
    # RRF constant of the four-ranking fusion (bench/studies/embeddings/RESULTS.md: 10 beats 60 on LoCoMo).
    rrf_k: int = Field(10, ge=1, le=1000)
    # Candidates each of the four rankings contributes before fusion.
    candidates: int = Field(100, ge=10, le=1000)
    # A turn longer than chunk_chars is embedded in chunks (overlapping by chunk_overlap), at most
    # max_chunks of them: its head and its tail (docs/recall.md, "Long turns"); recall still returns
    # the whole message. 16 chunks cost about what a batch of ordinary turns costs to embed.
    chunk_chars: int = Field(2000, ge=200, le=50_000)
    chunk_overlap: int = Field(200, ge=0, le=10_000)
    max_chunks: int = Field(16, ge=1, le=10_000)
    # Index turns within seconds of recording: the scan invocation keeps indexing new turns every
    # embed_on_write_poll_seconds for up to embed_on_write_seconds (docs/adr/0008-embed-on-write-memory-recall-embed-on-write.md).
    embed_on_write: bool = False
    embed_on_write_poll_seconds: float = Field(2.0, ge=0.2, le=30)
    embed_on_write_seconds: int = Field(50, ge=1, le=840)


class CustomTypeConfig(_Strict):
    """`memory.custom_types[]`: a memory type of the project's own (its name is fixed once created)."""

    name: KindName = Field(description="the type's name, as `type` of its memories (fixed once created)")
    description: str | None = Field(None, max_length=300)
    # JSON Schema of the payload: an object whose properties the LLM fills and every write is checked against.
    schema_: dict[str, Any] = Field(alias="schema")
    # The payload fields whose values identify one memory: two memories with equal values are one thing
    # (a restatement reinforces it, another value in the other fields updates it).
    match_key: list[str] = Field(min_length=1, max_length=5)
    # What the LLM is asked to extract for this type (the shared rules and the answer format stay).
    prompt: str = Field(min_length=1, max_length=4096)
    visibility: Literal["private", "org"] = "private"
    # Which turns it is extracted from (default: user and assistant turns).
    roles: list[TurnRole] | None = Field(None, min_length=1)

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("name")
    @classmethod
    def _not_builtin(cls, value: str) -> str:
        if value in builtin_names() or value == CUSTOM_QUEUE:
            raise ValueError(f"{value!r} is a built-in memory type's name; choose another")
        return value

    @model_validator(mode="after")
    def _schema(self) -> CustomTypeConfig:
        # lazy: only a config declaring custom types pays for jsonschema
        from mongomem.kindschema import schema_problems

        problems = schema_problems(self.schema_, self.match_key)
        if problems:
            raise ValueError("; ".join(problems))
        return self


class MetadataConfig(_Strict):
    """`memory.metadata`: which keys of memories' `metadata` the search index holds (search filters on them)."""

    partition_keys: list[str] = Field(default_factory=list, max_length=16)

    @field_validator("partition_keys")
    @classmethod
    def _keys(cls, value: list[str]) -> list[str]:
        import re

        bad = [k for k in value if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,63}", k)]
        if bad:
            raise ValueError(f"partition keys are names of letters, digits, '_' and '-': {bad}")
        return list(dict.fromkeys(value))


class MemoryConfig(_Strict):
    extraction: ExtractionConfig = Field(default_factory=ExtractionConfig)
    # Up to five memory types of the project's own (mongomem.kinds.custom), extracted, reconciled,
    # searched and listed like the built-in ones.
    custom_types: list[CustomTypeConfig] = Field(default_factory=list, max_length=MAX_CUSTOM_TYPES)
    # Validated by mongomem.workingmemory.config (imported lazily: it needs jsonschema, the record path does not).
    working_memory: dict[str, Any] = Field(default_factory=dict)
    snapshot: SnapshotConfig = Field(default_factory=SnapshotConfig)
    providers: ProvidersConfig = Field(default_factory=ProvidersConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    recall: RecallConfig = Field(default_factory=RecallConfig)
    metadata: MetadataConfig = Field(default_factory=MetadataConfig)

    @field_validator("working_memory")
    @classmethod
    def _working_memory(cls, value: dict[str, Any]) -> dict[str, Any]:
        from mongomem.workingmemory.config import parse_working_memory_config

        parse_working_memory_config(value)
        return value

    @field_validator("custom_types")
    @classmethod
    def _distinct_types(cls, value: list[CustomTypeConfig]) -> list[CustomTypeConfig]:
        names = [t.name for t in value]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"custom type(s) declared twice: {', '.join(twice)}")
        return value

    @model_validator(mode="after")
    def _enabled_known(self) -> MemoryConfig:
        problem = _unknown_types(list(self.extraction.enabled), self.kind_names)
        if problem:
            raise ValueError(f"extraction.enabled: {problem}")
        return self

    @property
    def kind_names(self) -> list[str]:
        """Every memory kind of the project: the built-in ones, then the custom types."""
        return [*builtin_names(), *(t.name for t in self.custom_types)]

    @property
    def enabled_kinds(self) -> list[str]:
        """The kinds extracted automatically: `extraction.enabled` when set, else every kind."""
        if "enabled" in self.extraction.model_fields_set:
            return list(self.extraction.enabled)
        return [*self.extraction.enabled, *(t.name for t in self.custom_types)]


class ProjectConfig(_Strict):
    memory: MemoryConfig = Field(default_factory=MemoryConfig)


def _format_errors(exc: ValidationError, source: str) -> str:
    lines = []
    for err in exc.errors():
        path = ".".join(str(p) for p in err["loc"]) or "(root)"
        lines.append(f"  {path}: {err['msg']}")
    return f"invalid configuration in {source}:\n" + "\n".join(lines)


def parse_project_config(data: Any, source: str = "project-config.yaml") -> ProjectConfig:
    """Validate a parsed project-config document; raises ConfigError naming every bad field."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"invalid configuration in {source}: the document must be a mapping")
    try:
        return ProjectConfig.model_validate(data, context={"custom_types": _declared_names(data)})
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, source)) from exc


def _declared_names(data: dict[str, Any]) -> list[str]:
    """The names memory.custom_types declares in a raw document (validated with the rest)."""
    memory = data.get("memory")
    declared = memory.get("custom_types") if isinstance(memory, dict) else None
    if not isinstance(declared, list):
        return []
    return [str(t["name"]) for t in declared if isinstance(t, dict) and isinstance(t.get("name"), str)]


def load_project_config(path: Path | None) -> ProjectConfig:
    """Read and validate project-config.yaml; a missing file means the defaults."""
    if path is None or not path.exists():
        return ProjectConfig()
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        import json

        try:
            return parse_project_config(json.loads(text), str(path))
        except ValueError as exc:
            raise ConfigError(f"invalid configuration in {path}: not valid JSON ({exc})") from exc
    try:
        import yaml  # lazy, and not in the Lambda layer: deployed functions read the applied config as JSON
    except ImportError as exc:
        raise ConfigError(
            f"{path}: reading YAML needs PyYAML (pip install mongomem); give a .json file instead"
        ) from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"invalid configuration in {path}: not valid YAML{where}: {problem}") from exc
    return parse_project_config(data, str(path))


def provider_choice(default: _M, chosen: _M) -> _M:
    """A provider's settings: `chosen` (the project config's) where it set a field, `default` (the
    deployment's choice) elsewhere; a chosen `kind` replaces the default entirely."""
    if getattr(chosen, "kind", None) is not None:
        return chosen
    return default.model_copy(update=chosen.model_dump(exclude_unset=True, exclude={"kind"}))


# Settings the environment sets (EnvironmentSettings) and Settings holds, checked alike in both.
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


class Settings(_Strict):
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
    # Connections per process: a Lambda environment serves one request at a time.
    mongo_max_pool_size: PoolSize = 100
    # The applied project config of a deployed stack (SSM parameter, read with this max age).
    config_parameter: str | None = None
    config_max_age: ConfigMaxAge = 60
    # The deployment's providers, used where the project config leaves `kind` unset.
    default_llm: LLMProviderConfig = Field(default_factory=lambda: LLMProviderConfig(kind="offline"))
    default_embeddings: EmbeddingProviderConfig = Field(
        default_factory=lambda: EmbeddingProviderConfig(kind="local")
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

    @field_validator("enabled_extractions", mode="before")
    @classmethod
    def _known_types(cls, value: Any) -> Any:
        return _parse_types(value)

    @model_validator(mode="after")
    def _enabled_known(self) -> Settings:
        problem = _unknown_types(list(self.enabled_extractions), self.memory.kind_names)
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


ENV_PREFIX = "MONGOMEM_"


def _variable(field: str) -> str:
    return ENV_PREFIX + field.upper()


class EnvironmentSettings(_Strict):
    """Every environment variable the runtime reads, one field each, with pydantic-settings' conventions:
    MONGOMEM_<FIELD> in any case, the Lambda runtime's own two by alias, a blank value unset.

    None is unset: Settings' default applies (some depend on `in_lambda`). Read with `from_mapping`, from
    the mapping the entry point hands in. docs/operations.md "Environment variables" lists them (a test
    keeps both equal); docs/adr/0038-environment-settings-one-pydantic-model.md says why not pydantic-settings.
    """

    # An error's location is the alias, so every message names the variable (MONGOMEM_LEASE_SECONDS: ...).
    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=AliasGenerator(validation_alias=_variable)
    )

    # Set by the Lambda runtime: a function runs inside Lambda (Settings.in_lambda), in this region.
    function_name: str | None = Field(None, validation_alias="AWS_LAMBDA_FUNCTION_NAME")
    aws_region: str | None = Field(None, validation_alias="AWS_REGION")
    stage: str | None = None
    # The project config: a file (local runs), or a deployed stack's SSM parameter read with a max age.
    config_file: str | None = None
    config_parameter: str | None = None
    config_max_age: ConfigMaxAge | None = None
    mongodb_uri: str | None = None
    mongodb_secret_arn: str | None = None
    db_name: str | None = None
    mongo_max_pool_size: PoolSize | None = None
    write_concern: WriteConcern | None = None
    write_concern_timeout_ms: WriteConcernTimeout | None = None
    ensure_indexes: bool | None = None
    tenant_default: str | None = None
    # Kind names, comma-separated; blank is no kind (the one variable where blank is not unset).
    enabled_extractions: list[KindName] | None = None
    extraction_type: KindName | None = None
    # The extraction queues' URLs, `{kind}` standing for the queue's name (MONGOMEM_QUEUE_URL_<QUEUE> wins).
    queue_url_template: str | None = None
    lease_seconds: LeaseSeconds | None = None
    hole_grace_seconds: HoleGraceSeconds | None = None
    scan_batch: ScanBatch | None = None
    opensearch_endpoint: str | None = None
    opensearch_auth: OpenSearchAuth | None = None
    opensearch_engine: OpenSearchEngine | None = None
    opensearch_index: str | None = None
    opensearch_replicas: Replicas | None = None
    vector_index_path: str | None = None
    erase_checkpoint: bool | None = None
    # The deployment's default providers (template parameters); the project config may choose others.
    llm_provider: LLMKind | None = None
    llm_model: str | None = None
    llm_base_url: str | None = None
    embedding_provider: EmbeddingKind | None = None
    embedding_model: str | None = None
    embedding_dim: EmbeddingDim | None = None
    allow_demo_providers: bool | None = None
    provider_secret_arn: str | None = None

    @field_validator("enabled_extractions", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        return _parse_types(value)

    @field_validator("extraction_type")
    @classmethod
    def _a_queue(cls, value: str | None) -> str | None:
        queues = [*builtin_names(), CUSTOM_QUEUE]
        if value is not None and value not in queues:
            raise ValueError(f"{value!r} is not an extraction queue; allowed: {', '.join(queues)}")
        return value

    @classmethod
    def variable(cls, field: str) -> str:
        """The variable a field is read from."""
        alias = cls.model_fields[field].validation_alias
        return alias if isinstance(alias, str) else _variable(field)

    @classmethod
    def from_mapping(cls, environ: Mapping[str, str]) -> EnvironmentSettings:
        """Read `environ` (surrounding blanks dropped); raises ConfigError naming each bad variable."""
        given = {name.upper(): value.strip() for name, value in environ.items()}
        values: dict[str, str] = {}
        for field in cls.model_fields:
            name = cls.variable(field)
            if given.get(name) or (name in given and field == "enabled_extractions"):
                values[name] = given[name]
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise ConfigError(_format_errors(exc, "environment")) from exc


def settings_from_env(
    environ: Mapping[str, str] | None = None, project: ProjectConfig | None = None, **overrides: Any
) -> Settings:
    """Build Settings from the environment (EnvironmentSettings) and a project config.

    The project config is `project` when given (a deployed function passes the one it read from the
    stack's config parameter), else the file MONGOMEM_CONFIG_FILE names, else the defaults.
    """
    env = os.environ if environ is None else environ
    read = EnvironmentSettings.from_mapping(env)
    version: tuple[str | None, str] = (None, "deployed")  # a deployed function: its Runtime stamps the digest
    if project is None:
        config_path = Path(read.config_file) if read.config_file else None
        project = load_project_config(config_path)
        version = _file_version(config_path)
    in_lambda = read.function_name is not None
    values: dict[str, Any] = {
        "project": project,
        "in_lambda": in_lambda,
        "ensure_indexes": not in_lambda,
        "create_search_index": not in_lambda,
        "allow_demo_providers": not in_lambda,
    }
    if in_lambda:
        values["mongo_max_pool_size"] = 4
    values["config_sha256"], values["config_source"] = version
    for field in _SHARED_FIELDS:
        if getattr(read, field) is not None:
            values[field] = getattr(read, field)
    values.update(_deployment_providers(read))
    # The deployed functions get the enabled list from the template; the applied project config (or, locally,
    # the config file) says otherwise only when it names one.
    chose = "enabled" in project.memory.extraction.model_fields_set
    if read.enabled_extractions is not None and not chose:
        problem = _unknown_types(read.enabled_extractions, project.memory.kind_names)
        if problem:
            raise ConfigError(
                f"invalid configuration in environment:\n  MONGOMEM_ENABLED_EXTRACTIONS: {problem}"
            )
        custom = [t.name for t in project.memory.custom_types]
        values["enabled_extractions"] = [*read.enabled_extractions, *custom]
    else:
        values["enabled_extractions"] = project.memory.enabled_kinds
    values["queue_urls"] = _queue_urls(env, read.queue_url_template)
    providers = project.memory.providers
    wanted = {name for name in (providers.llm.api_key_env, providers.embeddings.api_key_env) if name}
    values["provider_secrets"] = {name: env[name] for name in wanted if env.get(name)}
    values.update(overrides)
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, "environment")) from exc


# The environment's fields Settings holds as they are (the rest: the providers, the enabled kinds, the queues).
_SHARED_FIELDS = tuple(
    f for f in EnvironmentSettings.model_fields if f in Settings.model_fields and f != "enabled_extractions"
)


def _file_version(path: Path | None) -> tuple[str | None, str]:
    """The digest of the config file's text (what `mongomem memory status` compares), or the defaults."""
    if path is None or not path.exists():
        return None, "defaults"
    import hashlib

    return hashlib.sha256(path.read_text(encoding="utf-8").encode("utf-8")).hexdigest(), "file"


def _deployment_providers(read: EnvironmentSettings) -> dict[str, Any]:
    """The deployment's default providers (template parameters), where the environment names them."""
    llm: dict[str, Any] = {"kind": read.llm_provider, "model": read.llm_model, "base_url": read.llm_base_url}
    emb: dict[str, Any] = {
        "kind": read.embedding_provider,
        "model": read.embedding_model,
        "dim": read.embedding_dim,
    }
    out: dict[str, Any] = {}
    try:
        if any(v is not None for v in llm.values()):
            given = {k: v for k, v in llm.items() if v is not None}
            out["default_llm"] = LLMProviderConfig.model_validate({"kind": "offline", **given})
        if any(v is not None for v in emb.values()):
            given = {k: v for k, v in emb.items() if v is not None}
            out["default_embeddings"] = EmbeddingProviderConfig.model_validate({"kind": "local", **given})
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, "environment (the default providers)")) from exc
    return out


def _queue_urls(env: Mapping[str, str], template: str | None) -> dict[str, str]:
    """Queue URL per extraction queue: MONGOMEM_QUEUE_URL_<QUEUE> (one variable per queue the kind registry
    names, so not a field of EnvironmentSettings), else the template's with {kind} filled in."""
    queues: dict[str, str] = {}
    for name in [*builtin_names(), CUSTOM_QUEUE]:
        url = env.get(f"MONGOMEM_QUEUE_URL_{name.upper()}")
        if not url and template:
            url = template.replace("{kind}", name)
        if url:
            queues[name] = url
    return queues


def environment() -> dict[str, str]:
    """A copy of the process environment, for entry points (the CLI) that hand it on."""
    return dict(os.environ)


def use_local_powertools_defaults(log_level: str, **extra: str) -> None:
    """Powertools reads POWERTOOLS_* itself; CLI commands give it quiet local defaults (kept when set)."""
    defaults = {
        "POWERTOOLS_SERVICE_NAME": "mongomem",
        "POWERTOOLS_METRICS_NAMESPACE": "mongomem-local",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": log_level,
        **extra,
    }
    for name, value in defaults.items():
        os.environ.setdefault(name, value)
