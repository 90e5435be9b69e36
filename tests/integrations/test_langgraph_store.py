"""LangGraph: MongomemStore against the BaseStore contract (sync and async), and a real graph, on the local stack.

The installed langgraph packages ship no store test-suite, so this is the contract as BaseStore and its
ops document it (put/get/delete, search with prefix, filter, query, limit/offset, list_namespaces with
prefix/suffix/wildcards/max_depth, batch/abatch order), run against both of the store's drivers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any, cast

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)

from mongomem.client import AsyncMemoryClient, MemoryClient
from mongomem.integrations.langgraph import MessageRecorder, MongomemStore
from mongomem.local.stack import LocalStack
from tests.integrations.conftest import uid


class Driver:
    """The same contract calls through the sync methods or the async ones (asyncio.run each)."""

    def __init__(self, store: BaseStore, use_async: bool, root: tuple[str, ...]) -> None:
        self.store = store
        self.use_async = use_async
        self.root = root  # the namespace head: (user,) for a namespace-first store, () for a bound one

    def ns(self, *labels: str) -> tuple[str, ...]:
        return (*self.root, *labels)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if not self.use_async:
            return cast(Callable[..., Any], getattr(self.store, name))
        method = getattr(self.store, "a" + name)
        return lambda *args, **kwargs: asyncio.run(method(*args, **kwargs))


@pytest.fixture(params=["sync-user-in-namespace", "async-bound-user"])
def store(request: pytest.FixtureRequest, stack: LocalStack) -> Iterator[Driver]:
    user = uid("lg")
    if request.param == "sync-user-in-namespace":
        with MemoryClient(stack.url, retries=2, backoff=0.01) as client:
            yield Driver(MongomemStore(client), use_async=False, root=(user,))
    else:
        aclient = AsyncMemoryClient(stack.url, retries=2, backoff=0.01)
        yield Driver(MongomemStore(aclient=aclient, user_id=user), use_async=True, root=())


# --- put / get / delete ---------------------------------------------------------------------------


def test_put_then_get_returns_the_item(store: Driver) -> None:
    value = {
        "text": "Ana flies from LIS",
        "tags": ["travel", "airport"],
        "nested": {"n": 1, "ok": True},
        "é": "ü",
    }
    store.put(store.ns("prefs"), "airport", value)
    item = store.get(store.ns("prefs"), "airport")
    assert isinstance(item, Item) and item.value == value
    assert item.key == "airport" and item.namespace == store.ns("prefs")
    assert isinstance(item.created_at, datetime) and isinstance(item.updated_at, datetime)
    assert item.updated_at >= item.created_at


def test_get_of_a_missing_key_is_none(store: Driver) -> None:
    assert store.get(store.ns("prefs"), "nothing-here") is None


def test_put_again_replaces_the_value_and_keeps_created_at(store: Driver) -> None:
    store.put(store.ns("prefs"), "seat", {"v": "window"})
    first = store.get(store.ns("prefs"), "seat")
    store.put(store.ns("prefs"), "seat", {"v": "aisle"})
    second = store.get(store.ns("prefs"), "seat")
    assert second.value == {"v": "aisle"} and second.created_at == first.created_at
    assert second.updated_at >= first.updated_at
    # one item, not two
    assert [i.value for i in store.search(store.ns("prefs"))] == [{"v": "aisle"}]


def test_keys_are_exact_and_namespaces_are_separate(store: Driver) -> None:
    # keys that reconciliation would fold together ("key-1", "KEY_1") stay apart
    for key, n in [("key-1", 1), ("KEY_1", 2), ("key 1", 3)]:
        store.put(store.ns("a"), key, {"n": n})
    store.put(store.ns("b"), "key-1", {"n": 4})
    assert [store.get(store.ns("a"), k).value["n"] for k in ("key-1", "KEY_1", "key 1")] == [1, 2, 3]
    assert store.get(store.ns("b"), "key-1").value == {"n": 4}


def test_delete_removes_the_item_and_deleting_twice_is_harmless(store: Driver) -> None:
    store.put(store.ns("tmp"), "k", {"v": 1})
    store.delete(store.ns("tmp"), "k")
    assert store.get(store.ns("tmp"), "k") is None
    store.delete(store.ns("tmp"), "k")
    assert store.search(store.ns("tmp")) == []


def test_invalid_namespaces_are_rejected_before_anything_is_written(store: Driver) -> None:
    for bad in [store.ns("a.b"), store.ns(""), ("langgraph", "x")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"v": 1})


def test_a_value_too_large_for_a_fact_is_refused(store: Driver) -> None:
    with pytest.raises(ValueError, match="at most 4000 characters"):
        store.put(store.ns("big"), "k", {"blob": "x" * 5000})
    assert store.get(store.ns("big"), "k") is None


# --- search ---------------------------------------------------------------------------------------


def fill(store: Driver) -> None:
    rows = [
        (("docs",), "d1", {"kind": "report", "pages": 3, "meta": {"lang": "en"}}),
        (("docs",), "d2", {"kind": "memo", "pages": 12, "meta": {"lang": "pt"}}),
        (("docs", "archive"), "d3", {"kind": "report", "pages": 40, "meta": {"lang": "en"}}),
        (("docs2",), "x1", {"kind": "report", "pages": 1, "meta": {"lang": "en"}}),
        (
            ("notes",),
            "n1",
            {"kind": "note", "pages": 1, "text": "the sardines festival in Lisbon is in June"},
        ),
        (("notes",), "n2", {"kind": "note", "pages": 1, "text": "quarterly budget spreadsheet for finance"}),
    ]
    for path, key, value in rows:
        store.put(store.ns(*path), key, value)


def test_search_without_query_lists_the_namespace_prefix(store: Driver) -> None:
    fill(store)
    found = store.search(store.ns("docs"), limit=10)
    # ("docs",) covers ("docs", "archive") but not ("docs2",)
    assert sorted(i.key for i in found) == ["d1", "d2", "d3"]
    assert all(isinstance(i, SearchItem) and i.score is None for i in found)
    assert sorted(i.key for i in store.search(store.ns("docs", "archive"))) == ["d3"]


def test_search_filters_by_value_with_operators(store: Driver) -> None:
    fill(store)

    def keys(**f: Any) -> list[str]:
        return sorted(i.key for i in store.search(store.ns("docs"), filter=f, limit=10))

    assert keys(kind="report") == ["d1", "d3"]
    assert keys(kind="report", pages=3) == ["d1"]
    assert keys(pages={"$gt": 5}) == ["d2", "d3"]
    assert keys(pages={"$gte": 3, "$lte": 12}) == ["d1", "d2"]
    assert keys(kind={"$ne": "report"}) == ["d2"]
    assert keys(meta={"lang": "pt"}) == ["d2"]


def test_search_limit_and_offset_page_through_results(store: Driver) -> None:
    fill(store)
    everything = [i.key for i in store.search(store.ns(), limit=100)]
    assert len(everything) == 6
    pages = [[i.key for i in store.search(store.ns(), limit=2, offset=o)] for o in (0, 2, 4)]
    assert [key for page in pages for key in page] == everything
    assert store.search(store.ns(), limit=2, offset=6) == []


def test_search_with_a_query_ranks_by_meaning_within_the_prefix(store: Driver) -> None:
    fill(store)
    found = store.search(store.ns("notes"), query="sardines festival Lisbon June", limit=2)
    assert [i.key for i in found] == ["n1", "n2"][: len(found)] and found[0].key == "n1"
    assert all(isinstance(i.score, float) for i in found)
    assert found[0].value["text"].startswith("the sardines festival")
    # the query never reaches outside the namespace prefix
    assert all(i.namespace[: len(store.ns("notes"))] == store.ns("notes") for i in found)
    assert [i.key for i in store.search(store.ns("docs"), query="report", filter={"pages": 40})] == ["d3"]


def test_facts_that_are_not_store_items_stay_out(store: Driver, mem: MemoryClient) -> None:
    user = store.root[0] if store.root else store.store.user_id  # type: ignore[attr-defined]
    mem.create_memory(user, "semantic", {"subject": "user", "attribute": "home airport", "value": "LIS"})
    store.put(store.ns("prefs"), "airport", {"code": "LIS"})
    assert [i.key for i in store.search(store.ns(), query="home airport LIS")] == ["airport"]
    assert store.list_namespaces(prefix=store.ns()) == [store.ns("prefs")]


# --- list_namespaces ------------------------------------------------------------------------------


def test_list_namespaces_prefix_suffix_wildcard_depth_and_paging(store: Driver) -> None:
    for path in [("a", "b", "c"), ("a", "b", "d"), ("a", "e"), ("f", "b", "c")]:
        store.put(store.ns(*path), "k", {"v": 1})
    head = store.ns()
    assert store.list_namespaces(prefix=head) == [
        store.ns("a", "b", "c"),
        store.ns("a", "b", "d"),
        store.ns("a", "e"),
        store.ns("f", "b", "c"),
    ]
    assert store.list_namespaces(prefix=store.ns("a")) == [
        store.ns("a", "b", "c"),
        store.ns("a", "b", "d"),
        store.ns("a", "e"),
    ]
    assert store.list_namespaces(prefix=head, suffix=("c",)) == [
        store.ns("a", "b", "c"),
        store.ns("f", "b", "c"),
    ]
    assert (
        store.list_namespaces(prefix=store.ns("*", "b"))
        == [
            store.ns("a", "b", "c"),
            store.ns("a", "b", "d"),
            store.ns("f", "b", "c"),
        ]
        or store.root == ()
    )
    depth = len(head) + 1
    assert store.list_namespaces(prefix=head, max_depth=depth) == [store.ns("a"), store.ns("f")]
    assert store.list_namespaces(prefix=head, limit=2, offset=1) == [
        store.ns("a", "b", "d"),
        store.ns("a", "e"),
    ]


# --- batch ----------------------------------------------------------------------------------------


def test_batch_runs_mixed_operations_in_order(store: Driver) -> None:
    ns = store.ns("batch")
    results = store.batch(
        [
            PutOp(ns, "k1", {"v": 1}),
            PutOp(ns, "k2", {"v": 2}),
            GetOp(ns, "k1"),
            SearchOp(ns, filter={"v": 2}),
            PutOp(ns, "k1", None),
            GetOp(ns, "k1"),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", store.ns()),)),
        ]
    )
    assert results[0] is None and results[1] is None
    assert results[2].value == {"v": 1}
    assert [i.key for i in results[3]] == ["k2"]
    assert results[4] is None and results[5] is None
    assert results[6] == [ns]


# --- in a graph -----------------------------------------------------------------------------------


def test_a_compiled_graph_uses_the_store_and_records_its_messages(
    stack: LocalStack, mem: MemoryClient
) -> None:
    user, thread = uid("gr"), uid("thread")
    store = MongomemStore(mem)

    def remember(state: MessagesState, *, store: BaseStore) -> dict[str, Any]:
        said = state["messages"][-1].content
        store.put((user, "said"), f"m{len(state['messages'])}", {"text": said})
        hits = store.search((user, "said"), query=str(said), limit=1)
        call = {"id": "call_1", "name": "lookup", "args": {"q": "x"}}
        return {
            "messages": [
                AIMessage(content="", tool_calls=[call], id=f"ai-{len(state['messages'])}"),
                ToolMessage(
                    content="looked up",
                    tool_call_id="call_1",
                    name="lookup",
                    id=f"tool-{len(state['messages'])}",
                ),
                AIMessage(content=f"You said: {hits[0].value['text']}", id=f"ai2-{len(state['messages'])}"),
            ]
        }

    builder = StateGraph(MessagesState)
    builder.add_node("remember", remember)
    builder.add_node("record", MessageRecorder(mem, user))
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "record")
    graph = builder.compile(store=store)
    config: RunnableConfig = {"configurable": {"thread_id": thread}}
    out = graph.invoke(MessagesState(messages=[HumanMessage("I love grilled sardines", id="h1")]), config)
    assert out["messages"][-1].content == "You said: I love grilled sardines"
    stored = store.get((user, "said"), "m1")
    assert stored is not None and stored.value == {"text": "I love grilled sardines"}
    turns = mem.list_turns(thread, user).turns
    assert [t.role for t in turns] == ["user", "assistant", "tool", "assistant"]
    assert (
        turns[1].tool_calls and turns[1].tool_calls[0].name == "lookup" and turns[2].tool_call_id == "call_1"
    )
    # a second run on the same history records only the new messages
    history = out["messages"] + [HumanMessage("and octopus", id="h2")]
    graph.invoke(MessagesState(messages=history), config)
    turns = mem.list_turns(thread, user).turns
    assert [t.content for t in turns if t.role == "user"] == ["I love grilled sardines", "and octopus"]
    assert len(turns) == 8
    # and the recorder run again over the same state is a replay, not a second copy
    MessageRecorder(mem, user)({"messages": history[:-1]}, config)
    assert len(mem.list_turns(thread, user).turns) == 8


def test_a_namespace_first_store_needs_a_user_to_list_namespaces(mem: MemoryClient) -> None:
    with pytest.raises(InvalidNamespaceError, match="prefix naming the user"):
        MongomemStore(mem).list_namespaces()


def test_a_store_bound_to_an_agent_keeps_that_agents_items_apart(stack: LocalStack) -> None:
    user = uid("agents")
    with MemoryClient(stack.url) as client:
        planner = MongomemStore(client, agent_id="planner")
        booker = MongomemStore(client, agent_id="booker")
        shared = MongomemStore(client)  # no agent: items the user's agents share
        # Given the planner agent's own item and an item shared by the user's agents
        planner.put((user, "prefs"), "seat", {"side": "aisle"})
        shared.put((user, "prefs"), "airline", {"name": "TAP"})
        # Then another agent does not see the planner's item, but both see the shared one
        assert planner.get((user, "prefs"), "seat").value == {"side": "aisle"}  # type: ignore[union-attr]
        assert booker.get((user, "prefs"), "seat") is None
        assert booker.get((user, "prefs"), "airline").value == {"name": "TAP"}  # type: ignore[union-attr]
        assert sorted(i.key for i in booker.search((user,))) == ["airline"]
        assert sorted(i.key for i in planner.search((user,))) == ["airline", "seat"]
        # ... and the memories say whose they are
        owners = {m.payload["attribute"]: m.agent_id for m in client.list_memories(user, "semantic").memories}
        assert owners == {"seat": "planner", "airline": None}
