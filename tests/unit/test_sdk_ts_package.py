"""sdk-ts's manifest stays what `npm ci` on a fresh machine and `npm publish` need.

The client needs nothing but `fetch` at run time: no `dependencies`, and never a `file:` spec (a tarball
that exists only on the machine that packed it: `npm ci` elsewhere fails with ENOENT). The tests run
with the exact versions the lockfile pins, so the devDependencies name exact versions.
"""

from __future__ import annotations

import json
import re

from tests.conftest import ROOT

SDK = ROOT / "sdk-ts"
EXACT = re.compile(r"^\d+\.\d+\.\d+$")


def test_the_package_depends_on_nothing_at_run_time_and_pins_its_tools() -> None:
    manifest = json.loads((SDK / "package.json").read_text())
    assert not manifest.get("dependencies"), manifest.get("dependencies")
    loose = {k: v for k, v in manifest["devDependencies"].items() if not EXACT.match(v)}
    assert not loose, f"devDependencies must pin exact versions: {loose}"
    # and the lockfile was made from this very manifest, with nothing installed from a local file
    lock = json.loads((SDK / "package-lock.json").read_text())
    root = lock["packages"][""]
    assert root.get("dependencies", {}) == manifest.get("dependencies", {})
    assert root["devDependencies"] == manifest["devDependencies"]
    local = [k for k, v in lock["packages"].items() if str(v.get("resolved", "")).startswith("file:")]
    assert not local, local
