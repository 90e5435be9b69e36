"""The user directory: a tenant's memory users with their counts, as a principal may see them."""

from __future__ import annotations

from mongomem.adapters.directory_store import DirectoryStore
from mongomem.models.common import Principal, as_utc
from mongomem.models.users import UserPage, UserSummary


def user_page(store: DirectoryStore, principal: Principal, limit: int, cursor: str | None) -> UserPage:
    """The principal's tenant's users by user_id; a service account sees only its own memory user."""
    rows = store.users(principal.tenant, limit + 1, after=cursor, only=principal.fixed_user_id)
    more, rows = len(rows) > limit, rows[:limit]
    users = [
        UserSummary(
            user_id=r["user_id"],
            sessions=r["sessions"],
            memories=r["memories"],
            last_activity_at=as_utc(r["last_activity_at"]) if r["last_activity_at"] else None,
        )
        for r in rows
    ]
    return UserPage(
        tenant=principal.tenant, users=users, next_cursor=users[-1].user_id if more and users else None
    )
