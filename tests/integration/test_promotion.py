"""Promotion to snapshots on a real server: size, idle, series, leases, crashes, holes, fan-out."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

import pytest

from mongomem.config import parse_project_config
from mongomem.kindnames import BuiltinKind
from mongomem.local.queue import LocalQueue, local_queue_factory
from mongomem.models.common import Scope, utcnow
from mongomem.models.turns import RecordTurnsRequest
from mongomem.runtime import Services, configure
from mongomem.shortterm.promotion import Promoter
from tests.conftest import load_event, load_function

SCOPE = Scope(tenant="default", user_id="user-1")


def project(max_messages: int = 5, idle_seconds: int = 900, enabled: list[str] | None = None) -> Any:
    extraction = {
        "enabled": enabled if enabled is not None else ["semantic", "episodic", "procedural", "taxonomic"]
    }
    return parse_project_config(
        {
            "memory": {
                "extraction": extraction,
                "snapshot": {"max_messages": max_messages, "idle_seconds": idle_seconds},
            }
        }
    )


@pytest.fixture
def svc_factory(make_settings: Any) -> Any:
    made: list[Services] = []

    def build(**kw: Any) -> Services:
        enabled = kw.pop("enabled", None)
        cfg = project(enabled=enabled, **kw)
        settings = make_settings(
            project=cfg,
            enabled_extractions=list(cfg.memory.extraction.enabled),
            hole_grace_seconds=1,
            lease_seconds=5,
        )
        svc = Services(settings, queue_factory=local_queue_factory)
        configure(svc)
        made.append(svc)
        return svc

    yield build
    configure(None)
    for svc in made[:1]:
        svc.database.drop()


def record(svc: Services, session: str, n: int, scope: Scope = SCOPE) -> None:
    req = RecordTurnsRequest.model_validate(
        {"turns": [{"role": "user", "content": f"turn {i}"} for i in range(n)]}
    )
    svc.recorder.record(scope, session, req)


def snapshots(svc: Services, session: str) -> list[dict[str, Any]]:
    return list(svc.db["snapshots"].find({"session_id": session}).sort("from_seq", 1))


def test_size_due_session_is_cut_in_a_series_of_full_snapshots(svc_factory: Any) -> None:
    svc = svc_factory(max_messages=5)
    record(svc, "s1", 12)
    report = svc.promoter.scan()
    snaps = snapshots(svc, "s1")
    # 12 turns with max 5: two full snapshots by size; the last 2 wait for idle
    assert [(s["from_seq"], s["to_seq"], s["reason"]) for s in snaps] == [(1, 5, "size"), (6, 10, "size")]
    assert report.reasons == {"size": 2}
    session = svc.db["sessions"].find_one({"session_id": "s1"})
    assert session["promoted_through_seq"] == 10 and session["pending"] == 2
    assert all(t["snapshot_id"] == snaps[0]["_id"] for t in svc.db["turns"].find({"seq": {"$lte": 5}}))


def test_not_due_session_is_left_alone(svc_factory: Any) -> None:
    svc = svc_factory(max_messages=50, idle_seconds=900)
    record(svc, "s1", 3)
    assert svc.promoter.scan().sessions == 0
    assert snapshots(svc, "s1") == []


def test_idle_session_is_promoted_after_idle_seconds(svc_factory: Any) -> None:
    svc = svc_factory(max_messages=50, idle_seconds=1)
    record(svc, "s1", 3)
    assert svc.promoter.scan(now=utcnow()).sessions == 0 or snapshots(svc, "s1")
    time.sleep(1.2)
    svc.promoter.scan()
    snaps = snapshots(svc, "s1")
    assert [(s["from_seq"], s["to_seq"], s["reason"]) for s in snaps] == [(1, 3, "idle")]
    assert "idle_due_at" not in svc.db["sessions"].find_one({"session_id": "s1"})


def test_fan_out_sends_the_first_enabled_kind_naming_the_others(svc_factory: Any) -> None:
    svc = svc_factory(max_messages=2, enabled=["semantic", "procedural"])
    record(svc, "s1", 2)
    svc.promoter.scan()
    snap = snapshots(svc, "s1")[0]
    queue = LocalQueue(svc.db)
    # one message, to the first kind's queue: each kind passes the snapshot on to the next once it has
    # tried, so the kinds' LLM calls follow one another (docs/adr/0011-one-snapshot-s-kinds-in-sequence.md)
    assert [json.loads(b) for b in queue.bodies("extract-semantic")] == [
        {
            "snapshot_id": snap["_id"],
            "type": "semantic",
            "tenant": "default",
            "user_id": "user-1",
            "then": ["procedural"],
        }
    ]
    assert queue.depth("extract-procedural") == 0
    assert queue.depth("extract-episodic") == 0 and queue.depth("extract-taxonomic") == 0
    assert set(snap["extraction"]) == {"semantic", "procedural"} and snap["fanned_out"] is True


def test_a_leased_session_is_skipped_until_the_lease_expires(svc_factory: Any) -> None:
    svc = svc_factory(max_messages=2)
    record(svc, "s1", 2)
    # a scanner claims it and crashes (never releases)
    crashed = Promoter(svc.sessions, svc.turns, svc.snapshots, svc.queue, svc.settings, owner="crashed")
    assert crashed.claim_due(utcnow()) is not None
    assert svc.promoter.scan().sessions == 0
    # after the lease runs out another scanner takes over
    svc.promoter.scan(now=utcnow() + timedelta(seconds=6))
    assert [(s["from_seq"], s["to_seq"]) for s in snapshots(svc, "s1")] == [(1, 2)]


def test_scanner_crash_after_cutting_is_finished_by_the_next_one(svc_factory: Any) -> None:
    svc = svc_factory(max_messages=3)
    record(svc, "s1", 3)
    # Given a scanner that inserted the snapshot and died before moving the session's promotion point
    dying = Promoter(svc.sessions, svc.turns, svc.snapshots, svc.queue, svc.settings, owner="dying")
    session = dying.claim_due(utcnow())
    assert session is not None
    snap = dying.cut_one(session, "size", utcnow())
    assert snap is not None and svc.db["sessions"].find_one({})["promoted_through_seq"] == 0
    # When another scanner runs after the lease expired
    svc.promoter.scan(now=utcnow() + timedelta(seconds=6))
    # Then the same snapshot is completed, not a second one, and it is fanned out
    snaps = snapshots(svc, "s1")
    assert len(snaps) == 1 and snaps[0]["_id"] == snap.snapshot_id and snaps[0]["fanned_out"] is True
    assert svc.db["sessions"].find_one({})["promoted_through_seq"] == 3


def test_unfanned_snapshot_is_resent_by_the_outbox_sweep(svc_factory: Any) -> None:
    svc = svc_factory(max_messages=2, enabled=["semantic"])
    record(svc, "s1", 2)
    svc.promoter.scan()
    queue = LocalQueue(svc.db)
    queue.coll.delete_many({})
    svc.db["snapshots"].update_many({}, {"$set": {"fanned_out": False}})
    report = svc.promoter.scan(now=utcnow() + timedelta(seconds=10))
    assert report.resent == 1 and queue.depth("extract-semantic") == 1


def test_a_hole_waits_for_its_writer_then_is_skipped_when_quiet(svc_factory: Any) -> None:
    svc = svc_factory(max_messages=50)
    record(svc, "s1", 4)
    # seq 3 was allocated but its insert never landed (a writer died between its two writes)
    svc.db["turns"].delete_one({"seq": 3})
    svc.promoter.flush(SCOPE, "s1")
    assert [(s["from_seq"], s["to_seq"]) for s in snapshots(svc, "s1")] == [(1, 2)]
    time.sleep(1.1)  # hole_grace_seconds=1
    svc.promoter.flush(SCOPE, "s1")
    snaps = snapshots(svc, "s1")
    assert [(s["from_seq"], s["to_seq"], s["missing_seqs"]) for s in snaps] == [(1, 2, []), (3, 4, [3])]


def test_a_session_waiting_on_a_hole_does_not_hold_up_the_scan(svc_factory: Any) -> None:
    svc = svc_factory(max_messages=2)
    record(svc, "waiting", 2)
    svc.db["turns"].delete_many({"session_id": "waiting"})  # allocated, not (yet) inserted
    record(svc, "ready", 2)
    report = svc.promoter.scan()
    # claimed once and set aside until its hole's grace period ends; the other due session is promoted
    assert (report.sessions, report.skipped) == (2, 1)
    assert [(s["from_seq"], s["to_seq"]) for s in snapshots(svc, "ready")] == [(1, 2)]
    assert snapshots(svc, "waiting") == []


def test_scan_handler_with_the_schedule_event(svc_factory: Any, ctx: Any) -> None:
    svc = svc_factory(max_messages=2)
    for i in range(3):
        record(svc, f"s{i}", 2)
    scan = load_function("scan_sessions")
    result = scan.lambda_handler(load_event("scan_schedule.json"), ctx)
    assert result["snapshots"] == 3 and result["reasons"] == {"size": 3}


def test_other_users_sessions_stay_separate(svc_factory: Any) -> None:
    svc = svc_factory(max_messages=2)
    other = Scope(tenant="default", user_id="user-2")
    record(svc, "shared-id", 2)
    record(svc, "shared-id", 2, scope=other)
    svc.promoter.scan()
    owners = sorted(s["user_id"] for s in svc.db["snapshots"].find({}))
    assert owners == ["user-1", "user-2"]
    for snap in svc.db["snapshots"].find({}):
        users = {t["user_id"] for t in svc.db["turns"].find({"snapshot_id": snap["_id"]})}
        assert users == {snap["user_id"]}


def test_enabled_types_come_from_config_and_unknown_types_are_named() -> None:
    cfg = project(enabled=["semantic"])
    assert cfg.memory.extraction.enabled == [BuiltinKind.semantic]
    with pytest.raises(ValueError, match="'semantics'"):
        project(enabled=["semantics"])
