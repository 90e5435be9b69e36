"""Shared by the hostile-input tests: the two API functions behind one gateway, a database fingerprint."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from mongomem.config import parse_project_config
from mongomem.local.http import to_event
from mongomem.local.queue import local_queue_factory
from mongomem.providers.embed_hashing import HashingEmbedder
from mongomem.providers.llm_scripted import ScriptedLLM
from mongomem.runtime import Services
from mongomem.vectors.embedded import EmbeddedIndex
from tests.conftest import Ctx, load_function

TENANT = "acme"
USER = "ana"
SESSION = "s1"


def hostile_services(make_settings: Any, tmp_path: Path) -> Services:
    cfg = parse_project_config({"memory": {"providers": {"embeddings": {"kind": "hashing", "dim": 64}}}})
    return Services(
        make_settings(project=cfg),
        llm=ScriptedLLM({}),
        embedder=HashingEmbedder(dim=64),
        vector_index=EmbeddedIndex(tmp_path / "vectors"),
        queue_factory=local_queue_factory,
    )


class Gateway:
    """Routes a raw HTTP request (bytes, as a client sent them) to the function API Gateway would call."""

    def __init__(self) -> None:
        self.record = load_function("record_turns")
        self.memory = load_function("memory_api")
        self.ctx = Ctx()

    def call(
        self, method: str, target: str, body: bytes | None = None, user_id: str | None = USER
    ) -> tuple[int, dict[str, Any]]:
        headers = {"content-type": "application/json", "host": "api.test"}
        event = to_event(method, target, headers, body or b"", "203.0.113.9")
        event["requestContext"]["authorizer"] = {
            "lambda": {"tenant": TENANT, "kind": "memory_service", "key_id": "k-hostile"}
        }
        path = event["rawPath"]
        function = self.record if path.startswith("/v1/sessions") else self.memory
        response = function.lambda_handler(event, self.ctx)
        text = response.get("body") or "null"
        return int(response["statusCode"]), json.loads(text)

    def json(self, method: str, target: str, body: Any) -> tuple[int, dict[str, Any]]:
        return self.call(method, target, json.dumps(body).encode())

    def seed(self) -> None:
        """Data in every place a hostile request could damage: turns and counters, a memory, working memory."""
        batch = {
            "user_id": USER,
            "client_token": "seed-1",
            "turns": [{"role": "user", "content": "I live in Porto"}, {"role": "assistant", "content": "ok"}],
        }
        assert self.json("POST", f"/v1/sessions/{SESSION}/turns", batch)[0] == 201
        fact = {
            "user_id": USER,
            "type": "semantic",
            "payload": {"subject": "ana", "attribute": "city", "value": "Porto"},
        }
        assert self.json("POST", "/v1/memories", fact)[0] == 201
        wm = {"content": "# User\n- city: Porto\n"}
        assert self.json("PUT", f"/v1/working-memory?user_id={USER}", wm)[0] == 200
        assert (
            self.json("POST", "/v1/threads", {"user_id": USER, "thread_id": "t1", "metadata": {"a": 1}})[0]
            == 201
        )


def fingerprint(svc: Services) -> str:
    """Every document of every collection, hashed: equal fingerprints mean nothing was written."""
    db = svc.store.db
    digest = hashlib.sha256()
    for name in sorted(db.list_collection_names()):
        docs = list(db[name].find({}).sort("_id", 1))
        digest.update(name.encode())
        digest.update(json.dumps(docs, default=str, sort_keys=True).encode())
    return digest.hexdigest()


def session_counters(svc: Services) -> dict[str, Any]:
    doc = svc.store.sessions.find_one({"session_id": SESSION}) or {}
    return {k: doc.get(k) for k in ("last_seq", "pending", "unpromoted_tokens", "promoted_through_seq")}


def assert_refused(status: int, body: dict[str, Any]) -> None:
    assert 400 <= status < 500, (status, body)
    assert set(body["error"]) == {"code", "message", "details"} and body["error"]["message"]
