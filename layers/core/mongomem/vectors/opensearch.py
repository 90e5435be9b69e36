"""OpenSearch adapter of the VectorIndex port: HNSW k-NN + BM25, fused client-side by RRF.

One `_msearch` round trip carries both legs of a hybrid query. Scope, kind and filters sit
inside the knn clause (efficient filtering), so a small user among many is never starved.

Two sets of rules (docs/aws-rules.md, "OpenSearch Serverless"):
- a managed domain or a node: a document's id is its `_id`, a write replaces the document of that id,
  `_refresh` makes writes visible at once when asked;
- a Serverless vector search collection (`serverless=True`): the service assigns `_id`s and refuses
  custom ones and upserts, and has no `_refresh` (writes become visible on its own schedule). A
  document's id lives in the `id` field; a write inserts the new copy (stamped with a `rev`) and then
  deletes the older copies it can see; deletes and erasure find documents by field; reads collapse
  copies of one id to the newest and delete the stale ones they meet; erasure sweeps until a search
  finds nothing of the user (or its time budget ends).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Literal

from opensearchpy import OpenSearch, Urllib3AWSV4SignerAuth, Urllib3HttpConnection
from opensearchpy.exceptions import (
    ConnectionTimeout,
    NotFoundError,
    OpenSearchException,
    RequestError,
    TransportError,
)

from mongomem.budget import request_deadline
from mongomem.observability import logger
from mongomem.vectors.port import (
    RESERVED_FIELDS,
    DimensionMismatch,
    FieldValue,
    Hit,
    IndexDoc,
    IndexUnavailable,
    SearchQuery,
    candidate_window,
    fuse,
    normalize,
    term_of,
)

__all__ = ["RETRY_ON_STATUS", "Auth", "OpenSearchIndex", "make_client"]

Auth = Literal["none", "sigv4-es", "sigv4-aoss"]
RETRY_ON_STATUS = (429, 502, 503, 504)
SPACE_TYPES = ("innerproduct", "cosinesimil")
ENGINES = ("faiss", "lucene", "nmslib")
# Returned fields: never the vector (excluded from _source anyway) nor the text (can be long).
_SOURCE = {"excludes": ["vector", "text"]}
# Equal scores are ordered by id, as in the embedded index, so a rebuilt index ranks identically.
_SORT = [{"_score": {"order": "desc"}}, {"id": {"order": "asc"}}]
# Bulk bodies stay well under the 10 MiB request limit of the smallest managed domains.
_BULK_BYTES = 4_000_000

_NO_INDEX = "index_not_found_exception"
# The write stamp of a Serverless copy: later writes sort higher (nanoseconds, then a random tail).
REV = "rev"
# Hits per page when deletes and erasure look documents up by field.
_PAGE = 1000

_CLIENTS: dict[tuple[str, str, str | None], OpenSearch] = {}
_CLIENTS_LOCK = threading.Lock()


def make_client(
    endpoint: str,
    auth: Auth = "none",
    region: str | None = None,
    timeout: float = 10,
    max_retries: int = 3,
) -> OpenSearch:
    """One cached client per (endpoint, auth, region) per process; retries 429/502/503/504."""
    if "://" not in endpoint:
        endpoint = f"https://{endpoint}"  # managed endpoints are given as bare host names
    key = (endpoint.rstrip("/"), auth, region)
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            client = _new_client(key[0], auth, region, timeout, max_retries)
            _within_request_budget(client, timeout, max_retries)
            _CLIENTS[key] = client
        return client


def _within_request_budget(client: OpenSearch, timeout: float, max_retries: int) -> None:
    """Cut each request's timeout so that it and its retries end before the current API request's
    deadline (mongomem.budget): API Gateway stops waiting at 30 s, the client then gets our 503."""

    perform = client.transport.perform_request

    def perform_request(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        deadline = request_deadline()
        if deadline is not None and not args:
            left = deadline - time.monotonic()
            if left < 0.2:
                raise ConnectionTimeout("TIMEOUT", "the request's time budget ran out", None)
            params = dict(kwargs.get("params") or {})
            asked = float(params.get("request_timeout") or timeout)
            params["request_timeout"] = max(0.1, min(asked, left / (max_retries + 1)))
            kwargs["params"] = params
        return perform(method, url, *args, **kwargs)

    client.transport.perform_request = perform_request  # type: ignore[method-assign]


def _new_client(
    endpoint: str, auth: Auth, region: str | None, timeout: float, max_retries: int
) -> OpenSearch:
    options: dict[str, Any] = {
        "hosts": [endpoint],
        "timeout": timeout,
        "max_retries": max_retries,
        "retry_on_status": RETRY_ON_STATUS,
        "retry_on_timeout": True,
        "connection_class": Urllib3HttpConnection,
    }
    if auth == "none":
        return OpenSearch(**options)
    if auth not in ("sigv4-es", "sigv4-aoss"):
        raise ValueError(f"unknown OpenSearch auth {auth!r}; use none, sigv4-es or sigv4-aoss")
    import boto3  # only signed (AWS) deployments pay for boto3's import time; lazy: 74 ms

    session = boto3.Session()
    credentials = session.get_credentials()
    region = region or session.region_name
    if credentials is None or not region:
        raise ValueError("SigV4 auth needs AWS credentials and a region (AWS_REGION)")
    service = "aoss" if auth == "sigv4-aoss" else "es"
    options["http_auth"] = Urllib3AWSV4SignerAuth(credentials, region, service)
    options["verify_certs"] = True
    return OpenSearch(**options)


class OpenSearchIndex:
    """VectorIndex on one OpenSearch index (managed domain, Serverless collection or local node)."""

    def __init__(
        self,
        client_or_url: OpenSearch | str,
        index_name: str,
        engine: str = "faiss",
        space_type: str = "innerproduct",
        *,
        m: int = 16,
        ef_construction: int = 128,
        ef_search: int = 100,
        shards: int | None = None,
        replicas: int | None = None,
        analyzer: str = "english",
        knn_candidates: int = 100,
        refresh: bool | Literal["wait_for"] = False,
        create_missing: bool = True,
        serverless: bool = False,
        sweep_seconds: float = 10.0,
        refresh_seconds: float = 60.0,
    ) -> None:
        if engine not in ENGINES:
            raise ValueError(f"unknown k-NN engine {engine!r}; use one of {ENGINES}")
        if space_type not in SPACE_TYPES:
            raise ValueError(f"space_type must be one of {SPACE_TYPES} (vectors are normalised)")
        self.client = make_client(client_or_url) if isinstance(client_or_url, str) else client_or_url
        self.index_name = index_name
        self.engine = engine
        self.space_type = space_type
        self.m = m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.shards = shards
        self.replicas = replicas
        self.analyzer = analyzer
        # k of the knn clause (size stays top_k): lucene explores k candidates (its ef_search), and
        # collecting past exact ties lets the (score, id) sort make rankings stable across rebuilds.
        self.knn_candidates = knn_candidates
        # True/"wait_for" make writes visible to the next search (tests, CLI); Lambdas keep False.
        self.refresh = refresh
        # Deployed functions never create the index: the deploy-time migration does (`mongomem migrate`).
        self.create_missing = create_missing
        if serverless and refresh:
            raise ValueError("a Serverless collection has no refresh: writes become visible on its schedule")
        # Serverless rules: ids in a field, no upsert, no refresh (see the module docstring).
        self.serverless = serverless
        # How long erasure keeps sweeping while deleted documents still answer searches (Serverless).
        self.sweep_seconds = sweep_seconds
        # How often a Serverless collection makes writes searchable (Classic vector collections: 60 s).
        self.refresh_seconds = refresh_seconds
        self._dim: int | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ schema
    def index_body(self, dim: int) -> dict[str, Any]:
        """Settings and mapping of a new index for `dim`-sized vectors."""
        index_settings: dict[str, Any] = {"knn": True, "knn.algo_param.ef_search": self.ef_search}
        # Serverless collections reject shard settings, so they are only sent when configured.
        if self.shards is not None:
            index_settings["number_of_shards"] = self.shards
        if self.replicas is not None:
            index_settings["number_of_replicas"] = self.replicas
        method = {
            "name": "hnsw",
            "engine": self.engine,
            "space_type": self.space_type,
            "parameters": {"m": self.m, "ef_construction": self.ef_construction},
        }
        return {
            "settings": {"index": index_settings},
            "mappings": {
                "_meta": {"dim": dim, "engine": self.engine, "space_type": self.space_type},
                # The index is derived from MongoDB: keeping vectors out of _source halves its size.
                "_source": {"excludes": ["vector"]},
                # Filter fields are exact-match keywords; only `text` is analysed (BM25).
                "date_detection": False,
                "dynamic_templates": [
                    {"strings_as_keywords": {"match_mapping_type": "string", "mapping": {"type": "keyword"}}}
                ],
                "properties": {
                    "id": {"type": "keyword"},
                    REV: {"type": "keyword"},
                    "tenant": {"type": "keyword"},
                    "user_id": {"type": "keyword"},
                    "kind": {"type": "keyword"},
                    "text": {"type": "text", "analyzer": self.analyzer},
                    "created_at": {"type": "date"},
                    "vector": {"type": "knn_vector", "dimension": dim, "method": method},
                },
            },
        }

    def ensure(self, dim: int) -> None:
        """Create the index if missing (idempotent, race-safe); DimensionMismatch if it differs."""
        with self._lock:
            if self._dim == dim:
                return
            existing = self._existing_dim()
            if existing is None and not self.create_missing:
                raise IndexUnavailable(
                    f"search index {self.index_name!r} does not exist: the deploy-time migration creates it "
                    "(redeploy the stack, or run `mongomem migrate`)"
                )
            if existing is None:
                existing = dim
                with self._errors("create index"):
                    try:
                        self.client.indices.create(index=self.index_name, body=self.index_body(dim))
                    except RequestError as exc:
                        # Another writer created it between our read and our create: compare with theirs.
                        if exc.error != "resource_already_exists_exception":
                            raise
                        existing = self._existing_dim()
            if existing is None:
                raise IndexUnavailable(f"index {self.index_name!r} exists without a knn_vector mapping")
            if existing != dim:
                raise DimensionMismatch(existing, dim, f"index {self.index_name!r}")
            self._dim = dim

    def _existing_dim(self) -> int | None:
        try:
            with self._errors("read mapping"):
                mapping = self.client.indices.get_mapping(index=self.index_name)
        except _Missing:
            return None
        for body in mapping.values():  # keyed by the concrete index name (may be behind an alias)
            vector = body.get("mappings", {}).get("properties", {}).get("vector", {})
            if "dimension" in vector:
                return int(vector["dimension"])
        return None

    # ------------------------------------------------------------------ writes
    def upsert(self, docs: list[IndexDoc]) -> None:
        """Bulk index by id (replaces earlier versions); the index is ensured on first use."""
        if not docs:
            return
        dims = {len(d.vector) for d in docs}
        if len(dims) > 1:
            raise ValueError(f"one upsert batch mixes vector dimensions {sorted(dims)}")
        self.ensure(dims.pop())
        if self.serverless:
            self._insert_then_retire(docs)
            return
        lines: list[dict[str, Any]] = []
        for doc in docs:
            lines.append({"index": {"_index": self.index_name, "_id": doc.id}})
            lines.append(self._source(doc))
        self._bulk(lines, "upsert")

    def _insert_then_retire(self, docs: list[IndexDoc]) -> None:
        """Serverless: insert the new copies (the service assigns `_id`s), then delete the older ones.

        An older copy written too recently for search to see survives this; reads collapse it and
        delete it when they meet it."""
        latest = {doc.id: doc for doc in docs}  # one write per id: the last one wins, as with _id
        rev = f"{time.time_ns():020d}-{secrets.token_hex(4)}"
        lines: list[dict[str, Any]] = []
        for doc in latest.values():
            lines.append({"index": {"_index": self.index_name}})
            lines.append({**self._source(doc), REV: rev})
        self._bulk(lines, "upsert")
        ids = list(latest)
        for start in range(0, len(ids), _PAGE // 2):
            chunk = ids[start : start + _PAGE // 2]
            older = {"bool": {"filter": [{"terms": {"id": chunk}}], "must_not": [{"term": {REV: rev}}]}}
            self._sweep(older, "upsert")

    @staticmethod
    def _source(doc: IndexDoc) -> dict[str, Any]:
        return {
            **doc.fields,
            "id": doc.id,
            "tenant": doc.tenant,
            "user_id": doc.user_id,
            "kind": doc.kind,
            "text": doc.text,
            "vector": normalize(doc.vector),
        }

    def delete(self, ids: list[str]) -> None:
        """Delete by id; ids that are not indexed are ignored."""
        if not ids:
            return
        if self.serverless:
            try:
                for start in range(0, len(ids), _PAGE // 2):
                    self._sweep(
                        {"bool": {"filter": [{"terms": {"id": ids[start : start + _PAGE // 2]}}]}}, "delete"
                    )
            except _Missing:
                pass
            return
        lines: list[dict[str, Any]] = [{"delete": {"_index": self.index_name, "_id": i}} for i in ids]
        self._bulk(lines, "delete")  # a missing index or id is not an error: the goal state holds

    def sweep_again_after(self) -> float:
        """Serverless: a write becomes searchable when the collection refreshes (every 60 s for a Classic
        vector collection), so an erase sweeps again two refresh intervals later (docs/aws-rules.md)."""
        return 2 * self.refresh_seconds if self.serverless else 0.0

    def delete_user(self, tenant: str, user_id: str, written_before: datetime | None = None) -> int:
        """Delete every document of (tenant, user_id) (written before `written_before` only, when given:
        a follow-up sweep keeps what the user wrote since); returns the number deleted."""
        # Paged search + bulk delete rather than _delete_by_query: Serverless collections (and
        # nodes without the reindex module) do not offer it, and an erase must work everywhere.
        terms = _scope_terms(tenant, user_id, None)
        if written_before is not None and self.serverless:
            stamp = f"{int(written_before.timestamp() * 1e9):020d}"
            terms = [*terms, {"range": {REV: {"lt": stamp}}}]
        scope = {"bool": {"filter": terms}}
        try:
            if not self.serverless:
                self._refresh_quietly()  # search sees refreshed documents only: do not miss recent ones
                return self._sweep(scope, "delete user")[1]
            return self._sweep_until_gone(scope)
        except _Missing:
            return 0

    def _sweep_until_gone(self, query: dict[str, Any]) -> int:
        """Serverless: sweep until a search finds nothing, or every document it still finds is one this
        erase deleted already and `sweep_seconds` are over.

        A deleted document answers searches until the collection refreshes, so passes repeat (with
        growing pauses): each deletes what it finds that is new (a write that became visible since)."""
        deadline = time.monotonic() + self.sweep_seconds
        deleted: set[str] = set()
        total, pause = 0, 0.2
        while True:
            found, gone = self._sweep(query, "delete user", skip=deleted)
            total += gone
            if not found:
                return total
            fresh = set(found) - deleted
            deleted |= fresh
            if not fresh and time.monotonic() + pause > deadline:
                logger.info(
                    "erase: every document search finds is deleted; they leave search when the collection refreshes",
                    extra={"index": self.index_name, "still_visible": len(found), "deleted": total},
                )
                return total
            time.sleep(pause)
            pause = min(pause * 2, 2.0)

    def _sweep(
        self, query: dict[str, Any], action: str, skip: set[str] | frozenset[str] = frozenset()
    ) -> tuple[list[str], int]:
        """One pass over the documents `query` finds: delete each (but those in `skip`) by its `_id`.

        Returns the `_id`s found and how many deletes removed a document."""
        body: dict[str, Any] = {"size": _PAGE, "_source": False, "sort": [{"id": "asc"}], "query": query}
        found: list[str] = []
        deleted = 0
        while True:
            with self._errors(action):
                hits = self.client.search(index=self.index_name, body=body)["hits"]["hits"]
            if not hits:
                return found, deleted
            found += [h["_id"] for h in hits]
            lines = [
                {"delete": {"_index": self.index_name, "_id": h["_id"]}} for h in hits if h["_id"] not in skip
            ]
            if lines:
                deleted += self._bulk(lines, "delete")
            body["search_after"] = hits[-1]["sort"]

    def _refresh_quietly(self) -> None:
        """Refresh where the service offers it; a 404 that is not a missing index means it does not."""
        try:
            with self._errors("refresh"):
                self.client.indices.refresh(index=self.index_name)
        except _Missing as exc:
            if getattr(exc.__cause__, "error", None) == _NO_INDEX:
                raise
            # no _refresh here (a Serverless collection answers 404 with no body): search anyway
        except IndexUnavailable:
            pass

    def drop(self) -> None:
        """Delete the index (missing is fine); the next ensure/upsert recreates it."""
        with self._lock:
            try:
                with self._errors("drop index"):
                    self.client.indices.delete(index=self.index_name)
            except _Missing:
                pass
            self._dim = None

    def _bulk(self, lines: list[dict[str, Any]], action: str) -> int:
        """Send bulk actions in size-bounded chunks; returns how many documents were deleted."""
        errors: list[dict[str, Any]] = []
        deleted = 0
        for chunk in _chunks(lines, self._dim or 0):
            with self._errors(action):
                resp = self.client.bulk(body=chunk, refresh=self.refresh)
            for item in resp["items"]:
                result = next(iter(item.values()))
                deleted += result.get("result") == "deleted"
                error = result.get("error")
                if error is None:
                    continue
                # Deleting from an index that does not exist yet already reached the goal state.
                if action == "delete" and isinstance(error, dict) and error.get("type") == _NO_INDEX:
                    continue
                errors.append({"id": result.get("_id"), "error": error})
        if errors:
            first = errors[0]["error"]
            reason = first.get("type", "error") if isinstance(first, dict) else str(first)
            raise IndexUnavailable(
                f"OpenSearch {action}: {len(errors)} documents failed ({reason})", details=errors[:10]
            )
        return deleted

    # ------------------------------------------------------------------- reads
    def search(self, q: SearchQuery) -> list[Hit]:
        """knn and/or BM25 in one round trip, both filtered by scope; fused by RRF for hybrid."""
        return self.search_many([q])[0]

    def search_many(self, queries: list[SearchQuery]) -> list[list[Hit]]:
        """Every query's hits (as `search` returns them) from ONE `_msearch` round trip."""
        plans = [self.query_bodies(q) for q in queries]
        bodies = [body for plan in plans for body in plan]
        if not bodies:
            return [[] for _ in queries]
        try:
            with self._errors("search"):
                if len(bodies) == 1:
                    responses = [self.client.search(index=self.index_name, body=bodies[0][1])]
                else:
                    lines: list[dict[str, Any]] = []
                    for _, body in bodies:
                        lines += [{}, body]
                    responses = self.client.msearch(index=self.index_name, body=lines)["responses"]
        except _Missing:
            return [[] for _ in queries]
        out: list[list[Hit]] = []
        stale: list[str] = []
        at = 0
        for q, plan in zip(queries, plans, strict=True):
            out.append(self._hits(q, plan, responses[at : at + len(plan)], stale))
            at += len(plan)
        if stale:
            self._forget_copies(stale)
        return out

    def _hits(
        self,
        q: SearchQuery,
        bodies: list[tuple[str, dict[str, Any]]],
        responses: list[dict[str, Any]],
        stale: list[str],
    ) -> list[Hit]:
        if not bodies:
            return []
        for (leg, _), resp in zip(bodies, responses, strict=True):
            if "error" in resp:
                if resp.get("status") == 404:
                    return []  # index not created yet: nothing has been indexed
                raise IndexUnavailable(f"OpenSearch search failed ({leg})", details=resp["error"])
        # Serverless: a replaced version may still have an older copy in the index (written before
        # search could see it). Only the newest copy of an id counts; the others are deleted below.
        newest: dict[str, str] = {}
        if self.serverless:
            for resp in responses:
                for h in resp["hits"]["hits"]:
                    source = h.get("_source", {})
                    doc_id, rev = str(source.get("id", h["_id"])), str(source.get(REV, ""))
                    newest[doc_id] = max(rev, newest.get(doc_id, ""))
        legs: dict[str, list[tuple[str, float]]] = {}
        fields: dict[str, dict[str, FieldValue]] = {}
        for (leg, _), resp in zip(bodies, responses, strict=True):
            ranked = legs[leg] = []
            shown: set[str] = set()
            for h in resp["hits"]["hits"]:
                source = h.get("_source", {})
                doc_id = str(source.get("id", h["_id"])) if self.serverless else h["_id"]
                if self.serverless and str(source.get(REV, "")) < newest[doc_id]:
                    stale.append(h["_id"])
                    continue
                if doc_id in shown:
                    continue
                shown.add(doc_id)
                score = self._cosine(h["_score"]) if leg == "knn" else float(h["_score"])
                ranked.append((doc_id, score))
                fields.setdefault(doc_id, _fields(source))
        return fuse(q, legs.get("knn"), legs.get("bm25"), fields)

    def _forget_copies(self, stale: list[str]) -> None:
        """Delete older copies a search met (best effort: the next search meets them again)."""
        lines = [{"delete": {"_index": self.index_name, "_id": i}} for i in dict.fromkeys(stale)]
        try:
            self._bulk(lines, "delete")
        except IndexUnavailable as exc:
            logger.warning(
                "search index: could not delete older copies of replaced documents",
                extra={"count": len(lines), "reason": str(exc)},
            )

    def query_bodies(self, q: SearchQuery) -> list[tuple[str, dict[str, Any]]]:
        """The request bodies `search` sends, as (leg, body); exposed for benchmarks and docs."""
        window = candidate_window(q)
        users = q.user_ids
        owner = {"term": {"user_id": users[0]}} if len(users) == 1 else {"terms": {"user_id": users}}
        scope = [
            *_scope_terms(q.tenant, None, q.kind),
            owner,
            *_filter_terms(q.filters),
            *_range_terms(q.ranges),
        ]
        bodies: list[tuple[str, dict[str, Any]]] = []
        if q.vector is not None and q.mode != "bm25":
            if self._dim is not None and len(q.vector) != self._dim:
                # the index may have been rebuilt for another model since (`reindex --re-embed`): look again
                with self._lock:
                    self._dim = self._existing_dim()
                if self._dim is not None and len(q.vector) != self._dim:
                    raise DimensionMismatch(self._dim, len(q.vector), f"index {self.index_name!r}")
            k = max(window, self.knn_candidates)
            knn = {"vector": normalize(q.vector), "k": k, "filter": {"bool": {"filter": scope}}}
            bodies.append(("knn", _body(window, {"knn": {"vector": knn}})))
        if q.mode != "knn" and q.text.strip():
            match = {"match": {"text": {"query": q.text}}}
            bodies.append(("bm25", _body(window, {"bool": {"must": [match], "filter": scope}})))
        return bodies

    def _cosine(self, score: float) -> float:
        """Undo the engine's score scaling (same formulas for lucene and faiss)."""
        if self.space_type == "cosinesimil":
            return 2.0 * score - 1.0
        return score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score

    def count(self, tenant: str | None = None, user_id: str | None = None, kind: str | None = None) -> int:
        """Number of (refreshed) documents in the given scope."""
        terms = _scope_terms(tenant, user_id, kind)
        body = {"query": {"bool": {"filter": terms}}} if terms else {"query": {"match_all": {}}}
        try:
            with self._errors("count"):
                return int(self.client.count(index=self.index_name, body=body)["count"])
        except _Missing:
            return 0

    def ping(self) -> bool:
        """True when the cluster answers (HEAD on the index works on domains and Serverless)."""
        try:
            self.client.indices.exists(index=self.index_name)
            return True
        except OpenSearchException:
            return False

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """Map driver errors to IndexUnavailable; a missing index becomes _Missing for the caller."""
        try:
            yield
        except NotFoundError as exc:
            raise _Missing(action) from exc
        except RequestError as exc:
            raise IndexUnavailable(f"OpenSearch {action} rejected ({exc.error})", details=exc.info) from exc
        except TransportError as exc:
            raise IndexUnavailable(
                f"OpenSearch {action} failed (status {exc.status_code})", details=str(exc.error)
            ) from exc
        except OpenSearchException as exc:
            raise IndexUnavailable(f"OpenSearch {action} failed ({type(exc).__name__})") from exc


