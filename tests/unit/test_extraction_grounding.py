"""Grounded or refused: an extracted item is kept only when the turns it cites state it, about the right
person (mongomem.extraction.grounding, applied by mongomem.extraction.guards.screen)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from mongomem.extraction import guards
from mongomem.extraction.grounding import Conversation, anchors, check
from mongomem.extraction.proposal import TurnView
from mongomem.kinds import builtin_registry

WHEN = datetime(2023, 1, 20, 16, 4, tzinfo=UTC)
TURNS = [
    TurnView(1, "user", "I moved to Lisbon, my home airport is LIS now.", WHEN, "Ana"),
    TurnView(
        2, "assistant", "Sorry about your job! I also lost my job at Door Dash this month.", WHEN, "Gina"
    ),
    TurnView(3, "user", "I used to compete in dance shows and won first place at fifteen.", WHEN, "Ana"),
    TurnView(4, "assistant", "Which dance style do you like best?", WHEN, "Gina"),
    TurnView(5, "user", "Contemporary, for sure.", WHEN, "Ana"),
    TurnView(6, "user", "Last Friday I flew to Berlin for a conference with Maria.", WHEN, "Ana"),
]
KINDS = builtin_registry()


def verdict(kind: str, item: dict[str, Any]) -> str | None:
    return check(KINDS[kind], item, Conversation(TURNS, ["ana"]))


def fact(seqs: list[int], value: str, subject: str = "user", attribute: str = "x") -> dict[str, Any]:
    return {"evidence_seqs": seqs, "subject": subject, "attribute": attribute, "value": value}


@pytest.mark.parametrize(
    ("kind", "item", "expected"),
    [
        # stated in the cited turn: kept
        ("semantic", fact([1], "LIS", attribute="home airport"), None),
        ("semantic", fact([1], "Lisbon", attribute="home city"), None),
        # a number spelled out in the turn grounds its digits
        ("semantic", fact([3], "won first place in a dance competition at 15", attribute="dance"), None),
        # an answer completes the question before it
        ("semantic", fact([5], "contemporary dance", attribute="favourite dance style"), None),
        # the other speaker's own fact, under their name: kept
        ("semantic", fact([2], "lost job at Door Dash", subject="Gina", attribute="job"), None),
        # a name said, written possessive in the value ("Maria's"): the same name
        ("semantic", fact([6], "Maria's conference in Berlin", attribute="last trip"), None),
        # a name nobody said: invented (the example airport of a model that had no airport to name)
        ("semantic", fact([1], "Los Angeles", attribute="home airport"), "invented"),
        ("semantic", fact([1], "Los Angeles International Airport", attribute="home airport"), "ungrounded"),
        # a value the cited turn does not say
        ("semantic", fact([1], "pizza", attribute="favourite food"), "ungrounded"),
        ("semantic", fact([3], "speaks Spanish fluently", attribute="language"), "invented"),
        # the friend's job loss credited to the user
        ("semantic", fact([2], "lost job at Door Dash", attribute="job"), "wrong_subject"),
        # no citation, or one of a turn the snapshot does not hold
        ("semantic", fact([], "LIS", attribute="home airport"), "no_evidence"),
        ("semantic", fact([99], "LIS", attribute="home airport"), "no_evidence"),
        # episodes: the place and the people must be said somewhere
        (
            "episodic",
            {
                "evidence_seqs": [6],
                "title": "Conference trip",
                "summary": "Flew to Berlin for a conference",
                "participants": ["Maria"],
                "place": "Berlin",
                "occurred_at": "2023-01-13",
            },
            None,
        ),
        (
            "episodic",
            {
                "evidence_seqs": [6],
                "title": "Conference trip",
                "summary": "Flew to Berlin for a conference",
                "place": "Munich Airport",
            },
            "invented",
        ),
        (
            "episodic",
            {"evidence_seqs": [2], "title": "Job loss", "summary": "Ana lost her job at Door Dash"},
            "wrong_subject",
        ),
        # and the other way round: the user's own trip credited to the friend they told it to
        (
            "episodic",
            {"evidence_seqs": [6], "title": "Gina's trip", "summary": "Gina flew to Berlin for a conference"},
            "wrong_subject",
        ),
        (
            "semantic",
            fact([3], "won first place in dance shows", subject="Gina", attribute="awards"),
            "wrong_subject",
        ),
        # what the friend says of themselves stays theirs, by their name
        (
            "episodic",
            {"evidence_seqs": [2], "title": "Job loss", "summary": "Gina lost her job at Door Dash"},
            None,
        ),
        (
            "preference",
            {"evidence_seqs": [5], "category": "dance", "preference": "contemporary dance"},
            None,
        ),
        (
            "preference",
            {"evidence_seqs": [5], "category": "food", "preference": "window seats"},
            "ungrounded",
        ),
    ],
)
def test_an_item_is_kept_only_when_its_cited_turns_state_it(
    kind: str, item: dict[str, Any], expected: str | None
) -> None:
    assert verdict(kind, item) == expected


def test_anchors_are_names_and_numbers_not_a_sentence_start_or_a_resolved_date() -> None:
    assert anchors("Flew to Berlin on 2023-01-13 with Maria, 2 hours late") == {"berlin", "maria", "2"}
    assert anchors("LIS") == {"lis"}
    assert anchors("Weekend Trip To The Lake House") == set()  # a Title Cased title: no names by case


def test_the_screen_counts_each_refusal_by_its_reason() -> None:
    items = [
        fact([1], "LIS", attribute="home airport"),
        fact([1], "Los Angeles", attribute="home airport"),
        fact([2], "lost job at Door Dash", attribute="job"),
        fact([], "Lisbon", attribute="home city"),
    ]
    screened = guards.screen(KINDS["semantic"], items, TURNS, "ana", org=False)
    assert screened.items == items[:1]
    assert dict(screened.refused) == {"invented": 1, "wrong_subject": 1, "no_evidence": 1}


def test_a_model_citing_every_turn_gets_the_turn_that_states_the_item() -> None:
    every = [t.seq for t in TURNS]
    airport = fact(every, "LIS", attribute="home airport")
    friends_job = fact(every, "lost job at Door Dash", attribute="job")

    assert verdict("semantic", airport) is None
    assert 1 in airport["evidence_seqs"] and len(airport["evidence_seqs"]) <= 3  # narrowed to its turns
    assert verdict("semantic", friends_job) == "wrong_subject"  # said by the friend, whatever was cited


def test_a_number_written_inside_a_word_grounds_the_same_number_in_a_value() -> None:
    # a summary copying the turn's "1h52" is stated by it; a time the turn does not give is invented
    turns = [TurnView(1, "user", "I ran the Porto half marathon in 1h52, a personal best.", WHEN, "Ana")]
    said = {"evidence_seqs": [1], "title": "Half marathon", "summary": "Ran the Porto half marathon in 1h52"}
    made = {"evidence_seqs": [1], "title": "Half marathon", "summary": "Ran the Porto half marathon in 1h47"}
    assert check(KINDS["episodic"], said, Conversation(turns, ["ana"])) is None
    assert check(KINDS["episodic"], made, Conversation(turns, ["ana"])) == "invented"


def test_a_category_the_instructions_offer_is_a_label_to_pick_not_an_example_copy() -> None:
    # the preference instructions say "a category such as travel, food ...": a seat preference filed
    # under travel is kept though no turn says "travel"; a domain copied from an example is still refused
    turns = [TurnView(1, "user", "I prefer window seats.", WHEN, "Ana")]
    seats = {"evidence_seqs": [1], "category": "travel", "preference": "window seats"}
    kept = guards.screen(KINDS["preference"], [seats], turns, "ana", org=False)
    assert kept.items == [seats] and not kept.refused
    said = [TurnView(1, "user", "MTTR means mean time to recovery.", WHEN, "Ana")]
    term = {"evidence_seqs": [1], "term": "MTTR", "definition": "mean time to recovery", "domain": "aviation"}
    assert guards.screen(KINDS["taxonomic"], [term], said, "ana", org=True).refused == {"example_copy": 1}


def test_a_code_of_letters_and_digits_is_one_name_said_as_the_turn_writes_it() -> None:
    # a term such as "QA1B2C3" or "A320" copied from the turn is said there, not a run of letters and
    # digits no turn says alone; a code the turns do not give is invented
    turns = [TurnView(1, "user", "QA1B2C3 means quarterly review of the budget, at 3 pm.", WHEN, "Ana")]
    said = {"evidence_seqs": [1], "term": "QA1B2C3", "definition": "quarterly review of the budget at 3pm"}
    made = {"evidence_seqs": [1], "term": "QA1B2C4", "definition": "quarterly review of the budget"}
    assert check(KINDS["taxonomic"], said, Conversation(turns, ["ana"])) is None
    assert check(KINDS["taxonomic"], made, Conversation(turns, ["ana"])) == "invented"


def test_what_the_user_confirms_when_asked_is_theirs_and_an_unconfirmed_claim_is_not() -> None:
    # "Your home airport is LIS now?" - "Yes": the user states it, cited by their confirming turn
    asked = [
        TurnView(1, "assistant", "Just to confirm, your home airport is LIS now?", WHEN, "Bot"),
        TurnView(2, "user", "Yes, that's right.", WHEN, "Ana"),
        TurnView(3, "assistant", "Your seat is 12A.", WHEN, "Bot"),
        TurnView(4, "user", "What time is my flight?", WHEN, "Ana"),
    ]
    conversation = Conversation(asked, ["ana"])
    confirmed = fact([2], "LIS", attribute="home airport")
    assert check(KINDS["semantic"], confirmed, conversation) is None and confirmed["evidence_seqs"] == [2]
    unconfirmed = fact([4], "12A", attribute="seat")
    assert check(KINDS["semantic"], unconfirmed, conversation) == "wrong_subject"


def test_a_definition_that_only_repeats_its_term_is_not_grounded() -> None:
    # Given a turn that uses a phrase of general knowledge, defining nothing
    turns = [
        TurnView(1, "user", "I went to a LGBTQ support group yesterday and it was so powerful.", WHEN, "Ana")
    ]
    conversation = Conversation(turns, ["ana"])
    # Then a "definition" made of the term's own words and one the model added is refused: the turn
    # states the term, not what it means
    echo = {
        "term": "LGBTQ support group",
        "definition": "A support group for LGBTQ individuals",
        "evidence_seqs": [1],
    }
    assert check(KINDS["taxonomic"], echo, conversation) == "ungrounded"
    # And a term the turn defines keeps its definition
    said = [
        TurnView(1, "user", "At work an SRG is a support review group that meets on Fridays.", WHEN, "Ana")
    ]
    defined = {
        "term": "SRG",
        "definition": "support review group that meets on Fridays",
        "evidence_seqs": [1],
    }
    assert check(KINDS["taxonomic"], defined, Conversation(said, ["ana"])) is None


def test_a_name_the_turns_never_say_is_invented_in_a_sentence_that_opens_capitalised() -> None:
    # the contract's 1.5B model: "LIS: The airport in Lisbon, Portugal." (no turn says Portugal); the
    # sentence's capitalised first word made it read as a title, whose capitals are no names
    turns = [TurnView(1, "user", "I moved to Lisbon, so my home airport is LIS now.", WHEN, "Ana")]
    gloss = {"term": "LIS", "definition": "The airport in Lisbon, Portugal.", "evidence_seqs": [1]}
    assert check(KINDS["taxonomic"], gloss, Conversation(turns, ["ana"])) == "invented"
    said = {"term": "LIS", "definition": "The home airport, in Lisbon.", "evidence_seqs": [1]}
    assert check(KINDS["taxonomic"], said, Conversation(turns, ["ana"])) is None


CHAT = [
    TurnView(
        1, "assistant", "I just signed up for a pottery class yesterday. It's like therapy.", WHEN, "Mel"
    ),
    TurnView(
        2,
        "user",
        "Wow! I'm getting creative too, learning the piano. What made you try pottery?",
        WHEN,
        "Ana",
    ),
]
STEPS = "To rotate the API keys, first open the vault console, then revoke the old key, and finally restart."


def procedure(name: str, steps: list[str]) -> dict[str, Any]:
    return {"evidence_seqs": [3], "name": name, "when_to_use": name, "steps": steps}


@pytest.mark.parametrize(
    ("said", "item", "expected"),
    [
        # a chat about a class: the model's steps are its own, no turn gives them
        (
            "Pottery is so relaxing, I love it.",
            procedure("Pottery Class", ["Go to a pottery class", "Learn the basics of pottery"]),
            "no_steps",
        ),
        # an idiom ("To be honest, ...") and one "then" are a story, not steps
        (
            "To be honest, I loved the pottery class. Then I made a bowl.",
            procedure("Pottery class", ["Go to the pottery class", "Made a bowl at the class"]),
            "no_steps",
        ),
        # steps in sequence ("first ... then ... finally"), or a numbered list: kept
        (
            STEPS,
            procedure("Rotate the API keys", ["Open the vault console", "Revoke the old key", "Restart"]),
            None,
        ),
        (
            "Deploys:\n1. run the tests\n2. tag the release\n3. push the tag",
            procedure("Deploy", ["Run the tests", "Tag the release", "Push the tag"]),
            None,
        ),
        # "by doing X, then Y": kept
        (
            "I deploy by running the tests and then tagging the release.",
            procedure("Deploy", ["Run the tests", "Tag the release"]),
            None,
        ),
        # an instruction told in the first person ("To X, I do Y"): kept
        (
            "To file an expense, I export the receipt as PDF and upload it to Concur.",
            procedure("File an expense", ["Export the receipt as PDF", "Upload it to Concur"]),
            None,
        ),
    ],
)
def test_a_procedure_is_kept_only_where_a_turn_gives_its_steps(
    said: str, item: dict[str, Any], expected: str | None
) -> None:
    turns = [*CHAT, TurnView(3, "user", said, WHEN, "Ana")]
    assert check(KINDS["procedural"], item, Conversation(turns, ["ana"])) == expected


@pytest.mark.parametrize(
    ("said", "term", "expected"),
    [
        # a word the chat used, glossed from what the model knows: no turn defines it
        ("I post my dance videos on TikTok every week.", "TikTok", "not_defined"),
        (
            "Last weekend I joined a mentorship program for LGBTQ youth - it's rewarding.",
            "LGBTQ youth",
            "not_defined",
        ),
        # defined by a turn: "X means ...", "... (X)", "called X", "my home airport is X"
        ("In our team PIR means post-incident review, held after an outage.", "PIR", None),
        ("We hold a post-incident review (PIR) after an outage.", "PIR", None),
    ],
)
def test_a_term_is_kept_only_where_a_turn_defines_it(said: str, term: str, expected: str | None) -> None:
    turns = [*CHAT, TurnView(3, "user", said, WHEN, "Ana")]
    words = said.rstrip(".").split()
    item = {"evidence_seqs": [3], "term": term, "definition": " ".join(words[-4:])}
    assert check(KINDS["taxonomic"], item, Conversation(turns, ["ana"])) == expected


def test_a_list_value_keeps_only_the_elements_its_cited_turns_say() -> None:
    # a model lists the hobbies it saw elsewhere (or none) beside what the cited turn says
    turns = [
        TurnView(1, "assistant", "What kind of work are you thinking of?", WHEN, "Gina"),
        TurnView(2, "user", "I'm keen on counseling or working in mental health.", WHEN, "Ana"),
    ]
    listed = fact([2], "counseling, mental health, art, self-expression", attribute="interests")
    assert check(KINDS["semantic"], listed, Conversation(turns, ["ana"])) is None
    assert listed["value"] == "counseling, mental health"
    # every element said: the value stays as written; none said: refused whole
    said = fact([2], "counseling, mental health", attribute="interests")
    assert check(KINDS["semantic"], said, Conversation(turns, ["ana"])) is None
    assert said["value"] == "counseling, mental health"
    unsaid = fact([2], "art, photography", attribute="interests")
    assert check(KINDS["semantic"], unsaid, Conversation(turns, ["ana"])) == "ungrounded"
