"""The matching rule of bench/extraction_quality.py (bench/extraction_match.py), database-free.

What a user of the bench reads off its figures rests on this rule: a memory is right when it states what
the conversation says about the right person, made up when its value is said nowhere, misattributed
when only the other speaker said it. The hand-checked pairs of bench/data/extraction_handcheck.jsonl are
replayed: a change to the rule that flips one of their verdicts shows here (and the agreement with the
hand verdicts, documented in docs/benchmarks.md, must be measured again).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench import extraction_match as rule
from bench.extraction_match import Conversation, Memory, Source

ROOT = Path(__file__).resolve().parents[2]
HANDCHECK = ROOT / "bench" / "data" / "extraction_handcheck.jsonl"
SPEAKERS = ("Ines", "Marco")

CONV: dict[str, Any] = {
    "speaker_a": "Ines",
    "speaker_b": "Marco",
    "session_1_date_time": "2:15 pm on 3 March, 2024",
    "session_1": [
        {"speaker": "Ines", "dia_id": "D1:1", "text": "I finally moved to Porto last week, near the river."},
        {
            "speaker": "Marco",
            "dia_id": "D1:2",
            "text": "I adopted a greyhound in February, her name is Luna.",
        },
        {
            "speaker": "Ines",
            "dia_id": "D1:3",
            "text": "I run three times a week now, 5 kilometres each time.",
        },
    ],
    "session_1_observation": {
        "Ines": [
            ["Ines moved to Porto the week before; her flat is near the river.", "D1:1"],
            ["Ines runs three times a week, 5 kilometres each time.", "D1:3"],
        ],
        "Marco": [["Marco adopted a greyhound named Luna in February.", "D1:2"]],
    },
    "session_1_summary": "Ines moved to Porto. Marco adopted Luna, a greyhound.",
}


def semantic(attribute: str, value: str, subject: str = "user") -> Memory:
    return Memory("semantic", {"subject": subject, "attribute": attribute, "value": value}, "")


def episode(title: str, summary: str, participants: list[str]) -> Memory:
    return Memory("episodic", {"title": title, "summary": summary, "participants": participants}, "")


def observation(text: str, speaker: str) -> Source:
    return Source("observation", text, frozenset({speaker}), 1, "D1:1")


def test_words_are_stemmed_and_stop_words_names_and_dates_left_out() -> None:
    said = rule.words("Yesterday Ines went to the LGBTQ support groups on 2023-05-07.", frozenset({"ines"}))
    assert said.content == {"lgbtq", "support", "group"}
    assert said.anchors == {"lgbtq"}  # a word of capitals is a proper noun; the date is no anchor
    assert rule.stem("painting") == rule.stem("paint") and rule.stem("kids") == "kid"
    assert rule.tokens("I won't, he can't") == ["will", "not", "he", "can", "not"]


def test_a_paraphrase_about_the_user_states_the_observation() -> None:
    memory = episode("Moved to Porto", "Ines moved to Porto, near the river.", ["Ines"])
    verdict = rule.pair_verdict(memory, observation("Ines moved to Porto the week before.", "Ines"), SPEAKERS)
    assert verdict.verdict == "states"


def test_the_other_speakers_fact_credited_to_the_user_is_the_wrong_person() -> None:
    memory = semantic("adopted dog", "a greyhound named Luna")  # subject user: Ines, but Marco said it
    source = observation("Marco adopted a greyhound named Luna in February.", "Marco")
    assert rule.pair_verdict(memory, source, SPEAKERS).verdict == "wrong_person"
    assert rule.pair_verdict(
        semantic("adopted dog", "a greyhound named Luna", "Marco"), source, SPEAKERS
    ).verdict == ("states")


def test_a_number_or_name_the_source_does_not_say_is_no_match() -> None:
    source = observation("Ines runs three times a week, 5 kilometres each time.", "Ines")
    assert rule.pair_verdict(
        semantic("running", "5 kilometres three times a week"), source, SPEAKERS
    ).verdict == ("states")
    assert (
        rule.pair_verdict(semantic("running", "8 kilometres three times a week"), source, SPEAKERS).verdict
        == "no"
    )
    assert (
        rule.pair_verdict(semantic("running", "three times a week in Lisbon"), source, SPEAKERS).verdict
        == "no"
    )


def test_shared_topic_words_without_the_memorys_head_are_no_match() -> None:
    memory = episode(
        "Passed the adoption agency interviews", "Ines passed the adoption agency interviews.", []
    )
    source = observation("Ines is researching adoption agencies for her family.", "Ines")
    assert rule.pair_verdict(memory, source, SPEAKERS).verdict == "no"


def test_recall_needs_two_shared_words_precision_takes_a_short_fact_whole() -> None:
    memory = semantic("home city", "Porto")
    source = observation("Ines moved to Porto the week before.", "Ines")
    assert rule.pair_verdict(memory, source, SPEAKERS).verdict == "states"
    assert rule.pair_verdict(memory, source, SPEAKERS, recall=True).verdict == "no"


def test_persons_of_memories() -> None:
    assert semantic("home city", "Porto").persons(SPEAKERS) == frozenset({"Ines"})
    assert semantic("pet", "Luna", "Marco's dog").persons(SPEAKERS) == frozenset({"Marco"})
    assert semantic("opening hours", "9-17", "the museum").persons(SPEAKERS) is None
    assert episode("Run", "A run along the beach", ["user", "Marco"]).persons(SPEAKERS) == frozenset(
        {"Ines", "Marco"}
    )
    assert episode("Run", "Mar ran along the beach", []).persons(SPEAKERS) == frozenset(
        {"Marco"}
    )  # a short form
    assert episode("Run", "A run along the beach", []).persons(SPEAKERS) == frozenset(
        {"Ines"}
    )  # the user's memory
    assert (
        Memory("taxonomic", {"term": "MTTR", "definition": "mean time"}, "", org=True).persons(SPEAKERS)
        is None
    )


def test_each_memory_gets_one_verdict() -> None:
    conv = Conversation.from_locomo(CONV, sessions=1)
    assert conv.judge(semantic("home city", "Porto")).verdict == "right"
    assert conv.judge(semantic("dog", "a greyhound named Luna")).verdict == "wrong_subject"
    assert conv.judge(semantic("home airport", "Los Angeles International Airport")).verdict == "invented"
    assert conv.judge(semantic("favourite food", "pizza")).verdict == "invented"  # no turn says it
    # said, but no single thing said holds the fact
    assert conv.judge(semantic("running", "near the river three times a week")).verdict == "unsupported"


def test_org_items_are_right_only_when_stated_and_not_a_persons_own_phrase() -> None:
    conv = Conversation.from_locomo(CONV, sessions=1)
    personal = Memory("taxonomic", {"term": "Porto", "definition": "I finally moved to Porto"}, "", org=True)
    assert conv.judge(personal).verdict == "right" and conv.judge(personal).org_right is False
    term = Memory("taxonomic", {"term": "kilometres", "definition": "5 kilometres each time"}, "", org=True)
    assert conv.judge(term).org_right is True


def test_figures_count_recall_per_speaker_and_precision_per_kind() -> None:
    conv = Conversation.from_locomo(CONV, sessions=1)
    memories = [
        episode("Moved to Porto", "Ines moved to Porto near the river.", ["Ines"]),
        semantic("dog", "a greyhound named Luna"),  # Marco's: wrong subject, recalls nothing
        semantic("dog", "a greyhound named Luna", "Marco"),
    ]
    judged = [conv.judge(m, "c") for m in memories]
    figures = rule.figures(judged, {"c": conv}, ["semantic", "episodic"])
    assert figures["observations"] == 2 and figures["observations_other_speaker"] == 1
    assert figures["recall"] == 0.5 and figures["recall_other_speaker"] == 1.0
    assert figures["precision"] == round(2 / 3, 3) and figures["wrong_subject_rate"] == round(1 / 3, 3)
    assert figures["per_kind"]["episodic"]["recall"] == 0.5 and figures["per_kind"]["semantic"]["recall"] == 0
    assert figures["per_kind"]["semantic"]["precision"] == 0.5


def handchecked() -> list[dict[str, Any]]:
    return [json.loads(line) for line in HANDCHECK.read_text().splitlines() if line.strip()]


def test_the_handcheck_has_at_least_50_pairs_of_several_kinds_judged_both_ways() -> None:
    pairs = handchecked()
    assert len(pairs) >= 50
    assert len({p["memory"]["kind"] for p in pairs}) >= 3
    assert {p["rule"] for p in pairs} >= {"states", "no"} and {p["hand"] for p in pairs} >= {"states", "no"}


@pytest.mark.parametrize("pair", handchecked(), ids=lambda p: f"{p['id']}-{p['rule']}")
def test_the_rule_reproduces_its_recorded_verdict(pair: dict[str, Any]) -> None:
    assert rule.replay(pair) == pair["rule"]
