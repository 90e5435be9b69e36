"""Observational memory's pure parts: the offline observer, the model's observer, render and the reflector."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mongomem.models.observations import Observation
from mongomem.models.turns import Turn
from mongomem.observations.log import reflect, render
from mongomem.observations.observe import LLMObserver, ObserveFailed, RulesObserver
from mongomem.offline.llm_scripted import ScriptedLLM
from mongomem.tokens import estimate_tokens

DAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def turn(seq: int, role: str, content: str, at: datetime = DAY, name: str | None = None) -> Turn:
    return Turn(
        id=f"t{seq}",
        tenant="t",
        user_id="u",
        session_id="s1",
        seq=seq,
        role=role,
        content=content,
        name=name,
        timestamp=at,
        recorded_at=at,
        tokens=len(content) // 4 + 1,
    )


def obs(day: int, seq: int, text: str, session: str = "s1") -> Observation:
    return Observation(at=DAY + timedelta(days=day, minutes=seq), session_id=session, seq=seq, text=text)


def test_the_rules_keep_what_a_user_turn_says_of_the_user_dated_by_the_turn() -> None:
    turns = [
        turn(1, "user", "Hi there! I went to a support group yesterday. Can you help me?", name="Caroline"),
        turn(2, "assistant", "I am glad you went."),
        turn(3, "user", "What is the weather like?"),
        turn(4, "user", "Paris is nice."),
    ]
    found = RulesObserver().observe(turns)
    assert [(o.seq, o.text, o.at) for o in found] == [
        (1, "Caroline: I went to a support group yesterday [7 May 2023].", DAY)
    ]


def test_the_model_s_notes_are_dated_by_the_user_turn_they_cite_and_others_dropped() -> None:
    llm = ScriptedLLM(
        {
            "observe": [
                {
                    "observations": [
                        {"seq": 1, "text": "Ana adopted a cat named Luna."},
                        {"seq": 2, "text": "The assistant was kind."},  # an assistant turn: dropped
                        {"seq": 9, "text": "Invented."},  # no such turn: dropped
                    ]
                },
                "sorry, I cannot",
            ]
        }
    )
    turns = [turn(1, "user", "We adopted Luna, a cat!"), turn(2, "assistant", "Lovely.")]
    found = LLMObserver(llm).observe(turns)
    assert [(o.seq, o.text) for o in found] == [(1, "Ana adopted a cat named Luna.")]
    assert "[1] 8 May 2023 13:56 User: We adopted Luna, a cat!" in llm.requests[0].prompt
    with pytest.raises(ObserveFailed):
        LLMObserver(llm).observe(turns)


def test_render_is_a_pure_function_of_the_log_by_day() -> None:
    log = [obs(1, 2, "b"), obs(0, 1, "a"), obs(1, 1, "c", session="s0")]
    assert render(log) == "8 May 2023:\n- a\n9 May 2023:\n- c\n- b"
    assert render(list(reversed(log))) == render(log)


def test_the_reflector_merges_the_oldest_days_first_and_keeps_the_newest_verbatim() -> None:
    log = [obs(d, n, f"Ana visited museum {d}{n}. It was great fun.") for d in range(3) for n in range(3)]
    assert estimate_tokens(render(log)) > 80
    kept = reflect(log, 80)
    text = render(kept)
    assert estimate_tokens(text) <= 80
    assert text.endswith(
        "10 May 2023:\n- Ana visited museum 20. It was great fun.\n- Ana visited museum 21. It was great fun.\n"
        "- Ana visited museum 22. It was great fun."
    )
    assert "8 May 2023:\n- Ana visited museum 00.; Ana visited museum 01.; Ana visited museum 02." in text


def test_a_merged_line_keeps_the_last_turn_it_holds() -> None:
    # a turns delete from any merged turn takes the line (issue 33's twenty-fourth probe: a line filed
    # under its first turn kept the words of a later, deleted one)
    newest = [obs(1, n, f"Ana visited park {n}. It was fine.") for n in (11, 12, 13)]
    log = [obs(0, n, f"Ana visited museum {n}. It was great fun.") for n in (3, 5, 9)] + newest
    merged = [o for o in reflect(log, 60) if o.merged > 1]
    assert [(o.seqs, o.merged) for o in merged] == [((3, 9), 3)]
    # merged again with a later line of its day, the line holds the later one's turn too
    again = reflect([*merged, obs(0, 10, "Ana saw a play 10. It was long."), *newest], 50)
    assert [(o.seqs, o.merged) for o in again if o.merged > 1] == [((3, 10), 4)]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 20), st.text(min_size=1, max_size=120)), min_size=1, max_size=40),
    st.integers(100, 600),
)
def test_the_reflected_log_fits_its_budget(items: list[tuple[int, str]], budget: int) -> None:
    log = [obs(day, i, text) for i, (day, text) in enumerate(items)]
    kept = reflect(log, budget)
    assert estimate_tokens(render(kept)) <= budget or len(kept) == 1
    newest = max(o.at for o in log)
    assert kept and max(o.at for o in kept) == newest  # the newest observation is never dropped
    assert json.dumps([o.model_dump(mode="json") for o in reflect(kept, budget)]) == json.dumps(
        [o.model_dump(mode="json") for o in kept]
    )  # a log within its budget is left as it is


def test_a_bad_observations_setting_is_named_with_its_path() -> None:
    from mongomem.config import parse_project_config
    from mongomem.errors import ConfigError

    with pytest.raises(ConfigError, match=r"memory\.observations\.max_tokens"):
        parse_project_config({"memory": {"observations": {"max_tokens": 5}}})
    with pytest.raises(ConfigError, match=r"memory\.observations\.observer"):
        parse_project_config({"memory": {"observations": {"observer": "gpt"}}})
