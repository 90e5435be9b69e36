"""OpenSearchIndex: the VectorIndex port on one OpenSearch index (the package docstring gives the two
sets of rules, a domain's or node's and a Serverless collection's)."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Literal

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError, OpenSearchException, RequestError, TransportError

from mongomem.observability import logger
from mongomem.vectors.opensearch.client import make_client
from mongomem.vectors.opensearch.mapping import ENGINES, REV, SPACE_TYPES, index_body
from mongomem.vectors.opensearch.queries import (
    bulk_chunks,
    filter_terms,
    range_terms,
    read_hits,
    scope_terms,
    search_body,
)
from mongomem.vectors.port import (
    DimensionMismatch,
    Hit,
    IndexDoc,
    IndexUnavailable,
    SearchQuery,
    candidate_window,
    normalize,
)

_NO_INDEX = "index_not_found_exception"
# Hits per page when deletes and erasure look documents up by field.
_PAGE = 1000


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
        return index_body(
            dim,
            engine=self.engine,
            space_type=self.space_type,
            m=self.m,
            ef_construction=self.ef_construction,
            ef_search=self.ef_search,
            shards=self.shards,
            replicas=self.replicas,
            analyzer=self.analyzer,
        )

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
        terms = scope_terms(tenant, user_id, None)
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
        for chunk in bulk_chunks(lines, self._dim or 0):
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
            hits = read_hits(
                q,
                plan,
                responses[at : at + len(plan)],
                stale,
                serverless=self.serverless,
                space_type=self.space_type,
            )
            out.append(hits)
            at += len(plan)
        if stale:
            self._forget_copies(stale)
        return out

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
            *scope_terms(q.tenant, None, q.kind),
            owner,
            *filter_terms(q.filters),
            *range_terms(q.ranges),
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
            bodies.append(("knn", search_body(window, {"knn": {"vector": knn}})))
        if q.mode != "knn" and q.text.strip():
            match = {"match": {"text": {"query": q.text}}}
            bodies.append(("bm25", search_body(window, {"bool": {"must": [match], "filter": scope}})))
        return bodies

    def count(self, tenant: str | None = None, user_id: str | None = None, kind: str | None = None) -> int:
        """Number of (refreshed) documents in the given scope."""
        terms = scope_terms(tenant, user_id, kind)
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
