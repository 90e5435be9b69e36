"""A restatement never grows a memory past what one statement of its kind may hold (issue 33's tenth
probe, finding 7; docs/adr/0077)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mongomem.kinds.base import MemoryKind
from mongomem.kinds.episodic import Episodic
from mongomem.kinds.procedural import Procedural
from mongomem.kinds.taxonomic import Taxonomic

TERM = {"term": "Dock code", "definition": "the code of the dock gate"}
PROCEDURE = {
    "name": "Reset the gate",
    "when_to_use": "when the gate hangs",
    "steps": ["unplug it", "plug it in"],
}
EPISODE = {"title": "Gate outage", "summary": "the gate hung for an hour"}


def _names(prefix: str, n: int) -> list[str]:
    return [f"{prefix} {i}" for i in range(n)]


def test_a_full_alias_list_takes_no_more_and_keeps_what_it_held() -> None:
    # Given a term holding 40 aliases
    kind = Taxonomic()
    held = {**TERM, "aliases": _names("old", 40)}
    # When a restatement brings 30 new ones
    merged = kind.merged(held, {**TERM, "aliases": _names("new", 30)})
    # Then the term holds 50: its 40, then the first 10 new ones; the answer names the 20 left out
    assert merged is not None and merged["aliases"] == [*_names("old", 40), *_names("new", 10)]
    assert kind.left_out(merged, {**TERM, "aliases": _names("new", 30)}) == [
        "20 aliases (it holds at most 50)"
    ]
    kind.validate(merged)  # still a valid taxonomic item
    # and a full list merges nothing more
    assert kind.merged(merged, {**TERM, "aliases": _names("more", 5)}) is None


def test_a_new_definition_keeps_at_most_50_aliases_its_own_first() -> None:
    kind = Taxonomic()
    old = {**TERM, "aliases": _names("old", 50)}
    new = {"term": TERM["term"], "definition": "the gate code", "aliases": _names("new", 20)}
    assert kind.updated(old, new)["aliases"] == [*_names("new", 20), *_names("old", 30)]


PAYLOADS: list[tuple[MemoryKind, dict[str, Any], list[str]]] = [
    (Taxonomic(), TERM, ["aliases", "related_terms"]),
    (Procedural(), PROCEDURE, ["trigger_conditions", "allowed_tools", "tags"]),
    (Episodic(), EPISODE, ["participants", "tags"]),
]


@settings(max_examples=60, deadline=None)
@given(
    which=st.integers(min_value=0, max_value=len(PAYLOADS) - 1),
    rounds=st.lists(st.integers(min_value=0, max_value=50), min_size=1, max_size=6),
)
def test_restatements_never_grow_a_memory_past_a_valid_item(which: int, rounds: list[int]) -> None:
    # Given a memory of a kind that merges lists, restated again and again with new entries for each list
    kind, base, fields = PAYLOADS[which]
    held = dict(base)
    for n, size in enumerate(rounds):
        said = {**base, **{f: _names(f"{f} {n}", size)[: _limit(kind, f)] for f in fields}}
        held = kind.merged(held, said) or held
    # Then what it holds is still one valid statement of the kind
    for f in fields:
        assert len(held.get(f) or []) <= _limit(kind, f), f
    kind.validate(held)


def _limit(kind: MemoryKind, field: str) -> int:
    return int(next(m.max_length for m in kind.item.model_fields[field].metadata if hasattr(m, "max_length")))


def test_a_memory_past_the_limit_loses_nothing_it_held() -> None:
    # Given terms and episodes that grew past the limit before it held (60 aliases, 60 participants)
    term, episode = Taxonomic(), Episodic()
    held = {**TERM, "aliases": _names("old", 60)}
    gathering = {**EPISODE, "participants": _names("guest", 60)}
    # When they are restated word for word, or with one more entry
    assert term.merged(held, dict(TERM)) is None  # nothing new: nothing to merge, nothing cut
    grown = episode.merged(gathering, {**EPISODE, "participants": ["a new guest"]})
    # Then every entry they held stays (a full list takes no more)
    assert grown is None or grown["participants"] == _names("guest", 60)
