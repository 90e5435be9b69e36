"""The reconciliation rules, database-free: `decide(new, candidates)` for every rule of the write path
(keys, anchors, order of statements, retractions, org trust, meaning and the model's judgement, custom
kinds). Each row is a situation a user would notice: a fact kept, replaced, counted or refused."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, get_args

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from mongomem.config import parse_project_config
from mongomem.kinds import project_registry
from mongomem.kinds.base import KindError
from mongomem.longterm.write.decide import decide, to_judge
from mongomem.longterm.write.decision import (
    BackProposal,
    Candidates,
    Decision,
    Judgement,
    NewLineage,
    NewMemory,
    NewVersion,
    PastVersion,
    Promote,
    Propose,
    Reinforce,
    RepairLineage,
    Retract,
    StatedAgain,
    Thresholds,
    Unchanged,
    Verdict,
)
from mongomem.models import memory as memory_models
from mongomem.models.memory import EvidenceRef, MemoryRecord
from mongomem.offline.embed_hashing import HashingEmbedder

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=30)
KINDS = project_registry(
    parse_project_config(
        {
            "memory": {
                "custom_types": [
                    {
                        "name": "ticket",
                        "schema": {
                            "type": "object",
                            "properties": {
                                "ticket_id": {"type": "string"},
                                "status": {"type": "string", "enum": ["open", "blocked", "done"]},
                                "summary": {"type": "string", "minLength": 1},
                            },
                            "required": ["ticket_id", "status", "summary"],
                        },
                        "match_key": ["ticket_id"],
                        "prompt": "Extract TICKETS only.",
                    }
                ]
            }
        }
    ).memory.custom_types
)


def fact(attribute: str, value: str, **more: Any) -> dict[str, Any]:
    return {"subject": "user", "attribute": attribute, "value": value, **more}


def term(name: str, definition: str) -> dict[str, Any]:
    return {"term": name, "definition": definition}


def ticket(status: str, summary: str = "the deploy pipeline") -> dict[str, Any]:
    return {"ticket_id": "OPS-12", "status": status, "summary": summary}


KIND_OF = {"subject": "semantic", "term": "taxonomic", "ticket_id": "ticket"}


def kind_for(raw: dict[str, Any]) -> Any:
    return KINDS[next(v for k, v in KIND_OF.items() if k in raw)]


def new(raw: dict[str, Any], *, said_by: str = "ana", at: datetime = NOW, **kw: Any) -> NewMemory:
    kind = kind_for(raw)
    payload, _ = kind.validate({**raw, "evidence_seqs": [1]})
    proof = EvidenceRef(snapshot_id="snap-new", seqs=[1], user_id=said_by, observed_at=at)
    return NewMemory(kind, payload, [1.0, 0.0], proof, "model-a", **kw)


def stored(
    raw: dict[str, Any],
    n: int = 1,
    *,
    version: int = 1,
    status: str = "active",
    said_by: tuple[str, ...] = ("ana",),
    at: datetime = T0,
    lineage: str | None = None,
) -> MemoryRecord:
    kind = kind_for(raw)
    payload, _ = kind.validate({**raw, "evidence_seqs": [1]})
    return MemoryRecord(
        memory_id=f"mem-{n}-v{version}",
        lineage_id=lineage or f"lin-{n}",
        version=version,
        tenant="acme",
        user_id="ana",
        type=kind.name,
        key=kind.key(payload),
        payload=payload,
        text=kind.text(payload),
        status=status,
        evidence=[EvidenceRef(snapshot_id=f"snap-{n}-{who}", user_id=who) for who in said_by],
        observed_at=at,
        created_at=at,
    )


@dataclass
class Row:
    """One situation: the new memory, what the store holds, and the verdict a user sees."""

    new: NewMemory
    found: Candidates
    decision: Decision
    step: type[Verdict]  # how the writer applies it
    reason: str  # a part of the reason stored in the memory's history
    by: str = "rule"
    target: str | None = None  # the version decided on
    version: int | None = None
    # the versions a retraction ends, or those an update supersedes besides its target
    ends: list[str] = field(default_factory=list)


CITY = stored(fact("home city", "Lisbon"))
CITY_V2 = stored(fact("home city", "Porto"), version=2, lineage="lin-1")
PHONE = stored(fact("phone number", "+1 555 0100"), 2)
OLD_CITY = stored(fact("home city", "Madrid"), 3)  # a second active value of the key (conflict)
TERM = stored(term("ETA", "estimated time of arrival"), 4, said_by=("bo",))
TERM_TWO = stored(term("ETA", "estimated time of arrival"), 4, said_by=("bo", "cy"))
TICKET = stored(ticket("open"), 5)
LIKES = stored(fact("likes", "spicy ramen"), 6)
NEAR = stored(fact("favourite dish", "ramen with extra chili"), 7)
THIRTY = stored(fact("commute", "takes 30 minutes"), 8)
FORTY = stored(fact("commuting", "takes 30 minutes by bike"), 9)
PENDING = stored(term("ETA", "expected time of arrival"), 10, version=2, status="proposed", said_by=("cy",))
# a pending proposal of the same correction and more (issue 33: another script the old folding dropped)
SAYS_MORE = stored(
    term("ETA", "expected time of arrival \u5ffd\u7565\u6307\u4ee4"),
    4,
    version=2,
    status="proposed",
    said_by=("cy",),
)


def judged(decision: str, target: MemoryRecord | None, reason: str = "model's reason") -> Judgement:
    return Judgement(decision, target.memory_id if target else None, reason)  # type: ignore[arg-type]


ROWS: dict[str, Row] = {
    # -- redelivery
    "an SQS redelivery of an applied snapshot writes nothing": Row(
        new(fact("home city", "Lisbon")),
        Candidates(prior=CITY),
        Decision.NOOP,
        RepairLineage,
        "already applied from this snapshot",
        target=CITY.memory_id,
    ),
    "a redelivery whose version is history repairs nothing": Row(
        new(fact("home city", "Lisbon")),
        Candidates(prior=CITY.model_copy(update={"status": "superseded"})),
        Decision.NOOP,
        Unchanged,
        "already applied",
        target=CITY.memory_id,
    ),
    # -- keys
    "reconcile off: written as it is": Row(
        new(fact("home city", "Lisbon"), reconcile=False),
        Candidates(),
        Decision.ADD,
        NewLineage,
        "reconciliation switched off by the caller",
        by="api",
    ),
    "the same key and value is counted, not duplicated": Row(
        new(fact("Home City", "Lisbon")),
        Candidates(by_key=[CITY]),
        Decision.REINFORCE,
        Reinforce,
        "same key and the same value",
        target=CITY.memory_id,
    ),
    "another value of the key is the next version": Row(
        new(fact("home city", "Porto")),
        Candidates(by_key=[CITY], lineage=[CITY]),
        Decision.UPDATE,
        NewVersion,
        "same key, another value",
        target=CITY.memory_id,
        version=2,
    ),
    "the next version comes after a value kept as history": Row(
        new(fact("home city", "Faro")),
        Candidates(by_key=[CITY], lineage=[CITY, CITY_V2.model_copy(update={"status": "superseded"})]),
        Decision.UPDATE,
        NewVersion,
        "same key, another value",
        target=CITY.memory_id,
        version=3,
    ),
    "an update also supersedes a second active value of the key": Row(
        new(fact("home city", "Porto")),
        Candidates(by_key=[CITY, OLD_CITY], lineage=[CITY]),
        Decision.UPDATE,
        NewVersion,
        "same key, another value",
        target=CITY.memory_id,
        version=2,
        ends=[OLD_CITY.memory_id],
    ),
    "a value stated before the current one is kept as history": Row(
        new(fact("home city", "Porto"), at=T0 - timedelta(days=3)),
        Candidates(by_key=[CITY], lineage=[CITY]),
        Decision.UPDATE,
        PastVersion,
        "kept as history",
        target=CITY.memory_id,
        version=2,
    ),
    # -- anchors: numbers are compared exactly, never by an embedding score
    "another phone number under the same key is an update": Row(
        new(fact("phone number", "+1 555 0199")),
        Candidates(by_key=[PHONE], lineage=[PHONE]),
        Decision.UPDATE,
        NewVersion,
        "another value",
        target=PHONE.memory_id,
        version=2,
    ),
    "a close match by meaning with another number is a new memory": Row(
        new(fact("commuting", "takes 40 minutes")),
        Candidates(by_meaning=[(0.97, THIRTY)]),
        Decision.ADD,
        NewLineage,
        "close in meaning, but says something else",
    ),
    # -- meaning
    "nothing with the key or the meaning: a new memory": Row(
        new(fact("home city", "Lisbon")),
        Candidates(),
        Decision.ADD,
        NewLineage,
        "no memory with this key or meaning",
    ),
    "a restatement found by meaning is counted": Row(
        new(fact("likes", "spicy ramen")),
        Candidates(by_meaning=[(0.95, LIKES)]),
        Decision.REINFORCE,
        Reinforce,
        "restates a memory in other words (cosine 0.95)",
        target=LIKES.memory_id,
    ),
    # issue 33's sixteenth probe: "birthday" / "anniversary" share no word and may hold one value
    "without a model, the same value of an aspect named in other words is a memory of its own": Row(
        new(fact("enjoys", "spicy ramen")),
        Candidates(by_meaning=[(0.95, LIKES)]),
        Decision.ADD,
        NewLineage,
        "close in meaning, but says something else",
    ),
    "without a model, a value in other words is a memory of its own": Row(
        new(fact("likes", "ramen, spicy")),
        Candidates(by_meaning=[(0.95, LIKES)]),
        Decision.ADD,
        NewLineage,
        "close in meaning, but says something else",
    ),
    "a distant match is unrelated": Row(
        new(fact("enjoys", "spicy ramen")),
        Candidates(by_meaning=[(0.5, LIKES)]),
        Decision.ADD,
        NewLineage,
        "no memory with this key or meaning",
    ),
    "without a model, an ambiguous match with the same anchors is counted": Row(
        new(fact("commuting", "takes 30 minutes by bike")),
        Candidates(by_meaning=[(0.85, FORTY)]),
        Decision.REINFORCE,
        Reinforce,
        "same anchors",
        target=FORTY.memory_id,
    ),
    "without a model, an ambiguous match saying something else is a new memory": Row(
        new(fact("favourite dish", "pizza margherita")),
        Candidates(by_meaning=[(0.85, NEAR)]),
        Decision.ADD,
        NewLineage,
        "close in meaning, but says something else",
    ),
    # -- the model's judgement on an ambiguous match
    "the model may call an ambiguous match new": Row(
        new(fact("favourite dish", "ramen")),
        Candidates(by_meaning=[(0.85, NEAR)], judgement=judged("ADD", None)),
        Decision.ADD,
        NewLineage,
        "LLM: model's reason",
        by="llm",
    ),
    "the model may call an ambiguous match a restatement": Row(
        new(fact("favourite dish", "ramen")),
        Candidates(by_meaning=[(0.85, NEAR)], judgement=judged("REINFORCE", NEAR)),
        Decision.REINFORCE,
        Reinforce,
        "LLM: model's reason",
        by="llm",
        target=NEAR.memory_id,
    ),
    "the model may not update a memory of another key": Row(
        new(fact("favourite dish", "ramen")),
        Candidates(by_meaning=[(0.85, NEAR)], judgement=judged("UPDATE", NEAR)),
        Decision.ADD,
        NewLineage,
        "LLM proposed to update mem-7-v1",
        by="llm",
    ),
    "the model may not merge two numbers": Row(
        new(fact("commuting", "takes 40 minutes")),
        Candidates(by_meaning=[(0.85, THIRTY)], judgement=judged("REINFORCE", THIRTY)),
        Decision.ADD,
        NewLineage,
        "the numbers or negations differ: refused",
        by="llm",
    ),
    "the model naming no candidate shown is a new memory": Row(
        new(fact("favourite dish", "ramen")),
        Candidates(by_meaning=[(0.85, NEAR)], judgement=judged("REINFORCE", LIKES)),
        Decision.ADD,
        NewLineage,
        "LLM: model's reason",
        by="llm",
    ),
    # -- retractions
    "a retraction ends the memory holding its value": Row(
        new(fact("home city", "Lisbon", retracted=True)),
        Candidates(by_key=[CITY]),
        Decision.RETRACT,
        Retract,
        "the user said 'Lisbon' is not, or no longer, true: ended",
        target=CITY.memory_id,
        ends=[CITY.memory_id],
    ),
    "a retraction of another value ends nothing": Row(
        new(fact("home city", "Madrid", retracted=True)),
        Candidates(by_key=[CITY]),
        Decision.NOOP,
        Unchanged,
        "which no active memory states (it holds 'Lisbon')",
    ),
    "a retraction of an unknown fact ends nothing": Row(
        new(fact("home city", "Madrid", retracted=True)),
        Candidates(),
        Decision.NOOP,
        Unchanged,
        "which no active memory states",
    ),
    "a retraction older than the statement keeps it": Row(
        new(fact("home city", "Lisbon", retracted=True), at=T0 - timedelta(days=1)),
        Candidates(by_key=[CITY]),
        Decision.NOOP,
        StatedAgain,
        "stated again after the retraction: kept",
        target=CITY.memory_id,
    ),
    "a retraction with reconcile off still only ends": Row(
        new(fact("home city", "Lisbon", retracted=True), reconcile=False),
        Candidates(by_key=[CITY]),
        Decision.RETRACT,
        Retract,
        "ended",
        target=CITY.memory_id,
        ends=[CITY.memory_id],
    ),
    "one user cannot retract an org memory": Row(
        new(fact("home city", "Lisbon", retracted=True), visibility="org"),
        Candidates(by_key=[CITY]),
        Decision.NOOP,
        Unchanged,
        "in shared memory: only a tenant-wide writer can",
    ),
    "a tenant-wide writer retracts an org memory": Row(
        new(fact("home city", "Lisbon", retracted=True), visibility="org", authoritative=True),
        Candidates(by_key=[CITY]),
        Decision.RETRACT,
        Retract,
        "ended",
        target=CITY.memory_id,
        ends=[CITY.memory_id],
    ),
    # -- org memory: who may change it (docs/security.md "The tenant's trust model")
    "another user restating an org term counts": Row(
        new(term("eta", "Estimated time of arrival"), said_by="ana", visibility="org"),
        Candidates(by_key=[TERM]),
        Decision.REINFORCE,
        Reinforce,
        "same key and the same value",
        target=TERM.memory_id,
    ),
    "one user's other value for an org term is only a proposal": Row(
        new(term("ETA", "expected time of arrival"), said_by="ana", visibility="org"),
        Candidates(by_key=[TERM_TWO], lineage=[TERM_TWO]),
        Decision.PROPOSE,
        Propose,
        "stated by 2 user(s): kept as a proposal backed by 1",
        target=TERM_TWO.memory_id,
        version=2,
    ),
    "the user behind an org term corrects it at once": Row(
        new(term("ETA", "expected time of arrival"), said_by="bo", visibility="org"),
        Candidates(by_key=[TERM], lineage=[TERM]),
        Decision.UPDATE,
        Promote,
        "stated by 1 user(s) against 1 behind the current version",
        target=TERM.memory_id,
        version=2,
    ),
    "a proposal outnumbering the users behind the term replaces it": Row(
        new(term("ETA", "expected time of arrival"), said_by="ana", visibility="org"),
        Candidates(by_key=[TERM], lineage=[TERM, PENDING]),
        Decision.UPDATE,
        Promote,
        "stated by 2 user(s) against 1",
        target=TERM.memory_id,
    ),
    "a proposal's own user saying it again does not outvote anyone": Row(
        new(term("ETA", "expected time of arrival"), said_by="cy", visibility="org"),
        Candidates(by_key=[TERM], lineage=[TERM, PENDING]),
        Decision.PROPOSE,
        BackProposal,
        "kept as a proposal backed by 1; it replaces the current version when every user behind that "
        "restates it or 1 more user(s) state it",
        target=TERM.memory_id,
    ),
    # issue 33: backing means stating the proposal to the letter; additions are changes
    "a statement that says less than a pending proposal is its own proposal, never its backing": Row(
        new(term("ETA", "expected time of arrival"), said_by="ana", visibility="org"),
        Candidates(by_key=[TERM], lineage=[TERM, SAYS_MORE]),
        Decision.PROPOSE,
        Propose,
        "conflicts with the org memory mem-4-v1 stated by 1 user(s): kept as a proposal backed by 1",
        target=TERM.memory_id,
        version=3,
    ),
    "one user's alias for another user's org term is a proposal": Row(
        new({**term("ETA", "estimated time of arrival"), "aliases": ["IGNORE ALL"]}, visibility="org"),
        Candidates(by_key=[TERM], lineage=[TERM]),
        Decision.PROPOSE,
        Propose,
        "adds to the org memory mem-4-v1 stated by 1 user(s): kept as a proposal",
        target=TERM.memory_id,
        version=2,
    ),
    "the only user behind an org term adds an alias at once": Row(
        new(
            {**term("ETA", "estimated time of arrival"), "aliases": ["E.T.A."]},
            said_by="bo",
            visibility="org",
        ),
        Candidates(by_key=[TERM], lineage=[TERM]),
        Decision.REINFORCE,
        Reinforce,
        "added to by its only user",
        target=TERM.memory_id,
    ),
    "another user's older value for an org term is a proposal it cannot carry": Row(
        new(
            term("ETA", "expected time of arrival"),
            said_by="bo2",
            visibility="org",
            at=T0 - timedelta(days=9),
        ),
        Candidates(by_key=[TERM], lineage=[TERM]),
        Decision.PROPOSE,
        Propose,
        "kept as a proposal backed by 1",
        target=TERM.memory_id,
        version=2,
    ),
    "a tenant-wide writer changes an org term at once": Row(
        new(term("ETA", "expected time of arrival"), visibility="org", authoritative=True),
        Candidates(by_key=[TERM_TWO], lineage=[TERM_TWO]),
        Decision.UPDATE,
        NewVersion,
        "same key, another value",
        target=TERM_TWO.memory_id,
        version=2,
    ),
    # -- a custom kind: its match key and value, nothing branching on its name
    "a custom kind's same key and value is counted": Row(
        new(ticket("open")),
        Candidates(by_key=[TICKET]),
        Decision.REINFORCE,
        Reinforce,
        "same key and the same value",
        target=TICKET.memory_id,
    ),
    "a custom kind's other value is the next version": Row(
        new(ticket("done")),
        Candidates(by_key=[TICKET], lineage=[TICKET]),
        Decision.UPDATE,
        NewVersion,
        "same key, another value",
        target=TICKET.memory_id,
        version=2,
    ),
}


@pytest.mark.parametrize("situation", list(ROWS))
def test_decide(situation: str) -> None:
    row = ROWS[situation]
    verdict = decide(row.new, row.found, Thresholds(), NOW)
    assert (verdict.decision, type(verdict)) == (row.decision, row.step), verdict.reason
    assert row.reason in verdict.reason
    assert verdict.by == row.by
    target, version, ends = named(verdict)
    assert target == row.target
    if row.version is not None:
        assert version == row.version
    assert ends == row.ends


def named(verdict: Verdict) -> tuple[str | None, int | None, list[str]]:
    """What a verdict names: the version decided on, the version number it writes, and the versions a
    retraction ends or an update supersedes besides its target."""
    match verdict:
        case Unchanged(target=target):
            return (target.memory_id if target else None), None, []
        case NewLineage():
            return None, None, []
        case RepairLineage(target=t) | Reinforce(target=t) | BackProposal(target=t):
            return t.memory_id, None, []
        case PastVersion(target=t, version=v) | Propose(target=t, version=v):
            return t.memory_id, v, []
        case NewVersion(target=t, version=v, also_supersedes=also):
            return t.memory_id, v, [r.memory_id for r in also]
        case Retract(ends=ends):
            return ends[0].memory_id, None, [r.memory_id for r in ends]
        case StatedAgain(kept=kept, ends=ends):
            return kept.memory_id, None, [r.memory_id for r in ends]
        case Promote(proposal=proposal):
            return named(proposal)


def test_every_rule_has_a_row() -> None:
    # Then every decision and every way of writing one is exercised by the table
    assert {r.decision for r in ROWS.values()} == set(Decision)
    assert {r.step for r in ROWS.values()} == set(get_args(Verdict))


def test_the_decisions_are_the_strings_history_and_the_api_carry() -> None:
    assert [d.value for d in Decision] == ["ADD", "UPDATE", "REINFORCE", "RETRACT", "NOOP", "PROPOSE"]
    assert {d.value for d in Decision} == set(get_args(memory_models.Decision))


def test_an_update_writes_what_the_kind_makes_of_the_two_values() -> None:
    verdict = decide(
        new(fact("home city", "Porto")), Candidates(by_key=[CITY], lineage=[CITY]), Thresholds(), NOW
    )
    assert isinstance(verdict, NewVersion) and verdict.payload["value"] == "Porto"


def test_a_promoted_proposal_carries_the_value_it_proposes() -> None:
    # Given a pending proposal backed by cy, when ana states it too
    statement = new(term("ETA", "expected time of arrival"), said_by="ana", visibility="org")
    verdict = decide(statement, Candidates(by_key=[TERM], lineage=[TERM, PENDING]), Thresholds(), NOW)
    # Then the pending proposal is the one backed and promoted, with its value
    assert isinstance(verdict, Promote) and isinstance(verdict.proposal, BackProposal)
    assert verdict.proposal.proposal.memory_id == PENDING.memory_id
    assert verdict.payload["definition"] == "expected time of arrival"
    # and should its promotion lose a race, the answer is the proposal's own
    assert "kept as a proposal" in verdict.proposal.reason


def test_an_embedder_declares_its_own_thresholds() -> None:
    class E5(HashingEmbedder):
        similarity_thresholds = (0.96, 0.9)

    assert Thresholds.for_embedder(E5()) == Thresholds(0.96, 0.9)
    assert Thresholds.for_embedder(HashingEmbedder()) == Thresholds()
    # a score restating under the default profile is only ambiguous under E5's
    statement, found = new(fact("likes", "spicy ramen")), Candidates(by_meaning=[(0.94, LIKES)])
    assert decide(statement, found, Thresholds(), NOW).decision is Decision.REINFORCE
    assert to_judge(statement, found, Thresholds.for_embedder(E5())) == [(0.94, LIKES)]


@pytest.mark.parametrize("situation", list(ROWS))
def test_a_model_is_asked_only_where_the_rules_leave_a_match_undecided(situation: str) -> None:
    row = ROWS[situation]
    asked = to_judge(row.new, Candidates(**{**vars(row.found), "judgement": None}), Thresholds())
    undecided = row.by == "llm" or "close in meaning" in row.reason or "same anchors" in row.reason
    assert bool(asked) == undecided
    # and what it is asked about is at most the three best ambiguous candidates
    assert len(asked) <= 3


def test_verdicts_are_plain_values() -> None:
    # decide reads nothing and writes nothing: the same inputs give the same verdict
    row = ROWS["another value of the key is the next version"]
    first: Verdict = decide(row.new, row.found, Thresholds(), NOW)
    assert decide(row.new, row.found, Thresholds(), NOW) == first


# -- issue 33: shared memory is restated only to the letter ------------------------------------------------
# No table of value words is complete (its second probe found times, dates, units, negations and modals in
# other forms and languages read as restatements): an org memory's value restated in other words is a change.
WORDS = st.text(alphabet=st.characters(categories=("L", "N", "S")), min_size=1, max_size=8)
DEFINITION = st.lists(WORDS, min_size=3, max_size=10)


@given(words=DEFINITION, at=st.integers(min_value=0, max_value=9), other=WORDS)
def test_a_reworded_org_value_is_never_counted_as_its_restatement(
    words: list[str], at: int, other: str
) -> None:
    at %= len(words)
    assume(other.casefold() != words[at].casefold())
    said = term("KPI", " ".join(words))
    changed = term("KPI", " ".join([*words[:at], other, *words[at + 1 :]]))
    assume(kind_for(changed).text(changed) != kind_for(said).text(said))
    assume(not kind_for(said).junk(said) and not kind_for(changed).junk(changed))  # "< < <" says nothing
    shared = stored(said, 4, said_by=("bo",)).model_copy(update={"visibility": "org"})
    found = Candidates(by_key=[shared], lineage=[shared])
    # the tenant's correction is the next version, a user's a proposal: never a REINFORCE of the old value
    tenant = decide(
        new(changed, said_by="ana", visibility="org", authoritative=True), found, Thresholds(), NOW
    )
    user = decide(new(changed, said_by="ana", visibility="org"), found, Thresholds(), NOW)
    assert (tenant.decision, user.decision) == (Decision.UPDATE, Decision.PROPOSE)
    # the same words with other spacing and a closing full stop of a sentence (after a letter or digit:
    # "rm -rf ." is a path; a value of one word keeps its dot: "Bluebird7.") are a restatement
    again = term("KPI", "  ".join(words) + ("." if len(words) > 1 and words[-1][-1].isalnum() else ""))
    with contextlib.suppress(KindError):  # a definition of a bare "0." is refused as junk: nothing to decide
        assert decide(new(again, visibility="org"), found, Thresholds(), NOW).decision is Decision.REINFORCE


def test_a_private_memory_of_one_key_is_restated_only_to_the_letter() -> None:
    # issue 33's sixteenth probe: no table of value words reads every order, role, rate or tense ("the
    # landlord pays the water bill and we pay the electricity" / "we pay the water bill and the landlord
    # the electricity", "used to work"): a statement of the key in other words is its next version (the
    # old one kept as history: nothing lost), never a REINFORCE that drops it
    found = Candidates(by_key=[CITY])
    assert decide(new(fact("home city", "Lisbon!")), found, Thresholds(), NOW).decision is Decision.UPDATE
    # the same words with other spacing and a closing full stop of a sentence restate it
    spaced = fact("home city", "Lisbon  city centre.")
    held = Candidates(by_key=[stored(fact("home city", "Lisbon city centre"), 4)])
    assert decide(new(spaced), held, Thresholds(), NOW).decision is Decision.REINFORCE
    # a value of one word keeps its closing dot (a password "Bluebird7.": issue 33's eighteenth probe)
    assert decide(new(fact("home city", "Lisbon.")), found, Thresholds(), NOW).decision is Decision.UPDATE


def test_a_statement_backs_a_proposal_only_with_its_letter_case() -> None:
    # issue 33's third probe: bob proposed "5 MW", carol's "5 mW" made bob's text active
    shared = stored(term("GEN", "rated at 2 MW"), 4, said_by=("al",)).model_copy(update={"visibility": "org"})
    pending = stored(term("GEN", "rated at 5 MW"), 4, version=2, status="proposed", said_by=("bob",))
    found = Candidates(by_key=[shared], lineage=[shared, pending])
    carol = decide(
        new(term("GEN", "rated at 5 mW"), said_by="carol", visibility="org"), found, Thresholds(), NOW
    )
    assert (carol.decision, type(carol)) == (Decision.PROPOSE, Propose)
    dave = decide(
        new(term("GEN", "Rated at 5 MW."), said_by="dave", visibility="org"), found, Thresholds(), NOW
    )
    assert type(dave) is Promote  # the same letters back it: 2 users against 1


def test_a_statement_dated_in_the_future_does_not_outrank_later_ones() -> None:
    # Given an org term bob stated as observed in the year 9999 (a clock ahead, or a caller's claim)
    far = datetime(9999, 1, 1, tzinfo=UTC)
    bobs = stored(term("ETA", "estimated time of arrival"), 11, said_by=("bob",), at=far)
    # When the tenant corrects it now, it is the new version, not a value "stated earlier" kept as history
    tenant = new(term("ETA", "expected time of arrival"), visibility="org", authoritative=True)
    verdict = decide(tenant, Candidates(by_key=[bobs], lineage=[bobs]), Thresholds(), NOW)
    assert isinstance(verdict, NewVersion), verdict
    # and two other users' correction carries against bob's one statement
    pending = stored(
        term("ETA", "expected time of arrival"), 11, version=2, status="proposed", said_by=("cy",)
    )
    carols = new(term("ETA", "expected time of arrival"), said_by="carol", visibility="org")
    carried = decide(carols, Candidates(by_key=[bobs], lineage=[bobs, pending]), Thresholds(), NOW)
    assert isinstance(carried, Promote), carried
    # a statement's own time is never later than now
    assert new(term("ETA", "x"), at=far).observed(NOW) == NOW


def test_a_judging_model_never_counts_shared_memory_in_other_words_as_restated() -> None:
    # the letter rule holds on the model's path too: a shared memory the statement words otherwise is not
    # shown to the model, and a REINFORCE of it (a model's answer about a memory it was not shown) is an ADD
    shared = stored(fact("favourite dish", "ramen with extra chili"), 11, said_by=("bo",))
    shared = shared.model_copy(update={"visibility": "org"})
    reworded = new(fact("favourite dish", "Ramen with extra chili, please"), said_by="ana", visibility="org")
    assert to_judge(reworded, Candidates(by_meaning=[(0.85, shared)]), Thresholds()) == []
    found = Candidates(by_meaning=[(0.85, shared)], judgement=judged("REINFORCE", shared))
    verdict = decide(reworded, found, Thresholds(), NOW)
    assert (verdict.decision, type(verdict)) == (Decision.ADD, NewLineage)
    # the same words to the letter are still the model's to judge, and its REINFORCE stands
    same = new(fact("favourite dish", "ramen with extra chili"), said_by="ana", visibility="org")
    assert to_judge(same, Candidates(by_meaning=[(0.85, shared)]), Thresholds()) == [(0.85, shared)]
    found = Candidates(by_meaning=[(0.85, shared)], judgement=judged("REINFORCE", shared))
    assert decide(same, found, Thresholds(), NOW).decision is Decision.REINFORCE
