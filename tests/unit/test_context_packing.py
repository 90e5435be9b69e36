"""The context block's packing and dates, as pure functions (retrieval/packing.py, retrieval/when.py)."""

from __future__ import annotations

from datetime import date
from typing import Any

from mongomem.retrieval.packing import Candidate, Tuning, estimate_tokens, pack, render
from mongomem.retrieval.when import resolve_relative


def turn(tid: str, value: float, words: int = 10, section: str = "recalled") -> Candidate:
    text = f"[8 May 2023 13:56] Ana: {'word ' * words}".strip()
    return Candidate(section, [tid], text, value, f"test {tid}", frozenset({tid}), thread="s1", order=(tid,))


def test_relative_dates_are_followed_by_the_day_they_meant() -> None:
    said = date(2023, 5, 8)
    assert resolve_relative("I went there yesterday!", said) == "I went there yesterday [7 May 2023]!"
    assert resolve_relative("We go camping next month.", said) == "We go camping next month [June 2023]."
    assert resolve_relative("I painted it last year", said) == "I painted it last year [2022]"
    assert resolve_relative("In 2022 I moved.", said) == "In 2022 I moved."  # says its year already
    assert resolve_relative("Nothing dated here.", said) == "Nothing dated here."


def test_the_best_candidates_fill_the_budget_and_a_larger_one_adds_the_next_best() -> None:
    candidates = [turn(f"s1:{i}", 1.0 / i, words=12) for i in range(1, 40)]
    small = pack([*candidates], 120, Tuning())
    large = pack([*candidates], 400, Tuning())
    for packed, budget in ((small, 120), (large, 400)):
        assert estimate_tokens(render(packed.sections)) <= budget
        assert estimate_tokens(render(packed.sections)) >= budget - 20  # spent, not a fixed handful

    def chosen(packed: Any) -> list[str]:
        return [c.ids[0] for c in packed.chosen]

    assert chosen(small) == [f"s1:{i}" for i in range(1, len(small.chosen) + 1)]  # best first
    assert set(chosen(small)) < set(chosen(large))


def test_a_turn_is_in_the_block_once_and_a_candidate_that_does_not_fit_is_skipped() -> None:
    long = turn("s1:1", 1.0, words=400)
    short = turn("s1:2", 0.5)
    again = turn("s1:2", 0.4, section="recent_turns")
    packed = pack([long, short, again], 100, Tuning())
    assert [c.ids[0] for c in packed.chosen] == ["s1:2"]
    assert packed.left_out["budget"] == 1 and packed.left_out["duplicate"] == 1


def test_a_pinned_working_memory_is_truncated_only_when_it_alone_overflows() -> None:
    notes = Candidate.first(
        "working_memory", "wm", "# Notes\n" + "- a long note about hotels\n" * 200, "pinned"
    )
    packed = pack([notes, turn("s1:1", 1.0)], 256, Tuning())
    assert packed.sections[0].truncated and estimate_tokens(render(packed.sections)) <= 256
    assert [c.ids[0] for c in packed.chosen] == ["wm"]
