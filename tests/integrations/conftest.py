"""The agent-framework integrations against a real local stack (LocalStack over HTTP), no LLM calls."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest

from mongomem.client import MemoryClient
from mongomem.local.stack import LocalStack
from tests.helpers import local_stack

T = TypeVar("T")

# Offline extraction, the hashing embedder (fast, deterministic), recall indexed by a fast scan.
CONFIG = """
memory:
  snapshot: {max_messages: 50, idle_seconds: 3600}
  extraction: {enabled: [semantic]}
  providers:
    llm: {kind: offline}
    embeddings: {kind: hashing, dim: 64}
"""


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    yield from local_stack(tmp_path_factory, "integrations", CONFIG, scan_seconds=0.5, poll_seconds=0.2)


@pytest.fixture
def mem(stack: LocalStack) -> Iterator[MemoryClient]:
    with MemoryClient(stack.url, retries=2, backoff=0.01) as client:
        yield client


def uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def eventually(probe: Callable[[], T | None], timeout: float = 20.0, every: float = 0.2) -> T:
    """The first truthy answer of `probe` (the scan job indexes turns for recall in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"no answer within {timeout}s")
        time.sleep(every)


def contents(mem: MemoryClient, session: str, user: str) -> list[tuple[str, str]]:
    return [(t.role, t.content) for t in mem.list_turns(session, user, limit=200).turns]


def recalled(mem: MemoryClient, user: str, query: str) -> Any:
    answer = mem.recall(user, query, top_k=3, message_range=0)
    return answer if answer.matched else None
