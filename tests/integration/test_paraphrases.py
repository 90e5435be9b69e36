"""No paraphrase duplicates: a fact restated in other words, in a later conversation, is reinforced (one
memory, counted again), a changed value is an update, and two different facts worded alike stay two.

End to end on the real server: turns are recorded, each conversation promoted into its own snapshot and
extracted by the real extract handler, embedded by the bundled local model (the one `make dev` uses) into
the embedded vector index. Both proposers: the offline rules from the user's own words, and an LLM whose
answers label and word the same fact differently each time (a scripted provider, as real models vary).
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
from mongomem.longterm.write.rekey import rekey
from mongomem.models.common import Scope
from mongomem.models.memory import CreateMemoryRequest
from mongomem.models.turns import RecordTurnsRequest
from mongomem.offline.llm_offline import OfflineLLM
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.providers.embed_local import LocalEmbedderProvider
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex
from tests.conftest import load_event, load_function

ANA = Scope(tenant="default", user_id="ana")


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedderProvider:
    provider = LocalEmbedderProvider()
    ok, why = provider.ready()
    assert ok, f"the bundled local embedding model must load: {why}"
    return provider


@pytest.fixture(scope="module")
def extract_fn() -> Any:
    return load_function("extract")


@pytest.fixture
def build(make_settings: Any, tmp_path: Path, embedder: LocalEmbedderProvider) -> Iterator[Any]:
    made: list[Services] = []

    def make(llm: Any) -> Services:
        cfg = parse_project_config({"memory": {"extraction": {"enabled": ["semantic"]}}})
        svc = Services(
            make_settings(project=cfg, enabled_extractions=["semantic"]),
            llm=llm,
            embedder=embedder,
            vector_index=EmbeddedIndex(tmp_path / f"v{len(made)}"),
            queue_factory=local_queue_factory,
        )
        configure(svc)
        made.append(svc)
        return svc

    yield make
    configure(None)
    for svc in made:
        svc.db.client.drop_database(svc.db.name)


def say(svc: Services, extract_fn: Any, ctx: Any, session: str, *user_turns: str) -> None:
    """One conversation: the user's turns (each acknowledged), promoted into a snapshot and extracted."""
    turns = []
    for text in user_turns:
        turns += [{"role": "user", "content": text}, {"role": "assistant", "content": "Noted."}]
    svc.recorder.record(ANA, session, RecordTurnsRequest.model_validate({"turns": turns}))
    snap = svc.promoter.flush(ANA, session)[0].snapshot_id
    record = load_event("extract_sqs.json")["Records"][0]
    event = {"Records": [dict(record, body=json.dumps({"snapshot_id": snap, "type": "semantic"}))]}
    assert extract_fn.lambda_handler(event, ctx) == {"batchItemFailures": []}


def facts(svc: Services, status: str = "active") -> list[tuple[str, str, int]]:
    found = svc.memories.list(ANA, "semantic", status, 100, None).memories
    return sorted((m.payload["attribute"], m.payload["value"], m.reinforcement_count) for m in found)


def decisions(svc: Services) -> list[str]:
    found = svc.memories.list(ANA, "semantic", None, 100, None).memories
    return sorted(d.decision for m in found for d in m.decisions)


def item(attribute: str, value: str, subject: str = "user", **more: Any) -> dict[str, Any]:
    return {"subject": subject, "attribute": attribute, "value": value, "evidence_seqs": [1], **more}


def answers(*rounds: list[dict[str, Any]]) -> ScriptedLLM:
    """An LLM answering each snapshot's extraction with the next round's items (ADD when asked to reconcile)."""
    reconcile = {"decision": "ADD", "target_id": None, "reason": "not sure"}
    return ScriptedLLM(
        {"semantic": [{"items": r} for r in rounds], "reconcile": [reconcile] * 20}, loop=False
    )


def test_a_fact_restated_in_other_words_is_reinforced_and_a_new_value_updates_it(
    build: Any, extract_fn: Any, ctx: Any
) -> None:
    svc = build(OfflineLLM())
    # Given a fact said once, then twice more in other words, in later conversations
    say(svc, extract_fn, ctx, "s1", "I live in Porto.")
    say(svc, extract_fn, ctx, "s2", "Porto is where I live these days.")
    say(svc, extract_fn, ctx, "s3", "My home is in Porto now.")
    # Then there is one memory of it, reinforced by each restatement
    assert facts(svc) == [("home city", "Porto", 3)]
    assert decisions(svc) == ["ADD", "REINFORCE", "REINFORCE"]
    # When the value changes, the memory is updated (the old value is kept as history)
    say(svc, extract_fn, ctx, "s4", "These days I live in Lisbon.")
    assert facts(svc) == [("home city", "Lisbon", 1)]
    assert facts(svc, "superseded") == [("home city", "Porto", 3)]


