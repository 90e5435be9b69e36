"""Conflicting facts (`longterm/conflicts.py`): listed per key, counted for /v1/status within a time bound
(issue 33's twenty-ninth probe: one user's forty long facts of one key held every user's status ~12 s)."""

from __future__ import annotations

import random
import time
from typing import Any

from mongomem.kinds import builtin_registry
from mongomem.longterm.conflicts import COUNTING_SECONDS, conflicts
from mongomem.longterm.write.indexing import MemoryIndexer
from mongomem.longterm.write.writer import MemoryWriter
from mongomem.models.common import Scope
from mongomem.models.memory import EvidenceRef
from mongomem.vectors.embedded import EmbeddedIndex
from tests.fakes import InMemoryMemoryRepository
from tests.unit.test_memory_writer import WordEmbedder

KINDS = builtin_registry()
BOB = Scope(tenant="acme", user_id="bob")
WORDS = "pallet dock north south gate truck seal count shift crate lorry ramp bay yard".split()


def stored(values: list[str]) -> Any:
    """Bob's private facts of one key, one per value, written with reconciliation off."""
    store: Any = InMemoryMemoryRepository()
    index = EmbeddedIndex(None, use_numpy=False)
    writer = MemoryWriter(store, index, MemoryIndexer(store, index), WordEmbedder(), None)
    for value in values:
        fact: dict[str, Any] = {"subject": "north yard", "attribute": "rule", "value": value}
        writer.write(
            BOB, KINDS["semantic"], [fact], EvidenceRef(snapshot_id=None, source="api"), reconcile=False
        )
    return store


def long_values(n: int) -> list[str]:
    rnd = random.Random(7)
    return [" ".join(rnd.choice(WORDS) for _ in range(700))[:3900] + f" {i}" for i in range(n)]


def test_conflicting_values_are_listed_and_a_restatement_stored_twice_is_none() -> None:
    store = stored(["opens at 7 am", "opens at 7 am", "opens at 9 pm", "Opens at 7 AM."])
    found = conflicts(store, KINDS, "acme", "bob")
    assert found.complete
    assert [[m.value for m in c.memories] for c in found.conflicts] == [["opens at 7 am", "opens at 9 pm"]]


def test_counting_many_long_conflicting_values_is_quick_and_says_when_it_stopped() -> None:
    store = stored(long_values(40))
    started = time.monotonic()
    counted = conflicts(store, KINDS, "acme", None, seconds=COUNTING_SECONDS, counting=True)
    took = time.monotonic() - started
    # one key in conflict, found from its first two versions (not 780 comparisons of 3,900 characters)
    assert (len(counted.conflicts), counted.complete, len(counted.conflicts[0].memories)) == (1, True, 2)
    assert took < 1.0, took
    # out of time: what was found, marked incomplete (never "no conflict")
    assert not conflicts(store, KINDS, "acme", "bob", seconds=0.0).complete
