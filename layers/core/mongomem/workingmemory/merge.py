"""Merge rules of schema mode and the checks every update passes before it is stored."""

from __future__ import annotations

import copy
import json
from typing import Any

from mongomem.kindschema import linear_validator

MAX_REPORTED_ERRORS = 20


def deep_merge(base: Any, patch: dict[str, Any]) -> dict[str, Any]:
    """Merge `patch` into `base`: objects merge key by key, null deletes, anything else (arrays too) replaces.

    A `base` that is not an object is replaced; neither argument is modified.
    """
    result: dict[str, Any] = copy.deepcopy(base) if isinstance(base, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = deep_merge(result.get(key), value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def error_path(parts: Any) -> str:
    """A JSON location as the API reports it: dotted keys and indexes, `(root)` for the document."""
    return ".".join(str(p) for p in parts) or "(root)"


def schema_errors(schema: dict[str, Any], data: Any) -> list[dict[str, str]]:
    """Every place where `data` breaks `schema`, as [{"path", "message"}], shallowest first."""
    validator = linear_validator(schema)  # every pattern on RE2: linear in the data, whatever it holds
    errors = sorted(
        validator.iter_errors(data), key=lambda e: (len(e.absolute_path), error_path(e.absolute_path))
    )
    return [
        {"path": error_path(e.absolute_path), "message": e.message, "rule": str(e.validator)}
        for e in errors[:MAX_REPORTED_ERRORS]
    ]


def _normalise(text: str) -> str:
    # Agents re-emit templates with trailing spaces or a missing final newline; that is still the template.
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def is_template(content: str, template: str) -> bool:
    """True when `content` is the empty template, ignoring trailing whitespace."""
    return _normalise(content) == _normalise(template)


def has_content(stored: Any, template: str) -> bool:
    """True when stored working memory holds something beyond the empty template."""
    if stored is None:
        return False
    if isinstance(stored, str):
        return bool(stored.strip()) and not is_template(stored, template)
    return bool(stored)


def encoded_size(value: Any) -> int:
    """Bytes the value takes as UTF-8 text or compact JSON (what the size limit counts)."""
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass"))
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8"))
