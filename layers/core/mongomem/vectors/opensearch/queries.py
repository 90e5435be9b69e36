"""What a search sends and what it reads back: the request bodies' parts (scope, filters, ranges), the
bulk chunks, and the hits of both legs collapsed (Serverless copies), rescaled and fused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mongomem.vectors.opensearch.mapping import REV
from mongomem.vectors.port import (
    RESERVED_FIELDS,
    FieldValue,
    Hit,
    IndexUnavailable,
    SearchQuery,
    fuse,
    term_of,
)

# Returned fields: never the vector (excluded from _source anyway) nor the text (can be long).
_SOURCE = {"excludes": ["vector", "text"]}
# Equal scores are ordered by id, as in the embedded index, so a rebuilt index ranks identically.
_SORT = [{"_score": {"order": "desc"}}, {"id": {"order": "asc"}}]
# Bulk bodies stay well under the 10 MiB request limit of the smallest managed domains.
_BULK_BYTES = 4_000_000


def search_body(size: int, query: dict[str, Any]) -> dict[str, Any]:
    return {"size": size, "_source": _SOURCE, "track_total_hits": False, "sort": _SORT, "query": query}


def read_hits(
    q: SearchQuery,
    bodies: list[tuple[str, dict[str, Any]]],
    responses: list[dict[str, Any]],
    stale: list[str],
    *,
    serverless: bool,
    space_type: str,
) -> list[Hit]:
    """The hits of one query's legs, fused; the `_id`s of older Serverless copies go to `stale`."""
    if not bodies:
        return []
    for (leg, _), resp in zip(bodies, responses, strict=True):
        if "error" in resp:
            if resp.get("status") == 404:
                return []  # index not created yet: nothing has been indexed
            raise IndexUnavailable(f"OpenSearch search failed ({leg})", details=resp["error"])
    # Serverless: a replaced version may still have an older copy in the index (written before
    # search could see it). Only the newest copy of an id counts; the others are deleted by the caller.
    newest: dict[str, str] = {}
    if serverless:
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
            doc_id = str(source.get("id", h["_id"])) if serverless else h["_id"]
            if serverless and str(source.get(REV, "")) < newest[doc_id]:
                stale.append(h["_id"])
                continue
            if doc_id in shown:
                continue
            shown.add(doc_id)
            score = cosine(space_type, h["_score"]) if leg == "knn" else float(h["_score"])
            ranked.append((doc_id, score))
            fields.setdefault(doc_id, source_fields(source))
    return fuse(q, legs.get("knn"), legs.get("bm25"), fields)


def cosine(space_type: str, score: float) -> float:
    """Undo the engine's score scaling (same formulas for lucene and faiss)."""
    if space_type == "cosinesimil":
        return 2.0 * score - 1.0
    return score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score


def scope_terms(tenant: str | None, user_id: str | None, kind: str | None) -> list[dict[str, Any]]:
    pairs = (("tenant", tenant), ("user_id", user_id), ("kind", kind))
    return [{"term": {name: value}} for name, value in pairs if value is not None]


def filter_terms(filters: dict[str, Any]) -> list[dict[str, Any]]:
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


def range_terms(ranges: dict[str, tuple[str | None, str | None]]) -> list[dict[str, Any]]:
    clauses: list[dict[str, Any]] = []
    for name, (low, high) in sorted(ranges.items()):
        bounds = {**({"gte": low} if low is not None else {}), **({"lt": high} if high is not None else {})}
        if bounds:
            clauses.append({"range": {name: bounds}})
    return clauses


def source_fields(source: dict[str, Any]) -> dict[str, FieldValue]:
    return {k: v for k, v in source.items() if k not in RESERVED_FIELDS and k != REV}


def bulk_chunks(lines: list[dict[str, Any]], dim: int) -> Iterator[list[dict[str, Any]]]:
    # ~12 bytes per serialised float plus room for text and fields; lines come in pairs for index.
    per_doc = dim * 12 + 2_000
    step = max(2, (_BULK_BYTES // per_doc) * 2)
    for start in range(0, len(lines), step):
        yield lines[start : start + step]
