"""Caches keyed by content forget it: on an erasure in this process, and every ten minutes in any."""

from __future__ import annotations

from datetime import date

import pytest

from mongomem import contentcache
from mongomem.retrieval.lexical import stem
from mongomem.retrieval.when import resolve_relative


def test_an_erasure_empties_the_caches_that_hold_words() -> None:
    said = date(2026, 12, 1)
    assert resolve_relative("my badge came yesterday", said).endswith("[30 November 2026]")
    assert stem("zorblaxes") == "zorblax"
    assert resolve_relative.cache_info().currsize and stem.cache_info().currsize
    contentcache.forget()
    assert resolve_relative.cache_info().currsize == 0
    assert stem.cache_info().currsize == 0


def test_every_process_forgets_within_ten_minutes(monkeypatch: pytest.MonkeyPatch) -> None:
    stem("vaultcodes")
    assert stem.cache_info().currsize
    later = contentcache._forgotten_at + contentcache.FORGET_SECONDS + 1
    monkeypatch.setattr(contentcache, "_now", lambda: later)
    stem("other")
    assert stem.cache_info().currsize == 1  # only the word asked for now
