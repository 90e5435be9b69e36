"""Domain errors know nothing of HTTP; api/errors.py maps each to its status in one table."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

from mongomem.api.errors import status_of
from mongomem.errors import MongomemError


def domain_errors() -> list[type[MongomemError]]:
    import mongomem

    for info in pkgutil.walk_packages(mongomem.__path__, "mongomem."):
        if info.name.startswith(("mongomem.cli", "mongomem.local", "mongomem.integrations", "mongomem.ops")):
            continue
        if info.name.startswith(("mongomem.client", "mongomem.mcp_server")):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional provider's SDK that is not installed
            continue
    found: list[type[MongomemError]] = []
    todo = [MongomemError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_no_domain_error_carries_an_http_status() -> None:
    carrying = [c.__qualname__ for c in domain_errors() if "status" in vars(c)]
    assert carrying == []


@pytest.mark.parametrize(
    ("module", "name", "status"),
    [
        ("mongomem.errors", "InvalidInput", 400),
        ("mongomem.errors", "PayloadTooLarge", 413),
        ("mongomem.errors", "Unauthorized", 401),
        ("mongomem.errors", "Forbidden", 403),
        ("mongomem.errors", "NotFound", 404),
        ("mongomem.errors", "Conflict", 409),
        ("mongomem.errors", "StoreUnavailable", 503),
        ("mongomem.errors", "StoreAuthFailed", 503),
        ("mongomem.errors", "QueueUnavailable", 503),
        ("mongomem.errors", "ExtractionFailed", 502),
        ("mongomem.errors", "UnknownKind", 422),
        ("mongomem.errors", "MongomemError", 500),
        ("mongomem.vectors.port", "IndexUnavailable", 503),
        ("mongomem.retrieval.recall", "RecallDisabled", 409),
        ("mongomem.workingmemory.errors", "SchemaMismatch", 422),
        ("mongomem.workingmemory.errors", "ReadOnly", 403),
        ("mongomem.workingmemory.errors", "ConcurrentUpdate", 409),
    ],
)
def test_each_domain_error_answers_its_status(module: str, name: str, status: int) -> None:
    cls = getattr(importlib.import_module(module), name)
    assert status_of(cls("x")) == status
