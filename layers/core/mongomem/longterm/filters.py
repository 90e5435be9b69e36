"""Checks on list and search filters (tags, domain, metadata): a bad one is a 400 naming the field."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from mongomem.errors import InvalidInput
from mongomem.kinds import KindRegistry
from mongomem.models.common import INT64_MAX, INT64_MIN, check_key, check_text
from mongomem.models.memory import MemoryFilter, MemoryRecord

MAX_TAGS = 20
MAX_METADATA_FILTERS = 8
MAX_FILTER_CHARS = 2_000


def kinds_with(kinds: KindRegistry, field: str) -> list[str]:
    """The kinds whose payload has `field`."""
    return [k.name for k in kinds if field in k.item.model_fields]


def check_filters(
    kinds: KindRegistry,
    types: Iterable[str] | None,
    filters: MemoryFilter,
    partition_keys: Sequence[str] | None,
) -> None:
    """Refuse filters no memory of the requested types can pass, and metadata keys the search index does
    not hold (`partition_keys`; None: a MongoDB list, where any storable key may be named)."""
    wanted = set(types) if types else None
    for field, asked in (("tags", bool(filters.tags)), ("domain", filters.domain is not None)):
        having = kinds_with(kinds, field)
        if asked and wanted is not None and not wanted & set(having):
            raise InvalidInput(
                f"{field} filters {' and '.join(having)} memories: add one of them to the types",
                {"path": field, "types_with_field": having},
            )
    if len(filters.tags) > MAX_TAGS:
        raise InvalidInput(f"tags holds at most {MAX_TAGS} values", {"path": "tags"})
    if len(filters.metadata) > MAX_METADATA_FILTERS:
        raise InvalidInput(f"metadata filters at most {MAX_METADATA_FILTERS} keys", {"path": "metadata"})
    for key, value in filters.metadata.items():
        path = f"metadata.{key}"
        try:
            check_key(key)
        except ValueError as exc:
            raise InvalidInput(f"{path}: {exc}", {"path": path}) from None
        if partition_keys is not None and key not in partition_keys:
            configured = ", ".join(partition_keys) or "none"
            raise InvalidInput(
                f"{path} is not a partition key: search filters on memory.metadata.partition_keys "
                f"(configured: {configured})",
                {"path": path, "partition_keys": list(partition_keys)},
            )
        problem = scalar_problem(value)
        if problem:
            raise InvalidInput(f"{path} {problem}", {"path": path})


def scalar_problem(value: Any) -> str | None:
    """Why a filter value cannot be matched against stored metadata (None: it can): the values a stored
    document may hold - valid Unicode of bounded length, 64-bit integers, finite numbers, booleans."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if INT64_MIN <= value <= INT64_MAX else "must fit in a 64-bit integer"
    if isinstance(value, float):
        return None if math.isfinite(value) else "must be a finite number"
    if isinstance(value, str):
        try:
            check_text(value, MAX_FILTER_CHARS)
        except ValueError as exc:
            return f"is not a storable string: {exc}"
        return None
    return "must be a string, number or boolean"


def passes(record: MemoryRecord, filters: MemoryFilter) -> bool:
    """Whether a stored memory passes the filters (MongoDB's word over a stale index entry)."""
    payload: dict[str, Any] = record.payload
    if filters.tags and not set(filters.tags) & set(payload.get("tags") or []):
        return False
    if filters.domain is not None and payload.get("domain") != filters.domain:
        return False
    if filters.snapshot_id is not None and filters.snapshot_id not in {
        e.snapshot_id for e in record.evidence
    }:
        return False
    return all(record.metadata.get(k) == v for k, v in filters.metadata.items())
