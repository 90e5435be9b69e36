"""The "not yet" signal of search and context answers: the caller's turns not yet extracted or indexed."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from mongomem.errors import MongomemError
from mongomem.models.common import Scope, utcnow
from mongomem.models.pending import PendingWork
from mongomem.observability import logger
from mongomem.status import BacklogRepository


class Pending:
    def __init__(
        self, backlog: BacklogRepository, recall_enabled: bool, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.backlog = backlog
        self.recall_enabled = recall_enabled
        self.clock = clock

    def of(self, scope: Scope) -> PendingWork | None:
        """The user's waiting work; None when the store cannot say (the answer itself still goes out)."""
        try:
            figures = self.backlog.user_backlog(scope, self.recall_enabled)
        except MongomemError as exc:
            logger.warning("pending work unknown", extra={"reason": exc.message})
            return None
        age = (self.clock() - figures.oldest).total_seconds() if figures.oldest else None
        return PendingWork(
            turns_not_extracted=figures.unpromoted_turns + figures.extracting_turns,
            snapshots_extracting=figures.extracting_snapshots,
            turns_not_indexed=figures.unindexed_turns,
            oldest_pending_at=figures.oldest,
            oldest_pending_age_s=round(max(age, 0.0), 1) if age is not None else None,
        )
