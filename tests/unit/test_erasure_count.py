"""Erasing a user takes back only the reinforcements their evidence added (issue 33's ninth probe, finding 8)."""

from __future__ import annotations

from datetime import UTC, datetime

from mongomem.adapters.mongo.erasure import _without_user
from mongomem.models.memory import EvidenceRef

AT = datetime(2026, 3, 2, tzinfo=UTC)


def _entry(user_id: str, **extra: object) -> dict[str, object]:
    return {**EvidenceRef(source="api", user_id=user_id, observed_at=AT).model_dump(), **extra}


def test_an_uncounted_entry_of_the_erased_user_takes_nothing_back() -> None:
    # Given B's statement (counted), B's alias merged uncounted, carol's and dave's restatements: count 3
    doc = {
        "type": "taxonomic",
        "payload": {"term": "P9", "definition": "the tally"},
        "reinforcement_count": 3,
        "evidence": [_entry("b"), _entry("b", counted=False), _entry("carol"), _entry("dave")],
    }
    # When B is erased
    update = _without_user(doc, "b", AT, None)
    # Then carol's and dave's two statements are left
    assert update is not None and update["reinforcement_count"] == 2


def test_an_entry_stored_before_counting_was_recorded_reads_as_counted() -> None:
    legacy = {k: v for k, v in _entry("b").items() if k != "counted"}
    doc = {
        "type": "taxonomic",
        "payload": {},
        "reinforcement_count": 3,
        "evidence": [legacy, legacy, _entry("c")],
    }
    update = _without_user(doc, "b", AT, None)
    assert update is not None and update["reinforcement_count"] == 1
    assert EvidenceRef.model_validate(legacy).counted


def test_whether_an_entry_counted_is_stored_never_answered() -> None:
    uncounted = EvidenceRef.model_validate(_entry("b", counted=False))
    assert uncounted.counted is False
    assert "counted" not in uncounted.model_dump()  # the API's evidence keeps its fields
