"""Working-memory configuration: scope, mode (template or schema) and limits.

It lives under `memory.working_memory` in project-config.yaml (validated with the rest of the file);
the composition root (mongomem.runtime.Services) parses it once per settings and hands it to the service.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mongomem.errors import ConfigError
from mongomem.models.working_memory import Delivery, WorkingMemoryMode, WorkingMemoryScope

DEFAULT_TEMPLATE = """# User Information
- **First Name**:
- **Last Name**:
- **Location**:
- **Occupation**:
- **Interests**:
- **Goals**:
- **Events**:
- **Facts**:
- **Projects**:
"""


class WorkingMemoryConfig(BaseModel):
    """`memory.working_memory` in project-config.yaml; configure `template` or `schema`, never both."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    enabled: bool = True
    scope: WorkingMemoryScope = "resource"
    template: str | None = Field(None, min_length=1)
    # `schema` would shadow BaseModel.schema(); the YAML key stays `schema`.
    json_schema: dict[str, Any] | None = Field(None, alias="schema")
    delivery: Delivery = "system"
    max_bytes: int = Field(64 * 1024, ge=256, le=4 * 1024 * 1024)

    @model_validator(mode="after")
    def _one_mode(self) -> WorkingMemoryConfig:
        if self.template is not None and self.json_schema is not None:
            raise ValueError("configure either a template or a schema for working memory, not both")
        if self.json_schema is not None:
            # lazy: project-config is parsed on every cold start, including the record path's
            from jsonschema import Draft202012Validator  # lazy: 46 ms
            from jsonschema.exceptions import SchemaError  # lazy: 42 ms

            try:
                Draft202012Validator.check_schema(self.json_schema)
            except SchemaError as exc:
                raise ValueError(f"schema is not a valid JSON Schema: {exc.message}") from exc
            from mongomem.kindschema import regex_problems  # lazy: 4.7 ms

            problems = regex_problems(self.json_schema)
            if problems:
                raise ValueError("; ".join(problems[:5]))
            if self.json_schema.get("type") != "object":
                # Merging is defined on objects; a scalar or array root could only ever be replaced.
                raise ValueError('schema must describe an object ("type": "object")')
        return self

    @property
    def mode(self) -> WorkingMemoryMode:
        return "schema" if self.json_schema is not None else "template"

    @property
    def effective_template(self) -> str:
        return self.template if self.template is not None else DEFAULT_TEMPLATE


def parse_working_memory_config(data: Any, source: str = "memory.working_memory") -> WorkingMemoryConfig:
    """Validate a `working_memory` mapping; raises ConfigError naming each bad field."""
    try:
        return WorkingMemoryConfig.model_validate(data or {})
    except ValidationError as exc:
        lines = [f"  {'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()]
        raise ConfigError(f"invalid configuration in {source}:\n" + "\n".join(lines)) from exc
