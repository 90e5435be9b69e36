"""The Python SDK against the local stack over HTTP, as an application would use it."""

from __future__ import annotations

import asyncio
import inspect
import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mongomem.client import MemoryClient, MemoryClientError
from mongomem.local.stack import LocalStack
from mongomem.models.memory import WriteResult
from mongomem.models.turns import RecordTurnsResponse, TurnPage
from mongomem.models.working_memory import WorkingMemoryState
from tests.helpers import local_stack

CONFIG = """
memory:
  snapshot: {max_messages: 50, idle_seconds: 3600}
  extraction: {enabled: [semantic]}
  providers:
    llm: {kind: offline}
    embeddings: {kind: hashing, dim: 64}
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    yield from local_stack(tmp_path_factory, "sdk", CONFIG, scan_seconds=60, poll_seconds=0.2)


@pytest.fixture
def client(stack: LocalStack) -> MemoryClient:
    return MemoryClient(stack.url, timeout=10, retries=3, backoff=0.01)


def uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class Proxy:
    """A front that forwards to the stack but lets a test answer some requests itself (429, lost replies)."""

    def __init__(
        self, target: str, fault: Callable[[str, str, int], tuple[int, dict[str, str]] | None]
    ) -> None:
        self.target = target
        self.fault = fault
        self.calls: list[tuple[str, str, bytes]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def _any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy.calls.append((self.command, self.path, body))
                n = sum(1 for c in proxy.calls if c[:2] == (self.command, self.path))
                injected = proxy.fault(self.command, self.path, n)
                status, payload = 200, b""
                if injected is None or injected[1].get("forward") == "yes":
                    status, payload = proxy._forward(self.command, self.path, body, self.headers)
                if injected is not None:
                    status = injected[0]
                    payload = json.dumps(
                        {"error": {"code": "busy", "message": "try later", "details": None}}
                    ).encode()
                self.send_response(status)
                for key, value in (injected[1] if injected else {}).items():
                    if key != "forward":
                        self.send_header(key, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def _forward(self, method: str, path: str, body: bytes, headers: Any) -> tuple[int, bytes]:
        req = urllib.request.Request(
            self.target + path,
            data=body or None,
            method=method,
            headers={"Content-Type": headers.get("Content-Type") or "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_record_read_and_flush_return_the_api_models(client: MemoryClient) -> None:
    # Given a new session
    session, user = uid("chat"), uid("ana")
    # When turns are recorded one at a time and as a batch
    first = client.record_turn(session, user, "user", "I moved to Lisbon, my home airport is LIS now.")
    batch = client.record_turns(
        session, user, [{"role": "assistant", "content": "Noted."}, {"role": "user", "content": "Thanks!"}]
    )
    # Then seqs are allocated in order and the history reads back oldest first
    assert isinstance(first, RecordTurnsResponse) and [t.seq for t in first.turns] == [1]
    assert [t.seq for t in batch.turns] == [2, 3]
    page = client.list_turns(session, user, limit=2)
    assert isinstance(page, TurnPage) and [t.seq for t in page.turns] == [2, 3]
    assert [t.seq for t in client.list_turns(session, user, before_seq=page.next_before_seq).turns] == [1]
    flushed = client.flush(session, user)
    assert flushed.snapshot is not None and (flushed.snapshot.from_seq, flushed.snapshot.to_seq) == (1, 3)
    state = client.get_session(session, user)
    assert state.turn_count == 3 and state.unpromoted_count == 0


def test_a_write_whose_reply_is_lost_is_retried_once_and_recorded_once(stack: LocalStack) -> None:
    # Given a proxy that records the first POST upstream but answers it with 503 (the reply is lost)
    session, user = uid("chat"), uid("bo")
    proxy = Proxy(
        stack.url,
        lambda m, p, n: (503, {"Retry-After": "0", "forward": "yes"}) if m == "POST" and n == 1 else None,
    )
    try:
        client = MemoryClient(proxy.url, retries=3, backoff=0.01)
        # When the SDK records two turns (no client token given)
        result = client.record_turns(
            session, user, [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
        )
        # Then it retried with the same generated token, and the server replayed instead of writing again
        posts = [json.loads(body) for method, _, body in proxy.calls if method == "POST"]
        assert len(posts) == 2 and posts[0]["client_token"] == posts[1]["client_token"]
        assert result.replayed is True and [t.seq for t in result.turns] == [1, 2]
        assert [t.seq for t in MemoryClient(stack.url).list_turns(session, user).turns] == [1, 2]
    finally:
        proxy.close()


def test_429_is_retried_after_retry_after_and_gives_up_with_a_clear_error(stack: LocalStack) -> None:
    # Given an API that throttles the first two status calls, then one that always throttles
    proxy = Proxy(stack.url, lambda m, p, n: (429, {"Retry-After": "0"}) if n <= 2 else None)
    always = Proxy(stack.url, lambda m, p, n: (429, {"Retry-After": "0"}))
    try:
        # When the client asks for the status
        assert MemoryClient(proxy.url, retries=3, backoff=0.01).status()["ready"] is True
        assert len(proxy.calls) == 3
        # Then a client out of retries raises with the API's status and error code
        with pytest.raises(MemoryClientError) as caught:
            MemoryClient(always.url, retries=1, backoff=0.01).status()
        assert caught.value.status == 429 and caught.value.code == "busy" and len(always.calls) == 2
    finally:
        proxy.close()
        always.close()


def test_4xx_errors_carry_status_code_message_and_details(client: MemoryClient) -> None:
    with pytest.raises(MemoryClientError) as invalid:
        client.record_turn(uid("chat"), uid("u"), "robot", "hello")
    assert invalid.value.status == 422 and invalid.value.code == "validation_error"
    assert any("role" in d["path"] for d in invalid.value.details)
    with pytest.raises(MemoryClientError) as missing:
        client.get_memory("mem-" + "0" * 24, uid("u"))
    assert missing.value.status == 404 and missing.value.message


def test_an_error_prints_the_field_and_the_reason(client: MemoryClient) -> None:
    """Issue 25: str(MemoryClientError) said only "422 validation_error: the request does not match the
    schema"; a log line or a traceback must name what to fix."""
    with pytest.raises(MemoryClientError) as invalid:
        client.record_turn(uid("chat"), uid("u"), "robot", "hello")
    assert "turns.0.role: Input should be 'user', 'assistant', 'system' or 'tool'" in str(invalid.value)
    with pytest.raises(MemoryClientError) as bad_id:
        client.list_turns("chat 1", uid("u"))  # refused before sending (issue 33's twenty-third probe)
    assert bad_id.value.code == "validation_error"
    assert "'chat 1' is no id: 1 to 128 characters: letters, digits and . _ : @ - (not . or .. alone)" in str(
        bad_id.value
    )
    with pytest.raises(MemoryClientError) as refused:  # and the API says the same of a body's id
        client.search("chat 1", "x")
    assert str(refused.value).startswith("422 validation_error") and "must be an identifier" in str(
        refused.value
    )


