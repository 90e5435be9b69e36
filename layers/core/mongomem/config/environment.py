"""The environment: every variable the runtime reads (`EnvironmentSettings`), and `settings_from_env`, which
builds a process's `Settings` from it and a project config."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Self

from pydantic import AliasGenerator, ConfigDict, ValidationError, create_model, field_validator

from mongomem.config.project import (
    EmbeddingDim,
    EmbeddingKind,
    EmbeddingProviderConfig,
    LLMKind,
    LLMProviderConfig,
    ProjectConfig,
    Strict,
    format_errors,
    load_project_config,
    parse_types,
    unknown_types,
)
from mongomem.config.settings import DEPLOYMENT_EMBEDDER, DEPLOYMENT_LLM, FROM_ENVIRONMENT, Settings
from mongomem.errors import ConfigError
from mongomem.kindnames import CUSTOM_QUEUE, builtin_names

ENV_PREFIX = "MONGOMEM_"
# Set by the Lambda runtime, read by their own names: a function runs inside Lambda (Settings.in_lambda),
# in this region.
RUNTIME_VARIABLES = {"function_name": "AWS_LAMBDA_FUNCTION_NAME", "aws_region": "AWS_REGION"}


def _variable(field: str) -> str:
    return RUNTIME_VARIABLES.get(field) or ENV_PREFIX + field.upper()


class _Variables(Strict):
    """What every variable is read with (pydantic-settings' conventions: MONGOMEM_<FIELD> in any case, the
    Lambda runtime's own two by their names, a blank value unset), and the variables of the deployment's
    default providers and queues, which are not fields of Settings."""

    # An error's location is the alias, so every message names the variable (MONGOMEM_LEASE_SECONDS: ...).
    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=AliasGenerator(validation_alias=_variable)
    )

    # The extraction queues' URLs, `{kind}` standing for the queue's name (MONGOMEM_QUEUE_URL_<QUEUE> wins).
    queue_url_template: str | None = None
    # The deployment's default providers (template parameters); the project config may choose others.
    llm_provider: LLMKind | None = None
    llm_model: str | None = None
    llm_base_url: str | None = None
    embedding_provider: EmbeddingKind | None = None
    embedding_model: str | None = None
    embedding_dim: EmbeddingDim | None = None

    if TYPE_CHECKING:
        # The fields taken from Settings (FROM_ENVIRONMENT) are added below, when the module loads.
        def __getattr__(self, name: str) -> Any: ...

    @field_validator("enabled_extractions", mode="before", check_fields=False)
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        return parse_types(value)

    @field_validator("extraction_type", check_fields=False)
    @classmethod
    def _a_queue(cls, value: str | None) -> str | None:
        queues = [*builtin_names(), CUSTOM_QUEUE]
        if value is not None and value not in queues:
            raise ValueError(f"{value!r} is not an extraction queue; allowed: {', '.join(queues)}")
        return value

    @classmethod
    def variable(cls, field: str) -> str:
        """The variable a field is read from."""
        return _variable(field)

    @classmethod
    def from_mapping(cls, environ: Mapping[str, str]) -> Self:
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
            raise ConfigError(format_errors(exc, "environment")) from exc


def _unset(field: str) -> Any:
    """A field of Settings as a variable: the field's own type and bounds, None (unset) by default."""
    info = Settings.model_fields[field]
    kind: Any = Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation
    return (kind | None, None)


# docs/operations.md "Environment variables" lists the variables (a test keeps both equal);
# docs/adr/0038-environment-settings-one-pydantic-model.md says why not pydantic-settings and
# docs/adr/0058-one-declaration-per-setting.md why the fields are Settings' own.
EnvironmentSettings = create_model(
    "EnvironmentSettings",
    __base__=_Variables,
    __module__=__name__,
    __doc__="""Every environment variable the runtime reads, one field each: the Settings fields
    FROM_ENVIRONMENT names (declared there once, with their one default), and the deployment's providers and
    queue URL template. None is unset: Settings' default applies. Read with `from_mapping`, from the mapping
    the entry point hands in.""",
    **{field: _unset(field) for field in FROM_ENVIRONMENT},
)


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
    values: dict[str, Any] = {"project": project, "in_lambda": read.function_name is not None}
    values["config_sha256"], values["config_source"] = version
    # the variables set, as Settings' fields (the enabled kinds are checked against the project's below)
    values.update(read.model_dump(include=set(FROM_ENVIRONMENT) - {"enabled_extractions"}, exclude_none=True))
    values.update(_deployment_providers(read))
    # The deployed functions get the enabled list from the template; the applied project config (or, locally,
    # the config file) says otherwise only when it names one.
    chose = "enabled" in project.memory.extraction.model_fields_set
    if read.enabled_extractions is not None and not chose:
        problem = unknown_types(read.enabled_extractions, project.memory.kind_names)
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
        raise ConfigError(format_errors(exc, "environment")) from exc


def _file_version(path: Path | None) -> tuple[str | None, str]:
    """The digest of the config file's text (what `mongomem memory status` compares), or the defaults."""
    if path is None or not path.exists():
        return None, "defaults"

    return hashlib.sha256(path.read_text(encoding="utf-8").encode("utf-8")).hexdigest(), "file"


def _deployment_providers(read: _Variables) -> dict[str, Any]:
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
            out["default_llm"] = LLMProviderConfig.model_validate({"kind": DEPLOYMENT_LLM, **given})
        if any(v is not None for v in emb.values()):
            given = {k: v for k, v in emb.items() if v is not None}
            out["default_embeddings"] = EmbeddingProviderConfig.model_validate(
                {"kind": DEPLOYMENT_EMBEDDER, **given}
            )
    except ValidationError as exc:
        raise ConfigError(format_errors(exc, "environment (the default providers)")) from exc
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
