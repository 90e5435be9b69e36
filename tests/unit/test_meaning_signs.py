"""A sign spelled out before a number (issue 33's eleventh probe, finding 7): "minus 18" is -18, so dropping or
flipping it is a new value, never a restatement; "plus 18" is 18 and "-18" is "minus 18"."""

from __future__ import annotations

import pytest

from mongomem.kinds.meaning import anchors, hard_anchors, same_value


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("the freezer runs at minus 18 degrees", "the freezer runs at 18 degrees"),
        ("the freezer runs at minus 18 degrees", "the freezer runs at plus 18 degrees"),
        ("the balance is negative 200 dollars", "the balance is 200 dollars"),
        ("the balance is Negative 200 dollars", "the balance is positive 200 dollars"),
    ],
)
def test_a_sign_in_words_changed_is_no_restatement(old: str, new: str) -> None:
    # Given a value with a sign in words, When the sign is dropped or flipped, Then the anchors differ
    assert anchors(old) != anchors(new)
    assert hard_anchors(old) != hard_anchors(new)
    assert not same_value(old, new)


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("the freezer runs at minus 18 degrees", "the freezer runs at -18 degrees"),
        ("the freezer runs at plus 18 degrees", "the freezer runs at 18 degrees"),
        ("the balance is negative 200 dollars", "the balance is minus 200 dollars"),
    ],
)
def test_a_sign_in_words_is_the_sign_as_a_symbol(said: str, written: str) -> None:
    assert anchors(said) == anchors(written)


def test_a_difference_is_no_sign() -> None:
    # "5 minus 3": the word follows a number, so 3 keeps no sign
    assert "-3" not in anchors("we keep 5 minus 3 pallets")