@pytest.mark.parametrize("dots", [".", ".."])
def test_a_dot_id_is_the_sdks_own_error(client: MemoryClient, dots: str) -> None:
    """Issue 33 finding 12: get_thread(".") raised a raw pydantic ValidationError (the URL client dropped
    the dot-segment, so the thread list answered)."""
    user = uid("u")
    for call in (
        lambda: client.get_thread(dots, user),
        lambda: client.list_turns(dots, user),
        lambda: client.delete_thread(dots, user),
    ):
        with pytest.raises(MemoryClientError) as refused:
            call()
        assert refused.value.code == "validation_error" and "'.' or '..'" in str(refused.value)
    with pytest.raises(MemoryClientError) as created:
        client.create_thread(dots, user)
    assert created.value.status == 422  # the API refuses the id itself


def test_one_argument_order_and_typed_results(client: MemoryClient) -> None:
    """Issue 25: search(user_id, query) but recall(query, user_id); recall, build_context and list_domains
    returned dicts; build_context offered `thread` and an optional session_id the API refuses (422)."""
    from mongomem.models.memory import DomainList
    from mongomem.models.recall import ContextResponse, RecallResponse

    user, session = uid("gus"), uid("chat")
    client.record_turn(session, user, "user", "My locker code is 4411.")
    term = {"term": "ETA", "definition": "estimated time", "domain": "ops"}
    client.create_memory(user, "taxonomic", term, visibility="private")  # org memories reach other tests
    for method in (client.search, client.recall, client.discover_procedures, client.list_memories):
        assert next(iter(inspect.signature(method).parameters)) == "user_id", method
    assert list(inspect.signature(client.build_context).parameters)[:2] == ["user_id", "session_id"]
    assert "thread" not in inspect.signature(client.build_context).parameters
    recalled = client.recall(user, "locker code", message_range=0)
    assert isinstance(recalled, RecallResponse)  # the scan has not indexed it yet: typed, even if empty
    context = client.build_context(user, session, query="locker", token_budget=500)
    assert isinstance(context, ContextResponse) and "4411" in context.context
    assert isinstance(client.list_domains(user), DomainList)
    with pytest.raises(TypeError):
        client.build_context(user)  # type: ignore[call-arg]


