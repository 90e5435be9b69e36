"""Working memory: a per-user (resource) or per-thread scratchpad in template or schema mode, as in Mastra."""

from mongomem.workingmemory.config import DEFAULT_TEMPLATE, WorkingMemoryConfig, parse_working_memory_config
from mongomem.workingmemory.merge import deep_merge, schema_errors
from mongomem.workingmemory.service import WorkingMemoryService, resolve_key

__all__ = [
    "DEFAULT_TEMPLATE",
    "WorkingMemoryConfig",
    "WorkingMemoryService",
    "deep_merge",
    "parse_working_memory_config",
    "resolve_key",
    "schema_errors",
]
