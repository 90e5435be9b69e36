"""Memory kind names: the one place that lists the built-in kinds and says what a kind's name may be.

No pydantic model here: the record path, the request models and the configuration all import it.
`kinds.registry.BUILTIN` holds one `MemoryKind` per name (a test keeps them equal), the configuration's
per-kind settings are a mapping checked against the registry, and the template's queues follow
`queue_name`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import StringConstraints


class BuiltinKind(StrEnum):
    """The built-in memory kinds ("type" on the wire)."""

    semantic = "semantic"
    episodic = "episodic"
    procedural = "procedural"
    taxonomic = "taxonomic"
    preference = "preference"


BUILTIN_KINDS: tuple[BuiltinKind, ...] = tuple(BuiltinKind)
# The queue (and extraction function) every custom memory type shares in a deployed stack: its messages
# carry the type's name (docs/adr/0020-custom-memory-types.md).
CUSTOM_QUEUE = "custom"
MAX_CUSTOM_TYPES = 5
# A memory kind's name: what `type` holds in every memory, message and request.
KIND_NAME_PATTERN = r"^[a-z][a-z0-9_]{1,31}$"
KindName = Annotated[str, StringConstraints(pattern=KIND_NAME_PATTERN)]


def builtin_names() -> list[str]:
    return [t.value for t in BuiltinKind]


def queue_name(kind: str) -> str:
    """The extraction queue a kind's messages go to: a built-in kind's own, else the shared custom one."""
    kind = str(kind)
    return kind if kind in builtin_names() else CUSTOM_QUEUE
