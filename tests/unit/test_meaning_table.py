"""The one table of words whose change changes a statement (mongomem.kinds.meaning_table.MEANINGS): swapping one
such word for a word of another meaning is never a restatement, for any sentence around it, through the
shared rules and every built-in kind's comparison; a synonym is. Plus what `norm` keeps (every script) and
what `stated` compares (every character)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mongomem.kinds.meaning import anchors, hard_anchors, norm, same_value, stated
from mongomem.kinds.meaning_table import MEANINGS
from mongomem.kinds.procedural import Procedural
from mongomem.kinds.semantic import Semantic
from mongomem.kinds.taxonomic import Taxonomic
from tests.corrections import CORRECTIONS

# Words that say nothing the table holds (and form none of its phrases: no "every", "per", "a" ...).
FILLER = (
    "the review of greenhouse ventilation logs is done by facilities team pallets from dock are counted "
    "report checked invoice vendor signed finance lead warehouse backup database runs at site contractors "
    "badge gate shift rotated tokens gateway platform audit crates trucks queue carrier booked unloading"
).split()
WORDS = sorted(MEANINGS)
SYNONYMS: dict[str, list[str]] = {}  # each meaning's words
for _word, _meaning in sorted(MEANINGS.items()):
    SYNONYMS.setdefault(_meaning, []).append(_word)


def test_the_filler_holds_no_word_of_the_table() -> None:
    assert not [w for w in FILLER if w in MEANINGS or anchors(w)]


@st.composite
def swapped(draw: st.DrawFn) -> tuple[str, str, str, str]:
    """A sentence of filler words with one table word in it, and the same sentence with that word
    swapped for a word of another meaning."""
    words = draw(st.lists(st.sampled_from(FILLER), min_size=5, max_size=16))
    at = draw(st.integers(0, len(words)))
    old = draw(st.sampled_from(WORDS))
    new = draw(st.sampled_from([w for w in WORDS if MEANINGS[w] != MEANINGS[old]]))
    shape = draw(st.sampled_from([str.lower, str.capitalize, str.upper]))
    before = " ".join([*words[:at], shape(old), *words[at:]])
    after = " ".join([*words[:at], shape(new), *words[at:]])
    return before, after, old, new


@settings(max_examples=400, deadline=None)
@given(swapped())
def test_swapping_a_word_of_the_table_is_never_a_restatement(case: tuple[str, str, str, str]) -> None:
    before, after, old, new = case
    assert not same_value(before, after), (old, new)
    # the guard on a model's REINFORCE reads the same table
    assert hard_anchors(before) != hard_anchors(after), (old, new)
    # and so does every kind's comparison of two statements of one key
    assert not Semantic().same_content(
        {"subject": "acme", "attribute": "rule", "value": before},
        {"subject": "acme", "attribute": "rule", "value": after},
    )
    assert not Taxonomic().same_content(
        {"term": "T", "definition": before}, {"term": "T", "definition": after}
    )
    procedure = {"name": "p", "when_to_use": "always"}
    assert not Procedural().same_content(
        {**procedure, "steps": ["open the gate", before]}, {**procedure, "steps": ["open the gate", after]}
    )


# Words the table does not read: other languages' negations ("tidak", "nu", "nie", "ei") among them.
UNREAD = "tidak bukan belum nu nicio nie ei khong hindi north spare second".split()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(FILLER), min_size=5, max_size=16),
    st.lists(st.sampled_from(UNREAD), min_size=1, max_size=2),
    st.data(),
)
def test_a_word_inserted_that_the_table_does_not_read_is_never_a_restatement(
    words: list[str], inserted: list[str], data: st.DataObject
) -> None:
    # Given a statement and the same statement with words inserted that no anchor reads (a negation in a
    # language the table lacks, a qualifier)
    longer = list(words)
    for word in inserted:
        longer.insert(data.draw(st.integers(0, len(longer))), word)
    before, after = " ".join(words), " ".join(longer)
    # Then it is a new value, either way round, through the shared rules and a kind's comparison
    for old, new in ((before, after), (after, before)):
        assert not same_value(old, new), (old, new)
        assert not Semantic().same_content(
            {"subject": "acme", "attribute": "rule", "value": old},
            {"subject": "acme", "attribute": "rule", "value": new},
        )


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (
            "the review of greenhouse logs is done by facilities",
            "the review of greenhouse logs is also done by facilities",
        ),
        (
            "pallets from the dock are counted by the team",
            "pallets from the dock are really counted by the team",
        ),
        ("the backup of the database runs at site", "the backup of the database now runs at the site"),
    ],
)
def test_a_filler_inserted_is_still_a_restatement(one: str, other: str) -> None:
    assert same_value(one, other)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_synonym_from_the_table_keeps_the_anchors(data: st.DataObject) -> None:
    meaning = data.draw(st.sampled_from(sorted(m for m, words in SYNONYMS.items() if len(words) > 1)))
    one, other = data.draw(
        st.lists(
            st.sampled_from(SYNONYMS[meaning]),
            min_size=2,
            max_size=2,
            unique=True,
        )
    )
    words = data.draw(st.lists(st.sampled_from(FILLER), min_size=3, max_size=10))
    assert anchors(" ".join([*words, one])) == anchors(" ".join([*words, other]))


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # the case, and periods said as phrases
        (
            "the yearly review of greenhouse ventilation logs",
            "the weekly review of greenhouse ventilation logs",
        ),
        ("backups run every week at the main site", "backups run every other week at the main site"),
        ("backups run weekly at the main site", "backups run twice a week at the main site"),
        ("backups run every day at the main site", "backups run every second day at the main site"),
        ("backups run bi-weekly at the main site", "backups run weekly at the main site"),
        # quantities, units, negations said twice, contractions
        ("pallets are counted within 2 hours of arrival", "pallets are counted within 2 days of arrival"),
        ("the gate is not open and not staffed", "the gate is not open and staffed today"),
        ("contractors can badge in at the gate", "contractors can't badge in at the gate"),
        ("contractors badge in before the shift", "contractors badge in after the shift"),
        ("the review covers all invoices of the vendor", "the review covers some invoices of the vendor"),
        # what normalisation drops, and what a word's prefix or a clock phrase says (issue 33's probe)
        ("the parking fee for staff is $500 per month", "the parking fee for staff is €500 per month"),
        (
            "the freezer in the cold room is kept at -18 degrees",
            "the freezer in the cold room is kept at 18 degrees",
        ),
        (
            "the maximum load per shelf is 1.5 tonnes in the cold room",
            "the maximum load per shelf is 15 tonnes in the cold room",
        ),
        (
            "the invoice audit is due on 1/12 at the finance office",
            "the invoice audit is due on 11/2 at the finance office",
        ),
        (
            "the dock receives 3 trucks and 5 vans each morning",
            "the dock receives 5 trucks and 3 vans each morning",
        ),
        (
            "the fire door stays unlocked during the night shift",
            "the fire door stays locked during the night shift",
        ),
        (
            "the visitor badge is valid for the whole building",
            "the visitor badge is invalid for the whole building",
        ),
        (
            "the gate is opened if a guard is present at the bay",
            "the gate is opened unless a guard is present at the bay",
        ),
        ("die tür im lager ist nachts nicht verschlossen", "die tür im lager ist nachts verschlossen"),
        (
            "the loading bay doors close at ten to nine each evening",
            "the loading bay doors close at ten past nine each evening",
        ),
        # other scripts are compared, not dropped
        ("我住在北京市的朝阳区", "我住在上海市的浦东新区"),
        ("склад на северной пристани открыт до девяти", "склад на южной пристани открыт до девяти"),
    ],
)
def test_corrections_are_new_values(before: str, after: str) -> None:
    assert not same_value(before, after)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("backups run weekly at the main site", "backups run every week at the main site"),
        ("backups run weekly at the main site", "backups run once a week at the main site"),
        ("the review is annual for every vendor", "the review is yearly for all vendors"),
        ("the gate isn't open on sundays", "the gate is not open on Sundays"),
        ("Café Zoë opens at 9", "Cafe Zoe opens at 9"),
        ("the count is due within 4 hours", "the count is due within 4 ho\u200burs"),  # invisible character
        ("the fee is 1,000 dollars a year for staff", "the fee is 1000 dollars a year for staff"),
        (
            "the dock receives 5 vans and 3 trucks each morning",
            "the dock receives 3 trucks and 5 vans each morning",
        ),
        ("the parking fee is $500 per month for staff", "the parking fee is 500 dollars per month for staff"),
    ],
)
def test_restatements_in_other_words_keep_their_anchors(one: str, other: str) -> None:
    # the table never stands between a judging model and a restatement it reads (docs/adr/0080: the rules
    # alone take these as the next version; a model may count them as restated)
    assert anchors(one) == anchors(other)
    assert hard_anchors(one) == hard_anchors(other)


@pytest.mark.parametrize(("before", "after"), CORRECTIONS, ids=[f"c{i}" for i in range(len(CORRECTIONS))])
def test_the_second_probes_corrections_are_new_values_in_private_memory_too(before: str, after: str) -> None:
    # shared memory is restated only to the letter; a user's own facts read the table, which knows these
    assert not same_value(before, after)


def test_norm_keeps_every_script_and_folds_only_what_a_reader_does_not_see() -> None:
    # a sharp s is a letter ("Maße" is not "Masse"), a superscript digit a word of its own ("14\u00b9" is
    # not "141"; issue 33's eighteenth probe)
    assert norm("Straße Café İstanbul STRASSE") == "straße cafe istanbul strasse"
    assert norm("Art. 14\u00b9") == "art 14 1" != norm("Art. 141")
    assert norm("北京 \u0663 wee\u200bkly \uff21\uff22\uff23") == "北京 3 weekly abc"
    assert norm("我住在北京") != norm("我住在上海")
    # ASCII text keeps the keys it always had
    assert norm("  The user's Home-City!  ") == "the user s home city"


def test_stated_compares_every_character_but_spacing_and_the_first_letters_case() -> None:
    term = Taxonomic()
    base = {"term": "PLTZ", "definition": "counted within 4 hours", "aliases": ["P", "Q"]}
    assert term.stated(base) == term.stated(
        {**base, "definition": "Counted  within 4 hours.", "aliases": ["Q", "P"]}
    )
    for other in (
        {**base, "definition": "counted within 4 hours \u5ffd\u7565"},
        {**base, "definition": "counted within 4 ho\u200burs"},
        {**base, "definition": "counted within 4 h\u043eurs"},
        {**base, "aliases": ["P", "Q", "R"]},
        {**base, "domain": "x"},
        {**base, "definition": "counted within 4 Hours"},  # a unit may be said by case (MW / mW)
    ):
        assert term.stated(base) != term.stated(other), other
    # empty fields are no fields; a procedure's steps keep their order
    assert stated({"a": "x", "b": []}) == stated({"a": "x"})
    assert stated({"steps": ["a", "b"]}) != stated({"steps": ["b", "a"]})


def test_no_word_of_the_table_says_two_meanings() -> None:
    # a word listed under two meanings would silently mean the last one ("second": the ordinal, not "sec")
    from collections import Counter

    from mongomem.kinds.meaning_table import _MEANING_TABLE

    said = Counter(word for words in _MEANING_TABLE.values() for word in words.split())
    assert [w for w, n in said.items() if n > 1] == []


def test_backing_a_proposal_keeps_the_case_a_unit_is_said_in() -> None:
    # issue 33's fourth probe: "Mm" (megametre) and "mm" opening a definition are two values
    from mongomem.kinds.meaning import exact, worded

    for fold in (exact, worded):
        assert fold("Mm is the grid unit") != fold("mm is the grid unit")
        assert fold("Counted within 4 hours") == fold("counted within 4 hours")


@pytest.mark.parametrize(
    ("capital", "lower"),
    [
        ("Mbar readings are logged hourly", "mbar readings are logged hourly"),  # megabar / millibar
        ("Mrad doses are logged daily", "mrad doses are logged daily"),  # megarad / milliradian
        ("Mg/l of lead in the tank", "mg/l of lead in the tank"),
        ("Pmol per sample", "pmol per sample"),  # petamole / picomole
        ("Mm, the grid unit", "mm, the grid unit"),
        ("Mbits per second", "mbits per second"),
        ("Cal per serving", "cal per serving"),  # the food calorie is 1000 cal
    ],
)
def test_a_unit_said_by_the_case_of_an_opening_word_is_kept(capital: str, lower: str) -> None:
    # issue 33's ninth probe: the opening word's capital is a prefix of its own when a unit follows it
    from mongomem.kinds.meaning import exact, worded

    for fold in (exact, worded):
        assert fold(capital) != fold(lower)


@pytest.mark.parametrize("word", ["Mass", "Post", "Pressure", "Rotate", "Quarterly", "Mol", "Zones", "Yes"])
def test_a_sentences_capital_still_folds(word: str) -> None:
    from mongomem.kinds.meaning import exact, worded

    for fold in (exact, worded):
        assert fold(f"{word} of the north dock") == fold(f"{word.lower()} of the north dock")


@pytest.mark.parametrize(
    ("old", "new", "same"),
    [
        # two days, months or times of day in another order: another statement
        (
            "I visit my parents in May and my in-laws in June",
            "I visit my parents in June and my in-laws in May",
            False,
        ),
        (
            "I swim on Monday and run on Friday at the club",
            "I swim on Friday and run on Monday at the club",
            False,
        ),
        # the two sides of a sided word swapped
        (
            "the backup job runs before the deploy job each night",
            "the deploy job runs before the backup job each night",
            False,
        ),
        # a weekday in Spanish, French, German or Italian is a weekday
        (
            "la reunión del equipo es el lunes a las diez",
            "la reunión del equipo es el martes a las diez",
            False,
        ),
        (
            "le cours de danse est le samedi matin au studio",
            "le cours de danse est le dimanche matin au studio",
            False,
        ),
        # one time word moved, or the same order in other words: the same statement
        ("I swim on Monday mornings at the club", "On Monday mornings I swim at the club", True),
        (
            "I visit my parents in May and my in-laws in June",
            "In May I visit my parents and in June my in-laws",
            True,
        ),
    ],
)
def test_the_order_of_days_and_sides_is_part_of_what_is_said(old: str, new: str, same: bool) -> None:
    assert same_value(old, new) is same


@pytest.mark.parametrize(
    ("held", "said"),
    [
        (
            "pallets from dock #3 are counted within 2 hours",
            "pallets from dock #3 are counted within 4 hours",
        ),
        (
            "the night shift closes ticket #42 within 2 hours",
            "the night shift closes ticket #43 within 2 hours",
        ),
        ("counted within 2 hours&#32;", "counted within 4 hours&#32;"),
    ],
)
def test_a_number_after_a_hash_is_an_anchor_as_written(held: str, said: str) -> None:
    # issue 33's twenty-fifth probe: "#3" left the number's group empty and every comparison of it failed
    # (a 500 on a one-user statement about shared memory, on the conflicts list and on the status)
    assert anchors(held) != anchors(said)
    assert not same_value(held, said) and same_value(held, held)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("#&$-+.,:/ 0123456789abcxyz€"), max_size=40))
def test_the_anchors_of_any_text_are_read_without_error(text: str) -> None:
    assert isinstance(anchors(text), frozenset) and same_value(text, text) in (True, False)


# Issue 33's twenty-ninth probe: words the table does not list that still say a value. A number's unit
# (any word after it: a trade's "mph", "ppb", "psi"), a period in one word ("semimonthly", "midyear"),
# a negation written without its apostrophe ("dont") or by "-less" ("harmless").
UNITS = "mph kph ppm ppb psi rpm bar kpa lux knots pallets crates m k".split()
PERIOD_WORDS = "semimonthly triweekly biyearly midyear midmonth midweek half-yearly quadweekly".split()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(FILLER), min_size=5, max_size=12),
    st.sampled_from(["15", "40", "ten", "3.5"]),
    st.sampled_from(UNITS),
    st.sampled_from(UNITS),
    st.data(),
)
def test_a_numbers_unit_changed_is_never_a_restatement(
    words: list[str], number: str, old: str, new: str, data: st.DataObject
) -> None:
    if old == new or old.removesuffix("s") == new.removesuffix("s"):
        return
    at = data.draw(st.integers(0, len(words)))
    before = " ".join([*words[:at], number, old, *words[at:]])
    after = " ".join([*words[:at], number, new, *words[at:]])
    assert not same_value(before, after) and hard_anchors(before) != hard_anchors(after), (before, after)


@pytest.mark.parametrize("old", PERIOD_WORDS)
@pytest.mark.parametrize("new", [*PERIOD_WORDS, "weekly", "monthly"])
def test_a_period_in_one_word_changed_is_never_a_restatement(old: str, new: str) -> None:
    if old == new:
        return
    before, after = (
        f"the fire drill for the freezer dock is held {w} by the safety team" for w in (old, new)
    )
    assert not same_value(before, after) and hard_anchors(before) != hard_anchors(after)


@pytest.mark.parametrize(
    ("yes", "no"),
    [
        ("drivers do unload pallets at the freezer dock after the evening shift", "dont"),
        ("the coolant is harmful to touch without gloves for the contractor team", "harmless"),
        ("the contractor team is careful with the coolant at the freezer dock", "careless"),
        ("the night shift can unload pallets at the freezer dock of the warehouse", "cant"),
    ],
)
def test_a_negation_without_its_apostrophe_or_by_less_is_never_a_restatement(yes: str, no: str) -> None:
    swapped = {"do": "dont", "harmful": "harmless", "careful": "careless", "can": "cant"}
    said = next(w for w in swapped if swapped[w] == no)
    negated = yes.replace(f" {said} ", f" {no} ", 1)
    assert negated != yes and not same_value(yes, negated) and hard_anchors(yes) != hard_anchors(negated)
    # a negation said either way is the same negation
    assert anchors("the coolant is harmless to touch") == anchors("the coolant is not harmful to touch")
