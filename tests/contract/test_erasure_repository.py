"""The ErasureRepository contract (mongomem.erasure): a user's data goes everywhere, nobody else's does."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mongomem.models.common import Scope, utcnow
from tests.contract import seed

ANA = Scope(tenant="acme", user_id="ana")
BO = Scope(tenant="acme", user_id="bo")
ANA_ELSEWHERE = Scope(tenant="globex", user_id="ana")


def everything(database: Any, scope: Scope) -> dict[str, int]:
    found = {
        name: database.db[name].count_documents(scope.filter())
        for name in database.db.list_collection_names()
        if not name.startswith("system.")
    }
    return {name: n for name, n in found.items() if n}


def test_erasing_a_user_removes_their_documents_everywhere_and_only_theirs(
    erasure: Any, database: Any
) -> None:
    for scope in (ANA, BO, ANA_ELSEWHERE):
        seed.conversation(database, scope, "s1", turns=3)
        seed.snapshot(database, scope, "s1", {"semantic": "queued"})
        seed.memory(database, scope, f"mem-{scope.tenant}-{scope.user_id}")
        seed.working_memory(database, scope, "notes")
        database.db["audit"].insert_one({**scope.filter(), "what": "a collection added later"})
    kept = (everything(database, BO), everything(database, ANA_ELSEWHERE))
    erased = erasure.erase(ANA)
    assert {k: erased[k] for k in ("sessions", "turns", "snapshots", "memories", "resources")} == {
        "sessions": 1,
        "turns": 3,
        "snapshots": 1,
        "memories": 1,
        "resources": 1,
    }
    assert erased["other"] == 1  # the collection nobody told the adapter about
    assert everything(database, ANA) == {}
    assert (everything(database, BO), everything(database, ANA_ELSEWHERE)) == kept
    assert sum(erasure.erase(ANA).values()) == 0  # again: nothing left, nothing fails


def test_turns_expire_from_the_given_time_once_and_only_the_snapshots(erasure: Any, database: Any) -> None:
    seed.conversation(database, ANA, "s1", turns=4)
    seed.conversation(database, BO, "s1", turns=2)
    snap = seed.snapshot(database, ANA, "s1", {"semantic": "done"})
    seed.snapshot(database, BO, "s1", {"semantic": "done"})
    at = utcnow().replace(microsecond=0) + timedelta(days=365)
    assert erasure.expire_turns(snap, at) == 2
    expiring = {d["seq"]: d["expire_at"] for d in database.db["turns"].find({"expire_at": {"$exists": True}})}
    assert expiring == {1: at, 2: at}
    assert database.db["snapshots"].find_one(snap.snapshot_id)["turns_expire_at"] == at
    # a later run keeps the first clock
    assert erasure.expire_turns(snap, at + timedelta(days=1)) == 0
    assert database.db["turns"].find_one({"user_id": "ana", "seq": 1})["expire_at"] == at
