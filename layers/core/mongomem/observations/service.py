"""Observational memory's service: observe a snapshot once (idempotent per snapshot), keep the log within
its budget, and hand the context source the log's days."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from mongomem.models.common import Scope, as_utc, utcnow
from mongomem.models.observations import (
    KEPT_SNAPSHOT_IDS,
    Observation,
    ObservationBlock,
    ObservationLog,
)
from mongomem.observability import logger
from mongomem.observations.log import days, reflect
from mongomem.observations.observe import Observer
from mongomem.observations.ports import ObservationRepository
from mongomem.shortterm.ports import SnapshotRepository, TurnRepository

# Writers racing on one log (two kinds of two snapshots at once) read it again this often at most.
SAVE_ATTEMPTS = 5


@dataclass(frozen=True)
class Window:
    """Which of the log a block reads: one session's (None: every one) and the request's time bounds."""

    session_id: str | None = None
    as_of: datetime | None = None
    after: datetime | None = None
    before: datetime | None = None

    def holds(self, o: Observation) -> bool:
        at = as_utc(o.at)
        return (
            (self.session_id is None or o.session_id == self.session_id)
            and (self.as_of is None or at <= as_utc(self.as_of))
            and (self.after is None or at >= as_utc(self.after))
            and (self.before is None or at < as_utc(self.before))
        )


class ObservationService:
    def __init__(
        self,
        logs: ObservationRepository,
        snapshots: SnapshotRepository,
        turns: TurnRepository,
        observer: Observer,
        fallback: Observer,
        max_tokens: int,
    ) -> None:
        self.logs, self.snapshots, self.turns = logs, snapshots, turns
        self.observer, self.fallback = observer, fallback
        self.max_tokens = max_tokens

    def observe(self, snapshot_id: str, deadline: float | None = None) -> int | None:
        """Add the snapshot's observations to its user's log; None when it was observed already (or is
        gone), else how many it added. The model failing: the offline rules observe it (a WARNING)."""
        snap = self.snapshots.get(snapshot_id)
        if snap is None:
            return None
        scope = Scope(tenant=snap.tenant, user_id=snap.user_id)
        log = self.logs.get(scope)
        if log is not None and snapshot_id in log.snapshots:
            return None
        turns = self.turns.in_range(scope, snap.session_id, snap.from_seq, snap.to_seq)
        try:
            found = self.observer.observe(turns, deadline)
        except Exception as exc:  # the model: the rules observe the snapshot rather than nothing
            logger.warning(
                "the observer's model failed; the offline rules observed the snapshot",
                extra={"snapshot_id": snapshot_id, "error": f"{type(exc).__name__}: {str(exc)[:200]}"},
            )
            found = self.fallback.observe(turns, deadline)
        for _ in range(SAVE_ATTEMPTS):
            current = log or ObservationLog()
            if snapshot_id in current.snapshots:
                return None
            if self.logs.save(scope, self._added(current, snapshot_id, found), current.writes):
                return len(found)
            log = self.logs.get(scope)
        raise RuntimeError(f"the observation log of {scope.user_id!r} kept changing under the writer")

    def _added(self, log: ObservationLog, snapshot_id: str, found: list[Observation]) -> ObservationLog:
        observations = reflect([*log.observations, *found], self.max_tokens) if found else log.observations
        return ObservationLog(
            version=log.version + (1 if observations != log.observations else 0),
            writes=log.writes + 1,
            observations=observations,
            snapshots=[*log.snapshots, snapshot_id][-KEPT_SNAPSHOT_IDS:],
            updated_at=utcnow(),
        )

    def block(
        self,
        scope: Scope,
        *,
        session_id: str | None = None,
        as_of: datetime | None = None,
        after: datetime | None = None,
        before: datetime | None = None,
    ) -> ObservationBlock | None:
        """The log's days of one session (None: every one) said by `as_of`, within [after, before)
        (None: no log yet)."""
        window = Window(session_id, as_of, after, before)
        log = self.logs.get(scope)
        if log is None:
            return None
        return ObservationBlock(log.version, days(o for o in log.observations if window.holds(o)))
