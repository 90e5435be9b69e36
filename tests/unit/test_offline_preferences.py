"""The offline rules' preferences: what `make dev` extracts without a model."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mongomem.extraction.proposal import TurnView
from mongomem.kinds import builtin_registry
from mongomem.offline.rules import OfflineProposer

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def propose(*turns: tuple[str, str]) -> list[tuple[str, str, str, str]]:
    views = [TurnView(i, role, text, NOW, None) for i, (role, text) in enumerate(turns, 1)]
    items = OfflineProposer().propose("preference", views, "u")
    kind = builtin_registry()["preference"]
    for item in items:
        kind.validate(item)  # every proposal is a valid preference memory
    return [(i["category"], i["preference"], i["polarity"], i["strength"]) for i in items]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I prefer window seats.", [("travel", "window seats", "positive", "moderate")]),
        ("I like jazz", [("music", "jazz", "positive", "mild")]),
        (
            "I love sushi and I hate early flights.",
            [
                ("food", "sushi", "positive", "strong"),
                ("travel", "early flights", "negative", "strong"),
            ],
        ),
        ("I really don't like spicy food", [("food", "spicy food", "negative", "moderate")]),
        (
            "Please answer in Portuguese.",
            [("answer language", "answers in Portuguese", "positive", "strong")],
        ),
        (
            "From now on reply to me in German",
            [("answer language", "answers in German", "positive", "strong")],
        ),
        ("Keep your answers short, please", [("answer style", "short answers", "positive", "moderate")]),
        ("I prefer aisle seats over window seats", [("travel", "aisle seats", "positive", "moderate")]),
    ],
)
def test_stated_preferences(text: str, expected: list[tuple[str, str, str, str]]) -> None:
    assert propose(("user", text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Do you like window seats?",  # a question
        "If I liked jazz I would go.",  # hypothetical
        "My sister said I love sushi.",  # reported
        "I like to think it over.",  # an infinitive, not a liked thing
        "Hello!",
    ],
)
def test_no_false_preferences(text: str) -> None:
    assert propose(("user", text)) == []


def test_only_the_users_own_words_count_and_the_latest_statement_wins() -> None:
    got = propose(
        ("assistant", "I love helping with travel plans."),
        ("user", "I like window seats."),
        ("user", "Actually I love window seats."),
    )
    assert got == [("travel", "window seats", "positive", "strong")]
