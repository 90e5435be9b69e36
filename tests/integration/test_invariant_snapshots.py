"""Invariant 1 under concurrency: every recorded turn lands in exactly one snapshot, ranges contiguous."""

from __future__ import annotations

import random
import threading
import time
from collections import defaultdict
from itertools import pairwise
from typing import Any

import pytest

from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.models.common import Scope
from mongomem.models.turns import RecordTurnsRequest
from mongomem.runtime import Services
from mongomem.shortterm.promotion import Promoter

TURNS = 4_000
SESSIONS = 200
WRITERS = 6
SCANNERS = 3


@pytest.mark.slow
def test_concurrent_writers_and_scanners_lose_nothing(make_settings: Any) -> None:
    cfg = parse_project_config({"memory": {"snapshot": {"max_messages": 20, "idle_seconds": 1}}})
    svc = Services(
        make_settings(project=cfg, lease_seconds=30, hole_grace_seconds=30, scan_batch=25),
        queue_factory=local_queue_factory,
    )
    sessions = [(Scope(tenant="default", user_id=f"user-{i % 40}"), f"session-{i}") for i in range(SESSIONS)]
    plan: list[list[int]] = [[] for _ in range(WRITERS)]
    remaining, rnd = TURNS, random.Random(7)
    while remaining:
        size = min(remaining, rnd.randint(1, 10))
        plan[rnd.randrange(WRITERS)].append(size)
        remaining -= size
    recorded: list[int] = []
    errors: list[BaseException] = []
    writing = threading.Event()
    writing.set()

    def writer(index: int) -> None:
        r = random.Random(index)
        try:
            for size in plan[index]:
                scope, sid = sessions[r.randrange(SESSIONS)]
                req = RecordTurnsRequest.model_validate(
                    {
                        "client_token": f"w{index}-{r.random()}",
                        "turns": [{"role": "user", "content": f"w{index} {k}"} for k in range(size)],
                    }
                )
                out = svc.recorder.record(scope, sid, req)
                recorded.append(len(out.turns))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    def scanner(index: int) -> None:
        promoter = Promoter(
            svc.sessions, svc.turns, svc.snapshots, svc.queue, svc.settings, owner=f"scanner-{index}"
        )
        try:
            while writing.is_set():
                promoter.scan()
                time.sleep(0.01)
        except BaseException as exc:
            errors.append(exc)

    scanners = [threading.Thread(target=scanner, args=(i,)) for i in range(SCANNERS)]
    writers = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for t in scanners + writers:
        t.start()
    for t in writers:
        t.join()
    time.sleep(1.2)  # every session is now idle-due
    writing.clear()
    for t in scanners:
        t.join()
    assert not errors, errors
    # a final scan by a fresh scanner picks up whatever the racing ones left
    Promoter(svc.sessions, svc.turns, svc.snapshots, svc.queue, svc.settings, owner="final").scan(
        max_sessions=10 * SESSIONS
    )

    assert sum(recorded) == TURNS
    assert svc.db["turns"].count_documents({}) == TURNS
    ranges: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for snap in svc.db["snapshots"].find({}):
        assert snap["missing_seqs"] == []
        ranges[snap["tenant"] + "|" + snap["user_id"] + "|" + snap["session_id"]].append(
            (snap["from_seq"], snap["to_seq"])
        )
    for session in svc.db["sessions"].find({}):
        key = session["_id"]
        spans = sorted(ranges[key])
        # contiguous, non-overlapping, starting at 1 and covering every allocated seq
        assert spans[0][0] == 1 and spans[-1][1] == session["last_seq"] == session["promoted_through_seq"]
        for (_, prev_to), (nxt_from, _) in pairwise(spans):
            assert nxt_from == prev_to + 1
        assert all(to - frm + 1 <= 20 for frm, to in spans)
    # every turn carries the id of the one snapshot whose range holds it
    snap_of = {s["_id"]: s for s in svc.db["snapshots"].find({})}
    for turn in svc.db["turns"].find({}, {"seq": 1, "snapshot_id": 1, "session_id": 1}):
        snap = snap_of[turn["snapshot_id"]]
        assert snap["session_id"] == turn["session_id"] and snap["from_seq"] <= turn["seq"] <= snap["to_seq"]
    svc.database.drop()
