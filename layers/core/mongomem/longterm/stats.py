"""Memory activity over time: how many memories were added, updated and reinforced per day."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from mongomem.longterm.ports import MemoryRepository
from mongomem.models.common import utcnow
from mongomem.models.stats import DecisionDay, MemoryActivity

FIELDS = {"ADD": "added", "UPDATE": "updated", "REINFORCE": "reinforced"}


def memory_activity(
    store: MemoryRepository, tenant: str, user_id: str | None, days: int, today: date | None = None
) -> MemoryActivity:
    """Decisions per UTC day over the last `days` days (today included), every day present."""
    last = today or utcnow().date()
    since = last - timedelta(days=days - 1)
    counts = {since + timedelta(days=i): DecisionDay(day=since + timedelta(days=i)) for i in range(days)}
    start = datetime.combine(since, time.min, tzinfo=UTC)
    for day, decision, n in store.decisions_per_day(tenant, user_id, start):
        field = FIELDS.get(decision)
        bucket = counts.get(date.fromisoformat(day))
        if field and bucket is not None:
            setattr(bucket, field, getattr(bucket, field) + n)
    series = [counts[d] for d in sorted(counts)]
    totals = DecisionDay(
        day=last,
        added=sum(d.added for d in series),
        updated=sum(d.updated for d in series),
        reinforced=sum(d.reinforced for d in series),
    )
    return MemoryActivity(tenant=tenant, user_id=user_id, since=since, days=series, totals=totals)
