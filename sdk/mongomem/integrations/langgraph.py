"""LangGraph: a `BaseStore` kept in mongomem, and a node that records a graph's messages as turns.

    from langgraph.graph import StateGraph, MessagesState
    from mongomem.client import MemoryClient
    from mongomem.integrations.langgraph import MongomemStore, MessageRecorder

    mem = MemoryClient("http://127.0.0.1:3000")
    store = MongomemStore(mem)                      # namespaces start with the user: ("ana", "prefs")
    store.put(("ana", "prefs"), "food", {"likes": "grilled sardines"})
    store.search(("ana",), query="what does she like to eat?")
    graph = StateGraph(MessagesState)...compile(store=store)

How items map onto mongomem (docs/integrations.md has the table):
- tenant: the API key's; user: the namespace's first label (or `user_id=` for a store bound to one
  user, then the whole namespace is the path); agent: `agent_id=` binds the store to one agent of the
  user (its items are that agent's; it reads them and the items the user's agents share), without it
  items are shared by the user's agents; kind: semantic (an item is a fact of the user's).
- an item is one semantic fact: subject `lgstore.<rest of the namespace, dot-joined>` (labels never
  contain dots, LangGraph forbids them), attribute = the key, value = the JSON of the value. It is
  embedded and indexed like any memory, so `search(query=...)` goes through POST /v1/memories/search.
- put writes a new memory (reconcile off: keys are exact, never merged by meaning) and then deletes
  the previous one of the same key; delete removes the key's memory; get and listing use
  GET /v1/memories with exact subject/attribute or a subject prefix.
Every operation is written once as a generator of request specs, driven by MemoryClient for `batch`
and by AsyncMemoryClient for `abatch`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Generator, Iterable, Sequence
from datetime import datetime
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from mongomem.client import AsyncMemoryClient, Call, MemoryClient, MemoryClientError, Methods
from mongomem.integrations._common import TurnBuffer, as_arguments, as_text, safe_id
from mongomem.models.memory import MemoryOut, MemoryPage

ROOT = "lgstore"  # the subject root of store items, apart from extracted facts
MAX_VALUE_CHARS = 4000  # a semantic fact's value limit
PAGE = 200  # the API's largest memory page
SEARCH_TOP_K = 100  # the API's largest search
SOURCE = "langgraph"

Steps = Generator[Call[Any], Any, Any]


def subject_of(path: Sequence[str]) -> str:
    return ".".join((ROOT, *path))


def path_of(subject: str) -> tuple[str, ...] | None:
    """The namespace path of a store item's subject; None for a fact that is not a store item."""
    if subject == ROOT:
        return ()
    if subject.startswith(ROOT + "."):
        return tuple(subject[len(ROOT) + 1 :].split("."))
    return None


def matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """LangGraph's prefix/suffix match, `*` matching any one label."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "suffix":
        namespace, path = tuple(reversed(namespace)), tuple(reversed(path))
    pairs = zip(namespace, path, strict=False)
    return all(want == "*" or have == want for have, want in pairs)


def filter_matches(value: Any, wanted: Any) -> bool:
    """The store filter semantics: nested equality, and $eq/$ne/$gt/$gte/$lt/$lte operators."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(value, op, arg) for op, arg in wanted.items())
        return isinstance(value, dict) and all(filter_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(filter_matches(a, b) for a, b in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


def _operator(value: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(value == arg)
    if op == "$ne":
        return bool(value != arg)
    if value is None:
        return False
    compare: dict[str, Callable[[float, float], bool]] = {
        "$gt": lambda a, b: a > b,
        "$gte": lambda a, b: a >= b,
        "$lt": lambda a, b: a < b,
        "$lte": lambda a, b: a <= b,
    }
    if op not in compare:
        raise ValueError(f"unsupported filter operator: {op}")
    return compare[op](float(value), float(arg))


class MongomemStore(BaseStore):
    """LangGraph's long-term store on mongomem memories (see the module docstring for the mapping)."""

    supports_ttl = False

    def __init__(
        self,
        client: MemoryClient | None = None,
        aclient: AsyncMemoryClient | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> None:
        if client is None and aclient is None:
            raise ValueError("give a MemoryClient, an AsyncMemoryClient, or both")
        self.client = client
        self.aclient = aclient
        self.user_id = user_id
        self.agent_id = agent_id

    # -- namespaces -> (user, path) ----------------------------------------------------------------------

    def _split(
        self, namespace: tuple[str, ...], *, allow_user_only: bool = True
    ) -> tuple[str, tuple[str, ...]]:
        for label in namespace:
            if not isinstance(label, str) or not label or "." in label:
                raise InvalidNamespaceError(f"invalid namespace label {label!r} in {namespace}")
        if self.user_id is not None:
            return self.user_id, tuple(namespace)
        if not namespace:
            raise InvalidNamespaceError("the namespace must start with the user id, e.g. ('ana', 'prefs')")
        return _user_label(namespace[0], namespace), tuple(namespace[1:])

    def _namespace(self, user: str, path: tuple[str, ...]) -> tuple[str, ...]:
        return path if self.user_id is not None else (user, *path)

    def _item(self, user: str, memory: Any, score: float | None = None, *, search: bool = False) -> Item:
        """The store item of a memory (a MemoryOut, or a search hit: both carry payload and created_at)."""
        path = path_of(memory.payload["subject"]) or ()
        value = json.loads(memory.payload["value"])
        created = (memory.payload.get("qualifiers") or {}).get("created_at")
        created_at = datetime.fromisoformat(created) if created else memory.created_at
        namespace = self._namespace(user, path)
        key = memory.payload["attribute"]
        if not search:
            return Item(
                value=value, key=key, namespace=namespace, created_at=created_at, updated_at=memory.created_at
            )
        return SearchItem(namespace, key, value, created_at, memory.created_at, score)

    # -- every operation once, as steps of request specs ---------------------------------------------------

    def _versions(self, user: str, path: tuple[str, ...], key: str) -> Steps:
        """The active memories holding `key` in the namespace, newest first."""
        page: MemoryPage = yield Methods.list_memories.build(
            user,
            "semantic",
            "active",
            10,
            subject=subject_of(path),
            attribute=key,
            agent_id=self.agent_id,
            visibility="private",
        )
        return page.memories

    def _get(self, op: GetOp) -> Steps:
        user, path = self._split(op.namespace)
        found = yield from self._versions(user, path, op.key)
        return self._item(user, found[0]) if found else None

    def _put(self, op: PutOp) -> Steps:
        user, path = self._split(op.namespace)
        old = yield from self._versions(user, path, op.key)
        if op.value is not None:
            text = json.dumps(op.value, ensure_ascii=False, sort_keys=True, default=str)
            if len(text) > MAX_VALUE_CHARS or len(op.key) > 300 or len(subject_of(path)) > 300:
                raise ValueError(
                    f"{op.namespace}/{op.key}: values are stored as facts of at most {MAX_VALUE_CHARS} "
                    "characters of JSON (keys and namespace paths at most 300)"
                )
            first = old[-1] if old else None
            created = (first.payload.get("qualifiers") or {}).get("created_at") if first else None
            payload = {
                "subject": subject_of(path),
                "attribute": op.key,
                "value": text,
                "qualifiers": {"created_at": created or datetime.now().astimezone().isoformat()},
            }
            # the user's own, whatever the project shares: a store item is never another user's to read,
            # overwrite or delete (issue 33's twenty-seventh probe: with semantic facts org-wide, every
            # user's items were one namespace)
            yield Methods.create_memory.build(
                user, "semantic", payload, reconcile=False, agent_id=self.agent_id, visibility="private"
            )
        for memory in old:  # after the new version is written: a crash in between keeps the newest
            try:
                yield Methods.delete_memory.build(memory.memory_id, user)
            except MemoryClientError as err:
                if err.status != 404:
                    raise
        return None

    def _items(self, user: str, path: tuple[str, ...]) -> Steps:
        """Every active store item of the user under the namespace path, newest first."""
        out: list[MemoryOut] = []
        cursor: str | None = None
        prefix = subject_of(path)
        while True:
            page: MemoryPage = yield Methods.list_memories.build(
                user,
                "semantic",
                "active",
                PAGE,
                cursor,
                subject_prefix=prefix,
                agent_id=self.agent_id,
                visibility="private",
            )
            out.extend(m for m in page.memories if _under(m.payload.get("subject", ""), prefix))
            if not page.next_cursor:
                return out
            cursor = page.next_cursor

    def _search(self, op: SearchOp) -> Steps:
        user, path = self._split(op.namespace_prefix)
        prefix = subject_of(path)
        want = max(0, op.offset) + max(0, op.limit)
        hits: list[tuple[MemoryOut | Any, float | None]] = []
        if op.query:
            response = yield Methods.search.build(
                user, op.query, ["semantic"], SEARCH_TOP_K, agent_id=self.agent_id, visibility="private"
            )
            hits = [
                (h, float(h.score)) for h in response.results if _under(h.payload.get("subject", ""), prefix)
            ]
        else:
            hits = [(m, None) for m in (yield from self._items(user, path))]
        items = []
        for memory, score in hits:
            value = json.loads(memory.payload["value"])
            if op.filter and not all(filter_matches(value.get(k), v) for k, v in op.filter.items()):
                continue
            items.append(self._item(user, memory, score, search=True))
            if len(items) >= want:
                break
        return items[op.offset : op.offset + op.limit]

    def _list_namespaces(self, op: ListNamespacesOp) -> Steps:
        conditions = tuple(op.match_conditions or ())
        if self.user_id is not None:
            user, base = self.user_id, ()
        else:
            firsts = [
                c.path[0] for c in conditions if c.match_type == "prefix" and c.path and c.path[0] != "*"
            ]
            if not firsts:
                raise InvalidNamespaceError(
                    "list_namespaces needs a prefix naming the user, e.g. prefix=('ana',): mongomem lists "
                    "one user's memory at a time (or bind the store to one user with user_id=...)"
                )
            user, base = _user_label(firsts[0], tuple(firsts[:1])), ()
        found = yield from self._items(user, base)
        namespaces = {self._namespace(user, path_of(m.payload["subject"]) or ()) for m in found}
        kept = [ns for ns in namespaces if all(matches(c, ns) for c in conditions)]
        if op.max_depth is not None:
            kept = list({ns[: op.max_depth] for ns in kept})
        return sorted(kept)[op.offset : op.offset + op.limit]

    def _steps(self, op: Op) -> Steps:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"unknown store operation: {type(op).__name__}")

    # -- the two drivers ---------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if self.client is None:
            raise RuntimeError("this store has only an AsyncMemoryClient: use the async methods (abatch)")
        client = self.client
        return [_drive(self._steps(op), client.execute) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if self.aclient is None:
            return await asyncio.to_thread(self.batch, list(ops))
        results: list[Result] = []
        for op in ops:
            steps = self._steps(op)
            outcome: Any = None
            failure: BaseException | None = None
            while True:
                try:
                    call = steps.throw(failure) if failure is not None else steps.send(outcome)
                except StopIteration as done:
                    results.append(done.value)
                    break
                failure = None
                try:
                    outcome = await self.aclient.execute(call)
                except MemoryClientError as err:
                    outcome, failure = None, err
        return results


def _under(subject: str, prefix: str) -> bool:
    return subject == prefix or subject.startswith(prefix + ".")


def _drive(steps: Steps, execute: Callable[[Call[Any]], Any]) -> Any:
    """Run one operation's steps with a sync client; an API error is thrown back into the steps."""
    outcome: Any = None
    failure: BaseException | None = None
    while True:
        try:
            call = steps.throw(failure) if failure is not None else steps.send(outcome)
        except StopIteration as done:
            return done.value
        failure = None
        try:
            outcome = execute(call)
        except MemoryClientError as err:
            outcome, failure = None, err


# -- recording a graph's messages --------------------------------------------------------------------


def message_turns(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """LangChain messages (Human/AI/Tool/System) as mongomem turns; each keeps its id in metadata."""
    roles = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = roles.get(getattr(message, "type", ""), "")
        if not role:
            continue
        content = message.content if isinstance(message.content, str) else as_text(message.content)
        turn: dict[str, Any] = {"role": role, "content": content}
        if getattr(message, "id", None):
            turn["metadata"] = {"lc_id": str(message.id)}
        calls = getattr(message, "tool_calls", None) or []
        if role == "assistant" and calls:
            turn["tool_calls"] = [
                {
                    "id": safe_id(c.get("id"), "call"),
                    "name": c["name"],
                    "arguments": as_arguments(c.get("args")),
                }
                for c in calls
            ]
        if role == "tool":
            turn["tool_call_id"] = safe_id(getattr(message, "tool_call_id", None), "call")
            if getattr(message, "name", None):
                turn["name"] = message.name
        if not turn["content"].strip() and not turn.get("tool_calls"):
            continue
        turns.append(turn)
    return turns


class MessageRecorder:
    """A graph node that records the state's new messages as turns of the thread's mongomem session.

    The session is the run's `thread_id`; what was already recorded is found from the session's newest
    turn (its LangChain message id), and each batch's client token is derived from its message ids,
    so running the node twice over the same messages records them once.
    """

    def __init__(
        self,
        client: MemoryClient,
        user_id: str | None = None,
        *,
        messages_key: str = "messages",
        agent_id: str | None = None,
    ) -> None:
        self.client = client
        self.user_id = user_id
        self.messages_key = messages_key
        self.agent_id = agent_id

    def __call__(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        configurable = (config or {}).get("configurable") or {}
        session = safe_id(configurable.get("thread_id"), "thread")
        user = self.user_id or configurable.get("user_id")
        messages = list(state.get(self.messages_key) or [] if isinstance(state, dict) else state.messages)
        try:
            newest = self.client.list_turns(session, user, limit=1).turns
        except MemoryClientError as err:
            if err.status != 404:
                raise
            newest = []
        last_id = (newest[-1].metadata or {}).get("lc_id") if newest else None
        ids = [str(getattr(m, "id", "")) for m in messages]
        start = ids.index(last_id) + 1 if last_id in ids else 0
        fresh = message_turns(messages[start:])
        if fresh:
            digest = hashlib.sha256("\n".join(ids[start:]).encode()).hexdigest()[:40]
            batch = TurnBuffer(
                session, user, source=SOURCE, token=f"{SOURCE}:{digest}", agent_id=self.agent_id
            )
            batch.add(*fresh)
            batch.flush(self.client)
        return {}


def _user_label(label: str, namespace: tuple[str, ...]) -> str:
    """A namespace's first label as the user id it names, refused unless it is one as written: "ana+x",
    "ana x" and "ana-x" would otherwise be one user, and so would every name in another script (issue 33's
    twenty-eighth probe: one user's `get`, `search` and `delete` reached another's items)."""
    if safe_id(label) != label:
        raise InvalidNamespaceError(
            f"the namespace's first label {label!r} (in {namespace}) is not a user id: ids are 1-128 of "
            "A-Z a-z 0-9 . _ : @ - (not '.' or '..'); map your users to such ids, or bind the store to one "
            "user with user_id=..."
        )
    return label
