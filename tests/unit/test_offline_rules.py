"""The offline rules' shared families: dates, text, phrases, third person and the lexicon."""

from __future__ import annotations

from datetime import date

import pytest

from mongomem import dates
from mongomem.offline.rules import phrases, text, third_person, words

SUNDAY = date(2026, 11, 29)


# --- dates ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("phrase", "iso"),
    [
        ("today", "2026-11-29"),
        ("yesterday", "2026-11-28"),
        ("last night", "2026-11-28"),
        ("tomorrow", "2026-11-30"),
        ("the day before yesterday", "2026-11-27"),
        ("last Saturday", "2026-11-28"),
        ("last Sunday", "2026-11-22"),
        ("last Monday", "2026-11-23"),
        ("next Tuesday", "2026-12-01"),
        ("next Sunday", "2026-12-06"),
        ("last week", "2026-11-22"),
        ("3 days ago", "2026-11-26"),
        ("two days ago", "2026-11-27"),
        ("last month", "2026-10"),
        ("last year", "2025"),
        ("on May 3", "2026-05-03"),
        ("on 3rd of May 2024", "2024-05-03"),
        ("in 2022", "2022"),
        ("last weekend", "2026-11-21"),
        ("2026-01-15", "2026-01-15"),
        ("last Friday", "2026-11-27"),
        ("a couple of weeks ago", "2026-11-15"),
        ("last March", "2026-03"),
        ("in March", "2026-03"),
        ("on the 3rd", "2026-11-03"),
        ("on the 30th", "2026-10-30"),
        ("on February 29", "2024-02-29"),  # the latest 29 February before 2026-11-29
    ],
)
def test_relative_dates_resolve_against_the_day_said(phrase: str, iso: str) -> None:
    found = dates.find_dates(f"I did it {phrase}.", SUNDAY, past=True)
    assert [d.iso for d in found] == [iso]


@pytest.mark.parametrize(
    ("phrase", "iso", "precision"),
    [
        ("in two weeks", "2026-12-13", "approx"),
        ("next month", "2026-12", "month"),
        ("next year", "2027", "year"),
        ("next week", "2026-12-06", "approx"),
        ("in 3 days", "2026-12-02", "day"),
        ("the day after tomorrow", "2026-12-01", "day"),
        ("on Friday", "2026-12-04", "day"),  # nothing says past: the coming Friday
        ("on the 3rd", "2026-12-03", "day"),
        ("on December 24", "2026-12-24", "day"),
        ("in January", "2027-01", "month"),
    ],
)
def test_future_phrases_look_ahead(phrase: str, iso: str, precision: str) -> None:
    found = dates.find_dates(f"Remember the appointment {phrase}.", SUNDAY, past=False)
    assert [(d.iso, d.precision) for d in found] == [(iso, precision)]


def test_the_tense_of_the_sentence_decides_the_direction() -> None:
    assert [d.iso for d in dates.find_dates("We met on December 24.", SUNDAY)] == ["2025-12-24"]
    assert [d.iso for d in dates.find_dates("The party is on December 24.", SUNDAY)] == ["2026-12-24"]
    assert dates.tense("I went home.") is True and dates.tense("I go home.") is None


@pytest.mark.parametrize(
    "sentence",
    [
        "I live on the 3rd floor.",
        "It happened on February 30.",
        "We meet on the 31st.",  # November has no 31st, and the month is only guessed
        "She was 3 in May of no year.",
        "Room 2026-13-45 is free.",
    ],
)
def test_what_is_not_a_day_is_not_resolved(sentence: str) -> None:
    assert [d for d in dates.find_dates(sentence, date(2026, 11, 15)) if d.precision == "day"] == []


def test_the_day_of_month_alone_is_marked_as_a_guessed_month() -> None:
    (found,) = dates.find_dates("on the 3rd", SUNDAY)
    assert found.month_guessed and not dates.find_dates("on May 3", SUNDAY)[0].month_guessed


