"""Memory kinds: each one object (item model, prompt, match key, text, same-content and merge rules)."""

from mongomem.kinds.base import Item, KindError, MemoryKind
from mongomem.kinds.meaning import norm
from mongomem.kinds.registry import KindRegistry, UnknownKind, builtin_registry, project_registry

__all__ = [
    "Item",
    "KindError",
    "KindRegistry",
    "MemoryKind",
    "UnknownKind",
    "builtin_registry",
    "norm",
    "project_registry",
]
