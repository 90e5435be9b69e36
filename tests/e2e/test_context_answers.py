"""What an agent receives, over HTTP on the local stack's real servers (SecantusDB, the bundled embedder,
the offline extractor): one subject per person, retractions and corrections, conflicting facts found and
shown, org memories only when relevant, a "not yet" signal, and a context block that spends its budget.

One stack serves the module; every test has its own user.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from mongomem import markers
from mongomem.local.stack import LocalStack
from tests.e2e.test_local_stack import http, wait_for

DATA = Path(__file__).resolve().parents[1] / "data" / "locomo_priya.json"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("context-answers")
    config = tmp / "project-config.yaml"
    config.write_text(
        "memory:\n  snapshot: {max_messages: 200, idle_seconds: 3600}\n"
        "  providers: {llm: {kind: offline}, embeddings: {kind: local}}\n"
    )
    stack = LocalStack(data_dir=tmp / "data", port=0, scan_seconds=0.3, poll_seconds=0.2, config_file=config)
    stack.start()
    try:
        yield stack.url
    finally:
        stack.stop()


def pending(base: str, user: str) -> dict[str, Any]:
    status, body = http(
        "POST", f"{base}/v1/memories/search", {"user_id": user, "query": "anything", "top_k": 1}
    )
    assert status == 200, body
    result: dict[str, Any] = body["pending"]
    return result


def settled(base: str, user: str, timeout: float = 120) -> None:
    """Until the user's turns are all extracted and indexed, as the answers themselves say."""

    def done() -> bool:
        p = pending(base, user)
        return not (p["turns_not_extracted"] or p["snapshots_extracting"] or p["turns_not_indexed"])

    wait_for(done, timeout=timeout)


def say(base: str, user: str, session: str, *texts: str, at: datetime | None = None) -> None:
    """The user's turns (an assistant's reply after each), then the session is promoted at once."""
    start = at or datetime.now(UTC) - timedelta(minutes=5)
    turns = []
    for i, text in enumerate(texts):
        turns.append(
            {"role": "user", "content": text, "timestamp": (start + timedelta(seconds=20 * i)).isoformat()}
        )
        turns.append(
            {
                "role": "assistant",
                "content": "Noted.",
                "timestamp": (start + timedelta(seconds=20 * i + 5)).isoformat(),
            }
        )
    status, body = http("POST", f"{base}/v1/sessions/{session}/turns", {"user_id": user, "turns": turns})
    assert status == 201, body
    status, body = http("POST", f"{base}/v1/sessions/{session}/flush?user_id={user}", {})
    assert status in (200, 202), body
    settled(base, user)


def facts(base: str, user: str, status: str = "active") -> list[dict[str, Any]]:
    code, page = http("GET", f"{base}/v1/memories?user_id={user}&type=semantic&status={status}&limit=200")
    assert code == 200, page
    result: list[dict[str, Any]] = page["memories"]
    return result


def values(base: str, user: str, attribute: str) -> list[str]:
    return [m["payload"]["value"] for m in facts(base, user) if m["payload"]["attribute"] == attribute]


def test_a_persons_facts_have_one_subject_and_a_later_statement_supersedes(base: str) -> None:
    # Given a user who states her name and city, and later a new city without her name
    say(base, "maria", "s1", "Hi, I'm Maria. I live in Madrid.", at=datetime.now(UTC) - timedelta(days=2))
    say(base, "maria", "s2", "I live in Barcelona now.")
    # Then one home city is active, the later one, under the one canonical subject
    cities = [m for m in facts(base, "maria") if m["payload"]["attribute"] == "home city"]
    assert [(m["payload"]["subject"], m["payload"]["value"]) for m in cities] == [("user", "Barcelona")]
    old = [m for m in facts(base, "maria", "superseded") if m["payload"]["value"] == "Madrid"]
    assert old and old[0]["superseded_by"] == cities[0]["memory_id"]
    assert values(base, "maria", "name") == ["Maria"]  # the stated name is an attribute of the user
    # and the memories the agent receives hold one current city; the old one only marked as superseded,
    # after it (issue 32: a knowledge update answers with the current value first)
    status, block = http(
        "POST",
        f"{base}/v1/context",
        {"user_id": "maria", "session_id": "s3", "query": "Where does Maria live?"},
    )
    assert status == 200, block
    memories = next(s for s in block["sections"] if s["name"] == "memories")["text"]
    current = [line for line in memories.splitlines() if "superseded" not in line]
    assert any("Barcelona" in line for line in current) and not any("Madrid" in line for line in current)
    assert memories.index("Barcelona") < memories.index("Madrid")
    # When a caller writes the fact with another spelling of the same person (her name, her user id)
    for subject in ("Maria", "maria", "the user"):
        status, body = http(
            "POST",
            f"{base}/v1/memories",
            {
                "user_id": "maria",
                "type": "semantic",
                "payload": {"subject": subject, "attribute": "home city", "value": "Valencia"},
            },
        )
        assert status in (200, 201), body
    # Then it reconciled with the same memory: one active city, Valencia, restated
    assert values(base, "maria", "home city") == ["Valencia"]
    [valencia] = [m for m in facts(base, "maria") if m["payload"]["attribute"] == "home city"]
    # (her name is kept as the fact's `name` qualifier, and "maria" is not "Maria" to the letter: that
    # statement is the next version, "the user" restates it; docs/adr/0080)
    assert valencia["reinforcement_count"] == 2


