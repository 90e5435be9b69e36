"""The RE2-backed JSON Schema validator (issue 33) gives jsonschema's own verdicts, in linear time."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema._utils import equal

from mongomem.kindschema import linear_validator

# Patterns both engines read the same way (no look-arounds or back-references: RE2 has none).
PATTERNS = ["^a+$", "b", "^[a-c]{2,3}$", "^(ab|c)*d?$", r"^\d+$", "^$", "x|y"]
SCHEMA = {
    "type": "object",
    "properties": {"v": {"type": "string", "pattern": "^(ab|c)*d?$"}},
    "patternProperties": {p: {"type": "string", "maxLength": 3} for p in PATTERNS},
    "propertyNames": {"pattern": "^[a-d0-9xy]*$"},
    "additionalProperties": {"type": "integer"},
}
TEXT = st.text(alphabet="abcdxy0129", max_size=8)
VALUES = st.one_of(TEXT, st.integers(-3, 3))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(TEXT, VALUES, max_size=6))
def test_the_verdicts_are_jsonschemas(instance: dict[str, Any]) -> None:
    ours = sorted(
        (tuple(e.absolute_path), e.validator) for e in linear_validator(SCHEMA).iter_errors(instance)
    )
    theirs = sorted(
        (tuple(e.absolute_path), e.validator) for e in Draft202012Validator(SCHEMA).iter_errors(instance)
    )
    assert ours == theirs


@given(st.integers(20, 4000))
@settings(max_examples=10, deadline=500)  # Python's `re` needs seconds from 24 letters on
def test_a_catastrophic_pattern_is_linear(n: int) -> None:
    schema = {
        "type": "object",
        "properties": {"e": {"type": "string", "pattern": r"^([a-z0-9_.-]+)*@x\.com$"}},
    }
    assert len(list(linear_validator(schema).iter_errors({"e": "a" * n + "!"}))) == 1


# JSON values as JSON Schema compares them: 1 and 1.0 equal, true and 1 not, objects whatever their order.
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-2, 2)
    | st.sampled_from([0.0, 1.0, -0.0, 1.5])
    | st.sampled_from("ab"),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("xy"), inner, max_size=2),
    max_leaves=6,
)
UNIQUE = {"type": "array", "uniqueItems": True}


@settings(max_examples=400, deadline=None)
@given(st.lists(JSON, max_size=5))
def test_unique_items_verdicts_are_jsonschemas(instance: list[Any]) -> None:
    ours = [e.validator for e in linear_validator(UNIQUE).iter_errors(instance)]
    # jsonschema's equality of two values, every pair compared (its `uniqueItems` sorts items of mixed
    # types and compares neighbours only, so it misses [[true], [1], [true]]'s repeated item)
    repeated = any(equal(a, b) for i, a in enumerate(instance) for b in instance[i + 1 :])
    assert ours == (["uniqueItems"] if repeated else [])


@given(st.integers(500, 4000))
@settings(max_examples=5, deadline=500)  # jsonschema compares every pair of objects: 3.9 s at 2,000
def test_unique_items_of_objects_are_linear(n: int) -> None:
    assert not list(linear_validator(UNIQUE).iter_errors([{"a": i} for i in range(n)]))
