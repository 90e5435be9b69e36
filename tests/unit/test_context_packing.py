"""The context block's packing and dates, as pure functions (retrieval/block/pack.py, retrieval/when.py)."""

from __future__ import annotations

from datetime import date
from typing import Any

from mongomem.retrieval.block.items import Candidate, Tuning, estimate_tokens
from mongomem.retrieval.block.pack import Section, pack
from mongomem.retrieval.block.render import block, measure
from mongomem.retrieval.when import resolve_relative


def sections() -> list[Section]:
    return [
        Section("working_memory", "## Working memory", "pinned"),
        Section("recent_turns", "## Recent messages in this session", "timeline"),
        Section("recalled", "## Earlier messages that may be relevant", "threads"),
    ]


def turn(tid: str, value: float, words: int = 10, slot: int = 2, priority: int = 1) -> Candidate:
    text = f"[8 May 2023 13:56] Ana: {'word ' * words}".strip()
    return Candidate(
        sections()[slot].name,
        [tid],
        text,
        value,
        f"test {tid}",
        frozenset({tid}),
        thread="s1",
        order=(tid,),
        slot=slot,
        priority=priority,
    )


def packed(candidates: list[Candidate], budget: int) -> Any:
    return pack(candidates, budget, sections(), Tuning(), measure("text"))


def test_relative_dates_are_followed_by_the_day_they_meant() -> None:
    said = date(2023, 5, 8)
    assert resolve_relative("I went there yesterday!", said) == "I went there yesterday [7 May 2023]!"
    assert resolve_relative("We go camping next month.", said) == "We go camping next month [June 2023]."
    assert resolve_relative("I painted it last year", said) == "I painted it last year [2022]"
    assert resolve_relative("In 2022 I moved.", said) == "In 2022 I moved."  # says its year already
    assert resolve_relative("Nothing dated here.", said) == "Nothing dated here."


def test_the_best_candidates_fill_the_budget_and_a_larger_one_adds_the_next_best() -> None:
    candidates = [turn(f"s1:{i}", 1.0 / i, words=12) for i in range(1, 40)]
    small = packed([*candidates], 120)
    large = packed([*candidates], 400)
    for result, budget in ((small, 120), (large, 400)):
        assert estimate_tokens(block(result.sections, "text")) <= budget
        assert estimate_tokens(block(result.sections, "text")) >= budget - 20  # spent, not a fixed handful

    def chosen(result: Any) -> list[str]:
        return [c.ids[0] for c in result.chosen]

    assert chosen(small) == [f"s1:{i}" for i in range(1, len(small.chosen) + 1)]  # best first
    assert set(chosen(small)) < set(chosen(large))


def test_a_turn_is_in_the_block_once_and_a_candidate_that_does_not_fit_is_skipped() -> None:
    long = turn("s1:1", 1.0, words=400)
    short = turn("s1:2", 0.5)
    again = turn("s1:2", 0.4, slot=1)
    result = packed([long, short, again], 100)
    assert [c.ids[0] for c in result.chosen] == ["s1:2"]
    assert result.left_out["budget"] == 1 and result.left_out["duplicate"] == 1


def test_a_priority_goes_before_any_value() -> None:
    """A request naming its sources gives each its place: a later source's best item waits for every
    item of an earlier one (what fills a small budget is the first source's)."""
    first = [turn(f"s1:{i}", 0.1, slot=1, priority=0) for i in range(1, 6)]
    second = [turn(f"s2:{i}", 1.0, priority=1) for i in range(1, 6)]
    result = packed([*second, *first], 90)
    ids = [c.ids[0] for c in result.chosen]
    assert ids and all(i.startswith("s1:") for i in ids) and result.left_out["budget"] > 0


def test_a_working_memory_is_cut_only_when_it_alone_overflows() -> None:
    notes = Candidate(
        "working_memory",
        ["wm"],
        "# Notes\n" + "- a long note about hotels\n" * 200,
        1.0,
        "first",
        priority=0,
        truncatable=True,
    )
    result = packed([notes, turn("s1:1", 1.0)], 256)
    assert result.sections[0].truncated and estimate_tokens(block(result.sections, "text")) <= 256
    assert [c.ids[0] for c in result.chosen] == ["wm"]
