"""Read a request body the way the API accepts it: UTF-8 JSON that BSON and JSON can both hold faithfully.

`MemoryApi.handle` decodes the body (`read_text`) before Powertools sees it; `parse_json` is the resolver's
JSON deserializer, run when Powertools builds the request's event, before any route (the body is parsed
once, and Powertools validates that value). What is
refused, and why, is in docs/security.md "Hostile input"; nothing here recurses, so a body nested
10,000 levels deep is a 422, never a RecursionError.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from itertools import accumulate
from typing import Any

from mongomem.models.common import INT64_MAX, INT64_MIN, MAX_JSON_DEPTH, check_text


class BodyRefused(Exception):
    """The body cannot be accepted; carries the status and the error envelope's fields."""

    def __init__(self, status: int, code: str, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details


class _Unrepresentable(ValueError):
    """A number JSON allows but BSON (or JSON output) cannot hold: raised from the parser's hooks."""


def _int64(text: str) -> int:
    try:
        value = int(text)
    except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
        raise _Unrepresentable(f"an integer of {len(text)} digits does not fit in 64 bits") from None
    if not INT64_MIN <= value <= INT64_MAX:
        raise _Unrepresentable(
            f"integer {text[:24]}{'...' if len(text) > 24 else ''} does not fit in 64 bits"
        )
    return value


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Unrepresentable(f"number {text[:24]} is outside the range of a 64-bit float")
    return value


def _constant(name: str) -> Any:
    raise BodyRefused(400, "invalid_json", f"{name} is not a JSON number", {"value": name})


# `\uD800`-`\uDFFF` escapes: only a body with one of these can decode to a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DELTA = {"[": 1, "{": 1, "]": -1, "}": -1}


def _outside_strings(text: str) -> str:
    """The text with every JSON string literal removed (linear time, no backtracking)."""
    unescaped = text.replace("\\\\", "").replace('\\"', "")
    return "".join(unescaped.split('"')[0::2])


def nesting_depth(text: str, limit: int = MAX_JSON_DEPTH) -> int:
    """How deeply the JSON text nests arrays and objects (0 when it cannot exceed `limit`)."""
    if text.count("[") + text.count("{") <= limit:
        return 0
    brackets = _NOT_BRACKET.sub("", _outside_strings(text))
    if len(brackets) <= limit:
        return 0
    return max(accumulate(map(_DELTA.__getitem__, brackets)), default=0)


def _lone_surrogate(value: Any) -> str | None:
    """The path of the first string or key holding a lone surrogate, if any."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            for key, inner in item.items():
                where = f"{path}.{key}" if path else str(key)
                try:
                    check_text(key)
                except ValueError:
                    return path or "(a key)"
                stack.append((inner, where))
        elif isinstance(item, list):
            stack.extend((inner, f"{path}[{i}]") for i, inner in enumerate(item))
        elif isinstance(item, str):
            try:
                check_text(item)
            except ValueError:
                return path or "(body)"
    return None


def read_text(event: dict[str, Any]) -> str:
    """The body's text (base64 decoded in the event itself, for Powertools); raises BodyRefused."""
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        try:
            raw = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raise BodyRefused(400, "invalid_json", "the body is not valid base64") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BodyRefused(
                400,
                "invalid_json",
                "the body must be JSON encoded as UTF-8",
                {"byte_offset": exc.start},
            ) from None
        # Powertools would decode it again: hand it the text.
        event["body"], event["isBase64Encoded"] = text, False
        return text
    try:
        check_text(body)
    except ValueError:
        raise BodyRefused(400, "invalid_json", "the body must be JSON encoded as UTF-8") from None
    return str(body)


def parse_json(text: str) -> Any:
    """A body's value, if JSON and BSON can both hold it faithfully; raises BodyRefused."""
    depth = nesting_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise BodyRefused(
            422,
            "validation_error",
            f"the body nests {depth} levels deep; at most {MAX_JSON_DEPTH} are accepted",
            {"max_depth": MAX_JSON_DEPTH},
        )
    try:
        value = json.loads(text, parse_int=_int64, parse_float=_finite, parse_constant=_constant)
    except _Unrepresentable as exc:
        raise BodyRefused(
            422, "validation_error", str(exc), {"limits": "64-bit integers, finite numbers"}
        ) from None
    except ValueError:  # json.JSONDecodeError
        raise BodyRefused(400, "invalid_json", "the request body is not valid JSON") from None
    if _SURROGATE_ESCAPE.search(text):
        where = _lone_surrogate(value)
        if where is not None:
            raise BodyRefused(
                400,
                "invalid_json",
                "the body holds a lone UTF-16 surrogate escape: not valid Unicode",
                {"path": where},
            )
    return value
