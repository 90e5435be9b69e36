"""Issue 33's twenty-ninth probe, finding 5 through extraction (tests/e2e/test_probe29_findings.py lists
it). In a module of its own: its stack extracts terms, and two local stacks in one process share the
functions' configuration (`local.stack.configure`): the second started serves both."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.probe_stack import Stack, answering_stack, call, config, unique

USERS = ("alice", "bob", "eve", "frank", "ivan")


def _listed(stack: Stack, user: str, kind: str) -> list[dict[str, Any]]:
    status, page = call(stack, stack.users[user], "GET", f"/v1/memories?type={kind}&limit=200")
    assert status == 200, page
    return [m for m in page["memories"] if m["status"] == "active"]


# (finding 5, through extraction: a second stack whose project extracts terms, org by default)
@pytest.fixture(scope="module")
def extracting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    extracts = config().replace("enabled: []", "enabled: [taxonomic]")
    yield from answering_stack(tmp_path_factory.mktemp("probe29-extracting"), USERS, extracts)


def test_an_extracted_term_in_the_first_person_of_any_language_stays_private(extracting: Stack) -> None:
    """HIGH (the same, through extraction; the default config: terms are org). Bob's one-user key records
    the user turns "PINX<OWN> stands for meine Bankkarten-PIN 4711 bei der Sparkasse.", "KOD<OWN> stands for
    mi código de la puerta de casa 4411.", "MDP<OWN> stands for mon mot de passe Zorblax du coffre." and
    "PINY<OWN> stands for my bank card PIN 4711 at the savings bank." and flushes: the offline rules extract
    four terms; the English one is private (`orgscreen.org_verdict`: "personal"), the three others org, and
    eve lists "PINX<OWN>: Short for meine Bankkarten-PIN 4711 bei der Sparkasse" and the rest."""
    import time as clock

    stack = extracting
    own = unique().upper()
    said = [
        f"PINX{own} stands for meine Bankkarten-PIN 4711 bei der Sparkasse.",
        f"KOD{own} stands for mi código de la puerta de casa 4411.",
        f"MDP{own} stands for mon mot de passe Zorblax du coffre.",
        f"PINY{own} stands for my bank card PIN 4711 at the savings bank.",
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
    assert len(mine) == 4 and mine[f"PINY{own}"] == "private", mine
    seen = sorted(
        m["payload"]["term"] for m in _listed(stack, "eve", "taxonomic") if own in m["payload"]["term"]
    )
    assert seen == [], seen
