"""The BacklogRepository contract (mongomem.status): waiting work, counted per tenant, user, or overall."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mongomem.models.common import Scope, utcnow
from tests.contract import seed

ANA = Scope(tenant="acme", user_id="ana")
BO = Scope(tenant="acme", user_id="bo")
ZED = Scope(tenant="globex", user_id="zed")


def test_backlog_figures_count_the_tenants_user_or_everyones_work(backlog: Any, store: Any) -> None:
    old, new = utcnow() - timedelta(hours=2), utcnow()
    seed.conversation(store, ANA, "s1", turns=3)
    seed.conversation(store, ANA, "s2", turns=1, recall=False)
    seed.conversation(store, BO, "s1", turns=2)
    seed.conversation(store, ZED, "s1", turns=4)
    seed.snapshot(store, ANA, "s1", {"semantic": "queued", "episodic": "failed"}, at=old)
    seed.snapshot(store, BO, "s1", {"semantic": "running", "episodic": "done"}, at=new)
    seed.snapshot(store, ZED, "s1", {"semantic": "queued"}, at=new)

    assert backlog.sessions_waiting("acme") == 3 and backlog.sessions_waiting("acme", "ana") == 2
    assert backlog.sessions_waiting(None) == 4 and backlog.sessions_waiting("nobody") == 0
    assert backlog.recall_pending("acme") == 5 and backlog.recall_pending("acme", "bo") == 2
    assert backlog.recall_pending(None) == 9

    acme = backlog.extraction_backlog("acme")
    assert (acme["semantic"].queued, acme["semantic"].running, acme["semantic"].failed) == (1, 1, 0)
    assert (acme["episodic"].queued, acme["episodic"].failed) == (0, 1)
    # when the oldest snapshot still waiting was cut (a failed one no longer waits)
    assert abs(acme["semantic"].oldest_waiting_at - old) < timedelta(seconds=1)
    assert acme["episodic"].oldest_waiting_at is None
    assert set(backlog.extraction_backlog("acme", "bo")) == {"semantic"}
    assert backlog.extraction_backlog(None)["semantic"].queued == 2
    assert backlog.extraction_backlog("nobody") == {}
