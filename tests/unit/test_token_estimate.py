"""One token estimate (mongomem.tokens): the record path's `max_tokens` rule and the context block's budget
count the same text alike."""

from __future__ import annotations

import pytest

from mongomem.models.turns import TurnIn
from mongomem.retrieval.block import items
from mongomem.shortterm import record
from mongomem.tokens import CHARS_PER_TOKEN, estimate_tokens


@pytest.mark.parametrize(
    "text", ["hi", "x" * 3, "x" * 4, "a sentence of some forty characters ...", "é" * 401]
)
def test_a_turn_and_a_block_count_the_same_text_alike(text: str) -> None:
    assert record.estimate_tokens(TurnIn(role="user", content=text)) == estimate_tokens(text)
    assert items.estimate_tokens(text) == estimate_tokens(text)


def test_the_estimate_grows_one_token_every_four_characters() -> None:
    assert CHARS_PER_TOKEN == 4
    assert [estimate_tokens("x" * n) for n in (0, 3, 4, 7, 8, 400)] == [1, 1, 2, 2, 3, 101]
