"""An episode's day written in another script's digits (issue 33's eleventh probe, finding 3): read by the
digits' values, so it is keyed (and stored) as the same day in ASCII digits."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from mongomem.kinds.episodic import day_of
from mongomem.models.common import DateText

DATE = TypeAdapter(DateText)
FULL_WIDTH = {ord("0") + i: chr(0xFF10 + i) for i in range(10)}
ARABIC_INDIC = {ord("0") + i: chr(0x0660 + i) for i in range(10)}


@pytest.mark.parametrize("written", ["2026", "2026-03", "2026-03-02", "20260302", "2026-03-02T10:00:00"])
@pytest.mark.parametrize("digits", [FULL_WIDTH, ARABIC_INDIC])
def test_a_day_in_other_digits_is_the_day_in_ascii_digits(written: str, digits: dict[int, str]) -> None:
    # Given a date written in full-width or Arabic-Indic digits
    other = written.translate(digits)
    # When it is validated and keyed
    stored = DATE.validate_python(other)
    # Then it is the ASCII date, and its key is the ASCII date's key
    assert stored == written
    assert day_of(other) == day_of(written)


def test_a_date_out_of_range_in_other_digits_is_still_refused() -> None:
    with pytest.raises(ValidationError):
        DATE.validate_python("2026-13".translate(FULL_WIDTH))
