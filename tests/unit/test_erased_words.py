"""Erasing a user takes out of an org memory the words only they said (issue 33, probe 5)."""

from __future__ import annotations

from mongomem.erasure import without_erased_words
from mongomem.models.memory import stated_words

TERM = {"term": "PLT", "definition": "the pallet ledger", "aliases": ["ZED-NICK", "Pallets"], "domain": "ops"}


def test_an_alias_and_a_domain_only_the_erased_user_gave_go() -> None:
    zed = stated_words(TERM)
    bob = stated_words({"term": "PLT", "definition": "the pallet ledger", "aliases": ["pallets"]})
    out = without_erased_words(TERM, [zed], [bob])
    assert out == {**TERM, "aliases": ["Pallets"], "domain": None}


def test_words_another_user_said_too_stay() -> None:
    zed = stated_words(TERM)
    carol = stated_words({**TERM, "aliases": ["zed-nick "]})
    # carol gave the nickname (other case, a space) and the domain, not "Pallets"
    assert without_erased_words(TERM, [zed], [carol]) == {**TERM, "aliases": ["ZED-NICK"]}
    assert without_erased_words(TERM, [zed], [stated_words(TERM)]) is None


def test_older_entries_without_words_change_nothing() -> None:
    bob = stated_words({"term": "PLT", "definition": "the pallet ledger"})
    assert without_erased_words(TERM, [None], [bob]) is None
    assert without_erased_words(TERM, [stated_words(TERM)], [bob, None]) is None
