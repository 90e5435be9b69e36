"""Corrections are never dropped: a changed number, time, date, version, amount or word is an UPDATE, however
alike the two texts embed; a true restatement is still a REINFORCE.

The memories are embedded by the bundled local model (the one `make dev` uses), whose vectors put each of
these corrections at cosine 0.96-0.99 from the fact it corrects: "same content" cannot be an embedding score.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.local.queue import local_queue_factory
from mongomem.models.common import Scope
from mongomem.models.memory import CreateMemoryRequest
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.providers.embed_local import LocalEmbedderProvider
from mongomem.runtime import Services, configure
from mongomem.vectors.embedded import EmbeddedIndex

ANA = Scope(tenant="default", user_id="ana")
STANDUP = "every weekday at 9:30 in room B2 with the whole platform team"

# (attribute, stored value, new value)
CORRECTIONS = [
    ("phone number", "+1 555 0100", "+1 555 0199"),
    ("weekly sync", "Tuesday 10:00", "Tuesday 11:00"),
    ("favourite colour", "Blue", "Blue changed"),
    ("python version", "3.11.4", "3.11.5"),
    ("monthly budget", "$1,200", "$1,250"),
    ("seat preference", "window seat", "aisle seat"),
    ("passport expiry", "2026-03-14", "2026-03-15"),
    ("standup", STANDUP, STANDUP.replace("9:30", "9:45")),
    (
        "shellfish",
        "can eat shellfish without any problem at all",
        "cannot eat shellfish without any problem at all",
    ),
]
# Restated to the letter: an opening capital, spacing and a closing full stop aside.
RESTATEMENTS = [
    ("favourite colour", "Navy blue", "navy blue"),
    ("phone number", "+1 555 0100", "+1  555 0100"),
    ("standup", STANDUP, STANDUP.rstrip(".") + "."),
]
# Restated in other words: the next version (issue 33's sixteenth probe: no table reads every order, role,
# rate or tense, so a wording that differs is never taken for the same value and dropped).
REWORDED = [
    ("phone number", "+1 555 0100", "+1 (555) 0100"),
    ("standup", STANDUP, "Every weekday at 9:30, in room B2, with the whole platform team."),
]


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedderProvider:
    provider = LocalEmbedderProvider()
    ok, why = provider.ready()
    assert ok, f"the bundled local embedding model must load: {why}"
    return provider


@pytest.fixture
def build(make_settings: Any, tmp_path: Path, embedder: LocalEmbedderProvider) -> Iterator[Any]:
    made: list[Services] = []

    def make(llm_answers: list[dict[str, Any]] | None = None) -> Services:
        svc = Services(
            make_settings(),
            llm=ScriptedLLM({"reconcile": [json.dumps(a) for a in llm_answers or []]}),
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


def fact(attribute: str, value: str) -> CreateMemoryRequest:
    payload = {"subject": "user", "attribute": attribute, "value": value}
    return CreateMemoryRequest.model_validate({"type": "semantic", "payload": payload})


def cosine(embedder: LocalEmbedderProvider, a: str, b: str) -> float:
    va, vb = embedder.embed([a, b])
    return sum(x * y for x, y in zip(va, vb, strict=True))


@pytest.mark.parametrize(("attribute", "old", "new"), CORRECTIONS, ids=[c[0] for c in CORRECTIONS])
def test_a_correction_that_embeds_almost_identically_is_an_update(
    build: Any, embedder: LocalEmbedderProvider, attribute: str, old: str, new: str
) -> None:
    svc = build()
    first = svc.memories.create(ANA, fact(attribute, old))
    # Given the two facts embed almost identically
    assert cosine(embedder, first.memory.text, f"user {attribute}: {new}") >= 0.96
    # When the user corrects the value
    second = svc.memories.create(ANA, fact(attribute, new))
    # Then the correction is a new version and the old value is superseded, not reinforced
    assert (second.decision, second.reason) == ("UPDATE", "same key, another value")
    assert second.memory.supersedes == first.memory.memory_id
    active = svc.memories.list(ANA, "semantic", "active", 10, None).memories
    assert [m.payload["value"] for m in active] == [new]


@pytest.mark.parametrize(("attribute", "old", "new"), RESTATEMENTS, ids=[r[0] for r in RESTATEMENTS])
def test_a_restatement_is_reinforced(build: Any, attribute: str, old: str, new: str) -> None:
    svc = build()
    first = svc.memories.create(ANA, fact(attribute, old))
    again = svc.memories.create(ANA, fact(attribute, new))
    assert again.decision == "REINFORCE" and again.memory.memory_id == first.memory.memory_id
    assert again.memory.reinforcement_count == 2 and again.memory.payload["value"] == old


@pytest.mark.parametrize(("attribute", "old", "new"), REWORDED, ids=[r[0] for r in REWORDED])
def test_a_restatement_in_other_words_is_the_next_version(
    build: Any, attribute: str, old: str, new: str
) -> None:
    svc = build()
    first = svc.memories.create(ANA, fact(attribute, old))
    again = svc.memories.create(ANA, fact(attribute, new))
    # the new wording is the current version, the old one kept as its history: nothing is lost
    assert (again.decision, again.memory.supersedes) == ("UPDATE", first.memory.memory_id)
    active = svc.memories.list(ANA, "semantic", "active", 10, None).memories
    assert [m.payload["value"] for m in active] == [new]


def test_a_correction_under_another_wording_of_the_attribute_is_kept(build: Any) -> None:
    # Given a phone number, and an LLM that calls a new number under another attribute a restatement
    svc = build()
    svc.writer.thresholds.ambiguous_from = -1.0  # every vector match counts as ambiguous: the LLM is asked
    first = svc.memories.create(ANA, fact("phone number", "+1 555 0100"))
    svc.llm.script["reconcile"] = [
        json.dumps({"decision": "REINFORCE", "target_id": first.memory.memory_id, "reason": "same phone"})
    ]
    second = svc.memories.create(ANA, fact("phone", "+1 555 0199"))
    # Then the new number is stored (the LLM's REINFORCE would have dropped it), and the reason says why
    assert second.decision == "ADD" and "numbers or negations differ" in second.reason
    values = {m.payload["value"] for m in svc.memories.list(ANA, "semantic", "active", 10, None).memories}
    assert values == {"+1 555 0100", "+1 555 0199"}
