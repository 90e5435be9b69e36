"""An episode's key reads its day in whichever ISO 8601 form it is written (issue 33's ninth probe, finding 5)."""

from __future__ import annotations

import pytest

from mongomem.kinds.episodic import Episodic

DRILL = {"title": "Dock fire drill", "summary": "the north dock was evacuated in 4 minutes"}


@pytest.mark.parametrize(
    "day", ["20260302", "2026-W10-1", "2026W101", "20260302T0930", "2026-03-02T09:30+01:00"]
)
def test_a_day_spelled_in_another_iso_form_keys_as_the_same_episode(day: str) -> None:
    episodic = Episodic()
    stored = episodic.key({**DRILL, "occurred_at": "2026-03-02"})
    assert episodic.key({**DRILL, "occurred_at": day}) == stored
    assert episodic.read_key({**DRILL, "occurred_at": day}) == episodic.read_key(
        {**DRILL, "occurred_at": "2026-03-02"}
    )


@pytest.mark.parametrize(
    ("written", "keyed"),
    [
        ("2026-03-02", "2026-03-02"),  # stored keys stay what they were
        ("2026-03-02T23:30-05:00", "2026-03-02"),  # the writer's day, never moved to UTC
        ("2026-03", "2026-03"),  # a month is no day
        ("2026", "2026"),
        ("2026-W10", "2026-W10"),  # nor a week, which Python would read as its Monday
        ("2026W10", "2026-W10"),
        ("", ""),
    ],
)
def test_what_is_no_day_keys_as_written(written: str, keyed: str) -> None:
    assert Episodic().key({**DRILL, "occurred_at": written}) == f"dock fire drill|{keyed}"


def test_another_day_is_another_episode() -> None:
    episodic = Episodic()
    assert episodic.key({**DRILL, "occurred_at": "20260303"}) != episodic.key(
        {**DRILL, "occurred_at": "2026-03-02"}
    )
