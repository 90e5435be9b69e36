"""In-process VectorIndex for the local stack: exact cosine k-NN + BM25, fused by the same RRF.

Documents live in per-(tenant, user_id, kind) partitions, so a search scans only that user's
documents. With `path`, every write also goes to a sqlite3 file that is reloaded on start.
numpy, when importable, speeds up the scan; without it a pure-Python loop gives the same answers.
"""

from __future__ import annotations

import heapq
import json
import sqlite3
import threading
from array import array
from collections.abc import Iterable
from datetime import datetime
from operator import mul
from pathlib import Path
from types import ModuleType
from typing import Any

from mongomem.retrieval.lexical import BM25Index, bm25_union
from mongomem.vectors.port import (
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

__all__ = ["DB_FILE", "EmbeddedIndex"]

DB_FILE = "vectors.sqlite3"
_Key = tuple[str, str, str]  # (tenant, user_id, kind)


def _terms(value: FieldValue) -> list[str]:
    """Keyword terms of a field value; a list field matches any of its elements, None matches nothing."""
    if value is None:
        return []
    if isinstance(value, list):
        return [term_of(v) for v in value]
    return [term_of(value)]


class _Partition:
    """One user's documents of one kind: a flat float32 matrix, filter postings and a BM25 index."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.vecs = array("f")  # row-major, unit-length rows
        self.fields: list[dict[str, FieldValue]] = []
        self.postings: dict[str, dict[str, set[str]]] = {}
        self.bm25 = BM25Index()

    def __len__(self) -> int:
        return len(self.ids)

    def put(self, doc_id: str, text: str, vector: array[float], fields: dict[str, FieldValue]) -> None:
        row = self.row_of.get(doc_id)
        if row is None:
            self.row_of[doc_id] = len(self.ids)
            self.ids.append(doc_id)
            self.vecs.extend(vector)
            self.fields.append(fields)
        else:
            self._unpost(doc_id, self.fields[row])
            self.vecs[row * self.dim : (row + 1) * self.dim] = vector
            self.fields[row] = fields
        for name, value in fields.items():
            for term in _terms(value):
                self.postings.setdefault(name, {}).setdefault(term, set()).add(doc_id)
        self.bm25.add(doc_id, text)

    def remove(self, doc_id: str) -> None:
        row = self.row_of.pop(doc_id)
        self._unpost(doc_id, self.fields[row])
        self.bm25.remove(doc_id)
        last = len(self.ids) - 1
        d = self.dim
        if row != last:  # swap-remove keeps the matrix dense without shifting every row
            moved = self.ids[last]
            self.ids[row] = moved
            self.fields[row] = self.fields[last]
            self.vecs[row * d : (row + 1) * d] = self.vecs[last * d : (last + 1) * d]
            self.row_of[moved] = row
        self.ids.pop()
        self.fields.pop()
        del self.vecs[last * d :]

    def _unpost(self, doc_id: str, fields: dict[str, FieldValue]) -> None:
        for name, value in fields.items():
            by_term = self.postings.get(name, {})
            for term in _terms(value):
                ids = by_term.get(term)
                if ids is not None:
                    ids.discard(doc_id)
                    if not ids:
                        del by_term[term]

    def allowed(self, filters: dict[str, Any]) -> set[str] | None:
        """Ids passing every filter (a list value means any of, None: without the field); None when there
        is no filter."""
        allowed: set[str] | None = None
        for name, value in filters.items():
            by_term = self.postings.get(name, {})
            wanted = value if isinstance(value, list) else [value]
            if None in wanted and not by_term:
                continue  # no document has the field: every one passes (the common case, cheaply)
            ids: set[str] = set()
            for v in wanted:
                if v is None:
                    having = set().union(*by_term.values())
                    ids |= {i for i in self.ids if i not in having}
                    continue
                ids |= by_term.get(term_of(v), set())
            allowed = ids if allowed is None else allowed & ids
            if not allowed:
                return set()
        return allowed

    def within(self, ranges: dict[str, tuple[str | None, str | None]], allowed: set[str] | None) -> set[str]:
        """The ids of `allowed` (None: all) whose string fields lie in every range (from <= v < to)."""
        out: set[str] = set()
        for doc_id in self.ids if allowed is None else allowed:
            fields = self.fields[self.row_of[doc_id]]
            ok = True
            for name, (low, high) in ranges.items():
                value = fields.get(name)
                if (
                    not isinstance(value, str)
                    or (low is not None and value < low)
                    or (high is not None and value >= high)
                ):
                    ok = False
                    break
            if ok:
                out.add(doc_id)
        return out


class EmbeddedIndex:
    """Thread-safe in-process VectorIndex; `path` is a directory for the sqlite3 file (None: memory only)."""

    def __init__(self, path: Path | None = None, *, use_numpy: bool | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._np: ModuleType | None = None
        if use_numpy is not False:
            try:
                import numpy  # lazy: the Lambda layer and the recording hot path never load it (62 ms)

                self._np = numpy
            except ImportError:
                if use_numpy:
                    raise
        self._lock = threading.RLock()
        self._dim: int | None = None
        self._parts: dict[_Key, _Partition] = {}
        self._where: dict[str, _Key] = {}
        self._db: sqlite3.Connection | None = None
        if self.path is not None:
            self._open(self.path)

    # ---------------------------------------------------------------- storage
    def _open(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path / DB_FILE, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable across process crashes
        # A deleted document's text is overwritten with zeros, not left in a freed page (an erased user
        # leaves no text in the file); `delete_user` also checkpoints and empties the WAL.
        db.execute("PRAGMA secure_delete=ON")
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute(
            "CREATE TABLE IF NOT EXISTS docs (id TEXT PRIMARY KEY, tenant TEXT NOT NULL,"
            " user_id TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL, fields TEXT NOT NULL,"
            " vector BLOB NOT NULL)"
        )
        db.execute("CREATE INDEX IF NOT EXISTS docs_user ON docs (tenant, user_id)")
        self._db = db
        row = db.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
        if row is None:
            return
        self._dim = int(row[0])
        for doc_id, tenant, user_id, kind, text, fields, blob in db.execute(
            "SELECT id, tenant, user_id, kind, text, fields, vector FROM docs ORDER BY rowid"
        ):
            vec = array("f")
            vec.frombytes(blob)
            self._put_mem(doc_id, (tenant, user_id, kind), text, vec, json.loads(fields))

    def _write(self, statements: Iterable[tuple[str, Iterable[Any]]]) -> None:
        if self._db is None:
            if self.path is not None:  # silently dropping writes would lose them at the next start
                raise IndexUnavailable("embedded vector index is closed")
            return
        try:
            self._db.execute("BEGIN IMMEDIATE")
            for sql, params in statements:
                self._db.executemany(sql, params)
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise IndexUnavailable("embedded vector index could not write its file") from exc

    def _scrub(self) -> None:
        """Copy the WAL into the database file and truncate it: the WAL's older frames still hold the
        pages as they were before the deletion (secure_delete zeroes the new ones only)."""
        if self._db is None:
            return
        try:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            raise IndexUnavailable("embedded vector index could not checkpoint its file") from exc

    def close(self) -> None:
        """Close the sqlite3 file; searches still work, writes raise IndexUnavailable."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # ----------------------------------------------------------------- schema
    def ensure(self, dim: int) -> None:
        """Fix the vector dimension on first use; DimensionMismatch if it differs."""
        with self._lock:
            if self._dim == dim:
                return
            if self._dim is not None:
                raise DimensionMismatch(self._dim, dim, "embedded vector index")
            self._write([("INSERT OR REPLACE INTO meta VALUES ('dim', ?)", [(str(dim),)])])
            self._dim = dim

    def drop(self) -> None:
        """Forget every document and the dimension."""
        with self._lock:
            self._write([("DELETE FROM docs", [()]), ("DELETE FROM meta", [()])])
            self._parts.clear()
            self._where.clear()
            self._dim = None

    # ----------------------------------------------------------------- writes
    def upsert(self, docs: list[IndexDoc]) -> None:
        """Insert or replace by id (a doc may move to another scope, as in OpenSearch)."""
        if not docs:
            return
        dims = {len(d.vector) for d in docs}
        if len(dims) > 1:
            raise ValueError(f"one upsert batch mixes vector dimensions {sorted(dims)}")
        prepared = [(doc, array("f", normalize(doc.vector)), json.dumps(doc.fields)) for doc in docs]
        with self._lock:
            self.ensure(dims.pop())
            sql = "INSERT OR REPLACE INTO docs VALUES (?, ?, ?, ?, ?, ?, ?)"
            params = [(d.id, d.tenant, d.user_id, d.kind, d.text, f, v.tobytes()) for d, v, f in prepared]
            self._write([(sql, params)])
            for doc, vec, fields in prepared:
                # Fields go through JSON here too, so memory and a reloaded file hold the same values.
                self._put_mem(doc.id, (doc.tenant, doc.user_id, doc.kind), doc.text, vec, json.loads(fields))

    def _put_mem(
        self, doc_id: str, key: _Key, text: str, vec: array[float], fields: dict[str, FieldValue]
    ) -> None:
        old = self._where.get(doc_id)
        if old is not None and old != key:
            self._remove_mem(doc_id)
        part = self._parts.get(key)
        if part is None:
            assert self._dim is not None
            part = self._parts[key] = _Partition(self._dim)
        part.put(doc_id, text, vec, fields)
        self._where[doc_id] = key

    def _remove_mem(self, doc_id: str) -> None:
        key = self._where.pop(doc_id)
        part = self._parts[key]
        part.remove(doc_id)
        if not part:
            del self._parts[key]

    def delete(self, ids: list[str]) -> None:
        """Delete by id; unknown ids are ignored."""
        with self._lock:
            known = [i for i in dict.fromkeys(ids) if i in self._where]
            if not known:
                return
            self._write([("DELETE FROM docs WHERE id = ?", [(i,) for i in known])])
            self._scrub()  # a deleted memory's text leaves the WAL too
            for doc_id in known:
                self._remove_mem(doc_id)

    def sweep_again_after(self) -> float:
        return 0.0  # every write is searchable once it returns: one sweep sees it all

    def delete_user(self, tenant: str, user_id: str, written_before: datetime | None = None) -> int:
        """Delete every document of (tenant, user_id); returns the number deleted. (`written_before` is
        never needed here: `sweep_again_after` is 0.)"""
        with self._lock:
            keys = [k for k in self._parts if k[0] == tenant and k[1] == user_id]
            if not keys:
                return 0
            self._write([("DELETE FROM docs WHERE tenant = ? AND user_id = ?", [(tenant, user_id)])])
            self._scrub()
            deleted = 0
            for key in keys:
                part = self._parts.pop(key)
                deleted += len(part)
                for doc_id in part.ids:
                    del self._where[doc_id]
            return deleted

    # ------------------------------------------------------------------ reads
    def search(self, q: SearchQuery) -> list[Hit]:
        """Exact cosine k-NN and/or BM25 over the caller's partition (and those of `also_user_ids`: one
        ranking over their union, BM25 with shared statistics), fused by RRF for hybrid."""
        with self._lock:
            wants_knn = q.vector is not None and q.mode != "bm25"
            if wants_knn and q.vector is not None and self._dim not in (None, len(q.vector)):
                assert self._dim is not None
                raise DimensionMismatch(self._dim, len(q.vector), "embedded vector index")
            parts = [p for u in q.user_ids if (p := self._parts.get((q.tenant, u, q.kind))) is not None]
            if not parts:
                return []
            window = candidate_window(q)
            scoped: list[tuple[_Partition, set[str] | None]] = []
            for part in parts:
                allowed = part.allowed(q.filters)
                if q.ranges:
                    allowed = part.within(q.ranges, allowed)
                scoped.append((part, allowed))
            knn = bm25 = None
            if wants_knn and q.vector is not None:
                query = normalize(q.vector)
                ranked = [hit for part, allowed in scoped for hit in self._knn(part, query, allowed, window)]
                knn = sorted(ranked, key=lambda item: (-item[1], item[0]))[:window]
            if q.mode != "knn" and q.text.strip():
                if len(scoped) == 1:
                    part, allowed = scoped[0]
                    bm25 = part.bm25.search(q.text, k=window, allowed_ids=allowed) if allowed != set() else []
                else:
                    bm25 = bm25_union([(part.bm25, allowed) for part, allowed in scoped], q.text, window)
            if knn is None and bm25 is None:
                return []
            ids = {doc_id for ranked in (knn, bm25) if ranked for doc_id, _ in ranked}
            fields = {}
            for part, _ in scoped:
                fields.update({i: _copy(part.fields[part.row_of[i]]) for i in ids if i in part.row_of})
        return fuse(q, knn, bm25, fields)

    def _knn(
        self, part: _Partition, query: list[float], allowed: set[str] | None, k: int
    ) -> list[tuple[str, float]]:
        ids = part.ids
        if not ids or allowed == set():
            return []
        d = part.dim
        if self._np is None:
            vecs = part.vecs
            rows = range(len(ids)) if allowed is None else [part.row_of[i] for i in allowed]
            scored = ((-sum(map(mul, query, vecs[r * d : (r + 1) * d])), ids[r]) for r in rows)
            return [(doc_id, -neg) for neg, doc_id in heapq.nsmallest(k, scored)]
        np = self._np
        n = len(ids)
        matrix = np.frombuffer(part.vecs, dtype=np.float32).reshape(n, d)
        # One contiguous mat-vec over the partition beats gathering the filtered rows first. einsum,
        # not `@`: multi-threaded BLAS wake-ups made this 10-50x slower in a busy dev process.
        scores = np.einsum("ij,j->i", matrix, np.asarray(query, dtype=np.float32))
        del matrix  # release the array's buffer export so later writes can grow it
        if allowed is None:
            rows = self._best_rows(scores, np.arange(n), k)
        elif 4 * len(allowed) <= n:  # selective filter: score just the allowed rows
            rows = self._best_rows(scores, np.asarray([part.row_of[i] for i in allowed]), k)
        else:  # most rows pass: walk down from the best rows until k of them pass
            m = min(n, 4 * k)
            while True:
                best = np.argpartition(-scores, m - 1)[:m] if m < n else np.arange(n)
                passing = best[np.fromiter((ids[r] in allowed for r in best), dtype=bool, count=len(best))]
                floor = scores[best].min()
                # Done when k rows pass and the k-th is strictly above the unexamined rows (ties!).
                if m == n or (len(passing) >= k and np.sort(scores[passing])[-k] > floor):
                    rows = self._best_rows(scores, passing, k)
                    break
                m = min(n, 4 * m)
        ranked = sorted(((ids[int(r)], float(scores[r])) for r in rows), key=lambda item: (-item[1], item[0]))
        return ranked[:k]

    def _best_rows(self, scores: Any, rows: Any, k: int) -> Any:
        """Rows (of `rows`) whose score reaches the k-th best, ties included, so the id cut is exact."""
        if k >= len(rows):
            return rows
        sub = scores[rows]
        kth = self._np.partition(sub, len(sub) - k)[len(sub) - k]  # type: ignore[union-attr]
        return rows[sub >= kth]

    def count(self, tenant: str | None = None, user_id: str | None = None, kind: str | None = None) -> int:
        """Number of documents in the given scope."""
        with self._lock:
            return sum(
                len(part)
                for (t, u, k), part in self._parts.items()
                if (tenant is None or t == tenant)
                and (user_id is None or u == user_id)
                and (kind is None or k == kind)
            )

    def ping(self) -> bool:
        """Always reachable: it lives in this process."""
        return True


def _copy(fields: dict[str, FieldValue]) -> dict[str, FieldValue]:
    """A hit's own copy of a document's fields (a caller may change it; the index's stays)."""
    out = dict(fields)
    for k, v in out.items():
        if type(v) is list:
            out[k] = list(v)
    return out
