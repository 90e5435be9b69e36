"""An SDK method takes at most seven positional parameters: the options after them are keyword-only, so a
call names what it asks for (docs/sdk.md, "One argument order")."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from mongomem.client._calls import Methods, endpoint

POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def positional(build: Callable[..., Any]) -> list[str]:
    return [p.name for p in inspect.signature(build).parameters.values() if p.kind in POSITIONAL]


@pytest.mark.parametrize("name", sorted(n for n in dir(Methods) if isinstance(getattr(Methods, n), endpoint)))
def test_no_sdk_method_takes_more_than_seven_positional_parameters(name: str) -> None:
    assert len(positional(getattr(Methods, name).build)) <= 7


def test_recall_takes_its_options_by_name_only() -> None:
    build: Any = Methods.recall.build  # untyped: the test calls it the wrong way too
    # Given the options by name, When building the call, Then the body carries them
    call = build("ana", "airport", None, "resource", 3, message_range=0, min_score=0.5, order="time")
    assert (call.body["message_range"], call.body["min_score"], call.body["order"]) == (0, 0.5, "time")
    # Given them by position (as before), Then the call is refused before anything is sent
    with pytest.raises(TypeError):
        build("ana", "airport", None, "resource", 3, 0, 0.5, "time")
