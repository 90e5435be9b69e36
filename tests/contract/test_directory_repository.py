"""The DirectoryRepository contract (mongomem.directory): a tenant's users, found where their data is."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mongomem.models.common import Scope, utcnow
from tests.contract import seed


def test_users_come_by_id_with_their_counts_and_last_activity(directory: Any, store: Any) -> None:
    early, late = utcnow() - timedelta(days=2), utcnow() - timedelta(hours=1)
    seed.conversation(store, Scope(tenant="acme", user_id="ana"), "s1", at=early)
    seed.conversation(store, Scope(tenant="acme", user_id="ana"), "s2", at=early)
    seed.memory(store, Scope(tenant="acme", user_id="ana"), "m1", at=late)
    seed.memory(store, Scope(tenant="acme", user_id="ana"), "m2", status="superseded", at=early)
    seed.memory(store, Scope(tenant="acme", user_id="cy"), "m3", at=early)
    seed.working_memory(store, Scope(tenant="acme", user_id="bo"), "notes")
    seed.conversation(store, Scope(tenant="globex", user_id="zed"), "s1")

    users = directory.users("acme", 10)
    assert [(u.user_id, u.sessions, u.memories) for u in users] == [("ana", 2, 1), ("bo", 0, 0), ("cy", 0, 1)]
    assert (
        abs(users[0].last_activity_at - late) < timedelta(seconds=1) and users[1].last_activity_at is not None
    )
    assert [u.user_id for u in directory.users("acme", 2)] == ["ana", "bo"]
    assert [u.user_id for u in directory.users("acme", 10, after="ana")] == ["bo", "cy"]
    assert [u.user_id for u in directory.users("acme", 10, only="cy")] == ["cy"]
    assert directory.users("globex", 10)[0].user_id == "zed" and directory.users("nobody", 10) == []
