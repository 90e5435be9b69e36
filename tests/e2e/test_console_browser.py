"""The memory console in a real browser: Debian's chromium, driven by Playwright, on the local stack.

Data is seeded through the public API (turns with a tool call, flushes, offline extraction, an LLM outage
that fails one kind, working memory); then a person's journey is walked and what is rendered is checked:
sign in, open a user, follow a memory to its source turns, retry the failed kind, edit working memory,
search, build a context, read the pipeline, delete a memory. Each view is saved as a screenshot under the
test's folder (MONGOMEM_CONSOLE_SCREENSHOTS=<dir> also writes the memory view there, for the README).
Hostile content must render as text and run nothing; the key must never appear in a URL; another
tenant's data must never appear.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mongomem.api.console import CSP
from mongomem.extraction.extractor import ExtractionResult, Extractor, SnapshotInput
from mongomem.identity.service import create_key
from mongomem.kindnames import BuiltinKind
from mongomem.local.queue import QueuePolicy
from mongomem.local.stack import LocalStack
from mongomem.runtime import configure
from tests.e2e.browser import Tab, api, rows, sign_in

CONFIG = "memory:\n  snapshot: {max_messages: 50, idle_seconds: 3600}\n"
TRIP_1: list[dict[str, Any]] = [
    {"role": "user", "content": "Hi! My name is Ana and I live in Lisbon."},
    {
        "role": "assistant",
        "content": "Let me look for flights from Lisbon.",
        "tool_calls": [{"id": "call-1", "name": "find_flights", "arguments": {"from": "LIS", "to": "OPO"}}],
    },
    {"role": "tool", "tool_call_id": "call-1", "name": "find_flights", "content": '{"flights": 3}'},
    {"role": "user", "content": "I'm allergic to peanuts. Keep that in mind for restaurant bookings."},
    {"role": "assistant", "content": "Noted: no peanuts."},
    {"role": "user", "content": "Last Saturday I visited Sintra with my sister Marta."},
]
TRIP_2 = [
    {"role": "user", "content": "Hi, I'm Ana. I moved to Porto last month, so I live in Porto now."},
    {"role": "assistant", "content": "Got it, Porto."},
    {"role": "user", "content": "Remember that I'm allergic to peanuts."},
]
WORKING_MEMORY = "# User Information\n- **First Name**: Ana\n- **Location**: Lisbon\n"
HOSTILE = [
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned = 'img'\">",
    "<a href=\"javascript:window.__pwned = 'link'\">open me</a>",
    "<svg onload=\"window.__pwned = 'svg'\"></svg><iframe src=\"javascript:parent.__pwned='frame'\"></iframe>",
]


# -- the stack and its data ---------------------------------------------------------------------------
class Outage:
    """The LLM provider down for one kind while `down` is set: the real extractor otherwise."""

    def __init__(self, real: Extractor, down: set[str]) -> None:
        self.real = real
        self.down = down

    def extract(self, item: SnapshotInput) -> ExtractionResult:
        if self.down:
            raise TimeoutError("the LLM provider did not answer within 30 s (outage)")
        return self.real.extract(item)


@dataclass
class Seeded:
    stack: LocalStack
    keys: dict[str, str]
    config_text: str
    ids: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.stack.url


def wait_for(predicate: Any, timeout: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError("condition not reached in time")


def converse(
    stack: LocalStack, key: str, user: str, session: str, turns: list[dict[str, Any]]
) -> dict[str, Any]:
    """Record a conversation, promote it now, and wait until every kind settled; the snapshot."""
    assert (
        api(stack, key, "POST", f"/v1/sessions/{session}/turns", {"user_id": user, "turns": turns})[0] == 201
    )
    status, flushed = api(stack, key, "POST", f"/v1/sessions/{session}/flush?user_id={user}")
    assert status == 200 and flushed["snapshot"], flushed
    sid = flushed["snapshot"]["snapshot_id"]

    def settled() -> dict[str, Any] | None:
        snap = api(stack, key, "GET", f"/v1/snapshots/{sid}?user_id={user}")[1]
        states = {s["status"] for s in snap["extraction"].values()}
        return snap if states <= {"done", "failed", "skipped"} else None

    return dict(wait_for(settled))


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    root = tmp_path_factory.mktemp("console")
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
        store = stack.keys
        keys = {
            "acme": create_key(store, "acme", "memory_service", name="console test")[0],
            "globex": create_key(store, "globex", "memory_service")[0],
            "acme-agent": create_key(store, "acme", "service_account", "ana")[0],
        }
        world = Seeded(stack, keys, CONFIG)
        acme = keys["acme"]
        # Given: the LLM is down for procedural extraction while Ana's first conversation is extracted
        down = {"procedural"}
        assert stack.services is not None
        outage = {
            BuiltinKind.procedural: lambda svc: Outage(svc.builtin_extractor(BuiltinKind.procedural), down)
        }
        configure(stack.services.replaced(extractors=outage))
        world.ids["trip-1"] = converse(stack, acme, "ana", "trip-1", TRIP_1)
        assert world.ids["trip-1"]["extraction"]["procedural"]["status"] == "failed"
        assert world.ids["trip-1"]["extraction"]["semantic"]["status"] == "done"
        down.clear()  # the provider is back; the failed message is in the DLQ
        world.ids["trip-2"] = converse(stack, acme, "ana", "trip-2", TRIP_2)
        status, _ = api(stack, acme, "PUT", "/v1/working-memory?user_id=ana", {"content": WORKING_MEMORY})
        assert status == 200
        # and another tenant with a user and a memory of its own
        globex = keys["globex"]
        turn = {"user_id": "zed", "turns": [{"role": "user", "content": "I keep bees in Ghent."}]}
        assert api(stack, globex, "POST", "/v1/sessions/g-1/turns", turn)[0] == 201
        payload = {"subject": "zed", "attribute": "hobby", "value": "beekeeping"}
        assert (
            api(
                stack,
                globex,
                "POST",
                "/v1/memories",
                {"user_id": "zed", "type": "semantic", "payload": payload},
            )[0]
            == 201
        )
        yield world
    finally:
        stack.stop()


# -- the journey --------------------------------------------------------------------------------------
def test_journey_sign_in_follow_a_memory_to_its_turns_retry_edit_search(seeded: Seeded, tab: Tab) -> None:
    page, key, url = tab.page, seeded.keys["acme"], seeded.url
    # Sign in
    page.goto(f"{url}/console")
    page.wait_for_selector("[data-testid=signin]")
    tab.shot("01-sign-in")
    sign_in(tab, url, key)
    assert page.inner_text("[data-testid=tenant]") == "tenant acme"
    # The tenant's users: Ana, never globex's Zed
    assert rows(tab, "[data-testid=user-row]", "data-user") == ["ana"]
    active = api(seeded.stack, key, "GET", "/v1/memories?user_id=ana&status=active")[1]["memories"]
    cells = page.locator("[data-user=ana] td").all_inner_texts()
    assert cells[1:3] == ["2", str(len(active))]  # sessions, current memories
    tab.shot("02-users")
    # Open a user: the sessions, newest first
    page.click("[data-user=ana] a")
    page.wait_for_selector("[data-testid=session-row]")
    assert rows(tab, "[data-testid=session-row]", "data-session") == ["trip-2", "trip-1"]
    tab.shot("03-sessions")

    # Memories by kind: semantic only
    page.click("[data-tab=memories]")
    page.wait_for_selector("[data-testid=memory-row]")
    assert {"episodic", "semantic"} <= set(rows(tab, "[data-testid=memory-row]", "data-kind"))
    page.select_option("[data-testid=filter-type]", "semantic")
    page.wait_for_url(re.compile(r".*type=semantic"))
    page.wait_for_selector("[data-testid=memory-row]")
    assert set(rows(tab, "[data-testid=memory-row]", "data-kind")) == {"semantic"}
    texts = page.locator("[data-testid=memory-row] a").all_inner_texts()
    assert "Ana home city: Porto" in texts and "Ana home city: Lisbon" in texts  # current and superseded
    tab.shot("04-memories")

    # One memory's version chain: UPDATE from Lisbon to Porto, decided by a rule, with its reason
    page.click("[data-testid=memory-row] a:text-is('Ana home city: Porto')")
    page.wait_for_selector("[data-testid=versions]")
    assert page.inner_text("[data-testid=memory-text]") == "Ana home city: Porto"
    versions = rows(tab, "[data-testid=version]", "data-version")
    assert versions == ["2", "1"]
    assert rows(tab, "[data-testid=version]", "data-status") == ["active", "superseded"]
    v2 = page.locator("[data-testid=version][data-version='2']")
    update = v2.locator("[data-decision=UPDATE]")
    assert "same key, another value" in update.inner_text() and "rule" in update.inner_text()
    assert "2 version(s) · 1 update(s)" in page.inner_text("[data-testid=memory-summary]")
    memory_shot = tab.shot("05-memory")
    target = os.environ.get("MONGOMEM_CONSOLE_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(memory_shot, Path(target) / "console-memory.png")
    # The reinforced fact shows its count
    page.goto(f"{url}/console#/users/ana/memories?type=semantic")
    page.click("[data-testid=memory-row] a:text-is('Ana allergy: peanuts')")
    page.wait_for_selector("[data-testid=versions]")
    assert "1 reinforcement(s)" in page.inner_text("[data-testid=memory-summary]")
    assert page.locator("[data-decision=REINFORCE]").count() == 1
    assert "\u00d72" in page.inner_text("[data-testid=version]")
    page.go_back()
    page.go_back()

    # Provenance: the first version's evidence leads to the source turns in their session
    page.wait_for_selector("[data-testid=version][data-version='1']")
    page.click("[data-testid=version][data-version='1'] [data-testid=evidence-link]")
    page.wait_for_selector("[data-testid=evidence-note]")
    assert page.inner_text("[data-testid=session-title]") == "Session trip-1"
    highlighted = page.locator(".turn.evidence [data-testid=turn-content]").all_inner_texts()
    assert highlighted and any("I live in Lisbon" in t for t in highlighted)
    # the timeline shows roles, times and the tool call
    assert rows(tab, "[data-testid=turn]", "data-role")[:3] == ["user", "assistant", "tool"]
    calls = page.inner_text("[data-testid=tool-calls]")
    assert "find_flights" in calls and '"to": "OPO"' in calls
    tab.shot("06-provenance")

    # Retry the failed kind: the outage's error is shown, the retry queues it and it is extracted
    failed = page.locator("[data-testid=snapshot] tr[data-kind=procedural]")
    assert failed.get_attribute("data-status") == "failed"
    assert failed.locator("td.num").first.inner_text() == "1"  # attempts
    assert "outage" in page.inner_text("[data-testid=snapshot] tr[data-error-for=procedural]")
    tab.shot("07-failed-kind")
    page.click("[data-testid=retry-procedural]")
    page.wait_for_selector(
        "[data-testid=snapshot] tr[data-kind=procedural][data-status=done]", timeout=60_000
    )
    snap = api(seeded.stack, key, "GET", f"/v1/snapshots/{seeded.ids['trip-1']['snapshot_id']}?user_id=ana")[
        1
    ]
    assert (
        snap["extraction"]["procedural"]["status"] == "done"
        and snap["extraction"]["procedural"]["attempts"] == 2
    )
    assert page.locator("[data-testid=retry-procedural]").count() == 0
    tab.shot("08-retried")

    # Working memory: view and edit (template mode), saved through the API
    page.click("[data-tab=working-memory]")
    page.wait_for_selector("[data-testid=wm-editor]")
    assert page.input_value("[data-testid=wm-editor]") == WORKING_MEMORY
    edited = WORKING_MEMORY.replace("Lisbon", "Porto") + "- **Allergies**: peanuts\n"
    page.fill("[data-testid=wm-editor]", edited)
    page.click("[data-testid=wm-save]")
    page.wait_for_selector("[data-testid=wm-saved]")
    assert "version 2" in page.inner_text("[data-testid=wm-saved]")
    assert api(seeded.stack, key, "GET", "/v1/working-memory?user_id=ana")[1]["content"] == edited
    assert "version 2" in page.inner_text("[data-testid=wm-meta]")
    tab.shot("09-working-memory")

    # Search: memories with each result's score and ranking parts
    page.click("[data-tab=search]")
    page.wait_for_selector("[data-testid=search-form]")
    page.fill("[data-testid=search-query]", "what is Ana allergic to?")
    page.click("[data-testid=search-form] button[type=submit]")
    page.wait_for_selector("[data-testid=search-result]")
    top = page.locator("[data-testid=search-result]").first
    assert "peanut" in top.inner_text().lower()
    assert float(top.locator("[data-testid=score]").inner_text()) > 0
    assert top.locator("[data-part=knn]").inner_text().startswith("#")
    assert top.locator("[data-part=reinforcement]").inner_text().startswith("\u00d7")
    tab.shot("10-search")
    # recall: the earlier message, with its neighbours
    page.select_option("[data-testid=search-target]", "recall")
    page.fill("[data-testid=search-query]", "trip to Sintra")
    page.click("[data-testid=search-form] button[type=submit]")
    page.wait_for_selector("[data-testid=recall-match]", timeout=60_000)
    best = page.locator("[data-testid=recall-match][data-rank='1']")
    assert "Sintra" in best.inner_text()
    assert re.search(r"(bm25|knn)\w* #\d", best.locator("[data-part=channels]").inner_text())
    # context: the block the agent would get, within the budget
    page.select_option("[data-testid=context-session]", "trip-2")
    page.fill("[data-testid=context-query]", "food allergies")
    page.fill("[data-testid=context-budget]", "400")
    page.click("[data-testid=context-form] button[type=submit]")
    page.wait_for_selector("[data-testid=context-block]")
    used = int(page.inner_text("[data-testid=context-tokens]").split(" of ")[0])
    assert 0 < used <= 400 and "peanut" in page.inner_text("[data-testid=context-block]").lower()
    tab.shot("11-context")

    # Pipeline health: ready, nothing failed any more, the config in use, memory activity charted
    page.click("[data-nav=pipeline]")
    page.wait_for_selector("[data-testid=activity-chart]")
    assert page.inner_text("[data-testid=pipeline-ready]").startswith("ready")
    assert (
        page.locator("[data-testid=kinds] td[data-col=failed]").all_inner_texts() == ["0"] * 5
    )  # every kind
    sha = hashlib.sha256(seeded.config_text.encode()).hexdigest()
    assert page.inner_text("[data-testid=config-version]") == sha[:12]
    totals = page.inner_text("[data-testid=activity-totals]")
    added, updated, reinforced = (int(n) for n in re.findall(r"\d+", totals))
    assert added >= 6 and updated == 1 and reinforced == 2
    assert page.locator("[data-testid=activity-chart] rect.bar-updated").count() == 1
    tab.shot("12-pipeline")

    # Delete a memory, with confirmation (Cancel keeps it)
    page.goto(f"{url}/console#/users/ana/memories?type=semantic")
    page.click("[data-testid=memory-row] a:text-is('Ana sister name: Marta')")
    page.wait_for_selector("[data-testid=delete-memory]")
    memory_id = page.url.rsplit("/", 1)[1]
    page.click("[data-testid=delete-memory]")
    assert page.is_visible("#confirm") and "Delete this memory" in page.inner_text("#confirm")
    tab.shot("13-delete-confirm")
    page.click("#confirm-cancel")
    assert (
        api(seeded.stack, key, "GET", f"/v1/memories/{memory_id}?user_id=ana")[1]["memory"]["status"]
        == "active"
    )
    page.click("[data-testid=delete-memory]")
    page.click("#confirm-ok")
    page.wait_for_url(re.compile(r".*/memories$"))
    page.wait_for_selector("[data-testid=memory-row]")
    assert "Ana sister name: Marta" not in page.locator("[data-testid=memory-row] a").all_inner_texts()
    assert (
        api(seeded.stack, key, "GET", f"/v1/memories/{memory_id}?user_id=ana")[1]["memory"]["status"]
        == "deleted"
    )

    # Throughout: no script error, no dialog, no CSP violation, and every API call carried the key
    assert tab.errors == [] and tab.dialogs == [] and tab.violations() == []
    api_calls = [r for r in tab.requests if "/v1/" in r.url]
    # (but the console's first question on a page load without a key: is this an open stack? a keyless
    # read of one user, which the API refused)
    probes = [r for r in api_calls if "x-api-key" not in r.headers]
    assert probes and {(r.url.split("/v1/")[1], r.response().status) for r in probes} == {
        ("users?limit=1", 401)
    }
    api_calls = [r for r in api_calls if r not in probes]
    assert len(api_calls) > 20 and all(r.headers.get("x-api-key") == key for r in api_calls)
    assert all(key not in r.url for r in tab.requests)
    assert len(list(tab.shots.glob("*.png"))) == 13


# -- safety -------------------------------------------------------------------------------------------
def test_hostile_content_is_shown_as_text_and_runs_nothing(seeded: Seeded, tab: Tab) -> None:
    stack, key, url = seeded.stack, seeded.keys["acme"], seeded.url
    # Given turns, a tool call, a memory and working memory full of markup and script
    turns: list[dict[str, Any]] = [{"role": "user", "content": text} for text in HOSTILE]
    turns.append(
        {
            "role": "assistant",
            "content": HOSTILE[1],
            "tool_calls": [{"id": "c-1", "name": HOSTILE[1], "arguments": {"html": HOSTILE[0]}}],
        }
    )
    converse(stack, key, "mallory", "xss-1", turns)
    payload = {"subject": HOSTILE[1], "attribute": "note", "value": HOSTILE[0]}
    status, written = api(
        stack, key, "POST", "/v1/memories", {"user_id": "mallory", "type": "semantic", "payload": payload}
    )
    assert status == 201
    assert (
        api(stack, key, "PUT", "/v1/working-memory?user_id=mallory", {"content": "\n".join(HOSTILE)})[0]
        == 200
    )
    # When every view shows it
    sign_in(tab, url, key)
    page = tab.page
    views = [
        ("users", "#/users", "[data-testid=user-row][data-user=mallory]"),
        ("session", "#/users/mallory/sessions/xss-1", "[data-testid=turn]"),
        ("memories", "#/users/mallory/memories", "[data-testid=memory-row]"),
        ("memory", f"#/users/mallory/memories/{written['memory']['memory_id']}", "[data-testid=versions]"),
        ("working-memory", "#/users/mallory/working-memory", "[data-testid=wm-editor]"),
    ]
    for name, target, ready in views:
        page.goto(f"{url}/console{target}")
        page.wait_for_selector(ready)
        page.wait_for_timeout(300)  # give an injected handler the chance to fire
        tab.shot(f"xss-{name}")
        # Then nothing ran and no element was made from the content
        assert page.evaluate("window.__pwned === undefined && window.parent.__pwned === undefined"), name
        assert (
            page.locator("main img, main script, main iframe, main svg, main object, main embed").count() == 0
        ), name
        assert page.locator("[href^='javascript:' i], [src^='javascript:' i]").count() == 0, name
        assert page.locator("main [onerror], main [onload], main [onclick]").count() == 0, name
    # and the content is there, as the literal text it is
    page.goto(f"{url}/console#/users/mallory/sessions/xss-1")
    page.wait_for_selector("[data-testid=turn]")
    shown = page.locator("[data-testid=turn-content]").all_inner_texts()
    for text in HOSTILE:
        assert text in shown
    assert HOSTILE[1] in page.inner_text("[data-testid=tool-calls]")
    page.goto(f"{url}/console#/users/mallory/memories/{written['memory']['memory_id']}")
    page.wait_for_selector("[data-testid=memory-text]")
    assert page.inner_text("[data-testid=memory-text]") == f"{HOSTILE[1]} note: {HOSTILE[0]}"
    page.goto(f"{url}/console#/users/mallory/working-memory")
    page.wait_for_selector("[data-testid=wm-editor]")
    assert page.input_value("[data-testid=wm-editor]") == "\n".join(HOSTILE)
    assert tab.dialogs == [] and tab.errors == [] and tab.violations() == []


def test_strict_csp_is_sent_and_enforced_and_the_key_never_enters_a_url(seeded: Seeded, tab: Tab) -> None:
    page, key, url = tab.page, seeded.keys["acme"], seeded.url
    response = page.goto(f"{url}/console")
    assert response is not None and response.status == 200
    headers = response.headers
    assert headers["content-security-policy"] == CSP
    assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "no-referrer"
    assert "frame-ancestors 'none'" in CSP and "unsafe" not in CSP
    # the browser enforces it: an inline script is refused
    page.wait_for_selector("[data-testid=signin]")
    try:
        page.add_script_tag(content="window.__inline = 'ran'")
    except Exception:  # Playwright may report the refused script as an error; what ran is what counts
        pass
    assert page.evaluate("window.__inline") is None
    assert any(v.startswith("script-src") for v in tab.violations())
    # When the user signs in and walks the views
    sign_in(tab, url, key)
    for target in (
        "#/users/ana",
        "#/users/ana/memories",
        "#/users/ana/sessions/trip-1",
        "#/users/ana/search",
        "#/pipeline",
    ):
        page.goto(f"{url}/console{target}")
        page.wait_for_selector(".view:not([aria-busy])")
    # Then the key lives in this tab's session storage only, and no request carried it in its URL
    assert page.evaluate("sessionStorage.getItem('mongomem.console.key')") == key
    assert page.evaluate("localStorage.length") == 0 and page.evaluate("document.cookie") == ""
    key_id = key.split("_")[1]
    assert tab.requests and all(key not in r.url and key_id not in r.url for r in tab.requests)
    assert all(r.url.startswith(url) for r in tab.requests)  # same origin only
    assert all(key not in (r.headers.get("referer") or "") for r in tab.requests)
    # and signing out forgets it
    page.click("#sign-out")
    page.wait_for_selector("[data-testid=signin]")
    assert page.evaluate("sessionStorage.length") == 0


def test_another_tenant_never_sees_this_tenants_data(seeded: Seeded, tab: Tab) -> None:
    page, url = tab.page, seeded.url
    acme_memory = api(seeded.stack, seeded.keys["acme"], "GET", "/v1/memories?user_id=ana")[1]["memories"][0]
    # Given globex signs in
    sign_in(tab, url, seeded.keys["globex"])
    assert page.inner_text("[data-testid=tenant]") == "tenant globex"
    assert rows(tab, "[data-testid=user-row]", "data-user") == ["zed"]
    tab.shot("globex-users")
    # When it goes straight to acme's user, session, memory
    page.goto(f"{url}/console#/users/ana/memories")
    page.wait_for_selector(".empty")
    assert page.locator("[data-testid=memory-row]").count() == 0
    page.goto(f"{url}/console#/users/ana/sessions/trip-1")
    page.wait_for_selector("[data-testid=error]")
    assert "404" in page.inner_text("[data-testid=error]") and page.locator("[data-testid=turn]").count() == 0
    page.goto(f"{url}/console#/users/ana/memories/{acme_memory['memory_id']}")
    page.wait_for_selector("[data-testid=error]")
    assert "not_found" in page.inner_text("[data-testid=error]")
    page.goto(f"{url}/console#/pipeline")
    page.wait_for_selector("[data-testid=activity-totals]")
    assert page.inner_text("[data-testid=activity-totals]").startswith("1 added · 0 updated · 0 reinforced")
    tab.shot("globex-pipeline")
    # Then none of acme's content reached this tab, in the page or in any API answer
    bodies = [r.text() for r in tab.responses if "/v1/" in r.url]
    assert len(bodies) >= 5
    for marker in ("Lisbon", "peanut", "Sintra", "Marta", acme_memory["text"]):
        assert marker not in page.content()
        assert all(marker not in body for body in bodies), marker
    # and acme's service account for Ana lists Ana alone
    page.click("#sign-out")
    sign_in(tab, url, seeded.keys["acme-agent"])
    assert rows(tab, "[data-testid=user-row]", "data-user") == ["ana"]


def test_the_sign_in_refuses_a_wrong_key(seeded: Seeded, tab: Tab) -> None:
    page, url = tab.page, seeded.url
    page.goto(f"{url}/console")
    page.fill("#api-key", "mm_" + uuid.uuid4().hex[:16] + "_" + "A" * 43)
    page.click("[data-testid=signin] button[type=submit]")
    page.wait_for_selector("[data-testid=error]")
    assert "refused" in page.inner_text("[data-testid=error]")
    assert page.evaluate("sessionStorage.length") == 0
    assert page.locator("[data-testid=users]").count() == 0
