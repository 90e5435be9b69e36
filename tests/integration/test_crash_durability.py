"""Issue 11, finding 1: an acknowledged turn survives a crash of the database process.

Concurrent writers record batches with client tokens and retry each batch until it is acknowledged, the
way the SDK does; meanwhile the database is killed with SIGKILL twice and restarted on the same data dir.
Afterwards every acknowledged turn is stored exactly once under the seq it was acknowledged with, no seq
was acknowledged twice (the session counter never rolled back below an acknowledged seq), and after
promotion every turn is in exactly one snapshot.

The writers call the record logic directly rather than the handler: one handler module serves one request
at a time (like one Lambda execution environment), and the point here is concurrent writers. Domain
errors are what the handler answers 503 and 409 with; anything else would be a 500 and fails the test.
"""

from __future__ import annotations

import random
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from mongomem.adapters.mongo import get_client
from mongomem.config import parse_project_config
from mongomem.errors import Conflict, StoreUnavailable
from mongomem.local.mongod import EmbeddedMongo, free_port
from mongomem.local.queue import local_queue_factory
from mongomem.models.common import Scope
from mongomem.models.turns import RecordTurnsRequest
from mongomem.runtime import Services
from mongomem.shortterm.record import TurnRecorder

WRITERS = 6
SESSIONS = 4
KILLS = 2


@dataclass
class Ledger:
    """What the clients were told: per acknowledged token, its session, seqs and contents."""

    acked: dict[str, tuple[str, list[int], list[str]]] = field(default_factory=dict)
    replays: int = 0
    unavailable: int = 0
    conflicts: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def batches(self) -> int:
        with self.lock:
            return len(self.acked)


def writer(index: int, svc: Services, ledger: Ledger, stop: threading.Event) -> None:
    rnd = random.Random(index)
    scope = Scope(tenant="crash", user_id="u1")
    # settle: this writer's earlier attempt has returned, so it is over
    recorder = TurnRecorder(svc.sessions, svc.turns, svc.settings.memory, settle_seconds=0.5)
    n = 0
    while not stop.is_set():
        token, session = f"w{index}-{n}", f"s{rnd.randrange(SESSIONS)}"
        contents = [f"{token}-{k}" for k in range(rnd.randint(1, 4))]
        request = RecordTurnsRequest.model_validate(
            {"client_token": token, "turns": [{"role": "user", "content": c} for c in contents]}
        )
        seqs: list[int] | None = None
        attempts = 0
        # a batch is retried with its token until it is acknowledged, whatever happens meanwhile
        while seqs is None or (attempts < 2 and rnd.random() < 0.15):
            attempts += 1
            try:
                out = recorder.record(scope, session, request)
            except StoreUnavailable:
                with ledger.lock:
                    ledger.unavailable += 1
                time.sleep(0.05)
                continue
            except Conflict as exc:
                with ledger.lock:
                    ledger.conflicts += 1
                if not (exc.details or {}).get("retry_after_seconds"):
                    ledger.errors.append(f"{token}: {exc.message}")
                    return
                time.sleep(0.2)
                continue
            except Exception as exc:  # would be a 500
                ledger.errors.append(f"{token}: {type(exc).__name__}: {exc}")
                return
            got = [t.seq for t in out.turns]
            if seqs is None:
                seqs = got
                with ledger.lock:
                    ledger.acked[token] = (session, got, contents)
            else:  # a client retry after an acknowledged attempt (its answer lost): the same seqs
                with ledger.lock:
                    ledger.replays += 1
                if got != seqs:
                    ledger.errors.append(f"{token}: acknowledged {seqs}, replayed as {got}")
        n += 1


