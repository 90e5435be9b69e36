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


def test_an_empty_answer_is_checked_against_the_offline_rules_of_its_kind_only() -> None:
    from datetime import UTC, datetime

    from mongomem.extraction.proposal import TurnView
    from mongomem.kinds.semantic import Semantic
    from mongomem.offline.llm_offline import OfflineLLM
    from mongomem.offline.llm_scripted import ScriptedLLM
    from mongomem.providers.factory import empty_answer_check

    check = empty_answer_check(ScriptedLLM({}))
    assert check is not None
    said = [
        TurnView(
            1, "user", "I moved to Lisbon, my home airport is LIS now.", datetime(2026, 1, 1, tzinfo=UTC)
        )
    ]
    talk = [TurnView(1, "user", "Hi! How are you today?", datetime(2026, 1, 1, tzinfo=UTC))]
    assert (check(Semantic(), said) or 0) >= 1 and check(Semantic(), talk) == 0

    class Ticket(Semantic):  # a kind the offline rules do not know (a project's custom kind)
        name = "ticket"

    ticket = Ticket()
    assert check(ticket, said) is None  # no offline rules for a custom kind: the answer cannot be checked
    # the rules need no second opinion on themselves
    assert empty_answer_check(OfflineLLM()) is None
