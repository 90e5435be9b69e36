"""When a session is due for promotion: the rules, apart from how a store finds due sessions."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from mongomem.models.common import as_utc
from mongomem.models.sessions import Session

if TYPE_CHECKING:
    from mongomem.config import MemoryConfig


class PromotionPolicy:
    """Due when `pending` turns reach max_messages (or tokens max_tokens), or when it went idle.

    The record path keeps the counters (pending, unpromoted_tokens) and idle_due_at with a plain
    increment, and marks a session due by size when its counters reach a size rule (`size_reached`),
    so a store finds due sessions through two small indexes (idle, size-marked).
    """

    def __init__(self, max_messages: int, max_tokens: int | None, idle_seconds: int) -> None:
        self.max_messages = max_messages
        self.max_tokens = max_tokens
        self.idle_seconds = idle_seconds

    @classmethod
    def from_config(cls, memory: MemoryConfig) -> PromotionPolicy:
        snap = memory.snapshot
        return cls(snap.max_messages, snap.max_tokens, snap.idle_seconds)

    def idle_due_at(self, now: datetime) -> datetime:
        """When a session recorded to at `now` becomes idle-due."""
        return now + timedelta(seconds=self.idle_seconds)

    def size_reached(self, pending: int, unpromoted_tokens: int) -> bool:
        if pending >= self.max_messages:
            return True
        return bool(self.max_tokens) and unpromoted_tokens >= (self.max_tokens or 0)

    def size_due(self, session: Session) -> bool:
        return self.size_reached(session.pending, session.unpromoted_tokens)

    def is_due(self, session: Session, now: datetime) -> bool:
        if session.pending <= 0:
            return False
        idle_at = session.idle_due_at
        return self.size_due(session) or (idle_at is not None and as_utc(idle_at) <= now)

    def due_at(self, session: Session, now: datetime) -> datetime | None:
        if session.pending <= 0:
            return None
        if self.size_due(session):
            return now
        return as_utc(session.idle_due_at) if session.idle_due_at is not None else None

    def reason(self, session: Session) -> str:
        return "size" if self.size_due(session) else "idle"