def wait_for_batches(ledger: Ledger, count: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while ledger.batches() < count and time.monotonic() < deadline and not ledger.errors:
        time.sleep(0.02)


def test_acknowledged_turns_survive_sigkill_of_the_database(make_settings: Any, tmp_path: Path) -> None:
    server = EmbeddedMongo(tmp_path / "mongo", port=free_port()).start()
    try:
        get_client(server.uri, serverSelectionTimeoutMS=2000, connectTimeoutMS=1000)  # fail fast while down
        cfg = parse_project_config({"memory": {"snapshot": {"max_messages": 25, "idle_seconds": 1}}})
        svc = Services(
            make_settings(mongodb_uri=server.uri, project=cfg, hole_grace_seconds=1, lease_seconds=5),
            queue_factory=local_queue_factory,
        )
        assert svc.db.write_concern.document.get("j") is True
        assert svc.sessions and svc.turns  # the repositories and their indexes exist before any writer runs
        ledger, stop = Ledger(), threading.Event()
        threads = [
            threading.Thread(target=writer, args=(i, svc, ledger, stop), name=f"writer-{i}")
            for i in range(WRITERS)
        ]
        for thread in threads:
            thread.start()
        # When the database is killed twice mid-run (SIGKILL) and restarted on the same data dir
        for kill in range(KILLS):
            wait_for_batches(ledger, 150 * (kill + 1))
            server.kill()
            # down for longer than the driver's server selection timeout (2 s): writes in flight fail
            # (503 to a client) rather than all being retried by the driver once the server is back
            time.sleep(2.5)
            server.start()
        wait_for_batches(ledger, 150 * (KILLS + 1))
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(t.is_alive() for t in threads), "a writer never got its batch acknowledged"
        assert not ledger.errors, ledger.errors[:5]

        # Then every acknowledged turn is there exactly once, under its acknowledged seq
        stored: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for doc in svc.db["turns"].find({"tenant": "crash"}, {"content": 1, "seq": 1, "session_id": 1}):
            stored[doc["content"]].append((doc["session_id"], doc["seq"]))
        acknowledged = found = lost = duplicated = wrong_seq = 0
        acked_seqs: dict[str, list[int]] = defaultdict(list)
        for session, seqs, contents in ledger.acked.values():
            acked_seqs[session].extend(seqs)
            for seq, content in zip(seqs, contents, strict=True):
                acknowledged += 1
                copies = stored.get(content, [])
                if not copies:
                    lost += 1
                elif len(copies) > 1:
                    duplicated += 1
                elif copies[0] != (session, seq):
                    wrong_seq += 1
                else:
                    found += 1
        unacknowledged = sum(1 for c in stored if c.rsplit("-", 1)[0] not in ledger.acked)
        reused = sum(len(s) - len(set(s)) for s in acked_seqs.values())
        print(
            f"\ncrash test: {KILLS} SIGKILLs, {WRITERS} writers, {SESSIONS} sessions, {len(ledger.acked)} batches: "
            f"acknowledged {acknowledged}, found {found}, lost {lost}, duplicated {duplicated}, "
            f"wrong seq {wrong_seq}, seqs acknowledged twice {reused}, unacknowledged stored {unacknowledged}; "
            f"503s {ledger.unavailable}, 409s {ledger.conflicts}, client replays {ledger.replays}"
        )
        assert (lost, duplicated, wrong_seq, reused, unacknowledged) == (0, 0, 0, 0, 0)
        assert found == acknowledged > 0 and ledger.unavailable > 0  # the kills did hit writes
        for session, seqs in acked_seqs.items():
            doc = svc.db["sessions"].find_one({"tenant": "crash", "session_id": session})
            assert doc is not None and doc["last_seq"] >= max(seqs)  # the counter never went back

        # And after promotion every turn is in exactly one snapshot, ranges contiguous and non-overlapping
        time.sleep(1.2)  # idle and hole grace (1 s) pass
        for _ in range(50):
            if svc.promoter.scan().sessions == 0:
                break
        snaps: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for snap in svc.db["snapshots"].find({"tenant": "crash"}):
            snaps[snap["session_id"]].append(snap)
        holes = 0
        for session in acked_seqs:
            ranges = sorted(snaps[session], key=lambda s: s["from_seq"])
            last = svc.db["sessions"].find_one({"tenant": "crash", "session_id": session})["last_seq"]
            assert ranges and ranges[0]["from_seq"] == 1 and ranges[-1]["to_seq"] == last
            for a, b in pairwise(ranges):
                assert b["from_seq"] == a["to_seq"] + 1
            holes += sum(len(s["missing_seqs"]) for s in ranges)
            for doc in svc.db["turns"].find({"tenant": "crash", "session_id": session}):
                owners = [s for s in ranges if s["from_seq"] <= doc["seq"] <= s["to_seq"]]
                assert len(owners) == 1 and doc.get("snapshot_id") == owners[0]["_id"]
                assert doc["seq"] not in owners[0]["missing_seqs"]
        print(
            f"crash test: {sum(len(v) for v in snaps.values())} snapshots, {holes} abandoned seqs skipped as holes"
        )
    finally:
        server.stop()
