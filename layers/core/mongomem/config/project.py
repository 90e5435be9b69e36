"""The project config (project-config.yaml's models), and reading and validating one.

Everything else receives a `Settings` (mongomem.config.settings) or a part of it as an argument.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
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
from mongomem.kindnames import CUSTOM_QUEUE, MAX_CUSTOM_TYPES, KindName, builtin_names
from mongomem.models.base import Model

_M = TypeVar("_M", bound=BaseModel)


class Strict(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)


def parse_types(value: Any) -> Any:
    """A list (or comma-separated string) of kind names, lower case, without repeats."""
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return list(dict.fromkeys(str(getattr(v, "value", v)).strip().lower() for v in value))
    return value


def unknown_types(names: list[str], known: list[str]) -> str | None:
    bad = [n for n in names if n not in known]
    if not bad:
        return None
    return f"unknown memory type(s) {', '.join(repr(b) for b in bad)}; allowed: {', '.join(known)}"


TurnRole = Literal["user", "assistant", "system", "tool"]


class KindExtraction(Strict):
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


_SETTINGS = frozenset({"enabled", "with_rules"})  # memory.extraction's keys that are not kinds


class ExtractionConfig(Strict):
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
    # With an LLM provider, also propose the offline rules' items (the user's own first-person
    # statements, precise and free) beside the model's, for the kinds the rules know: a small local
    # model misses some of them (docs/providers.md "How small a model is worth running"). Both pass the
    # same grounding and reconciliation; an empty model answer is still counted as one.
    with_rules: bool = False

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
            bad = [str(k) for k in data if k not in _SETTINGS and k not in builtin_names()]
            if bad:
                where = ", ".join(f"memory.extraction.{b}" for b in bad)
                raise ValueError(
                    f"{where}: not a built-in kind; besides `enabled` and `with_rules`, the keys are the built-in kinds "
                    f"({', '.join(builtin_names())}); a custom type's extraction is set on the type "
                    "(memory.custom_types[])"
                )
        return data

    @field_validator("enabled", mode="before")
    @classmethod
    def _known_types(cls, value: Any, info: ValidationInfo) -> Any:
        names = parse_types(value)
        # parse_project_config passes the declared custom types' names, so that an unknown name is reported
        # with every other bad field (MemoryConfig checks again when validated without them)
        custom = (info.context or {}).get("custom_types")
        if isinstance(names, list) and custom is not None:
            problem = unknown_types(names, [*builtin_names(), *custom])
            if problem:
                raise ValueError(problem)
        return names


class TopicShiftConfig(Strict):
    """`memory.snapshot.topic_shift`: cut a session's unpromoted turns where the topic changes (scan job)."""

    enabled: bool = False
    # A cut goes where the cosine similarity of the `window` turns after a point and the `window` turns
    # before it falls below this. None: the embedder's measured value (the bundled e5 model: 0.915), else
    # 0.8 (docs/adr/0006-topic-shift-snapshots-memory-snapshot-topic-shift.md: the scale depends on the embedding model).
    threshold: float | None = Field(None, ge=-1.0, le=1.0)
    # User/assistant turns compared on each side of a point; a topic-shift snapshot holds at least this many.
    window: int = Field(4, ge=1, le=20)


class SnapshotConfig(Strict):
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


class LLMProviderConfig(Strict):
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


class EmbeddingProviderConfig(Strict):
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


class ProvidersConfig(Strict):
    llm: LLMProviderConfig = Field(default_factory=LLMProviderConfig)
    embeddings: EmbeddingProviderConfig = Field(default_factory=EmbeddingProviderConfig)


class LimitsConfig(Strict):
    # One turn's content (UTF-8 bytes). A request body stays within max_body_bytes (docs/operations.md
    # "Payload limits": API Gateway HTTP APIs take 10 MB, a synchronous Lambda invocation 6 MB).
    max_content_bytes: int = Field(1024 * 1024, ge=1, le=4 * 1024 * 1024)
    max_batch: int = Field(100, ge=1, le=1000)
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024, le=5 * 1024 * 1024)
    # What one recall or history answer may carry of turn content: Lambda's 6 MB response limit.
    max_response_bytes: int = Field(4 * 1024 * 1024, ge=64 * 1024, le=5 * 1024 * 1024)


class RecallConfig(Strict):
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


class ObservationsConfig(Strict):
    """`memory.observations`: the per-user log of dated observations (observational memory, ADR 0050),
    written from each snapshot in the background and read by the context source `observations`."""

    enabled: bool = True
    # The log's size limit: past it, the reflector merges the oldest days into one line per day, then
    # drops the oldest days (the newest are kept verbatim). 400: about a fifth of a 2,000-token block, the
    # size that gained answer words on the dev split (docs/benchmarks.md "Observational memory").
    max_tokens: int = Field(400, ge=100, le=32000)
    # rules (the default): the offline rules, no model call; auto: the configured LLM when it answers (one
    # more call per snapshot, on top of one per kind: opt in, the bill changes), the rules otherwise.
    observer: Literal["auto", "rules"] = "rules"


class CustomTypeConfig(Strict):
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
        from mongomem.kindschema import schema_problems  # lazy: 3.4 ms

        problems = schema_problems(self.schema_, self.match_key)
        if problems:
            raise ValueError("; ".join(problems))
        return self


class MetadataConfig(Strict):
    """`memory.metadata`: which keys of memories' `metadata` the search index holds (search filters on them)."""

    partition_keys: list[str] = Field(default_factory=list, max_length=16)

    @field_validator("partition_keys")
    @classmethod
    def _keys(cls, value: list[str]) -> list[str]:

        bad = [k for k in value if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]{0,63}", k)]
        if bad:
            raise ValueError(f"partition keys are names of letters, digits, '_' and '-': {bad}")
        return list(dict.fromkeys(value))


class MemoryConfig(Strict):
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
    observations: ObservationsConfig = Field(default_factory=ObservationsConfig)
    metadata: MetadataConfig = Field(default_factory=MetadataConfig)

    @field_validator("working_memory")
    @classmethod
    def _working_memory(cls, value: dict[str, Any]) -> dict[str, Any]:
        from mongomem.workingmemory.config import parse_working_memory_config  # lazy: 30.9 ms

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
        problem = unknown_types(list(self.extraction.enabled), self.kind_names)
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


class ProjectConfig(Strict):
    memory: MemoryConfig = Field(default_factory=MemoryConfig)


def format_errors(exc: ValidationError, source: str) -> str:
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
        raise ConfigError(format_errors(exc, source)) from exc


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
        try:
            return parse_project_config(json.loads(text), str(path))
        except ValueError as exc:
            raise ConfigError(f"invalid configuration in {path}: not valid JSON ({exc})") from exc
    try:
        # lazy: 10.2 ms
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