class _Missing(IndexUnavailable):
    """The index does not exist (yet); reads answer empty, deletes are no-ops."""

    def __init__(self, action: str) -> None:
        super().__init__(f"OpenSearch {action}: index does not exist")


def _body(size: int, query: dict[str, Any]) -> dict[str, Any]:
    return {"size": size, "_source": _SOURCE, "track_total_hits": False, "sort": _SORT, "query": query}


def _scope_terms(tenant: str | None, user_id: str | None, kind: str | None) -> list[dict[str, Any]]:
    pairs = (("tenant", tenant), ("user_id", user_id), ("kind", kind))
    return [{"term": {name: value}} for name, value in pairs if value is not None]


def _filter_terms(filters: dict[str, Any]) -> list[dict[str, Any]]:
    clauses: list[dict[str, Any]] = []
    for name, value in sorted(filters.items()):
        if isinstance(value, list) and None in value:
            # None: documents without the field (indexed before it existed) pass too
            present = [term_of(v) for v in value if v is not None]
            either: list[dict[str, Any]] = [{"bool": {"must_not": [{"exists": {"field": name}}]}}]
            if present:
                either.append({"terms": {name: present}})
            clauses.append({"bool": {"should": either, "minimum_should_match": 1}})
        elif isinstance(value, list):
            clauses.append({"terms": {name: [term_of(v) for v in value]}})
        else:
            clauses.append({"term": {name: term_of(value)}})
    return clauses


def _range_terms(ranges: dict[str, tuple[str | None, str | None]]) -> list[dict[str, Any]]:
    clauses: list[dict[str, Any]] = []
    for name, (low, high) in sorted(ranges.items()):
        bounds = {**({"gte": low} if low is not None else {}), **({"lt": high} if high is not None else {})}
        if bounds:
            clauses.append({"range": {name: bounds}})
    return clauses


def _fields(source: dict[str, Any]) -> dict[str, FieldValue]:
    return {k: v for k, v in source.items() if k not in RESERVED_FIELDS and k != REV}


def _chunks(lines: list[dict[str, Any]], dim: int) -> Iterator[list[dict[str, Any]]]:
    # ~12 bytes per serialised float plus room for text and fields; lines come in pairs for index.
    per_doc = dim * 12 + 2_000
    step = max(2, (_BULK_BYTES // per_doc) * 2)
    for start in range(0, len(lines), step):
        yield lines[start : start + step]
