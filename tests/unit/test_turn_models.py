"""Input validation of turns: property-based checks that ids and metadata can never act as operators."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from mongomem.models.common import ID_PATTERN
from mongomem.models.turns import RecordTurnsRequest

ID_RE = re.compile(ID_PATTERN)
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@given(st.text(max_size=140))
def test_user_id_is_accepted_exactly_when_it_matches_the_id_pattern(user_id: str) -> None:
    body = {"user_id": user_id, "role": "user", "content": "hi"}
    if ID_RE.match(user_id) and "\n" not in user_id:
        assert RecordTurnsRequest.model_validate(body).user_id == user_id
    else:
        with pytest.raises(ValidationError):
            RecordTurnsRequest.model_validate(body)


@given(json_values.filter(lambda v: v is not None and not isinstance(v, str)))
def test_a_non_string_user_id_is_always_refused(value: Any) -> None:
    with pytest.raises(ValidationError):
        RecordTurnsRequest.model_validate({"user_id": value, "role": "user", "content": "hi"})


def _has_bad_key(value: Any) -> bool:
    if isinstance(value, dict):
        return any(
            not k or k.startswith("$") or "." in k or "\x00" in k or _has_bad_key(v) for k, v in value.items()
        )
    if isinstance(value, list):
        return any(_has_bad_key(v) for v in value)
    return False


def _unstorable(value: Any) -> bool:
    """What BSON or JSON cannot hold faithfully: integers beyond 64 bits, non-finite numbers, lone surrogates."""
    if isinstance(value, dict):
        return any(_unstorable(k) or _unstorable(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_unstorable(v) for v in value)
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return not -(2**63) <= value < 2**63
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    return False


@given(st.dictionaries(st.text(max_size=6), json_values, max_size=4))
def test_metadata_keys_that_mongodb_would_read_as_operators_are_refused(metadata: dict[str, Any]) -> None:
    body = {"role": "user", "content": "hi", "metadata": metadata}
    if _has_bad_key(metadata) or _unstorable(metadata):
        with pytest.raises(ValidationError):
            RecordTurnsRequest.model_validate(body)
    else:
        assert RecordTurnsRequest.model_validate(body).turns[0].metadata == metadata


def test_single_turn_and_batch_forms_are_equivalent() -> None:
    single = RecordTurnsRequest.model_validate({"role": "user", "content": "hi", "client_token": "t-1"})
    batch = RecordTurnsRequest.model_validate(
        {"turns": [{"role": "user", "content": "hi"}], "client_token": "t-1"}
    )
    assert single == batch
