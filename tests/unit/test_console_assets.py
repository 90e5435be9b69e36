"""The console's shipped files never turn data into markup, and the local front's public paths are exact."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mongomem.api.console import STATIC, TYPES, assets
from mongomem.config import settings_from_env
from mongomem.local.http import is_public
from mongomem.local.stack import PUBLIC_PATHS

# Every way a string can become markup or code in a browser.
SINKS = [
    r"\.innerHTML\b",
    r"\.outerHTML\b",
    r"insertAdjacentHTML",
    r"document\.write",
    r"\beval\s*\(",
    r"new\s+Function\b",
    r"setTimeout\s*\(\s*['\"`]",
    r"setInterval\s*\(\s*['\"`]",
    r"createContextualFragment",
    r"DOMParser",
    r"srcdoc",
    r"javascript:",
    r"setAttribute\(\s*['\"]on",
    r"setAttribute\(\s*['\"]style",
    r"\.style\.",
]


@pytest.mark.parametrize("name", sorted(p.name for p in STATIC.glob("*.js")))
def test_scripts_use_no_html_or_code_sink(name: str) -> None:
    text = (STATIC / name).read_text()
    found = [pattern for pattern in SINKS if re.search(pattern, text)]
    assert not found, f"{name} uses {found}: build nodes with dom.js (text nodes, listed attributes)"


def test_the_page_has_no_inline_script_or_style() -> None:
    page = (STATIC / "index.html").read_text()
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", page, flags=re.S)
    assert scripts == [""]  # only the module, loaded from its file
    assert not re.search(r"\son\w+=", page) and "style=" not in page and "<style" not in page


def test_only_shipped_file_types_are_served() -> None:
    shipped = assets()
    assert "index.html" in shipped and "app.js" in shipped
    assert all(Path(name).suffix in TYPES for name in shipped)
    assert "__init__.py" not in shipped


@pytest.mark.parametrize(
    ("path", "public"),
    [
        ("/console", True),
        ("/console/app.js", True),
        ("/v1/docs", True),
        ("/console/", False),  # {proxy+} needs at least one character
        ("/consoleX", False),
        ("/console/../v1/users", False),
        ("/console/./app.js", False),
        ("/v1/users", False),
        ("/v1/docs/extra", False),
    ],
)
def test_public_paths_follow_the_template(path: str, public: bool) -> None:
    assert is_public(path, PUBLIC_PATHS) is public


def test_the_running_config_version_is_the_sha256_of_its_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hashlib
    import importlib

    config = tmp_path / "project-config.yaml"
    config.write_text("memory:\n  snapshot: {max_messages: 9}\n")
    local = settings_from_env({"MONGOMEM_CONFIG_FILE": str(config)})
    assert local.config_sha256 == hashlib.sha256(config.read_bytes()).hexdigest()
    assert local.config_source == "file"
    # a deployed function runs the applied SSM version; its Runtime stamps that version's digest
    from mongomem.runtime import Runtime

    ssm_text = '{"memory":{"snapshot":{"max_messages":9}}}'
    runtime = Runtime({"MONGOMEM_CONFIG_PARAMETER": "/mongomem/s/project-config"})
    # the module the Runtime imports (sys.modules'; tests that reload handlers leave the package's
    # attribute pointing at an older copy), answering as the applied SSM version would
    source = importlib.import_module("mongomem.adapters.config_source")
    monkeypatch.setattr(
        source,
        "read_applied",
        lambda name, max_age, force=False: source.ConfigText(ssm_text, f"ssm:{name}:applied"),
    )
    # (a stack another test module still runs may have installed its services for the process)
    monkeypatch.setattr(importlib.import_module("mongomem.runtime.process"), "_installed", None)
    stamped = runtime.services().settings
    assert stamped.config_sha256 == hashlib.sha256(ssm_text.encode()).hexdigest()
    assert stamped.config_source == "deployed" and stamped.memory.snapshot.max_messages == 9
    assert (settings_from_env({}).config_sha256, settings_from_env({}).config_source) == (None, "defaults")