def test_facts_worded_alike_are_not_merged_and_each_is_reinforced_by_its_own_restatement(
    build: Any, extract_fn: Any, ctx: Any
) -> None:
    svc = build(OfflineLLM())
    # Given facts whose sentences and values look alike
    say(
        svc,
        extract_fn,
        ctx,
        "s1",
        "I live in Porto.",
        "I'm originally from Lisbon.",
        "My favourite colour is green.",
        "My favourite food is green curry.",
        "I speak Spanish.",
        "I speak French.",
    )
    # When each is restated in other words
    say(
        svc,
        extract_fn,
        ctx,
        "s2",
        "Lisbon is my hometown.",
        "Porto is where I live these days.",
        "My favorite color is green.",
        "Green curry is my favourite food.",
        "I'm fluent in French.",
        "Spanish is one of the languages I speak.",
    )
    # Then every fact is its own memory, reinforced once
    assert facts(svc) == [
        ("favourite colour", "green", 2),
        ("favourite food", "green curry", 2),
        ("home city", "Porto", 2),
        ("hometown", "Lisbon", 2),
        ("languages", "French", 2),
        ("languages", "Spanish", 2),
    ]
    assert decisions(svc).count("UPDATE") == 0


def test_an_llm_that_labels_and_words_a_fact_differently_each_time_keeps_one_memory(
    build: Any, extract_fn: Any, ctx: Any
) -> None:
    svc = build(
        answers(
            [
                item("favourite colour", "green"),
                item("languages", "Spanish", cardinality="many", evidence_seqs=[3]),
            ],
            [
                item("the user's favorite color", "green", "User"),
                item("languages spoken", "Spanish", evidence_seqs=[3]),
            ],
            [
                item("Preferred Colour", "the colour green", "the user"),
                item("Language", "Spanish language", evidence_seqs=[3]),
            ],
            [item("favorite colour", "blue"), item("spoken languages", "French", evidence_seqs=[3])],
        )
    )
    # (each conversation says the items of its round: the user's turns are seqs 1 and 3)
    said = [
        ("My favourite colour is green.", "I speak Spanish."),
        ("My favorite color is green.", "I speak Spanish."),
        ("The colour I prefer is green.", "Spanish is my language."),
    ]
    for n, turns in enumerate(said):
        say(svc, extract_fn, ctx, f"s{n}", *turns)
    # Then each fact is one memory, however it was labelled: restated to the letter it is counted (under
    # another label), in other words it is the next version ("the colour green": docs/adr/0080; a value
    # of one word is said by its case too: "Green" would be a version of its own)
    assert facts(svc) == [("Language", "Spanish language", 1), ("Preferred Colour", "the colour green", 1)]
    # and nothing is lost: the earlier wordings are the history of those memories
    assert facts(svc, "superseded") == [("favourite colour", "green", 2), ("languages", "Spanish", 2)]
    # When the colour changes and another language is named: the colour is updated, the language added
    say(svc, extract_fn, ctx, "s3", "My favourite colour is blue now.", "I also speak French.")
    assert facts(svc) == [
        ("Language", "Spanish language", 1),
        ("favorite colour", "blue", 1),  # the new version, labelled as the LLM labelled it
        ("spoken languages", "French", 1),
    ]
    assert facts(svc, "superseded") == [
        ("Preferred Colour", "the colour green", 1),
        ("favourite colour", "green", 2),
        ("languages", "Spanish", 2),
    ]


def test_an_llm_naming_two_different_facts_alike_keeps_both(build: Any, extract_fn: Any, ctx: Any) -> None:
    svc = build(
        answers(
            [
                item("home city", "Porto"),
                item("hometown", "Lisbon", evidence_seqs=[3]),
                item("birthday", "March 3", evidence_seqs=[5]),
            ],
            [
                item("city of residence", "Porto"),
                item("home town", "Lisbon", evidence_seqs=[3]),
                item("birth date", "1990-03-03", evidence_seqs=[5]),
            ],
        )
    )
    # (the user's turns are seqs 1, 3 and 5: each acknowledged)
    say(
        svc,
        extract_fn,
        ctx,
        "s1",
        "I live in Porto.",
        "I'm from Lisbon, my hometown.",
        "My birthday is March 3.",
    )
    say(
        svc,
        extract_fn,
        ctx,
        "s2",
        "I still live in Porto.",
        "My home town is Lisbon.",
        "My birth date is 3 March 1990.",
    )
    assert facts(svc) == [
        ("birth date", "1990-03-03", 1),
        ("birthday", "March 3", 1),
        ("home city", "Porto", 2),
        ("hometown", "Lisbon", 2),
    ]


