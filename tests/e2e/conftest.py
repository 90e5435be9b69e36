"""Fixtures of the console's browser tests: one headless chromium per module, a fresh recorded tab per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser import CHROMIUM, CHROMIUM_ARGS, Tab, chromium_or_skip


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def tab(browser: Any, tmp_path: Path) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-GB")
    page = context.new_page()
    page.set_default_timeout(20_000)
    shots = tmp_path / "screenshots"
    shots.mkdir()
    t = Tab(page, shots)
    page.on("request", lambda request: t.requests.append(request))
    page.on("response", lambda response: t.responses.append(response))
    page.on("pageerror", lambda exc: t.errors.append(str(exc)))

    def on_dialog(dialog: Any) -> None:
        t.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    # Collect CSP violations from the start of every document (an init script is not page content).
    page.add_init_script(
        "window.__csp = []; document.addEventListener('securitypolicyviolation',"
        " (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));"
    )
    yield t
    context.close()
