"""The WorkingMemoryPort contract (workingmemory.ports): the MongoDB adapter and the in-memory fake alike."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mongomem.errors import Conflict, InvalidInput
from mongomem.models.common import Scope
from mongomem.models.working_memory import WorkingMemoryKey

ANA = Scope(tenant="acme", user_id="ana")


def resource(tenant: str = "acme", user: str = "ana") -> WorkingMemoryKey:
    return WorkingMemoryKey(scope="resource", tenant=tenant, user_id=user)


def thread(thread_id: str, tenant: str = "acme", user: str = "ana") -> WorkingMemoryKey:
    return WorkingMemoryKey(scope="thread", tenant=tenant, user_id=user, thread_id=thread_id)


def test_saves_are_compare_and_set_on_the_version(working_memory: Any) -> None:
    key = resource()
    assert working_memory.load(key) is None
    first = working_memory.save(key, "# User\n- Name: Ana", 0)
    assert (
        first is not None and (first.value, first.version) == ("# User\n- Name: Ana", 1) and first.updated_at
    )
    assert working_memory.save(key, "lost race", 0) is None  # created by someone else meanwhile
    assert working_memory.save(key, "stale", 5) is None
    second = working_memory.save(key, {"name": "Ana"}, 1)
    assert second is not None and second.version == 2
    loaded = working_memory.load(key)
    assert (loaded.value, loaded.version) == ({"name": "Ana"}, 2)
    assert loaded.updated_at == second.updated_at  # what a write answers equals a later read
    cleared = working_memory.save(key, None, 2)
    assert cleared is not None and cleared.version == 3 and working_memory.load(key).value is None


def test_memories_are_separate_per_tenant_user_and_thread(working_memory: Any) -> None:
    working_memory.save(resource(), "ana's", 0)
    assert working_memory.load(resource(tenant="globex")) is None
    assert working_memory.load(resource(user="bo")) is None
    assert working_memory.load(thread("t1")) is None
    working_memory.save(thread("t1"), "thread note", 0)
    assert working_memory.load(thread("t1")).value == "thread note"
    assert working_memory.load(thread("t2")) is None and working_memory.load(resource()).value == "ana's"


def test_threads_are_created_once_and_seed_their_memory(working_memory: Any) -> None:
    created = working_memory.create_thread(ANA, "trip-1", "Trip", {"workingMemory": "- Topic: Porto", "a": 1})
    assert (created.thread_id, created.user_id, created.title) == ("trip-1", "ana", "Trip")
    assert created.metadata == {"workingMemory": "- Topic: Porto", "a": 1}
    assert working_memory.get_thread(ANA, "trip-1") == created
    with pytest.raises(Conflict):
        working_memory.create_thread(ANA, "trip-1", None, {})
    assert working_memory.get_thread(Scope(tenant="acme", user_id="bo"), "trip-1") is None
    seeded = working_memory.load(thread("trip-1"))
    assert (seeded.value, seeded.version) == ("- Topic: Porto", 1)
    assert working_memory.save(thread("trip-1"), "- Topic: Lisbon", 1) is not None
    assert working_memory.get_thread(ANA, "trip-1").metadata["workingMemory"] == "- Topic: Lisbon"


def test_a_thread_without_memory_exists_at_version_one(working_memory: Any) -> None:
    working_memory.create_thread(ANA, "t1", None, {})
    loaded = working_memory.load(thread("t1"))
    assert loaded is not None and (loaded.value, loaded.version) == (None, 1)
    assert working_memory.save(thread("t1"), "note", 0) is None  # the thread exists: version 0 is stale


def test_writing_a_threads_memory_creates_the_thread(working_memory: Any) -> None:
    assert working_memory.get_thread(ANA, "new") is None
    working_memory.save(thread("new"), "- first", 0)
    made = working_memory.get_thread(ANA, "new")
    assert made is not None and made.metadata == {"workingMemory": "- first"}


def test_a_value_the_store_cannot_keep_is_refused_and_changes_nothing(working_memory: Any) -> None:
    working_memory.save(resource(), {"n": 1}, 0)
    with pytest.raises(InvalidInput):
        working_memory.save(resource(), {"n": 2**70}, 1)
    assert (working_memory.load(resource()).value, working_memory.load(resource()).version) == ({"n": 1}, 1)


def test_threads_list_newest_update_first_and_page(working_memory: Any) -> None:
    for name in ("a", "b", "c"):
        working_memory.create_thread(ANA, name, name.upper(), {})
        time.sleep(0.003)  # stored times keep milliseconds
    working_memory.create_thread(Scope(tenant="acme", user_id="bo"), "x", None, {})
    working_memory.update_thread(ANA, "a", "A!", None, set_title=True)
    listed = working_memory.list_threads(ANA, 10)
    assert [t.thread_id for t in listed] == ["a", "c", "b"] and listed[0].title == "A!"
    rest = working_memory.list_threads(ANA, 10, (listed[0].updated_at, listed[0].thread_id))
    assert [t.thread_id for t in rest] == ["c", "b"]


def test_thread_ids_tells_which_ids_have_a_thread_record(working_memory: Any) -> None:
    working_memory.create_thread(ANA, "kept", None, {})
    working_memory.create_thread(Scope(tenant="acme", user_id="bo"), "bos", None, {})
    assert working_memory.thread_ids(ANA, ["kept", "bos", "none"]) == {"kept"}
    assert working_memory.thread_ids(ANA, []) == set()


def test_updating_a_threads_metadata_keeps_its_working_memory(working_memory: Any) -> None:
    working_memory.create_thread(ANA, "t1", "Trip", {"workingMemory": "- Bag: blue", "a": 1, "b": 2})
    updated = working_memory.update_thread(ANA, "t1", None, {"b": 3, "workingMemory": "ignored"}, False)
    assert updated.title == "Trip" and updated.metadata == {"b": 3, "workingMemory": "- Bag: blue"}
    assert working_memory.load(thread("t1")).value == "- Bag: blue"
    untitled = working_memory.update_thread(ANA, "t1", None, None, set_title=True)
    assert untitled.title is None and untitled.metadata["b"] == 3
    assert working_memory.update_thread(ANA, "nope", "x", None, True) is None


def test_deleting_a_thread_removes_its_working_memory(working_memory: Any) -> None:
    working_memory.create_thread(ANA, "t1", None, {"workingMemory": "- note"})
    working_memory.save(resource(), "user note", 0)
    assert working_memory.delete_thread(ANA, "t1") is True
    assert working_memory.get_thread(ANA, "t1") is None and working_memory.load(thread("t1")) is None
    assert working_memory.delete_thread(ANA, "t1") is False
    assert working_memory.load(resource()).value == "user note"
