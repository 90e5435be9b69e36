"""Recall indexing is fair between users and tenants, and a huge turn is embedded in bounded work.

Real servers: SecantusDB (session fixture) and the EmbeddedIndex; turns recorded by the record handler,
indexed by the scan handler (the function that indexes turns deployed and in the local stack). The
assertions are on the order of the indexer's batches and the texts it embedded, not on wall time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mongomem.config import parse_project_config
from mongomem.local.queue import local_queue_factory
from mongomem.offline.embed_hashing import HashingEmbedder
from mongomem.ports import Purpose
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from mongomem.vectors.port import IndexDoc
from tests import helpers
from tests.conftest import Ctx, load_event, load_function

BATCH = 16  # recall.index_batch of these tests: small, so a backlog spans several batches
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, noting how many texts each call embedded."""

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.calls: list[int] = []

    def embed(self, texts: list[str], purpose: Purpose = "document") -> list[list[float]]:
        if purpose == "document":
            self.calls.append(len(texts))
        return super().embed(texts, purpose)


class BatchLog(EmbeddedIndex):
    """The embedded index, noting the turn keys of each upsert (one upsert per indexer batch)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.batches: list[set[str]] = []
        self.own_docs: dict[str, int] = {}

    def upsert(self, docs: list[IndexDoc]) -> None:
        self.batches.append({str(d.fields["turn_key"]) for d in docs if d.kind == "turn"})
        for d in docs:
            if d.kind == "turn" and d.fields["channel"] == "own":
                key = str(d.fields["turn_key"])
                self.own_docs[key] = self.own_docs.get(key, 0) + 1
        super().upsert(docs)


@pytest.fixture
def svc(make_settings: Any, tmp_path: Path) -> Iterator[Services]:
    project = parse_project_config(
        {"memory": {"extraction": {"enabled": []}, "recall": {"enabled": True, "index_batch": BATCH}}}
    )
    services = Services(
        make_settings(project=project, enabled_extractions=[]),
        embedder=CountingEmbedder(),
        vector_index=BatchLog(tmp_path / "vectors"),
        queue_factory=local_queue_factory,
    )
    configure(services)
    yield services
    configure(None)


def record(tenant: str, user: str, session: str, contents: list[str]) -> list[str]:
    """Record turns through the record handler; their turn keys."""
    event = load_event("record_turns_post.json")
    event["rawPath"] = f"/v1/sessions/{session}/turns"
    event["pathParameters"] = {"session_id": session}
    turns = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": text,
            "timestamp": (START + timedelta(minutes=i)).isoformat(),
        }
        for i, text in enumerate(contents)
    ]
    event["body"] = json.dumps({"user_id": user, "turns": turns})
    helpers.authorize(event, tenant)
    response = load_function("record_turns").lambda_handler(event, Ctx())
    assert response["statusCode"] == 201, response["body"]
    seqs = [int(t["seq"]) for t in json.loads(response["body"])["turns"]]
    return [f"{tenant}|{user}|{session}#{seq}" for seq in seqs]


def one_mib_turn() -> str:
    """A pasted document of 1 MiB: ordinary words, a distinct sentence at its end."""
    line = "Row {i}: the quarterly ledger lists invoices, payments and the balance carried forward.\n"
    body = "".join(line.format(i=i) for i in range(12_000))
    tail = " The last row says the audit closes on the ninth of October with the signature of Ingrid."
    limit = 1024 * 1024 - 64
    return body[: limit - len(tail)] + tail


def batch_of(batches: list[set[str]], key: str) -> int:
    return next(i for i, keys in enumerate(batches) if key in keys)


def test_a_one_mib_turn_does_not_delay_another_tenants_turn_by_more_than_one_batch(svc: Services) -> None:
    index = svc.vector_index
    embedder = svc.embedder
    assert isinstance(index, BatchLog) and isinstance(embedder, CountingEmbedder)
    # Given a user of tenant acme who pasted a 1 MiB document, then kept chatting (a backlog of 3 batches)
    [big] = record("acme", "ana", "paste", [one_mib_turn()])
    chat = record(
        "acme", "ana", "chat", [f"Message {i} about the ledger and the invoices." for i in range(3 * BATCH)]
    )
    # and, recorded after all of it, one turn of a user of tenant globex
    [theirs] = record("globex", "bo", "trip", ["My flight to Lisbon leaves on Friday morning."])
    # When the scan (the real indexer) runs
    report = load_function("scan_sessions").lambda_handler(load_event("scan_schedule.json"), Ctx())
    assert report["recall"]["turns"] == 1 + 3 * BATCH + 1
    # Then globex's turn went into the indexer's first batch, beside acme's backlog, not behind it
    assert batch_of(index.batches, theirs) == 0
    # and the work done before it was recallable is one batch: at most two texts per turn of a batch
    assert embedder.calls[0] <= 2 * BATCH
    # The 1 MiB turn was embedded in bounded work: at most max_chunks chunks of its own text, which
    # cost no more than a batch of ordinary turns; no batch embedded more than that
    assert index.own_docs[big] <= svc.settings.memory.recall.max_chunks <= 2 * BATCH
    assert max(embedder.calls) <= 2 * BATCH
    # and every turn was indexed, acme's in the order they were recorded
    order = [batch_of(index.batches, k) for k in [big, *chat]]
    assert order == sorted(order)
    assert report["recall"]["failed"] == 0


def test_recall_finds_the_head_and_the_tail_of_a_turn_longer_than_the_chunk_cap(svc: Services) -> None:
    # Given a 1 MiB turn, indexed
    [big] = record("acme", "ana", "paste", [one_mib_turn()])
    load_function("scan_sessions").lambda_handler(load_event("scan_schedule.json"), Ctx())
    # When the user asks about its first row and about its last sentence
    api = load_function("memory_api")
    for query in ("Row 0: the quarterly ledger", "when does the audit close? Ingrid signature"):
        status, body = helpers.call(
            api, Ctx(), "recall.json", {"user_id": "ana", "query": query}, tenant="acme"
        )
        # Then recall returns the whole turn
        assert status == 200, body
        assert big.split("|", 2)[2].replace("#", ":") in body["matched"], (query, body["matched"])
