"""`make dev`'s banner tells the truth about signing in to the console: with no API key yet the stack is
open and the console's sign-in takes an empty key."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace

import pytest

from mongomem.cli.main import _describe


def _stack(keys_required: bool) -> SimpleNamespace:
    settings = SimpleNamespace(enabled_extractions=["semantic"], tenant_default="default")
    return SimpleNamespace(
        url="http://127.0.0.1:3000",
        settings=settings,
        mongo=None,
        mongodb_uri="mongodb://127.0.0.1:1",
        keys_required=keys_required,
    )


@pytest.mark.parametrize(
    ("keys_required", "console", "auth"),
    [
        (False, "open stack: sign in with the key left empty", "OPEN: no API keys exist"),
        (True, "sign in with an API key", "x-api-key required"),
    ],
)
def test_the_banner_says_how_to_sign_in_to_the_console(
    keys_required: bool, console: str, auth: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _describe(_stack(keys_required), argparse.Namespace(scan_seconds=5.0), tmp_path)
    lines = capsys.readouterr().out.splitlines()
    console_line = next(line for line in lines if line.strip().startswith("console"))
    assert console in console_line
    assert any(auth in line for line in lines if line.strip().startswith("auth"))
