"""Settings: the one place that reads the environment and project-config.yaml.

Everything else receives a `Settings` (or a part of it) as an argument.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class MemoryType(StrEnum):
    semantic = "semantic"
    episodic = "episodic"
    procedural = "procedural"
    taxonomic = "taxonomic"


ALL_TYPES: tuple[MemoryType, ...] = tuple(MemoryType)


class ConfigError(ValueError):
    """A configuration value is invalid; the message names every bad field by its path."""

    def one_line(self) -> str:
        """The message on one line (a CLI's error line): the source, then each field's problem."""
        lines = [line.strip() for line in str(self).splitlines() if line.strip()]
        return " ".join(lines[:1]) + (" " + "; ".join(lines[1:]) if len(lines) > 1 else "")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _parse_types(value: Any) -> Any:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        names = [str(v).strip().lower() for v in value]
        bad = [n for n in names if n not in {t.value for t in MemoryType}]
        if bad:
            allowed = ", ".join(t.value for t in MemoryType)
            raise ValueError(f"unknown memory type(s) {', '.join(repr(b) for b in bad)}; allowed: {allowed}")
        return list(dict.fromkeys(names))
    return value


class ExtractionConfig(_Strict):
    enabled: list[MemoryType] = Field(default_factory=lambda: list(ALL_TYPES))

    @field_validator("enabled", mode="before")
    @classmethod
    def _known_types(cls, value: Any) -> Any:
        return _parse_types(value)


class SnapshotConfig(_Strict):
    max_messages: int = Field(50, ge=1, le=10_000)
    max_tokens: int | None = Field(None, ge=1)
    idle_seconds: int = Field(900, ge=1)
    ttl_days: int = Field(365, ge=1)


class LLMProviderConfig(_Strict):
    kind: Literal["bedrock", "openai-compatible", "offline", "scripted"] = "offline"
    model: str | None = None  # Bedrock model id / inference profile, or the OpenAI-compatible model name
    base_url: str | None = None  # openai-compatible only; default https://api.openai.com/v1
    api_key_env: str | None = None  # name of the env var holding the key (never the key itself)
    timeout_seconds: float = Field(30.0, gt=0)
    region: str | None = None  # bedrock only; default: the function's AWS_REGION
    max_retries: int = Field(3, ge=0, le=10)  # retries after the first attempt on throttling/5xx/timeouts
    temperature: float | None = Field(0.0, ge=0, le=2)  # None leaves it to the server
    script_file: str | None = None  # scripted only: JSON {task: [answer, ...]}


class EmbeddingProviderConfig(_Strict):
    kind: Literal["bedrock-titan-v2", "voyage", "openai-compatible", "local", "hashing"] = "local"
    model: str | None = None
    # None: the provider's default (Titan/Voyage 1024, hashing 256, text-embedding-3-* their own).
    dim: int | None = Field(None, ge=8, le=8192)
    base_url: str | None = None
    api_key_env: str | None = None  # name of the env var holding the key (voyage default VOYAGE_API_KEY)
    timeout_seconds: float = Field(30.0, gt=0)
    region: str | None = None  # bedrock-titan-v2 only; default: the function's AWS_REGION
    max_retries: int = Field(3, ge=0, le=10)
    batch_size: int = Field(128, ge=1, le=1000)  # texts per HTTP request (voyage, openai-compatible)


class ProvidersConfig(_Strict):
    llm: LLMProviderConfig = Field(default_factory=LLMProviderConfig)
    embeddings: EmbeddingProviderConfig = Field(default_factory=EmbeddingProviderConfig)


class LimitsConfig(_Strict):
    max_content_bytes: int = Field(32 * 1024, ge=1)
    max_batch: int = Field(100, ge=1, le=1000)
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024)


class RecallConfig(_Strict):
    """Semantic recall of recorded user/assistant turns (indexed by the scan job, never on record)."""

    enabled: bool = True
    # Turns embedded per batch by the scan job, and at most per scan run (the rest wait for the next).
    index_batch: int = Field(64, ge=1, le=1000)
    index_max_per_run: int = Field(512, ge=1, le=100_000)
    # RRF constant of the four-ranking fusion (research/embeddings/RESULTS.md: 10 beats 60 on LoCoMo).
    rrf_k: int = Field(10, ge=1, le=1000)
    # Candidates each of the four rankings contributes before fusion.
    candidates: int = Field(100, ge=10, le=1000)


class MemoryConfig(_Strict):
    extraction: ExtractionConfig = Field(default_factory=ExtractionConfig)
    # Validated by mongomem.workingmemory.config (imported lazily: it needs jsonschema, the record path does not).
    working_memory: dict[str, Any] = Field(default_factory=dict)
    snapshot: SnapshotConfig = Field(default_factory=SnapshotConfig)
    providers: ProvidersConfig = Field(default_factory=ProvidersConfig)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    recall: RecallConfig = Field(default_factory=RecallConfig)

    @field_validator("working_memory")
    @classmethod
    def _working_memory(cls, value: dict[str, Any]) -> dict[str, Any]:
        from mongomem.workingmemory.config import parse_working_memory_config

        parse_working_memory_config(value)
        return value


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
        return ProjectConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, source)) from exc


def load_project_config(path: Path | None) -> ProjectConfig:
    """Read and validate project-config.yaml; a missing file means the defaults."""
    if path is None or not path.exists():
        return ProjectConfig()
    import yaml  # lazy: only the config loader needs it

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"invalid configuration in {path}: not valid YAML{where}: {problem}") from exc
    return parse_project_config(data, str(path))


class Settings(_Strict):
    """Runtime settings of one process (a Lambda execution environment or the local stack)."""

    mongodb_uri: str = "mongodb://127.0.0.1:27017/?directConnection=true"
    mongodb_secret_arn: str | None = None
    db_name: str = "mongomem"
    ensure_indexes: bool = True
    tenant_default: str = "default"
    enabled_extractions: list[MemoryType] = Field(default_factory=lambda: list(ALL_TYPES))
    extraction_type: MemoryType | None = None
    # Queue URL per memory type; "local:<name>" addresses the local stack's queue.
    queue_urls: dict[MemoryType, str] = Field(default_factory=dict)
    opensearch_endpoint: str | None = None
    opensearch_auth: Literal["none", "sigv4-es", "sigv4-aoss"] = "none"
    opensearch_engine: Literal["faiss", "lucene", "nmslib"] = "faiss"
    opensearch_index: str = "mongomem-memories"
    aws_region: str | None = None
    # The embedded in-process vector index (the local stack); None = no index unless OpenSearch is set.
    vector_index_path: str | None = None
    # Provider API keys, read from the variables project-config names (providers.*.api_key_env).
    provider_secrets: dict[str, str] = Field(default_factory=dict, repr=False)
    lease_seconds: int = Field(120, ge=5)
    # How long a hole in a session's seq range may wait for its writer before promotion skips over it.
    hole_grace_seconds: int = Field(60, ge=1)
    scan_batch: int = Field(100, ge=1)
    # The write concern of every acknowledged write (docs/decisions.md "Durability"): `auto` picks
    # `majority` + journal on a replica set, sharded cluster or Atlas and `{w: 1, j: true}` on a standalone.
    write_concern: Literal["auto", "majority", "journaled"] = "auto"
    # How long a `majority` write may wait for replication before it fails (503, retry with the token).
    write_concern_timeout_ms: int = Field(5000, ge=100, le=60_000)
    # True inside an AWS Lambda execution environment (the runtime sets AWS_LAMBDA_FUNCTION_NAME): a
    # request without an authorizer context is then refused, never served as the default tenant.
    in_lambda: bool = False
    project: ProjectConfig = Field(default_factory=ProjectConfig)

    @field_validator("enabled_extractions", mode="before")
    @classmethod
    def _known_types(cls, value: Any) -> Any:
        return _parse_types(value)

    @property
    def memory(self) -> MemoryConfig:
        return self.project.memory


_TRUE = {"1", "true", "yes", "on"}


def settings_from_env(environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Build Settings from MONGOMEM_* variables and the project config file they point to."""
    env = os.environ if environ is None else environ
    config_path = env.get("MONGOMEM_CONFIG_FILE")
    inline = env.get("MONGOMEM_PROJECT_CONFIG")
    if config_path or not inline:
        project = load_project_config(Path(config_path) if config_path else None)
    else:
        # A deployed stack gets the applied project config inline (`mongomem memory apply --stack`).
        try:
            data = json.loads(inline)
        except ValueError as exc:
            raise ConfigError(
                f"invalid configuration in MONGOMEM_PROJECT_CONFIG: not valid JSON ({exc})"
            ) from exc
        project = parse_project_config(data, "MONGOMEM_PROJECT_CONFIG")
    values: dict[str, Any] = {"project": project}
    simple = {
        "MONGOMEM_MONGODB_URI": "mongodb_uri",
        "MONGOMEM_MONGODB_SECRET_ARN": "mongodb_secret_arn",
        "MONGOMEM_DB_NAME": "db_name",
        "MONGOMEM_TENANT_DEFAULT": "tenant_default",
        "MONGOMEM_EXTRACTION_TYPE": "extraction_type",
        "MONGOMEM_OPENSEARCH_ENDPOINT": "opensearch_endpoint",
        "MONGOMEM_OPENSEARCH_AUTH": "opensearch_auth",
        "MONGOMEM_OPENSEARCH_ENGINE": "opensearch_engine",
        "MONGOMEM_OPENSEARCH_INDEX": "opensearch_index",
        "MONGOMEM_VECTOR_INDEX_PATH": "vector_index_path",
        "AWS_REGION": "aws_region",
        "MONGOMEM_LEASE_SECONDS": "lease_seconds",
        "MONGOMEM_HOLE_GRACE_SECONDS": "hole_grace_seconds",
        "MONGOMEM_SCAN_BATCH": "scan_batch",
        "MONGOMEM_WRITE_CONCERN": "write_concern",
        "MONGOMEM_WRITE_CONCERN_TIMEOUT_MS": "write_concern_timeout_ms",
    }
    for var, field in simple.items():
        if env.get(var):
            values[field] = env[var]
    values["in_lambda"] = bool(env.get("AWS_LAMBDA_FUNCTION_NAME"))
    if "MONGOMEM_ENSURE_INDEXES" in env:
        values["ensure_indexes"] = env["MONGOMEM_ENSURE_INDEXES"].strip().lower() in _TRUE
    # The deployed functions get the enabled list from the template; otherwise the project config decides.
    enabled = env.get("MONGOMEM_ENABLED_EXTRACTIONS")
    values["enabled_extractions"] = (
        enabled if enabled is not None else list(project.memory.extraction.enabled)
    )
    queues: dict[str, str] = {}
    for t in MemoryType:
        url = env.get(f"MONGOMEM_QUEUE_URL_{t.value.upper()}")
        if url:
            queues[t.value] = url
    values["queue_urls"] = queues
    providers = project.memory.providers
    wanted = {name for name in (providers.llm.api_key_env, providers.embeddings.api_key_env) if name}
    values["provider_secrets"] = {name: env[name] for name in wanted if env.get(name)}
    values.update(overrides)
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(_format_errors(exc, "environment")) from exc


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