def test_stored_keys_are_recomputed_and_duplicates_merged_by_the_migration(build: Any) -> None:
    # Given memories stored with the keys an older release computed: a fact stored twice under two labels
    svc = build(OfflineLLM())

    def create(attribute: str, value: str) -> str:
        payload = {"subject": "user", "attribute": attribute, "value": value}
        # reconcile off: written as it was, as the older release stored the paraphrase next to its fact
        request = CreateMemoryRequest.model_validate(
            {"type": "semantic", "payload": payload, "reconcile": False}
        )
        result: str = svc.memories.create(ANA, request).memory.memory_id
        return result

    older = create("favourite colour", "green")
    newer = create("favorite color", "green")
    food = create("favourite food", "sushi")
    for memory_id, old_key in ((older, "user|favourite colour"), (newer, "user|favorite color")):
        svc.memory_store.coll.update_one({"_id": memory_id}, {"$set": {"key": old_key}})
    # When the migration runs (twice: it is idempotent)
    report = rekey(svc.memory_store, svc.kinds)
    assert report.as_dict() == {
        "seen": 3,
        "rekeyed": 1,
        "merged": 1,
        "complete": True,
    }  # "favorite color" was canonical
    assert rekey(svc.memory_store, svc.kinds).as_dict() == {
        "seen": 3,
        "rekeyed": 0,
        "merged": 0,
        "complete": True,
    }
    # Then one active memory holds the colour, the duplicate is history pointing at it, the food is untouched
    active = {m.memory_id: m for m in svc.memories.list(ANA, "semantic", "active", 10, None).memories}
    assert set(active) == {newer, food}
    gone = svc.memory_store.get(ANA, older)
    assert gone is not None and (gone.status, gone.superseded_by) == ("superseded", newer)
    # and a restatement under a third label reinforces the kept memory
    again = svc.memories.create(
        ANA,
        CreateMemoryRequest.model_validate(
            {
                "type": "semantic",
                "payload": {"subject": "the user", "attribute": "Favourite Colour", "value": "green"},
            }
        ),
    )
    assert (again.decision, again.memory.memory_id, again.memory.reinforcement_count) == (
        "REINFORCE",
        newer,
        2,
    )


def test_the_migration_keys_an_older_release_facts_about_the_user_under_one_subject(build: Any) -> None:
    # Given facts an older release stored under the user's name and under "user", both active
    svc = build(OfflineLLM())

    def create(subject: str, attribute: str, value: str, days_ago: int) -> str:
        request = CreateMemoryRequest.model_validate(
            {
                "type": "semantic",
                "reconcile": False,
                "observed_at": (datetime.now(UTC) - timedelta(days=days_ago)).isoformat(),
                "payload": {"subject": subject, "attribute": attribute, "value": value},
            }
        )
        result: str = svc.memories.create(ANA, request).memory.memory_id
        return result

    create("user", "name", "Maria", 3)
    madrid = create("Maria", "home city", "Madrid", 2)
    barcelona = create("user", "home city", "Barcelona", 1)
    older = {
        "subject": "Maria",
        "attribute": "home city",
        "value": "Madrid",
    }  # as the older release stored it
    svc.memory_store.coll.update_one({"_id": madrid}, {"$set": {"key": "maria|home city", "payload": older}})
    # When the migration runs
    assert rekey(svc.memory_store, svc.kinds).as_dict() == {
        "seen": 3,
        "rekeyed": 1,
        "merged": 1,
        "complete": True,
    }
    # Then the later statement is the one active home city, the earlier one its history
    assert [f for f in facts(svc) if f[0] == "home city"] == [("home city", "Barcelona", 1)]
    old = svc.memory_store.get(ANA, madrid)
    assert old is not None and (old.status, old.superseded_by, old.key) == (
        "superseded",
        barcelona,
        "user|home city",
    )
    assert old.payload["subject"] == "Maria"  # the stored wording is kept; only the key is canonical


def test_the_migration_keys_an_older_release_org_fact_by_the_name_it_shows(build: Any) -> None:
    # Given an org fact an older release keyed "user|..." though it shows a name (docs/adr/0075)
    svc = build(OfflineLLM())
    request = CreateMemoryRequest.model_validate(
        {
            "type": "semantic",
            "visibility": "org",
            "reconcile": False,
            "payload": {"subject": "North Dock", "attribute": "gate opening time", "value": "7 am"},
        }
    )
    memory_id = svc.memories.create(ANA, request).memory.memory_id
    older = {
        "subject": "user",
        "attribute": "gate opening time",
        "value": "7 am",
        "qualifiers": {"name": "North Dock"},
    }
    svc.memory_store.coll.update_one(
        {"_id": memory_id}, {"$set": {"key": "user|gate opening time", "payload": older}}
    )
    # When the migration runs
    report = rekey(svc.memory_store, svc.kinds).as_dict()
    # Then the fact is keyed by the name it shows, where every later statement about North Dock meets it
    assert report["rekeyed"] == 1
    stored = svc.memory_store.coll.find_one({"_id": memory_id})
    assert stored is not None and stored["key"] == "north dock|gate opening time"
