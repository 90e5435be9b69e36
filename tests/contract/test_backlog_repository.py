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


def test_a_users_backlog_counts_their_unpromoted_extracting_and_unindexed_work(
    backlog: Any, store: Any
) -> None:
    old = utcnow() - timedelta(hours=2)
    seed.conversation(store, ANA, "s1", turns=3)
    seed.conversation(store, ANA, "s2", turns=1, recall=False)
    seed.conversation(store, BO, "s1", turns=2, at=old)
    seed.snapshot(store, ANA, "s1", {"semantic": "queued", "episodic": "done"}, at=old)
    seed.snapshot(store, ANA, "s2", {"semantic": "done"})  # extracted: no longer waits

    ana = backlog.user_backlog(ANA, recall=True)
    assert (ana.unpromoted_turns, ana.extracting_snapshots, ana.extracting_turns, ana.unindexed_turns) == (
        4,
        1,
        2,
        3,
    )
    assert ana.oldest is not None and abs(ana.oldest - old) < timedelta(seconds=1)  # the snapshot's cut
    assert backlog.user_backlog(ANA, recall=False).unindexed_turns == 0
    bo = backlog.user_backlog(BO, recall=True)
    assert (bo.unpromoted_turns, bo.extracting_snapshots, bo.unindexed_turns) == (2, 0, 2)
    assert bo.oldest is not None and abs(bo.oldest - old) < timedelta(seconds=1)  # its first turn
    nobody = backlog.user_backlog(ZED, recall=True)
    assert (nobody.unpromoted_turns, nobody.unindexed_turns, nobody.oldest) == (0, 0, None)


def test_extraction_health_counts_the_windows_outcomes_and_the_last_error(backlog: Any, store: Any) -> None:
    from mongomem.models.sessions import TypeStatusUpdate

    now = utcnow().replace(microsecond=0)
    since = now - timedelta(hours=1)
    outcomes = [
        (
            ANA,
            "s1",
            TypeStatusUpdate(status="done", memories=2, refused={"junk": 1}),
            now - timedelta(minutes=9),
        ),
        (
            ANA,
            "s2",
            TypeStatusUpdate(status="failed", error="first", reason="not_json"),
            now - timedelta(minutes=8),
        ),
        (BO, "s1", TypeStatusUpdate(status="failed", error="last", reason="provider", final=True), now),
        (BO, "s2", TypeStatusUpdate(status="done", refused={"junk": 2}), now - timedelta(hours=2)),  # too old
        (ZED, "s1", TypeStatusUpdate(status="failed", error="elsewhere"), now),
    ]
    ids = {}
    for scope, session, outcome, at in outcomes:
        snap = seed.snapshot(store, scope, session, {"semantic": "queued"})
        store.snapshots.set_extraction(
            snap.snapshot_id, "semantic", outcome.model_copy(update={"updated_at": at})
        )
        ids[(scope.user_id, session)] = snap.snapshot_id

    acme = backlog.extraction_health("acme", since)
    assert set(acme) == {"semantic"}
    health = acme["semantic"]
    assert (health.done, health.failures, health.refused) == (1, 2, {"junk": 1})
    last = health.last_error
    assert last is not None and (last.snapshot_id, last.error, last.reason, last.final, last.at) == (
        ids[("bo", "s1")],
        "last",
        "provider",
        True,
        now,
    )
    assert backlog.extraction_health(None, since)["semantic"].failures == 3
    assert backlog.extraction_health("nobody", since) == {}


def test_extraction_health_counts_what_each_done_extraction_found(backlog: Any, store: Any) -> None:
    """Empty answers the offline rules contradict stay apart from refusals and from nothing to remember."""
    from mongomem.models.sessions import TypeStatusUpdate

    now = utcnow().replace(microsecond=0)
    done = [
        TypeStatusUpdate(status="done", outcome="empty_answer", rules_found=3),
        TypeStatusUpdate(status="done", outcome="empty_answer", rules_found=1),
        TypeStatusUpdate(status="done", outcome="empty_answer", rules_found=None),  # a kind without rules
        TypeStatusUpdate(status="done", outcome="nothing_found", rules_found=0),
        TypeStatusUpdate(status="done", outcome="refused", refused={"example_copy": 2}),
        TypeStatusUpdate(status="done", outcome="stored", memories=1, kept_private={"personal": 1}),
        TypeStatusUpdate(status="done", memories=1),  # written before outcomes were recorded
    ]
    for i, update in enumerate(done):
        snap = seed.snapshot(store, ANA, f"o{i}", {"semantic": "queued"})
        store.snapshots.set_extraction(
            snap.snapshot_id, "semantic", update.model_copy(update={"updated_at": now})
        )

    health = backlog.extraction_health("acme", now - timedelta(hours=1))["semantic"]
    assert health.done == 7
    assert health.outcomes == {"empty_answer": 3, "nothing_found": 1, "refused": 1, "stored": 1}
    assert health.suspect_empty == 2
    assert health.kept_private == {"personal": 1}
