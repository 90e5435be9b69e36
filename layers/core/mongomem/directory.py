"""The user directory: a tenant's memory users with their counts, as a principal may see them."""

from __future__ import annotations

from typing import Protocol

from mongomem.models.common import Principal
from mongomem.models.users import UserPage, UserSummary


class DirectoryRepository(Protocol):
    def users(
        self, tenant: str, limit: int, after: str | None = None, only: str | None = None
    ) -> list[UserSummary]:
        """Up to `limit` users of the tenant with user_id > after (or just `only`), ordered by user_id."""
        ...


def user_page(store: DirectoryRepository, principal: Principal, limit: int, cursor: str | None) -> UserPage:
    """The principal's tenant's users by user_id; a service account sees only its own memory user."""
    users = store.users(principal.tenant, limit + 1, after=cursor, only=principal.fixed_user_id)
    more, users = len(users) > limit, users[:limit]
    return UserPage(
        tenant=principal.tenant, users=users, next_cursor=users[-1].user_id if more and users else None
    )