def test_feedback_takes_the_user_in_the_query_like_every_route_of_one_memory(stack: LocalStack) -> None:
    mem = MemoryClient(stack.url)
    user = uid("hal")
    step = {"action": "open the form"}
    procedure = {"name": "file expenses", "when_to_use": "after a trip", "steps": [step]}
    written = mem.create_memory(user, "procedural", procedure, visibility="private")
    memory_id = written.memory.memory_id
    result = mem.procedure_feedback(memory_id, user, "success")
    assert result.usage.successes == 1
    # the query is what the SDK sends; the body form of older clients still works, a clash is refused
    status, body = http_json(
        "POST", f"{stack.url}/v1/memories/{memory_id}/feedback?user_id={user}", {"outcome": "failure"}
    )
    assert status == 200 and body["usage"]["failures"] == 1
    status, body = http_json(
        "POST", f"{stack.url}/v1/memories/{memory_id}/feedback", {"user_id": user, "outcome": "success"}
    )
    assert status == 200
    status, body = http_json(
        "POST",
        f"{stack.url}/v1/memories/{memory_id}/feedback?user_id={user}",
        {"user_id": "other", "outcome": "success"},
    )
    assert status == 400 and body["error"]["details"] == {"path": "user_id"}


def http_json(method: str, url: str, body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, method=method, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_unreachable_api_is_a_client_error_without_status() -> None:
    with pytest.raises(MemoryClientError) as caught:
        MemoryClient("http://127.0.0.1:9", retries=1, backoff=0.01, timeout=2).status()
    assert caught.value.status is None and caught.value.code == "unreachable"


def test_memories_write_read_history_list_search_delete(client: MemoryClient) -> None:
    user = uid("cy")
    fact = {"subject": "user", "attribute": "home airport", "value": "OPO"}
    added = client.create_memory(user, "semantic", fact)
    updated = client.create_memory(user, "semantic", {**fact, "value": "LIS"})
    assert isinstance(added, WriteResult) and added.decision == "ADD" and updated.decision == "UPDATE"
    chain = client.get_memory(updated.memory.memory_id, user, history=True)
    assert [m.payload["value"] for m in chain.history or []][:2] in (["LIS", "OPO"], ["OPO", "LIS"])
    assert [m.memory_id for m in client.iter_memories(user, type="semantic", status="active")] == [
        updated.memory.memory_id
    ]
    found = client.search(user, "home airport", types=["semantic"], top_k=5)
    assert found.results and found.results[0].payload["value"] == "LIS"
    deleted = client.delete_memory(updated.memory.memory_id, user)
    assert deleted.deleted_versions == 2
    assert client.list_memories(user, status="active").memories == []


def test_working_memory_update_then_read(client: MemoryClient) -> None:
    user = uid("di")
    written = client.update_working_memory(user, content="# User\n- **Name**: Di\n", replace=True)
    assert isinstance(written, WorkingMemoryState) and written.version >= 1
    read = client.get_working_memory(user)
    assert isinstance(read, WorkingMemoryState) and "Di" in (read.content or "")
    assert client.get_working_memory(user, if_none_match=read.cache_key).model_dump()["unchanged"] is True


def test_status_reports_ready_with_the_configured_providers(client: MemoryClient) -> None:
    status = client.status()
    assert status["ready"] is True and status["extraction"]["enabled"] == ["semantic"]


def test_readme_examples_run(stack: LocalStack, tmp_path: Path) -> None:
    """The SDK snippet in the README runs as written (against this stack instead of make dev)."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    start = readme.index("```python\nfrom mongomem.client import MemoryClient")
    snippet = readme[start + len("```python\n") : readme.index("```", start + 10)]
    namespace: dict[str, Any] = {}
    exec(compile(snippet.replace("http://127.0.0.1:3000", stack.url), "README", "exec"), namespace)


# --- deleting turns, listing facts by subject ---------------------------------------------------


def test_delete_turns_from_a_seq_then_all_and_promotion_steps_over_the_gap(client: MemoryClient) -> None:
    # Given five turns
    session, user = uid("chat"), uid("el")
    client.record_turns(session, user, [{"role": "user", "content": f"message {i}"} for i in range(1, 6)])
    # When the last two are deleted
    result = client.delete_turns(session, user, from_seq=4)
    # Then they are gone, and newer turns get new seqs (never reused)
    assert (result.deleted, result.from_seq) == (2, 4)
    assert [t.seq for t in client.list_turns(session, user).turns] == [1, 2, 3]
    assert [t.seq for t in client.record_turn(session, user, "user", "again").turns] == [6]
    # And a flush promotes over the gap, naming the deleted seqs as missing
    snap = client.flush(session, user).snapshot
    assert snap is not None and (snap.from_seq, snap.to_seq, snap.turn_count) == (1, 6, 4)
    assert snap.missing_seqs == [4, 5]
    # When every turn is deleted, Then the session reads back empty
    assert client.delete_turns(session, user).deleted == 4
    assert client.list_turns(session, user).turns == []


def test_delete_turns_of_an_unknown_session_is_404(client: MemoryClient) -> None:
    with pytest.raises(MemoryClientError) as err:
        client.delete_turns(uid("nope"), uid("u"))
    assert err.value.status == 404


def test_semantic_facts_list_by_exact_subject_attribute_and_subject_prefix(client: MemoryClient) -> None:
    user = uid("fi")
    for subject, attribute, value in [
        ("prefs/food", "Likes", "tea"),
        ("prefs/food", "likes", "coffee"),
        ("prefs/travel", "seat", "aisle"),
        ("prefsX", "seat", "window"),
    ]:
        client.create_memory(
            user, "semantic", {"subject": subject, "attribute": attribute, "value": value}, reconcile=False
        )

    def values(**filters: Any) -> list[str]:
        page = client.list_memories(user, type="semantic", **filters)
        return sorted(m.payload["value"] for m in page.memories)

    # Exact means exact: case and punctuation matter (unlike reconciliation's keys)
    assert values(subject="prefs/food", attribute="likes") == ["coffee"]
    assert values(subject="prefs/food") == ["coffee", "tea"]
    assert values(subject_prefix="prefs/") == ["aisle", "coffee", "tea"]
    assert values(subject_prefix="prefs") == ["aisle", "coffee", "tea", "window"]
    with pytest.raises(MemoryClientError) as err:
        client.list_memories(user, subject="prefs/food")
    assert err.value.status == 400 and "type=semantic" in err.value.message


# --- AsyncMemoryClient --------------------------------------------------------------------------


def test_async_client_has_the_same_methods_models_and_errors(stack: LocalStack) -> None:
    from mongomem.client import AsyncMemoryClient

    session, user = uid("chat"), uid("ga")

    async def scenario() -> None:
        async with AsyncMemoryClient(stack.url, retries=2, backoff=0.01) as mem:
            recorded = await mem.record_turns(
                session, user, [{"role": "user", "content": "I live in Porto."}]
            )
            assert isinstance(recorded, RecordTurnsResponse) and [t.seq for t in recorded.turns] == [1]
            page = await mem.list_turns(session, user)
            assert isinstance(page, TurnPage) and page.turns[0].content == "I live in Porto."
            written = await mem.create_memory(
                user, "semantic", {"subject": "ga", "attribute": "city", "value": "Porto"}
            )
            assert isinstance(written, WriteResult) and written.decision == "ADD"
            found = await mem.search(user, "city", types=["semantic"])
            assert found.results[0].payload["value"] == "Porto"
            assert [m.memory_id async for m in mem.iter_memories(user, page_size=1)] == [
                written.memory.memory_id
            ]
            state = await mem.update_working_memory(user, content="# User\n- **City**: Porto\n", replace=True)
            assert isinstance(state, WorkingMemoryState)
            context = await mem.build_context(user, session, query="where", token_budget=500)
            assert "Porto" in context.context
            with pytest.raises(MemoryClientError) as invalid:
                await mem.record_turn(session, user, "robot", "x")
            assert invalid.value.status == 422 and invalid.value.code == "validation_error"

    asyncio.run(scenario())


def test_async_client_retries_429_and_a_lost_write_reply_with_one_client_token(stack: LocalStack) -> None:
    from mongomem.client import AsyncMemoryClient

    session, user = uid("chat"), uid("ha")
    proxy = Proxy(
        stack.url,
        lambda m, p, n: (
            (503, {"Retry-After": "0", "forward": "yes"})
            if m == "POST" and n == 1
            else ((429, {"Retry-After": "0"}) if m == "GET" and n <= 2 else None)
        ),
    )
    try:

        async def scenario() -> None:
            mem = AsyncMemoryClient(proxy.url, retries=3, backoff=0.01)
            result = await mem.record_turns(session, user, [{"role": "user", "content": "a"}])
            assert result.replayed is True and [t.seq for t in result.turns] == [1]
            assert (await mem.status())["ready"] is True
            await mem.aclose()

        asyncio.run(scenario())
        posts = [json.loads(body) for method, _, body in proxy.calls if method == "POST"]
        assert len(posts) == 2 and posts[0]["client_token"] == posts[1]["client_token"]
        assert len([c for c in proxy.calls if c[0] == "GET"]) == 3
    finally:
        proxy.close()


def test_async_client_out_of_retries_and_unreachable_raise_clear_errors(stack: LocalStack) -> None:
    from mongomem.client import AsyncMemoryClient

    always = Proxy(stack.url, lambda m, p, n: (429, {"Retry-After": "0"}))
    try:

        async def scenario() -> tuple[MemoryClientError, MemoryClientError]:
            with pytest.raises(MemoryClientError) as busy:
                await AsyncMemoryClient(always.url, retries=1, backoff=0.01).status()
            with pytest.raises(MemoryClientError) as gone:
                await AsyncMemoryClient("http://127.0.0.1:9", retries=1, backoff=0.01, timeout=2).status()
            return busy.value, gone.value

        busy, gone = asyncio.run(scenario())
        assert busy.status == 429 and busy.code == "busy" and len(always.calls) == 2
        assert gone.status is None and gone.code == "unreachable" and "127.0.0.1:9" in gone.message
    finally:
        always.close()


def test_a_write_that_must_not_run_twice_is_not_resent_after_a_5xx(stack: LocalStack) -> None:
    # Given a front that answers the first create_memory with a 502 after forwarding it
    proxy = Proxy(stack.url, lambda m, p, n: (502, {"forward": "yes"}) if m == "POST" and n == 1 else None)
    try:
        user = uid("ia")
        with pytest.raises(MemoryClientError) as err:
            MemoryClient(proxy.url, retries=3, backoff=0.01).create_memory(
                user, "semantic", {"subject": "ia", "attribute": "city", "value": "Faro"}
            )
        # Then the SDK does not send it again (a second write could add a second version)
        assert err.value.status == 502 and len(proxy.calls) == 1
    finally:
        proxy.close()


class KeepAlive:
    """An HTTP/1.1 server that answers {} and records the client port of every request."""

    def __init__(self) -> None:
        self.ports: list[int] = []
        seen = self.ports

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                seen.append(self.client_address[1])
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def test_both_clients_reuse_one_connection() -> None:
    from mongomem.client import AsyncMemoryClient

    server = KeepAlive()
    try:
        with MemoryClient(server.url) as mem:
            for _ in range(3):
                mem.status()

        async def scenario() -> None:
            async with AsyncMemoryClient(server.url) as amem:
                for _ in range(3):
                    await amem.status()

        asyncio.run(scenario())
        sync_ports, async_ports = server.ports[:3], server.ports[3:]
        assert len(set(sync_ports)) == 1 and len(set(async_ports)) == 1 and len(async_ports) == 3
    finally:
        server.server.shutdown()
        server.server.server_close()


def test_a_timeout_is_a_clear_error() -> None:
    import socket

    # Given a server that accepts the connection but never answers
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        with pytest.raises(MemoryClientError) as err:
            MemoryClient(url, timeout=0.3, retries=1, backoff=0.01).status()
        assert err.value.status is None and err.value.code == "timeout" and "0.3s" in err.value.message
    finally:
        listener.close()


def test_the_sdk_asks_for_the_observation_log_and_it_stays_the_same_bytes(client: MemoryClient) -> None:
    # Given a session whose snapshot the local stack extracted (the offline rules observe it)
    session, user = uid("chat"), uid("ana")
    client.record_turns(
        session,
        user,
        [
            {"role": "user", "content": "I moved to Lisbon and I work at a bakery."},
            {"role": "assistant", "content": "Noted."},
        ],
    )
    client.flush(session, user)
    sources = [{"source": "observations"}]
    deadline = time.monotonic() + 30
    while "bakery" not in (block := client.build_context(user, session, sources=sources)).context:
        assert time.monotonic() < deadline, block
        time.sleep(0.2)
    # When the agent asks again
    again = client.build_context(user, session, sources=sources)
    # Then the block is the same bytes and says the log's version
    assert again.context == block.context and again.sections[0].version == block.sections[0].version == 1
    assert again.sections[0].text.endswith("- User: I moved to Lisbon and I work at a bakery.")
