"""Amazon OpenSearch Serverless (a Classic VECTORSEARCH collection) and OpenSearch Service domain stand-ins.

Both are HTTP proxies in front of the real OpenSearch node (tools/opensearch_node.py), so every query is
answered by the real engine; the proxy refuses what the service's documentation says it refuses and
makes writes visible the way the service does. docs/aws-rules.md ("OpenSearch Serverless") lists each
rule with its source page.

Serverless (`service="aoss"`):
- requests are SigV4-signed for the service `aoss` and carry `x-amz-content-sha256` (the body's hash);
- only the operations of "Supported operations and plugins in Amazon OpenSearch Serverless" exist:
  anything else (`_refresh`, `_delete_by_query`, `_update_by_query`, `_reindex`, scroll, `_cluster`,
  `_nodes`, `_stats`, `GET /`, the k-NN warmup/stats/train APIs, ...) answers 404 with an empty body,
  as a collection does;
- vector search collections take no custom document id on index/create (400 illegal_argument_exception
  "Document ID is not supported in create/index operation request", per bulk item or for the request;
  `POST <index>/_doc/<id>` is no operation at all: 404) and no upsert;
- `refresh=true|wait_for` on a write is refused (400 status_exception);
- a knn_vector field may use the faiss (HNSW only) or nmslib engine, never lucene; the node here has no
  faiss/nmslib native library, so the proxy hands the index to the node with engine lucene and shows
  the declared engine in mappings (the query JSON and score formulas are the same);
- a write becomes visible to search `visibility_seconds` after it was acknowledged, deletes included
  (a deleted document keeps answering searches until then): the index is refreshed on the service's
  own schedule, never on request. `settle()` waits until every write is visible (tests).

Domain (`service="es"`): requests are SigV4-signed for `es`; everything else goes to the node as it is
(custom ids, `_refresh`, `_delete_by_query` exist on a domain), but for the k-NN engine the node lacks.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

NO_CUSTOM_ID = "Document ID is not supported in create/index operation request"
NO_UPSERT = "Upsert is not supported in vector search collections"  # the stand-in's own wording
ENGINES = ("faiss", "nmslib")  # what a vector search collection builds knn_vector fields with
DEFAULT_ENGINE = "nmslib"  # a knn_vector mapping without a method (Classic collections' default)
_CREDENTIAL = re.compile(r"Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request")


@dataclass
class Answer:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Call:
    method: str
    path: str
    status: int


def _json(status: int, payload: Any) -> Answer:
    return Answer(status, json.dumps(payload).encode(), {"Content-Type": "application/json"})


def _error(status: int, kind: str, reason: str) -> Answer:
    cause = {"type": kind, "reason": reason}
    return _json(status, {"error": {"root_cause": [cause], **cause}, "status": status})


def _no_such_operation() -> Answer:
    return Answer(404, b"", {"Content-Length": "0"})  # what a collection answers for an unsupported API


class SearchProxy:
    """A collection (`service="aoss"`) or a domain (`service="es"`) endpoint over the node at `upstream`."""

    def __init__(
        self,
        upstream: str,
        *,
        service: str = "aoss",
        visibility_seconds: float = 0.0,
        check_signature: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if service not in ("aoss", "es"):
            raise ValueError("service is aoss (Serverless) or es (a domain)")
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 9200)
        self.service = service
        self.serverless = service == "aoss"
        self.visibility_seconds = visibility_seconds
        self.check_signature = check_signature
        self.clock = clock
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()
        # (index, _id) -> when an acknowledged write becomes visible to search
        self._unseen: dict[tuple[str, str], float] = {}
        self._deleting: dict[tuple[str, str], float] = {}
        self._engines: dict[str, dict[str, str]] = {}  # index -> field path -> declared engine
        self._server: ThreadingHTTPServer | None = None
        self.url = ""

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> SearchProxy:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name=f"{self.service}-proxy", daemon=True).start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> SearchProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def settle(self) -> None:
        """Wait until every acknowledged write is visible to search (the stand-in's own clock)."""
        with self._lock:
            due = max([*self._unseen.values(), *self._deleting.values()], default=0.0)
        wait = due - self.clock()
        if wait > 0:
            time.sleep(wait)
        self._apply_due()

    def pending(self) -> int:
        """How many acknowledged writes search cannot see yet."""
        with self._lock:
            return len(self._unseen) + len(self._deleting)

    # -- the node --------------------------------------------------------------------------------------
    def _node(
        self, method: str, target: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> Answer:
        conn = http.client.HTTPConnection(*self.upstream, timeout=60)
        try:
            send = {k: v for k, v in (headers or {}).items() if k.lower() in ("content-type", "accept")}
            if body is not None:
                send.setdefault("Content-Type", "application/json")
            conn.request(method, target, body=body, headers=send)
            resp = conn.getresponse()
            data = resp.read()
            kept = {k: v for k, v in resp.getheaders() if k.lower() in ("content-type",)}
            return Answer(resp.status, data, kept)
        finally:
            conn.close()

    def _node_json(self, method: str, target: str, payload: Any = None) -> Any:
        body = None if payload is None else json.dumps(payload).encode()
        answer = self._node(method, target, body)
        return json.loads(answer.body or b"{}")

    # -- requests --------------------------------------------------------------------------------------
    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Answer:
        denied = self._signature(headers, body)
        if denied is not None:
            return denied
        parts = urlsplit(target)
        path = [p for p in parts.path.split("/") if p]
        if not self.serverless:
            # a domain offers faiss like the node does not: only the engine is translated for the node
            if method == "PUT" and len(path) == 1 and not path[0].startswith("_"):
                return self._create_index(path[0], target, body)
            if method == "GET" and len(path) == 2 and path[1] in ("_mapping", "_mappings"):
                return self._declared(path[0], self._node(method, target))
            return self._node(method, target, body if body else None, headers)
        params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        return self._serverless(method, path, params, target, headers, body)

    def _signature(self, headers: dict[str, str], body: bytes) -> Answer | None:
        if not self.check_signature:
            return None
        lower = {k.lower(): v for k, v in headers.items()}
        found = _CREDENTIAL.search(lower.get("authorization", ""))
        if not lower.get("authorization", "").startswith("AWS4-HMAC-SHA256") or found is None:
            return _json(403, {"message": "Missing Authentication Token"})
        if found.group(4) != self.service:
            return _json(
                403, {"message": f"Credential should be scoped to correct service: '{self.service}'."}
            )
        if self.serverless:
            declared = lower.get("x-amz-content-sha256")
            if declared is None:
                return _json(
                    403, {"message": "x-amz-content-sha256 header is required for OpenSearch Serverless"}
                )
            if declared != hashlib.sha256(body).hexdigest():
                return _json(
                    403,
                    {
                        "message": "The request signature we calculated does not match the signature you provided."
                    },
                )
        return None

    def _serverless(
        self,
        method: str,
        path: list[str],
        params: dict[str, str],
        target: str,
        headers: dict[str, str],
        body: bytes,
    ) -> Answer:
        if not path or path[0] in ("_refresh", "_delete_by_query", "_update_by_query", "_reindex"):
            return _no_such_operation()
        head, rest = path[0], path[1:]
        writes = head == "_bulk" or (rest and rest[0] in ("_bulk", "_doc", "_create", "_update"))
        refresh = params.get("refresh")
        if refresh in ("", "true", "wait_for") and method in ("POST", "PUT", "DELETE") and writes:
            policy = "true" if refresh in ("", "true") else refresh
            return _error(400, "status_exception", f"{policy} refresh policy is not supported.")
        if head.startswith("_"):
            return self._collection_level(method, head, rest, params, target, headers, body)
        index = head
        if not rest:
            if method == "PUT":
                return self._create_index(index, target, body)
            if method == "DELETE":
                with self._lock:
                    for key in [k for k in (*self._unseen, *self._deleting) if k[0] == index]:
                        self._unseen.pop(key, None)
                        self._deleting.pop(key, None)
                    self._engines.pop(index, None)
                return self._node(method, target)
            if method in ("GET", "HEAD"):
                return self._declared(index, self._node(method, target))
            return _no_such_operation()
        op, tail = rest[0], rest[1:]
        if op in ("_mapping", "_mappings", "_settings", "_setting") and method in ("GET", "HEAD", "PUT"):
            if (
                method == "PUT"
                and op in ("_mapping", "_mappings")
                and self._engine_error(json.loads(body or b"{}"))
            ):
                return self._engine_error(json.loads(body or b"{}"))  # type: ignore[return-value]
            return self._declared(index, self._node(method, target, body or None, headers))
        if op == "_bulk" and method == "POST":
            return self._bulk(index, body)
        if op == "_doc":
            if method == "POST" and not tail:
                return self._bulk(index, _ndjson([{"index": {}}, json.loads(body or b"{}")]), single="index")
            if method == "POST" and tail:
                return _no_such_operation()
            if method == "PUT" and tail:
                return _error(400, "illegal_argument_exception", NO_CUSTOM_ID)
            if method == "DELETE" and tail:
                return self._bulk(index, _ndjson([{"delete": {"_id": tail[0]}}]), single="delete")
            if method in ("GET", "HEAD") and tail:
                return self._node(method, target)
            return _no_such_operation()
        if op == "_create" and method in ("PUT", "POST") and tail:
            return _error(400, "illegal_argument_exception", NO_CUSTOM_ID)
        if op == "_update" and method == "POST" and tail:
            doc = json.loads(body or b"{}")
            if "upsert" in doc or doc.get("doc_as_upsert"):
                return _error(400, "illegal_argument_exception", NO_UPSERT)
            return self._node(method, target, body, headers)
        if op == "_source" and method in ("GET", "HEAD") and tail:
            return self._node(method, target)
        if op in ("_search", "_count", "_msearch", "_mget", "_explain", "_field_caps"):
            return self._read(method, op, index, tail, params, target, headers, body)
        return _no_such_operation()

    def _collection_level(
        self,
        method: str,
        head: str,
        rest: list[str],
        params: dict[str, str],
        target: str,
        headers: dict[str, str],
        body: bytes,
    ) -> Answer:
        if head == "_bulk" and method == "POST" and not rest:
            return self._bulk(None, body)
        if head in ("_search", "_count", "_msearch", "_mget", "_field_caps"):
            return self._read(method, head, None, rest, params, target, headers, body)
        if head in ("_mapping", "_mappings") and method == "GET":
            return self._node(method, target)
        if head == "_cat" and rest[:1] in (["indices"], ["aliases"], ["templates"]) and method == "GET":
            return self._node(method, target)
        if head == "_resolve" and rest[:1] == ["index"] and method == "GET":
            return self._node(method, target)
        if head in ("_aliases", "_alias", "_index_template", "_template", "_component_template"):
            return self._node(method, target, body or None, headers)
        return _no_such_operation()

    # -- index creation: the engines a vector search collection offers ----------------------------------
    def _create_index(self, index: str, target: str, body: bytes) -> Answer:
        spec = json.loads(body or b"{}")
        problem = self._engine_error(spec.get("mappings") or {}) if self.serverless else None
        if problem is not None:
            return problem
        declared: dict[str, str] = {}
        for field_path, method in _knn_methods(spec.get("mappings") or {}):
            declared[field_path] = method.get("engine", DEFAULT_ENGINE if self.serverless else "nmslib")
            method["engine"] = "lucene"  # the node has no faiss/nmslib library; same HNSW, same scores
            params = method.get("parameters")
            if isinstance(params, dict):
                params.pop("encoder", None)
        answer = self._node("PUT", target, json.dumps(spec).encode())
        if answer.status < 300:
            with self._lock:
                self._engines[index] = declared
        return answer

    def _engine_error(self, mappings: dict[str, Any]) -> Answer | None:
        for field_path, method in _knn_methods(mappings, declared_only=True):
            engine = method.get("engine", DEFAULT_ENGINE)
            if engine not in ENGINES:
                return _error(
                    400,
                    "mapper_parsing_exception",
                    f"engine {engine!r} of field [{field_path}] is not supported by vector search collections "
                    f"(use {' or '.join(ENGINES)})",
                )
            if engine == "faiss" and method.get("name", "hnsw") != "hnsw":
                return _error(
                    400,
                    "mapper_parsing_exception",
                    f"method {method.get('name')!r} of field [{field_path}]: vector search collections build "
                    "faiss indexes with hnsw only",
                )
        return None

    def _declared(self, index: str, answer: Answer) -> Answer:
        """Mappings as the collection shows them: each knn_vector field with the engine it was declared with."""
        with self._lock:
            engines = dict(self._engines.get(index, {}))
        if not engines or answer.status >= 300 or not answer.body:
            return answer
        data = json.loads(answer.body)
        for body in data.values() if isinstance(data, dict) else ():
            mappings = body.get("mappings") if isinstance(body, dict) else None
            for field_path, method in _knn_methods(mappings or {}):
                if field_path in engines:
                    method["engine"] = engines[field_path]
        return Answer(answer.status, json.dumps(data).encode(), answer.headers)

    # -- writes ----------------------------------------------------------------------------------------
    def _bulk(self, index: str | None, body: bytes, single: str | None = None) -> Answer:
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        ops: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []
        at = 0
        while at < len(lines):
            action = lines[at]
            kind, meta = next(iter(action.items()))
            source = None
            if kind in ("index", "create", "update"):
                at += 1
                source = lines[at] if at < len(lines) else {}
            ops.append((kind, {**({"_index": index} if index else {}), **(meta or {})}, source))
            at += 1
        items: list[dict[str, Any] | None] = [None] * len(ops)
        forward: list[tuple[int, str, dict[str, Any], dict[str, Any] | None]] = []
        deletes: list[tuple[int, dict[str, Any]]] = []
        for n, (kind, meta, source) in enumerate(ops):
            if kind in ("index", "create") and "_id" in meta:
                items[n] = _item(kind, meta, 400, error=("illegal_argument_exception", NO_CUSTOM_ID))
            elif (
                kind == "update"
                and source is not None
                and ("upsert" in source or source.get("doc_as_upsert"))
            ):
                items[n] = _item(kind, meta, 400, error=("illegal_argument_exception", NO_UPSERT))
            elif kind == "delete":
                deletes.append((n, meta))
            else:
                forward.append((n, kind, meta, source))
        if forward:
            payload: list[dict[str, Any]] = []
            for _, kind, meta, source in forward:
                payload.append({kind: meta})
                if source is not None:
                    payload.append(source)
            answer = self._node("POST", "/_bulk", _ndjson(payload), {"Content-Type": "application/x-ndjson"})
            if answer.status >= 300:
                return answer
            due = self.clock() + self.visibility_seconds
            for (n, kind, _, _), item in zip(forward, json.loads(answer.body)["items"], strict=True):
                items[n] = item
                result = next(iter(item.values()))
                if (
                    kind in ("index", "create")
                    and result.get("status") in (200, 201)
                    and self.visibility_seconds
                ):
                    with self._lock:
                        self._unseen[(result["_index"], result["_id"])] = due
        if deletes:
            for n, item in zip(
                [n for n, _ in deletes], self._delete([meta for _, meta in deletes]), strict=True
            ):
                items[n] = item
        done = [i for i in items if i is not None]
        if single is not None:
            only = next(iter(done[0].values()))
            return _json(int(only.get("status", 200)), only)
        errors = any("error" in next(iter(i.values())) for i in done)
        return _json(200, {"took": 1, "errors": errors, "items": done})

    def _delete(self, metas: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Deletes are acknowledged at once (the document is gone for writes) and reach search later."""
        found = self._node_json(
            "POST", "/_mget", {"docs": [{"_index": m["_index"], "_id": m["_id"]} for m in metas]}
        )
        due = self.clock() + self.visibility_seconds
        items = []
        for meta, doc in zip(metas, found.get("docs", []), strict=True):
            key = (meta["_index"], meta["_id"])
            if doc.get("error", {}).get("type") == "index_not_found_exception":
                items.append(_item("delete", meta, 404, error=("index_not_found_exception", "no such index")))
                continue
            with self._lock:
                exists = bool(doc.get("found")) and key not in self._deleting
                if exists:
                    self._deleting[key] = due
            items.append(
                _item("delete", meta, 200 if exists else 404, result="deleted" if exists else "not_found")
            )
        if not self.visibility_seconds:
            self._apply_due()
        return items

    def _apply_due(self) -> None:
        with self._flush_lock:
            now = self.clock()
            with self._lock:
                gone = [k for k, t in self._deleting.items() if t <= now]
                shown = [k for k, t in self._unseen.items() if t <= now]
                for key in gone:
                    del self._deleting[key]
                for key in shown:
                    del self._unseen[key]
            if gone:
                self._node("POST", "/_bulk", _ndjson([{"delete": {"_index": i, "_id": d}} for i, d in gone]))
            for index in sorted({i for i, _ in [*gone, *shown]}):
                self._node("POST", f"/{index}/_refresh")  # the service's own schedule, not the client's

    # -- reads -----------------------------------------------------------------------------------------
    def _read(
        self,
        method: str,
        op: str,
        index: str | None,
        tail: list[str],
        params: dict[str, str],
        target: str,
        headers: dict[str, str],
        body: bytes,
    ) -> Answer:
        if op == "_search" and (tail or "scroll" in params):
            if tail == ["point_in_time"] and method == "POST":
                return self._node(method, target, body or None, headers)
            return _no_such_operation()  # scroll (and _search/scroll) is not offered by collections
        if op in ("_mget", "_explain", "_field_caps"):
            return self._node(method, target, body or None, headers)
        self._apply_due()
        if op == "_msearch":
            lines = [json.loads(line) for line in body.splitlines() if line.strip()]
            for at in range(0, len(lines) - 1, 2):
                where = lines[at].get("index") or index
                lines[at + 1] = self._hide(where, lines[at + 1])
            return self._node(method, target, _ndjson(lines), {"Content-Type": "application/x-ndjson"})
        query = self._hide(index, json.loads(body or b"{}"))
        return self._node("POST" if method == "GET" else method, target, json.dumps(query).encode())

    def _hide(self, index: str | list[str] | None, body: dict[str, Any]) -> dict[str, Any]:
        """The search body with the documents search cannot see yet taken out of it."""
        names = [index] if isinstance(index, str) else list(index or [])
        now = self.clock()
        with self._lock:
            hidden = sorted(
                {d for (i, d), t in self._unseen.items() if t > now and (not names or i in names)}
            )
        if not hidden:
            return body
        body = dict(body)
        invisible = {"ids": {"values": hidden}}
        query = body.get("query") or {"match_all": {}}
        if list(query) == ["knn"]:
            knn = {}
            for name, spec in query["knn"].items():
                spec = dict(spec)
                inner = [spec["filter"]] if spec.get("filter") else []
                spec["filter"] = {"bool": {"filter": inner, "must_not": [invisible]}}
                knn[name] = spec
            body["query"] = {"knn": knn}  # inside the knn clause: k stays k among the visible documents
        else:
            body["query"] = {"bool": {"must": [query], "must_not": [invisible]}}
        return body


def _ndjson(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _item(
    kind: str,
    meta: dict[str, Any],
    status: int,
    *,
    result: str | None = None,
    error: tuple[str, str] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"_index": meta.get("_index"), "status": status}
    if "_id" in meta:
        body["_id"] = meta["_id"]
    if result is not None:
        body["result"] = result
    if error is not None:
        body["error"] = {"type": error[0], "reason": error[1]}
    return {kind: body}


def _knn_methods(
    mappings: dict[str, Any], declared_only: bool = False, prefix: str = ""
) -> list[tuple[str, dict[str, Any]]]:
    """(field path, method dict) of every knn_vector field; a field without a method gets an empty one."""
    found: list[tuple[str, dict[str, Any]]] = []
    for name, spec in (mappings.get("properties") or {}).items():
        if not isinstance(spec, dict):
            continue
        path = f"{prefix}{name}"
        if spec.get("type") == "knn_vector":
            if "method" not in spec and not declared_only:
                spec["method"] = {"name": "hnsw"}
            found.append((path, spec.get("method") or {}))
        if "properties" in spec:
            found += _knn_methods(spec, declared_only, prefix=f"{path}.")
    return found


def _handler(proxy: SearchProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k: v for k, v in self.headers.items()}
            try:
                answer = proxy.handle(self.command, self.path, headers, body)
            except Exception as exc:  # a stand-in bug must show as a 500, not a hung client
                answer = _error(500, "stand_in_error", f"{type(exc).__name__}: {exc}")
            proxy.calls.append(Call(self.command, self.path, answer.status))
            self.send_response(answer.status)
            for key, value in answer.headers.items():
                if key.lower() != "content-length":
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(answer.body)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve

    return Handler
