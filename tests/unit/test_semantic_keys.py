"""Semantic match keys: one fact however it is labelled, two facts however alike they are labelled."""

from __future__ import annotations

from typing import Any

import pytest

from mongomem.kinds import builtin_registry

SEMANTIC = builtin_registry()["semantic"]


def fact(attribute: str, value: str, subject: str = "user", **more: Any) -> dict[str, Any]:
    payload, _ = SEMANTIC.validate({"subject": subject, "attribute": attribute, "value": value, **more})
    return payload


SAME = [
    (fact("favourite colour", "green"), fact("the user's favorite color", "Green", "User")),
    (fact("favourite colour", "green"), fact("Preferred Colour", "the colour green", "the user")),
    (fact("home city", "Porto"), fact("city of residence", "Porto")),
    (fact("hometown", "Braga"), fact("home town", "Braga")),
    (fact("wife name", "Maria"), fact("Name of wife", "Maria")),
    (fact("wife name", "Maria"), fact("the user's wife's name", "Maria")),
    (fact("pets", "Max", cardinality="many"), fact("dog's name", "Max")),
    (fact("languages", "Spanish", cardinality="many"), fact("Languages Spoken", "Spanish language")),
    (fact("allergy", "peanuts", cardinality="many"), fact("allergies", "peanut")),
    (fact("diet", "vegan"), fact("dietary preference", "a vegan diet")),
    (fact("birthday", "March 3"), fact("birth day", "the 3rd of March")),
    (fact("employer", "Acme Corp"), fact("company", "Acme Corporation")),
    (fact("occupation", "nurse"), fact("job title", "a Nurse")),
]
DIFFERENT = [
    (fact("home city", "Porto"), fact("hometown", "Porto")),
    (fact("birthday", "March 3"), fact("birth date", "1990-03-03")),
    (fact("favourite colour", "green"), fact("favourite food", "green curry")),
    (fact("preferred name", "Sammy"), fact("favourite name", "Sammy")),
    (fact("user name", "ana_c"), fact("name", "ana_c")),
    (fact("children", "Luca", cardinality="many"), fact("children", "Lucas", cardinality="many")),
    (fact("languages", "Spanish"), fact("languages", "French")),  # many-valued even without cardinality
]


@pytest.mark.parametrize(("old", "new"), SAME)
def test_a_fact_labelled_and_worded_otherwise_has_the_same_key_and_content(old: Any, new: Any) -> None:
    assert SEMANTIC.key(old) == SEMANTIC.key(new)
    assert SEMANTIC.same_content(old, new)


@pytest.mark.parametrize(("old", "new"), DIFFERENT)
def test_different_facts_worded_alike_keep_different_keys(old: Any, new: Any) -> None:
    assert SEMANTIC.key(old) != SEMANTIC.key(new)


@pytest.mark.parametrize(
    ("old", "new"),
    [("Blue", "Blue changed"), ("window seat", "aisle seat"), ("March 3", "March 4"), ("Acme", "Acme Labs")],
)
def test_a_changed_value_under_one_key_is_not_the_same_content(old: str, new: str) -> None:
    a, b = fact("seat preference", old), fact("seat preference", new)
    assert SEMANTIC.key(a) == SEMANTIC.key(b) and not SEMANTIC.same_content(a, b)