def test_dates_are_replaced_in_place_with_their_iso_form() -> None:
    said = "I met Sarah 3 days ago and flew home last week, on Friday, then in 2022 moved."
    found = dates.find_dates(said, SUNDAY, past=True)
    assert dates.replace_dates(said, found) == (
        "I met Sarah on 2026-11-26 and flew home around 2026-11-22, on 2026-11-27, then in 2022 moved."
    )
    assert dates.month_day_text("2026-11-30") == "November 30"


def test_calendar_edges_do_not_crash() -> None:
    assert dates.find_dates("yesterday, in 3 years", date(1, 1, 1)) == [
        dates.DateMention(11, 21, "0004", "year", "in 3 years")
    ]
    assert [d.iso for d in dates.find_dates("tomorrow", date(9999, 12, 31))] == []


# --- text -----------------------------------------------------------------------------------------


def test_cleaning_straightens_quotes_and_drops_control_characters() -> None:
    assert text.clean_text("I\u2019m **Ana**\u00a0\u2014 \u201chi\u201d\x07\n") == 'I\'m Ana  -  "hi"\n'


def test_sentences_split_on_ends_and_lines_but_not_on_abbreviations() -> None:
    said = "I met Dr. Silva e.g. at work. Did you? Yes!\nDone"
    assert text.split_sentences(said) == ["I met Dr. Silva e.g. at work.", "Did you?", "Yes!", "Done"]
    assert text.statements(said) == ["I met Dr. Silva e.g. at work.", "Yes!", "Done"]


def test_hedges_and_clipping() -> None:
    assert text.hedged("If ") and text.hedged("My friend says ") and not text.hedged("As I said, ")
    assert text.clip("one  two\nthree four", 12) == "one two\u2026"
    assert text.strip_punct(' "(Lisbon)!" ') == "Lisbon"


# --- phrases --------------------------------------------------------------------------------------


def test_names_places_and_noun_phrases() -> None:
    assert phrases.take_name("Ana Costa, and I live here") == "Ana Costa"
    assert phrases.take_name("Monday morning") is None  # a weekday is not a name
    assert phrases.take_name("BOSS") is None  # shouted words are not names
    assert phrases.take_name("Ana is here", strict_end=True) is None
    assert phrases.take_proper("the University of Porto since 2020") == "the University of Porto"
    assert phrases.take_proper("Lisbon, Portugal") == "Lisbon, Portugal"
    assert phrases.take_phrase("sushi because it is fresh") == "sushi"
    assert phrases.take_phrase("the second option") is None
    assert phrases.split_list("hiking, cycling and chess", split_and=False) == ["hiking", "cycling", "chess"]
    assert phrases.split_list("fish and chips", split_and=False) == ["fish and chips"]
    assert phrases.acronym_of("service level agreement") == "SLA" and phrases.is_acronym("SLAs")


# --- third person ---------------------------------------------------------------------------------


def test_first_person_statements_are_retold_about_the_subject() -> None:
    assert third_person.third_person("I just finished my thesis", "Ana") == "Ana just finished their thesis"
    assert third_person.third_person("I'm moving and I have a cat", "user") == (
        "The user is moving and the user has a cat"
    )
    assert third_person.third_person("We went home", "Ana") is None  # "we" is not only the user
    assert third_person.who("user") == "The user" and third_person.who("Ana") == "Ana"


# --- words ----------------------------------------------------------------------------------------


def test_the_lexicon_takes_calendar_names_from_dateutil() -> None:
    assert {"may", "sept", "september", "dec"} <= words.MONTH_WORDS
    assert "sunday" in words.WEEKDAY_WORDS and "sun" not in words.WEEKDAY_WORDS
    assert {"may", "sunday", "italian", "the"} <= words.NOT_NAMES
    assert words.RELATIONS["mum"] == ("mother", "mother name") and words.RELATIONS["kitten"] == (
        "cat",
        "pets",
    )
    assert words.DIETS["gluten free"] == "gluten-free" and words.NUMBER_WORDS["a couple of"] == 2
