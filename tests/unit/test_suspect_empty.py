"""When empty answers make an extractor suspect (mongomem.extraction.watch): once per kind and window."""

from __future__ import annotations

from mongomem.extraction.watch import SuspectEmpty, suspect_empty
from mongomem.models.stats import KindHealth


def test_three_contradicted_empty_answers_warn_once_until_the_kind_answers_again() -> None:
    watch = SuspectEmpty(threshold=3, window=3600)
    said = [watch.note("semantic", "empty_answer", 2, now=t) for t in (0, 10, 20, 30, 40)]
    assert [s is not None for s in said] == [False, False, True, False, False]  # once, not per message
    assert "semantic" in (said[2] or "")
    # an answer holding items clears it: empty answers warn again only once that answer left the window
    assert watch.note("semantic", "stored", None, now=50) is None
    again = [watch.note("semantic", "empty_answer", 1, now=t) for t in (60, 70, 80, 3660, 3670)]
    assert [s is not None for s in again] == [False, False, False, True, False]


def test_what_is_not_a_contradicted_empty_answer_never_counts() -> None:
    watch = SuspectEmpty(threshold=3, window=3600)
    for t in range(10):
        assert watch.note("episodic", "nothing_found", 0, now=t) is None  # small talk
        assert watch.note("custom", "empty_answer", None, now=t) is None  # a kind without offline rules
        assert watch.note("semantic", "refused", None, now=t) is None  # answered: every item refused


def test_empty_answers_older_than_the_window_are_forgotten() -> None:
    watch = SuspectEmpty(threshold=3, window=100)
    assert watch.note("semantic", "empty_answer", 1, now=0) is None
    assert watch.note("semantic", "empty_answer", 1, now=50) is None
    assert watch.note("semantic", "empty_answer", 1, now=200) is None  # the first two left the window
    # a warning is repeated a window later while the kind still answers nothing
    assert watch.note("semantic", "empty_answer", 1, now=210) is None
    assert watch.note("semantic", "empty_answer", 1, now=220) is not None
    assert watch.note("semantic", "empty_answer", 1, now=230) is None
    assert watch.note("semantic", "empty_answer", 1, now=290) is None  # warned 70 s ago
    assert watch.note("semantic", "empty_answer", 1, now=330) is not None


def test_the_status_figure_is_suspect_only_without_any_answer_holding_items() -> None:
    silent = KindHealth(done=4, outcomes={"empty_answer": 4}, suspect_empty=4)
    answering = KindHealth(done=5, outcomes={"empty_answer": 4, "stored": 1}, suspect_empty=4)
    quiet = KindHealth(done=4, outcomes={"nothing_found": 4})
    figure = suspect_empty({"semantic": silent, "episodic": answering, "procedural": quiet})
    assert figure["suspect"] is True and "semantic" in figure["hint"] and "episodic" not in figure["hint"]
    assert figure["kinds"]["episodic"] == {"empty_answers": 4, "answered": 1, "suspect": False}
    assert figure["kinds"]["procedural"] == {"empty_answers": 0, "answered": 0, "suspect": False}
    assert suspect_empty({"episodic": answering, "procedural": quiet})["suspect"] is False
