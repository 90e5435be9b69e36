"""The files a memory configuration passes through on its way to the local stack, and what the
`mongomem memory` commands (mongomem.cli.memory) and the local stack's side of them
(mongomem.cli.memory_local) both read them with. Its own module so neither imports the other back."""

from __future__ import annotations

import hashlib
from pathlib import Path

from mongomem.config import ConfigError, ProjectConfig, parse_project_config

STAGED = "project-config.yaml"  # `mongomem memory configure` uploads here, in the data dir
REQUEST = "config-apply.json"  # `mongomem memory apply` asks the running stack to reload
APPLIED = "config-applied.json"  # the stack's answer: what it applied, or why not
STACK_FILE = "stack.json"  # written by LocalStack.start (mongomem.local.stack.STACK_FILE)


class CommandError(Exception):
    """A failure the user can act on; `code` is the process exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def parse_config_text(text: str, source: str) -> ProjectConfig:
    import yaml  # lazy: 10 ms

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid configuration in {source}: not valid YAML ({exc})") from exc
    return parse_project_config(data, source)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def enabled_kinds(cfg: ProjectConfig) -> list[str]:
    return cfg.memory.enabled_kinds


def dev_config(given: str | None, data_dir: Path) -> Path | None:
    """The project config `mongomem dev` runs: --config, else the data dir's (`mongomem memory configure`
    uploads there), else ./project-config.yaml, else none (the defaults)."""
    if given:
        return Path(given)
    for candidate in (data_dir / STAGED, Path("project-config.yaml")):
        if candidate.exists():
            return candidate
    return None
