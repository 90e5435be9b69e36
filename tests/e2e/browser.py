"""Helpers of the console's browser tests: Debian's chromium, a recorded page, the API over HTTP."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mongomem.local.stack import LocalStack

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_or_skip() -> None:
    if CHROMIUM.exists():
        return
    reason = "Debian's chromium package is not installed (/usr/bin/chromium); `make chromium` installs it"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason}: CI must run the console browser tests", pytrace=False)
    pytest.skip(reason)


@dataclass
class Tab:
    """A page with what it did recorded: requests, dialogs, script errors and CSP violations."""

    page: Any
    shots: Path
    requests: list[Any] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    responses: list[Any] = field(default_factory=list)

    def shot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def violations(self) -> list[str]:
        return list(self.page.evaluate("window.__csp || []"))


def api(stack: LocalStack, key: str | None, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json", **({"x-api-key": key} if key else {})}
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(stack.url + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def sign_in(tab: Tab, url: str, key: str) -> None:
    page = tab.page
    page.goto(f"{url}/console")
    page.wait_for_selector("[data-testid=signin]")
    page.fill("#api-key", key)
    page.click("[data-testid=signin] button[type=submit]")
    page.wait_for_selector("[data-testid=users] tbody tr, .empty")


def rows(tab: Tab, selector: str, attribute: str) -> list[str]:
    return [str(el.get_attribute(attribute)) for el in tab.page.query_selector_all(selector)]
