"""What observational memory stores its logs in."""

from __future__ import annotations

from typing import Protocol

from mongomem.models.common import Scope
from mongomem.models.observations import ObservationLog


class ObservationRepository(Protocol):
    """One log per (tenant, user_id)."""

    def get(self, scope: Scope) -> ObservationLog | None:
        """The scope's log (None: nothing observed yet)."""
        ...

    def save(self, scope: Scope, log: ObservationLog, expected: int) -> bool:
        """Store `log` if the stored one still has `expected` writes (0: none stored); False when
        another writer changed it first (the caller reads it again)."""
        ...

    def forget(self, scope: Scope, session_id: str, from_seq: int | None) -> int:
        """Remove the lines of the session's turns (from `from_seq` on; all without it) from the scope's
        log, the log's version moved on: how many lines went."""
        ...
