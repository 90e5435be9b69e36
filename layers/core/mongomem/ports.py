"""Ports the logic depends on; adapters implement them."""

from __future__ import annotations

from typing import Any, Protocol

from mongomem.config import MemoryType


class QueuePort(Protocol):
    """Sends extraction requests {snapshot_id, type} to the queue of each memory type."""

    def send_extraction(self, memory_type: MemoryType, body: dict[str, Any]) -> None: ...
