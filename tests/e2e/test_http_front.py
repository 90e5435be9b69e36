"""Issue 11, finding 6: the local HTTP front answers malformed HTTP with the JSON error envelope and never
records a body that did not arrive whole (raw sockets, as a broken or hostile client sends them)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.local.stack import LocalStack

TURN = b'{"user_id": "ana", "role": "user", "content": "short body"}'


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    config = tmp_path_factory.mktemp("cfg") / "project-config.yaml"
    config.write_text("memory:\n  providers: {embeddings: {kind: hashing, dim: 64}}\n")
    stack = LocalStack(
        data_dir=tmp_path_factory.mktemp("front"),
        port=0,
        scan_seconds=3600,
        config_file=config,
        read_timeout_seconds=1.0,
    )
    stack.start()
    yield stack
    stack.stop()


def exchange(stack: LocalStack, raw: bytes, half_close: bool = False, wait: float = 10.0) -> bytes:
    """Send raw bytes; return everything the front answers until it closes (or `wait` passes)."""
    with socket.create_connection(("127.0.0.1", stack.port), timeout=wait) as sock:
        sock.sendall(raw)
        if half_close:
            sock.shutdown(socket.SHUT_WR)  # the client gives up sending
        chunks = []
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                data = sock.recv(65536)
            except TimeoutError:
                break
            if not data:
                break
            chunks.append(data)
        return b"".join(chunks)


def responses(raw: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """Split the bytes of one or more HTTP/1.1 responses (with Content-Length) into (status, headers, body)."""
    out = []
    while raw:
        head, _, rest = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        body, raw = rest[:length], rest[length:]
        out.append((status, headers, body))
    return out


def envelope(body: bytes) -> dict[str, Any]:
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message", "details"} and error["message"]
    return dict(error)


def post(path: str, body: bytes, length: str | None = None, extra: str = "") -> bytes:
    announced = str(len(body)) if length is None else length
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {announced}\r\n{extra}\r\n"
    )
    return head.encode() + body


def turns(stack: LocalStack, session: str) -> int:
    assert stack.services is not None
    return int(stack.services.db["turns"].count_documents({"session_id": session}))


def test_a_content_length_longer_than_the_body_times_out_and_records_nothing(stack: LocalStack) -> None:
    started = time.monotonic()
    raw = exchange(stack, post("/v1/sessions/cl-long/turns", TURN, length=str(len(TURN) + 50)))
    [(status, headers, body)] = responses(raw)
    assert status == 408 and headers["content-type"] == "application/json"
    assert envelope(body)["code"] == "request_timeout"
    assert time.monotonic() - started < 5  # the front gave up after its read timeout, it did not hang
    assert turns(stack, "cl-long") == 0


def test_a_client_that_gives_up_mid_body_gets_nothing_recorded(stack: LocalStack) -> None:
    raw = exchange(stack, post("/v1/sessions/gave-up/turns", TURN, length="4096"), half_close=True)
    [(status, _, body)] = responses(raw)
    assert status == 400 and envelope(body)["details"] == {"content_length": 4096, "received": len(TURN)}
    time.sleep(0.5)
    assert turns(stack, "gave-up") == 0


def test_a_content_length_shorter_than_the_body_is_refused_in_json(stack: LocalStack) -> None:
    raw = exchange(stack, post("/v1/sessions/cl-short/turns", TURN, length=str(len(TURN) - 10)))
    answers = responses(raw)
    # the truncated body is not valid JSON: a JSON 400; the left-over bytes are no request (an unfinished
    # line the front stops waiting for, or a JSON 400 when they end a line)
    assert answers[0][0] == 400 and envelope(answers[0][2])["code"] == "invalid_json"
    assert all(a[0] == 400 and a[1]["content-type"] == "application/json" for a in answers)
    for answer in answers:
        envelope(answer[2])
    assert turns(stack, "cl-short") == 0


@pytest.mark.parametrize("length", ["abc", "-5", "12, 12", "1e3"])
def test_a_content_length_that_is_not_a_number_is_a_json_400(stack: LocalStack, length: str) -> None:
    [(status, _, body)] = responses(exchange(stack, post("/v1/sessions/cl-bad/turns", TURN, length=length)))
    assert status == 400 and "Content-Length" in envelope(body)["message"]
    assert turns(stack, "cl-bad") == 0


def test_head_trace_and_unknown_methods_answer_json(stack: LocalStack) -> None:
    head = exchange(stack, b"HEAD /v1/status HTTP/1.1\r\nHost: x\r\n\r\n")
    [(status, headers, body)] = responses(head)
    assert status == 405 and headers["content-type"] == "application/json" and body == b""
    assert int(headers["content-length"]) > 0  # the size of the JSON a GET-like answer would carry
    for method in ("TRACE", "CONNECT"):
        [(status, headers, body)] = responses(
            exchange(stack, f"{method} /v1/status HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        )
        assert status == 405 and headers["content-type"] == "application/json", method
        assert headers["allow"], method
        envelope(body)


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("BREW", "/v1/status", "GET"),
        ("FOO", "/v1/sessions/s1/turns", "DELETE, GET, POST"),
        ("PROPFIND", "/v1/memories", "GET, POST"),
        ("foo", "/v1/status", "GET"),  # not a method token: still the target's methods (RFC 9110 15.5.6)
        ("get", "/v1/memories", "GET, POST"),
    ],
)
def test_an_unknown_method_is_a_405_naming_the_allowed_ones(
    stack: LocalStack, method: str, path: str, allowed: str
) -> None:
    """Issue 33 finding 12: an unknown method answered 501 (a 5xx for what the client sent)."""
    [(status, headers, body)] = responses(
        exchange(stack, f"{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    )
    assert status == 405 and headers["allow"] == allowed
    assert envelope(body)["code"] == "method_not_allowed"
    assert turns(stack, "s1") == 0


@pytest.mark.parametrize("size", [20_000, 70_000])
def test_over_long_urls_are_a_json_414(stack: LocalStack, size: int) -> None:
    raw = exchange(stack, f"GET /v1/memories?user_id={'u' * size} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    [(status, headers, body)] = responses(raw)
    assert status == 414 and headers["content-type"] == "application/json"
    assert envelope(body)["code"] == "uri_too_long"


def test_a_garbled_request_line_is_a_json_400(stack: LocalStack) -> None:
    [(status, headers, body)] = responses(exchange(stack, b"this is not http\r\n\r\n"))
    assert status == 400 and headers["content-type"] == "application/json"
    envelope(body)


def test_a_well_formed_request_still_records(stack: LocalStack, tmp_path: Path) -> None:
    [(status, _, body)] = responses(
        exchange(stack, post("/v1/sessions/fine/turns", TURN, extra="Connection: close\r\n"))
    )
    assert status == 201 and json.loads(body)["turns"][0]["seq"] == 1
    assert turns(stack, "fine") == 1


def http(stack: LocalStack, method: str, path: str, body: Any = None) -> tuple[int, dict[str, str], Any]:
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{stack.url}{path}", data=data, method=method)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, json.loads(err.read())


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/v1/sessions/s1/turns", "DELETE, GET, POST"),  # the record function
        ("GET", "/v1/recall", "POST"),  # the memory API function
        ("DELETE", "/v1/memories/search", None),  # DELETE /v1/memories/{id} exists: its validation answers
    ],
)
def test_a_wrong_method_is_405_with_the_allowed_ones(
    stack: LocalStack, method: str, path: str, allowed: str | None
) -> None:
    """Issue 25: a wrong method answered 404 "no such route"."""
    status, headers, body = http(stack, method, path)
    if allowed is None:
        assert (
            status == 422 and "a memory id: mem- and 24 hex digits" in body["error"]["details"][0]["message"]
        )
        return
    assert status == 405 and headers["allow"] == allowed
    assert body["error"]["code"] == "method_not_allowed"
    assert body["error"]["details"]["allowed"] == allowed.split(", ")


@pytest.mark.parametrize("path", ["/v1/nothing-here", "/v1/memories/mem-0123456789abcdef01234567/nothing"])
def test_an_unknown_route_points_at_the_api_docs(stack: LocalStack, path: str) -> None:
    status, _, body = http(stack, "GET", path)
    assert status == 404 and body["error"]["code"] == "route_not_found"
    assert "/v1/docs" in body["error"]["message"] and body["error"]["details"]["docs"] == "/v1/docs"


def test_an_identifier_error_says_what_an_identifier_may_hold(stack: LocalStack) -> None:
    """Issue 25: identifier errors showed only the regex."""
    status, _, body = http(stack, "GET", "/v1/sessions/chat%201/turns?user_id=ana")
    assert status == 422
    detail = body["error"]["details"][0]
    assert detail["path"] == "path.session_id"
    assert (
        detail["message"]
        == "must be an identifier: 1 to 128 characters: letters, digits and . _ : @ - (not . or .. alone) (got 'chat%201')"
    )
    status, _, body = http(stack, "POST", "/v1/memories/search", {"user_id": "ana b", "query": "x"})
    assert status == 422 and "^[" not in json.dumps(body) and "letters, digits" in json.dumps(body)


@pytest.mark.parametrize("dots", [".", ".."])
def test_dot_only_ids_are_refused_everywhere(stack: LocalStack, dots: str) -> None:
    """Issue 33 finding 12: `.` and `..` were accepted (201) but no RFC 3986 client can address them."""
    user = f"dotty-{len(dots)}"
    turn = {"user_id": user, "turns": [{"role": "user", "content": "hi"}]}
    encoded = dots.replace(".", "%2E")  # as a client that keeps the segment sends it
    refused = [
        http(stack, "POST", "/v1/threads", {"thread_id": dots, "user_id": user}),
        http(stack, "POST", "/v1/sessions/s-dot/turns", {**turn, "user_id": dots}),
        http(stack, "POST", f"/v1/sessions/{encoded}/turns", turn),
        http(stack, "GET", f"/v1/threads/{encoded}?user_id={user}"),
        http(stack, "DELETE", f"/v1/users/{encoded}"),
        http(stack, "GET", f"/v1/memories?user_id={encoded}"),
        http(
            stack,
            "PUT",
            f"/v1/working-memory?user_id={user}&thread_id={encoded}&scope=thread",
            {"content": "x"},
        ),
        http(stack, "GET", f"/v1/memories/{encoded}?user_id={user}"),
    ]
    for status, _, body in refused:
        assert status == 422 and body["error"]["code"] == "validation_error", body
    assert turns(stack, dots) == 0 and turns(stack, "s-dot") == 0
    assert stack.services is not None
    assert stack.services.db["threads"].count_documents({"user_id": user}) == 0
    # ids that merely start with dots stay valid
    assert http(stack, "POST", "/v1/threads", {"thread_id": f"{dots}.x", "user_id": user})[0] == 201


def test_concurrent_requests_of_one_function_never_read_each_others(stack: LocalStack) -> None:
    """The front serves several requests of a function at once (a long import holds no other caller, issue
    33's twenty-fifth probe); each is answered from its own event: its user, its body, its errors."""
    from concurrent.futures import ThreadPoolExecutor

    def one(n: int) -> list[str]:
        user = f"conc-{n % 6}"
        wrong: list[str] = []
        fact = {"subject": "user", "attribute": f"badge {n}", "value": f"B{n}"}
        body = {"user_id": user, "type": "semantic", "payload": fact}
        status, headers, answer = http(stack, "POST", "/v1/memories", body)
        if status != 201 or headers.get("x-mongomem-user-id") != user:
            wrong.append(f"write {n}: {status} {headers.get('x-mongomem-user-id')} {answer}")
        elif answer["memory"]["payload"]["value"] != f"B{n}":
            wrong.append(f"write {n} stored another request's body: {answer['memory']['payload']}")
        status, headers, listed = http(stack, "GET", f"/v1/memories?user_id={user}&limit=100")
        # each user's badges are the numbers n with n % 6 the user's
        others = [
            m["payload"]["value"]
            for m in listed.get("memories", [])
            if int(m["payload"]["value"][1:]) % 6 != n % 6
        ]
        if status != 200 or headers.get("x-mongomem-user-id") != user or others:
            wrong.append(f"list {n}: {status} {headers.get('x-mongomem-user-id')} another user's {others}")
        status, _, refused = http(stack, "POST", "/v1/memories", {"user_id": user, "type": "semantic"})
        if status != 422 or "payload" not in json.dumps(refused):
            wrong.append(f"refusal {n}: {status} {refused}")
        return wrong

    with ThreadPoolExecutor(8) as pool:
        found = [w for ws in pool.map(one, range(48)) for w in ws]
    assert found == []
