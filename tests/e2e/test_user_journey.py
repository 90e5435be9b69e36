"""The whole product over HTTP with the local stack's defaults (offline extractor, local embedding model):
record a conversation, let it be promoted and extracted, then find it again by memory search, message
recall and the context call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mongomem.local.stack import LocalStack
from tests.e2e.test_local_stack import http, wait_for

TURNS = [
    {"role": "user", "content": "Hi! My name is Ana and I live in Lisbon."},
    {"role": "assistant", "content": "Nice to meet you, Ana."},
    {"role": "user", "content": "I'm allergic to peanuts. Keep that in mind for restaurant bookings."},
    {"role": "assistant", "content": "Noted: no peanuts."},
    {"role": "user", "content": "Last Saturday I visited Sintra with my sister Marta."},
]


def test_recorded_conversation_becomes_searchable_memory_recall_and_context(tmp_path: Path) -> None:
    config = tmp_path / "project-config.yaml"
    config.write_text("memory:\n  snapshot: {max_messages: 50, idle_seconds: 1}\n")
    stack = LocalStack(
        data_dir=tmp_path / "data", port=0, scan_seconds=0.3, poll_seconds=0.2, config_file=config
    ).start()
    base = stack.url
    try:
        # Given a recorded conversation
        status, _ = http("POST", f"{base}/v1/sessions/trip-1/turns", {"user_id": "ana", "turns": TURNS})
        assert status == 201

        # When the idle session is promoted and every type is extracted
        def extracted() -> bool:
            snaps = http("GET", f"{base}/v1/sessions/trip-1?user_id=ana")[1]["snapshots"]
            return bool(snaps) and all(
                s["status"] in {"done", "skipped"} for s in snaps[0]["extraction"].values()
            )

        wait_for(extracted, timeout=90)
        # Then the facts are long-term memories of Ana's
        _, page = http("GET", f"{base}/v1/memories?user_id=ana&type=semantic")
        facts = {(m["payload"]["attribute"], m["payload"]["value"]) for m in page["memories"]}
        assert ("home city", "Lisbon") in facts
        assert any(attr == "allergy" and "peanut" in value for attr, value in facts)
        # and searchable by meaning
        _, found = http(
            "POST",
            f"{base}/v1/memories/search",
            {"user_id": "ana", "query": "what is Ana allergic to?", "top_k": 3},
        )
        assert "peanut" in found["results"][0]["text"].lower()

        # and the old message can be recalled once the scan has indexed it
        def recalled() -> list[dict[str, Any]] | None:
            status, body = http(
                "POST",
                f"{base}/v1/recall",
                {"user_id": "ana", "query": "trip to Sintra", "top_k": 1, "message_range": 0},
            )
            turns = (
                [t for group in body.get("threads", []) for t in group.get("turns", [])]
                if status == 200
                else []
            )
            return turns or None

        turns = wait_for(recalled, timeout=90)
        assert "Sintra" in turns[0]["content"]
        # and one context call gives the agent labelled sections within its budget
        status, context = http(
            "POST",
            f"{base}/v1/context",
            {"user_id": "ana", "session_id": "trip-1", "query": "food allergies", "token_budget": 400},
        )
        assert status == 200 and context["tokens"] <= 400
        assert "peanut" in context["context"].lower() and context["sections"]
        # and another user sees none of it
        _, other = http(
            "POST", f"{base}/v1/memories/search", {"user_id": "bo", "query": "peanuts", "top_k": 3}
        )
        assert other["results"] == []
    finally:
        stack.stop()
