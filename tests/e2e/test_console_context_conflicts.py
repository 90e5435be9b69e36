"""The console shows why each item is in an agent's context, and flags conflicting facts (its own stack)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from mongomem.identity.service import create_key
from mongomem.local.stack import LocalStack
from tests.e2e.browser import Tab, api, sign_in


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalStack, str]]:
    root = tmp_path_factory.mktemp("console-context")
    config = root / "project-config.yaml"
    config.write_text(
        "memory:\n  extraction: {enabled: []}\n  providers: {embeddings: {kind: hashing, dim: 64}}\n"
    )
    stack = LocalStack(data_dir=root / "data", port=0, scan_seconds=0.3, config_file=config).start()
    try:
        yield stack, create_key(stack.keys, "acme", "memory_service")[0]
    finally:
        stack.stop()


def test_conflicting_facts_are_flagged_and_each_context_item_says_why(
    stack: tuple[LocalStack, str], tab: Tab
) -> None:
    running, key = stack
    page = tab.page
    # Given two active home cities written with reconciliation off, and a recorded conversation
    for city in ("Lisbon", "Porto"):
        fact = {"subject": "user", "attribute": "home city", "value": city}
        body = {"user_id": "ana", "type": "semantic", "reconcile": False, "payload": fact}
        assert api(running, key, "POST", "/v1/memories", body)[0] == 201
    start = datetime.now(UTC) - timedelta(days=3)
    turns = [
        {
            "role": "user",
            "content": "I am allergic to peanuts, remember that for flights.",
            "timestamp": start.isoformat(),
        },
        {
            "role": "assistant",
            "content": "Noted: no peanuts.",
            "timestamp": (start + timedelta(seconds=5)).isoformat(),
        },
    ]
    assert (
        api(running, key, "POST", "/v1/sessions/trip-1/turns", {"user_id": "ana", "turns": turns})[0] == 201
    )
    now = [
        {"role": "user", "content": "Book me a flight to Berlin.", "timestamp": datetime.now(UTC).isoformat()}
    ]
    assert api(running, key, "POST", "/v1/sessions/trip-2/turns", {"user_id": "ana", "turns": now})[0] == 201
    sign_in(tab, running.url, key)
    # Then the memories view flags the conflict with both values
    page.goto(f"{running.url}/console#/users/ana/memories")
    page.wait_for_selector("[data-testid=conflict]")
    conflict = page.inner_text("[data-testid=conflict]")
    assert "user|home city" in conflict and "Lisbon" in conflict and "Porto" in conflict
    tab.shot("conflicts")
    # and the context view lists each item of the block with the reason it is there
    page.goto(f"{running.url}/console#/users/ana/search")
    page.wait_for_selector("[data-testid=context-form]")
    page.select_option("[data-testid=context-session]", "trip-2")
    page.fill("[data-testid=context-query]", "peanuts on flights")
    page.fill("[data-testid=context-budget]", "600")
    page.click("[data-testid=context-form] button[type=submit]")
    page.wait_for_selector("[data-testid=context-item]")
    reasons = page.locator("[data-testid=context-item] [data-part=reason]").all_inner_texts()
    assert reasons and all(reasons)
    assert any("for the query" in r for r in reasons)  # the earlier session's turn, recalled
    assert any("latest turn" in r for r in reasons)  # this session's own turn
    tab.shot("context-reasons")
