"""The ErasureRepository contract (mongomem.erasure): a user's data goes everywhere, nobody else's does."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from mongomem.models.common import Scope, utcnow
from tests.contract import seed

ANA = Scope(tenant="acme", user_id="ana")
BO = Scope(tenant="acme", user_id="bo")
ANA_ELSEWHERE = Scope(tenant="globex", user_id="ana")


def test_erasing_a_user_removes_their_documents_everywhere_and_only_theirs(erasure: Any, store: Any) -> None:
    for scope in (ANA, BO, ANA_ELSEWHERE):
        seed.conversation(store, scope, "s1", turns=3)
        seed.snapshot(store, scope, "s1", {"semantic": "queued"})
        seed.memory(store, scope, f"mem-{scope.tenant}-{scope.user_id}")
        seed.working_memory(store, scope, "notes")
        store.add_document("audit", {**scope.filter(), "what": "a collection added later"})
    kept = (store.documents(BO), store.documents(ANA_ELSEWHERE))
    erased = erasure.erase(ANA)
    assert {k: erased[k] for k in ("sessions", "turns", "snapshots", "memories", "resources")} == {
        "sessions": 1,
        "turns": 3,
        "snapshots": 1,
        "memories": 1,
        "resources": 1,
    }
    assert erased["other"] == 1  # the collection nobody told the adapter about
    assert store.documents(ANA) == {}
    assert (store.documents(BO), store.documents(ANA_ELSEWHERE)) == kept
    assert sum(erasure.erase(ANA).values()) == 0  # again: nothing left, nothing fails


def test_turns_expire_from_the_given_time_once_and_only_the_snapshots(erasure: Any, store: Any) -> None:
    seed.conversation(store, ANA, "s1", turns=4)
    seed.conversation(store, BO, "s1", turns=2)
    snap = seed.snapshot(store, ANA, "s1", {"semantic": "done"})
    seed.snapshot(store, BO, "s1", {"semantic": "done"})
    at = utcnow().replace(microsecond=0) + timedelta(days=365)
    assert erasure.expire_turns(snap, at) == 2
    assert store.turn_expiry() == {("ana", 1): at, ("ana", 2): at}
    assert store.snapshots.get(snap.snapshot_id).turns_expire_at == at
    # a later run keeps the first clock
    assert erasure.expire_turns(snap, at + timedelta(days=1)) == 0
    assert store.turn_expiry() == {("ana", 1): at, ("ana", 2): at}