def test_a_negated_retraction_ends_the_fact_and_a_correction_keeps_only_its_value(base: str) -> None:
    say(
        base,
        "ravi",
        "s1",
        "I'm allergic to peanuts.",
        "My favourite colour is blue.",
        at=datetime.now(UTC) - timedelta(days=1),
    )
    assert values(base, "ravi", "allergy") == ["peanuts"]
    # When the user retracts the allergy and corrects the colour
    say(
        base,
        "ravi",
        "s2",
        "I'm not allergic to peanuts, that was wrong.",
        "Actually my favourite colour is green now.",
    )
    # Then no allergy is active: the fact was ended, with the decision recorded
    assert values(base, "ravi", "allergy") == []
    [ended] = [m for m in facts(base, "ravi", "superseded") if m["payload"]["attribute"] == "allergy"]
    assert ended["valid_to"] and ended["decisions"][-1]["decision"] == "RETRACT"
    assert "not, or no longer, true" in ended["decisions"][-1]["reason"]
    # and the colour's new value is the colour alone
    assert values(base, "ravi", "favourite colour") == ["green"]


def test_conflicting_facts_are_found_and_listed_until_settled(base: str) -> None:
    # Given two active values of one fact, written with reconciliation switched off
    ids = []
    for value in ("Lisbon", "Porto"):
        status, body = http(
            "POST",
            f"{base}/v1/memories",
            {
                "user_id": "joao",
                "type": "semantic",
                "reconcile": False,
                "payload": {"subject": "user", "attribute": "home city", "value": value},
            },
        )
        assert status == 201, body
        ids.append(body["memory"]["memory_id"])
    # Then they are listed, and counted in the status
    status, found = http("GET", f"{base}/v1/memories/conflicts?user_id=joao")
    assert status == 200, found
    [conflict] = found["conflicts"]
    assert conflict["key"] == "user|home city" and {m["value"] for m in conflict["memories"]} == {
        "Lisbon",
        "Porto",
    }
    status, report = http("GET", f"{base}/v1/status")
    assert report["conflicting_facts"]["keys"] >= 1 and report["conflicting_facts"]["users"] >= 1
    # When a later statement of the fact arrives, it supersedes both
    status, body = http(
        "POST",
        f"{base}/v1/memories",
        {
            "user_id": "joao",
            "type": "semantic",
            "payload": {"subject": "user", "attribute": "home city", "value": "Faro"},
        },
    )
    assert status == 201 and body["decision"] == "UPDATE", body
    assert http("GET", f"{base}/v1/memories/conflicts?user_id=joao")[1]["conflicts"] == []
    assert values(base, "joao", "home city") == ["Faro"]


def test_org_memories_enter_a_context_only_when_relevant(base: str) -> None:
    # Given an org procedure and a user's own fact
    status, body = http(
        "POST",
        f"{base}/v1/memories",
        {
            "user_id": "lee",
            "type": "procedural",
            "visibility": "org",
            "payload": {
                "name": "Deploy the data pipeline",
                "description": "Ship the nightly data pipeline to production",
                "when_to_use": "when the data pipeline must be deployed",
                "steps": ["run the tests", "tag the release", "deploy with the pipeline runbook"],
            },
        },
    )
    assert status == 201, body
    status, body = http(
        "POST",
        f"{base}/v1/memories",
        {
            "user_id": "lee",
            "type": "semantic",
            "payload": {"subject": "user", "attribute": "likes", "value": "sushi"},
        },
    )
    assert status == 201, body
    # When the agent asks about food, the pipeline is not filler
    status, food = http(
        "POST",
        f"{base}/v1/context",
        {"user_id": "lee", "session_id": "c1", "query": "what should I eat tonight?"},
    )
    assert status == 200, food
    assert "pipeline" not in food["context"].lower()
    assert food["left_out"]["below_floor"] >= 1
    # and when it asks about deploying, it is there, said to be the organisation's
    status, deploy = http(
        "POST",
        f"{base}/v1/context",
        {"user_id": "lee", "session_id": "c1", "query": "how do we deploy the data pipeline?"},
    )
    assert "Deploy the data pipeline" in deploy["context"]
    [item] = [i for i in deploy["items"] if i["section"] == "memories" and "organisation" in i["reason"]]
    assert "for the query" in item["reason"]


