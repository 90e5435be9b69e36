"""Reading a model's answer: the first JSON value in it, whatever prose or code fence surrounds it."""

from __future__ import annotations

import json
from typing import Any

_DECODER = json.JSONDecoder()


class NoJSON(ValueError):
    """The answer holds no JSON object or array."""


def first_json(text: str) -> Any:
    """The first JSON object or array in `text` (a fence, a preamble or a remark after it are ignored)."""
    start = 0
    while True:
        found = [i for i in (text.find("{", start), text.find("[", start)) if i >= 0]
        if not found:
            raise NoJSON("the answer holds no JSON object or array")
        at = min(found)
        try:
            value, _ = _DECODER.raw_decode(text, at)
            return value
        except ValueError:
            start = at + 1


def items_of(value: Any) -> list[Any] | None:
    """The items list of an answer: {"items": [...]}, a bare list, or an object whose only list is the
    items under another name ({"preferences": [...]}, as weak models rename it); None when it has none."""
    if isinstance(value, list):
        return value
    if not isinstance(value, dict):
        return None
    items = value.get("items")
    if isinstance(items, list):
        return items
    lists = [v for v in value.values() if isinstance(v, list)]
    if len(value) == 1 and len(lists) == 1:
        return lists[0]
    return None
