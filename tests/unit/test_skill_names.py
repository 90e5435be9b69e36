"""Two procedures of two keys never export under one skill name (issue 33's ninth probe, finding 6)."""

from __future__ import annotations

import re

import pytest

from mongomem.kinds.procedural import Procedural
from mongomem.longterm.skills import MAX_NAME, skill_name

SPEC = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")  # Agent Skills: lowercase letters, digits, single hyphens


@pytest.mark.parametrize(
    ("name", "exported"),
    [
        ("Rotate dock keys X", "rotate-dock-keys-x"),
        ("Expense a client dinner", "expense-a-client-dinner"),
        ("Q++ setup (v2)", "q-setup-v2"),
        ("Café au lait", "cafe-au-lait"),  # the accent is folded by the key too: nothing lost
    ],
)
def test_a_name_the_slug_spells_whole_exports_as_before(name: str, exported: str) -> None:
    assert skill_name(name, fallback="procedure-x") == exported


@pytest.mark.parametrize(
    ("tenants", "users"),
    [
        ("Rotate dock keys X", "Rotate dock keys X \u9375"),  # a CJK letter the slug drops
        ("Rotate dock keys X", "\u9375 Rotate dock keys X"),
        ("Rotate dock keys X \u9375", "Rotate dock keys X \u9376"),
        ("Rotate dock keys X", "Rotate dock keys \u0425"),  # Cyrillic KHA
        ("a" * 64 + " one", "a" * 64 + " two"),  # differing past the 64 characters a name holds
    ],
)
def test_names_of_two_keys_export_under_two_skill_names(tenants: str, users: str) -> None:
    procedural = Procedural()
    assert procedural.key({"name": tenants}) != procedural.key({"name": users})
    a, b = skill_name(tenants, fallback="procedure-a"), skill_name(users, fallback="procedure-b")
    assert a != b
    for name in (a, b):
        assert SPEC.fullmatch(name) and len(name) <= MAX_NAME, name


def test_a_name_with_a_letter_outside_ascii_keeps_one_skill_name() -> None:
    # stable: the same key (another case, another spacing) exports under the same name
    assert skill_name("Rotate dock keys \u9375", "procedure-a") == skill_name("rotate  DOCK keys \u9375", "x")
    assert skill_name("\u9375\u306e\u4ea4\u63db", "procedure-1a2b3c4d").startswith("procedure-1a2b3c4d-")
