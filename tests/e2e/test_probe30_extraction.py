"""Issue 33's thirtieth probe, finding 1 through extraction (tests/e2e/test_probe30_findings.py lists it).
In a module of its own: its stack extracts terms, and two local stacks in one process share the functions'
configuration (`local.stack.configure`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.probe_stack import Stack, answering_stack, call, config, unique

USERS = ("alice", "bob", "eve")


def _listed(stack: Stack, user: str, kind: str) -> list[dict[str, Any]]:
    status, page = call(stack, stack.users[user], "GET", f"/v1/memories?type={kind}&limit=200")
    assert status == 200, page
    return [m for m in page["memories"] if m["status"] == "active"]


@pytest.fixture(scope="module")
def extracting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    extracts = config().replace("enabled: []", "enabled: [taxonomic]")
    yield from answering_stack(tmp_path_factory.mktemp("probe30-extracting"), USERS, extracts)


@pytest.mark.xfail(
    strict=True,
    reason="probe 30 finding 1, open for extraction: an extracted term in Swedish 'min portkod' or with "
    "Turkish's first-person suffix ('şifrem') is not read as the first person (a word list cannot list "
    "suffixes; 'môj' is read now); direct writes of facts are private unless they say org",
)
def test_an_extracted_term_in_the_first_person_of_a_listed_language_stays_private(extracting: Stack) -> None:
    """HIGH (finding 1 through extraction; the default config: terms are org). Bob's one-user key records
    the user turns "SKOD<OWN> stands for min portkod 4411 hemma." (Swedish: "my door code"), "TSIF<OWN>
    stands for şifrem Zorblax kasada." (Turkish: "my password ... in the safe"), "MKOD<OWN> stands for môj
    kód od trezoru 4411." (Slovak: "my code of the safe") and "EPIN<OWN> stands for my bank card PIN 4711."
    and flushes: the offline rules extract four terms; the English one is private (`orgscreen.org_verdict`:
    "personal"), the three others org, and eve lists them ("SKOD<OWN>: Short for min portkod 4411 hemma").
    (The offline rules extract no term from the Korean and Arabic forms; a model would.)"""
    import time as clock

    stack = extracting
    own = unique().upper()
    said = [
        f"SKOD{own} stands for min portkod 4411 hemma.",
        f"TSIF{own} stands for şifrem Zorblax kasada.",
        f"MKOD{own} stands for môj kód od trezoru 4411.",
        f"EPIN{own} stands for my bank card PIN 4711.",
    ]
    turns = {"turns": [{"role": "user", "content": text} for text in said]}
    bob = stack.users["bob"]
    assert call(stack, bob, "POST", f"/v1/sessions/s{own}/turns", turns)[0] == 201
    assert call(stack, bob, "POST", f"/v1/sessions/s{own}/flush")[0] == 200
    deadline = clock.monotonic() + 60
    while call(stack, stack.tenant, "GET", "/v1/status")[1]["snapshots_pending_extraction"]:
        assert clock.monotonic() < deadline, "extraction still pending"
        clock.sleep(0.3)
    mine = {
        m["payload"]["term"]: m["visibility"]
        for m in _listed(stack, "bob", "taxonomic")
        if own in m["payload"]["term"]
    }
    assert len(mine) == 4 and mine[f"EPIN{own}"] == "private", mine
    seen = sorted(
        (m["payload"]["term"], m["payload"]["definition"])
        for m in _listed(stack, "eve", "taxonomic")
        if own in m["payload"]["term"]
    )
    assert seen == [], seen
