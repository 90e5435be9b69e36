"""Issue 25, the console in a real browser: an open stack needs no sign-in; org memories show as org and
filter as org; the organisation's row is not a user page; the session list's values sit under their
headings; what an agent's calls received, and why; a snapshot links to the memories it produced; the
dead letters can be read and retried."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mongomem.identity.service import create_key
from mongomem.kindnames import BuiltinKind
from mongomem.local.queue import QueuePolicy
from mongomem.local.stack import LocalStack
from mongomem.runtime import configure
from tests.e2e.browser import Tab, api, rows
from tests.e2e.test_console_browser import Outage, converse

CONFIG = "memory:\n  snapshot: {max_messages: 50, idle_seconds: 3600}\n"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    root = tmp_path_factory.mktemp("console-views")
    config = root / "project-config.yaml"
    config.write_text(CONFIG)
    stack = LocalStack(
        data_dir=root / "data",
        port=0,
        scan_seconds=0.5,
        poll_seconds=0.2,
        config_file=config,
        queue_policy=QueuePolicy(visibility_timeout=0.5, max_receive_count=1),
    ).start()
    try:
        yield stack
    finally:
        stack.stop()


def open_console(tab: Tab, url: str, route: str, selector: str) -> Any:
    page = tab.page
    page.goto(f"{url}/console#{route}")
    page.wait_for_selector(selector)
    return page


def test_the_console_views_a_new_user_trips_on(stack: LocalStack, tab: Tab, tmp_path: Path) -> None:
    url = stack.url
    # Given a user with two conversations (extracted offline), an org term and a private fact
    turns = [
        {"role": "user", "content": "Hi, I'm Ana. I live in Porto."},
        {"role": "assistant", "content": "Noted: Porto."},
        {"role": "user", "content": "I'm allergic to peanuts."},
    ]
    snap = converse(stack, "", "ana", "chat-1", turns)
    extra = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi"}]
    assert api(stack, None, "POST", "/v1/sessions/chat-2/turns", {"user_id": "ana", "turns": extra})[0] == 201
    term = {"term": "MTTR", "definition": "mean time to recovery", "domain": "operations"}
    assert (
        api(stack, None, "POST", "/v1/memories", {"user_id": "ana", "type": "taxonomic", "payload": term})[0]
        == 201
    )
    seat = {"subject": "user", "attribute": "seat", "value": "aisle"}
    written = api(
        stack, None, "POST", "/v1/memories", {"user_id": "ana", "type": "semantic", "payload": seat}
    )
    assert written[0] == 201

    # An open stack (no API key yet) opens without asking to sign in
    page = open_console(tab, url, "/users", "[data-testid=user-row]")
    assert page.locator("[data-testid=signin]").count() == 0
    assert "open stack" in page.inner_text("[data-testid=tenant]")
    # the organisation's row is labelled as such and is not a link to a user page (it was a 422)
    assert rows(tab, "[data-testid=user-row]", "data-user") == ["ana"]
    org = page.locator("[data-testid=org-row]")
    assert org.count() == 1 and org.locator("a").count() == 0
    assert "the organisation" in org.inner_text()
    tab.shot("01-users")

    # the sessions' values sit under their headings (a nested tbody put them in the first column)
    page = open_console(tab, url, "/users/ana", "[data-testid=session-row]")
    headings = page.locator("[data-testid=sessions] thead th").all_inner_texts()
    row = page.locator("[data-testid=session-row][data-session=chat-2] td").all_inner_texts()
    assert len(row) == len(headings) == 6
    assert dict(zip(headings, row, strict=True))["Turns"] == "2"
    assert page.locator("[data-testid=sessions] tbody tbody").count() == 0
    tab.shot("02-sessions")

    # org memories say org, and the org filter finds them (it used to show nothing)
    page = open_console(tab, url, "/users/ana/memories", "[data-testid=memory-row]")
    shown = {
        r.get_attribute("data-kind"): r.locator("[data-col=visibility]").inner_text()
        for r in page.locator("[data-testid=memory-row]").all()
    }
    assert shown["taxonomic"] == "org" and shown["semantic"] == "private"
    page.select_option("[data-testid=filter-visibility]", "org")
    page.wait_for_url("**visibility=org**")
    page.wait_for_selector("[data-testid=memory-row]")
    assert set(rows(tab, "[data-testid=memory-row]", "data-kind")) == {"taxonomic"}
    tab.shot("03-org-memories")

    # a snapshot links to the memories its extraction produced
    page = open_console(tab, url, "/users/ana/sessions/chat-1", "[data-testid=snapshot-memories]")
    page.click("[data-testid=snapshot-memories]")
    page.wait_for_selector("[data-testid=snapshot-filter]")
    page.wait_for_selector("[data-testid=memory-row]")
    produced = page.locator("[data-testid=memory-row] a").all_inner_texts()
    assert any("Porto" in t for t in produced) and not any("aisle" in t for t in produced)
    listed = api(stack, None, "GET", f"/v1/memories?user_id=ana&snapshot_id={snap['snapshot_id']}")[1]
    assert len(produced) == len(listed["memories"])
    tab.shot("04-snapshot-memories")

    # what an agent's calls received, and why
    assert api(stack, None, "POST", "/v1/memories/search", {"user_id": "ana", "query": "seat"})[0] == 200
    context = {"user_id": "ana", "session_id": "chat-1", "query": "allergies", "token_budget": 600}
    assert api(stack, None, "POST", "/v1/context", context)[0] == 200
    page = open_console(tab, url, "/users/ana/requests", "[data-testid=agent-call]")
    assert rows(tab, "[data-testid=agent-call]", "data-kind")[:2] == ["context", "search"]
    search = page.locator("[data-testid=agent-call][data-kind=search]").first
    assert "user seat: aisle" in search.inner_text() and "BM25 #" in search.inner_text()
    call = page.locator("[data-testid=agent-call][data-kind=context]").first
    assert "in recent" in call.inner_text().lower()  # each item says which section holds it
    assert "peanuts" in (call.locator("[data-testid=request-block]").text_content() or "")
    tab.shot("05-agent-calls")

    # the dead letters: a kind that failed is listed with its error, and Retry queues it again
    down = {"procedural"}
    assert stack.services is not None
    outage = {BuiltinKind.procedural: lambda svc: Outage(svc.builtin_extractor(BuiltinKind.procedural), down)}
    configure(stack.services.replaced(extractors=outage))
    failed = converse(stack, "", "bo", "chat-9", [{"role": "user", "content": "How do I reset my router?"}])
    assert failed["extraction"]["procedural"]["status"] == "failed"
    down.clear()
    page = open_console(tab, url, "/dead-letters", "[data-testid=dead-letter]")
    letter = page.locator(f"[data-testid=dead-letter][data-snapshot={failed['snapshot_id']}]")
    assert letter.get_attribute("data-kind") == "procedural" and "outage" in letter.inner_text()
    tab.shot("06-dead-letters")
    letter.locator("[data-testid=retry-procedural]").click()
    page.wait_for_selector(
        f"[data-testid=dead-letter][data-snapshot={failed['snapshot_id']}][data-status=queued]"
    )
    status, after = api(stack, None, "GET", f"/v1/snapshots/{failed['snapshot_id']}?user_id=bo")
    assert status == 200 and after["extraction"]["procedural"]["status"] in ("queued", "running", "done")

    # Once keys exist, the console asks for one again
    create_key(stack.keys, "default", "memory_service")
    assert stack.authorizer is not None
    stack.authorizer._cache.clear()
    fresh = tab.page.context.new_page()
    fresh.goto(f"{url}/console")
    fresh.wait_for_selector("[data-testid=signin]")
    assert not tab.errors and not tab.dialogs and not tab.violations()