def test_answers_say_what_is_not_extracted_or_indexed_yet(base: str) -> None:
    # Given turns just recorded (not yet promoted, extracted or indexed)
    now = datetime.now(UTC)
    turns = [
        {
            "role": "user",
            "content": f"Note {i}: my gate code is {4500 + i}.",
            "timestamp": (now - timedelta(seconds=30 - i)).isoformat(),
        }
        for i in range(3)
    ]
    status, _ = http("POST", f"{base}/v1/sessions/w1/turns", {"user_id": "wen", "turns": turns})
    assert status == 201
    # Then search and context answers say so, with the age of the oldest
    waiting = pending(base, "wen")
    assert waiting["turns_not_extracted"] == 3 and waiting["oldest_pending_age_s"] >= 0
    status, block = http(
        "POST", f"{base}/v1/context", {"user_id": "wen", "session_id": "w2", "query": "gate code"}
    )
    assert block["pending"]["turns_not_extracted"] == 3
    # When the session is promoted and extracted, the answers say nothing is waiting
    http("POST", f"{base}/v1/sessions/w1/flush?user_id=wen", {})
    settled(base, "wen")
    done = pending(base, "wen")
    assert done["turns_not_extracted"] == done["turns_not_indexed"] == 0 and done["oldest_pending_at"] is None


def test_the_block_spends_its_budget_on_relevance_and_a_larger_one_adds_the_next_best(base: str) -> None:
    # Given a whole history imported (four sessions of a LoCoMo-format conversation)
    sample = json.loads(DATA.read_text())
    status, body = http(
        "POST", f"{base}/v1/import", {"user_id": "priya", "format": "locomo", "data": sample["conversation"]}
    )
    assert status in (200, 201, 202), body
    settled(base, "priya", timeout=300)
    question = "What did Priya's dog eat?"
    blocks = {}
    for budget in (300, 600, 1200):
        status, blocks[budget] = http(
            "POST",
            f"{base}/v1/context",
            {"user_id": "priya", "session_id": "ask", "query": question, "token_budget": budget},
        )
        assert status == 200, blocks[budget]
    small, medium, large = blocks[300], blocks[600], blocks[1200]
    # The budget is spent, not a fixed handful of items
    assert small["tokens"] >= 0.8 * 300 and medium["tokens"] >= 0.8 * 600
    assert small["tokens"] < medium["tokens"] < large["tokens"] <= 1200
    # best first: the evidence turn is in the smallest block; a larger budget adds to what a smaller one held
    assert "session_3:1" in small["ids"]["recalled"]
    ids = {b: {i["id"] for i in blocks[b]["items"]} for b in blocks}
    assert len(ids[300] - ids[600]) <= 1 and len(ids[600] - ids[1200]) <= 1
    assert len(ids[600]) > len(ids[300]) and len(ids[1200]) > len(ids[600])
    # no turn twice; every turn with its date and speaker; a relative date resolved against its turn's date
    for block in blocks.values():
        turn_ids = [i for s in ("recent_turns", "recalled") for i in block["ids"][s]]
        assert len(turn_ids) == len(set(turn_ids))
        assert all(item["reason"] for item in block["items"])
        for line in block["context"].splitlines():
            sentinel = line.strip().startswith((markers.SENTINEL_OPEN.split()[0], markers.SENTINEL_CLOSE))
            if line.strip().startswith("[") and "]" in line and not sentinel:
                stamp, _, rest = line.strip().partition("] ")
                assert stamp[1:].split()[1] in ("March", "April") and rest.split(":")[0] in ("Priya", "Tomas")
    adopted = http(
        "POST",
        f"{base}/v1/context",
        {
            "user_id": "priya",
            "session_id": "ask",
            "query": "When did Priya adopt her dog?",
            "token_budget": 600,
        },
    )[1]
    assert "yesterday [2 March 2024]" in adopted["context"]
