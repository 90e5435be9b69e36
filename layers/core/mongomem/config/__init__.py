"""Configuration: the one place that reads the environment and project-config.yaml.

Everything else receives a `Settings` (or a part of it) as an argument. By what it configures:
`project` (project-config.yaml's models, and reading one), `settings` (what one process runs with, each
field declared once with its one default), `environment` (the variables, and `settings_from_env`).
"""

from mongomem.config.environment import (
    ENV_PREFIX,
    EnvironmentSettings,
    environment,
    settings_from_env,
    use_local_powertools_defaults,
)
from mongomem.config.project import (
    DEMO_EMBEDDERS,
    DEMO_LLMS,
    CustomTypeConfig,
    EmbeddingKind,
    EmbeddingProviderConfig,
    ExtractionConfig,
    KindExtraction,
    LimitsConfig,
    LLMKind,
    LLMProviderConfig,
    MemoryConfig,
    MetadataConfig,
    ProjectConfig,
    ProvidersConfig,
    RecallConfig,
    SnapshotConfig,
    TopicShiftConfig,
    load_project_config,
    parse_project_config,
    provider_choice,
)
from mongomem.config.settings import DEFAULT_DB_NAME, DEFAULT_TENANT, Settings

# Defined with the other errors (modules validating parts of the config need not import this package), and
# the kind names in mongomem.kindnames: re-exported for the modules that read them with the config.
from mongomem.errors import ConfigError
from mongomem.kindnames import BUILTIN_KINDS, CUSTOM_QUEUE, builtin_names, queue_name

__all__ = [
    "BUILTIN_KINDS",
    "CUSTOM_QUEUE",
    "DEFAULT_DB_NAME",
    "DEFAULT_TENANT",
    "DEMO_EMBEDDERS",
    "DEMO_LLMS",
    "ENV_PREFIX",
    "ConfigError",
    "CustomTypeConfig",
    "EmbeddingKind",
    "EmbeddingProviderConfig",
    "EnvironmentSettings",
    "ExtractionConfig",
    "KindExtraction",
    "LLMKind",
    "LLMProviderConfig",
    "LimitsConfig",
    "MemoryConfig",
    "MetadataConfig",
    "ProjectConfig",
    "ProvidersConfig",
    "RecallConfig",
    "Settings",
    "SnapshotConfig",
    "TopicShiftConfig",
    "builtin_names",
    "environment",
    "load_project_config",
    "parse_project_config",
    "provider_choice",
    "queue_name",
    "settings_from_env",
    "use_local_powertools_defaults",
]
