"""The label fields erasure takes from a tenant-wide entry naming an erased user are the kinds' labels."""

from __future__ import annotations

from mongomem.erasure import LABELS
from mongomem.kinds import builtin_registry


def test_the_erasure_labels_are_the_built_in_kinds_unordered_fields() -> None:
    kinds = builtin_registry()
    assert {field for kind in kinds for field in kind.unordered} == LABELS
    # a procedure's steps are its value, never a label (probe 9's finding 10)
    assert "steps" not in LABELS
