"""JSON Schemas of custom memory types: what a declaration may hold, and which changes break stored memories.

Pure functions over plain dicts (no mongomem imports): the project config validates declarations with
them, the custom kind validates payloads, and the kind-schema repository compares a declaration with
the one stored when the type was created.
"""

from __future__ import annotations

import re
from typing import Any

MAX_FIELDS = 50
FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
SCALARS = ("string", "number", "integer", "boolean")
# Field names a payload may not use: they are the item's own (evidence) or the stored document's.
RESERVED_FIELDS = frozenset({"evidence_seqs"})


def types_of(spec: Any) -> list[str]:
    """The JSON types a property allows (`type` as a string or a list; none: any)."""
    if not isinstance(spec, dict):
        return []
    got = spec.get("type")
    if isinstance(got, str):
        return [got]
    if isinstance(got, list):
        return [str(t) for t in got]
    return []


def schema_problems(schema: Any, match_key: list[str]) -> list[str]:
    """Why a custom type's payload schema (with its match key) cannot be used; empty when it can."""
    if not isinstance(schema, dict):
        return ["schema must be a JSON Schema object"]
    problems: list[str] = []
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        problems.append(f"schema is not valid JSON Schema{f' at {where}' if where else ''}: {exc.message}")
        return problems
    if schema.get("type") != "object":
        problems.append("schema.type must be 'object' (a payload is an object of fields)")
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        problems.append("schema.properties must name at least one field")
        return problems
    if len(props) > MAX_FIELDS:
        problems.append(f"schema.properties has {len(props)} fields; at most {MAX_FIELDS}")
    for name in props:
        if not FIELD_NAME.match(name) or name in RESERVED_FIELDS:
            problems.append(
                f"schema.properties.{name}: a field name is letters, digits and _ (not starting with a digit), "
                "at most 64 characters, and not evidence_seqs"
            )
    if _external_refs(schema):
        problems.append("schema may only use local references ($ref starting with '#')")
    required = set(schema.get("required") or [])
    for field in match_key:
        if field not in props:
            problems.append(f"match_key field {field!r} is not a property of the schema")
            continue
        kinds = [t for t in types_of(props[field]) if t != "null"]
        if not kinds or any(t not in SCALARS for t in kinds):
            problems.append(f"match_key field {field!r} must be a string, number, integer or boolean field")
        if field not in required:
            problems.append(f"match_key field {field!r} must be listed in schema.required")
    if len(set(match_key)) != len(match_key):
        problems.append("match_key names a field twice")
    return problems


def _external_refs(node: Any) -> bool:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            return True
        return any(_external_refs(v) for v in node.values())
    if isinstance(node, list):
        return any(_external_refs(v) for v in node)
    return False


def incompatible_changes(
    old_schema: dict[str, Any], old_key: list[str], new_schema: dict[str, Any], new_key: list[str]
) -> list[str]:
    """What in a new declaration breaks memories stored under the old one (empty: compatible).

    Compatible: new optional fields, a field no longer required, other descriptions, prompt or limits.
    Incompatible: another match key, a field removed, a field's type changed, a new required field,
    enum values removed.
    """
    found: list[str] = []
    if list(old_key) != list(new_key):
        found.append(f"match_key changes from {list(old_key)} to {list(new_key)}")
    old_props: dict[str, Any] = old_schema.get("properties") or {}
    new_props: dict[str, Any] = new_schema.get("properties") or {}
    for name, spec in old_props.items():
        if name not in new_props:
            found.append(f"field {name!r} is removed")
            continue
        before, after = set(types_of(spec)), set(types_of(new_props[name]))
        if after and not (before and before <= after):
            found.append(f"field {name!r} changes type from {sorted(before)} to {sorted(after)}")
        old_enum, new_enum = spec.get("enum"), new_props[name].get("enum")
        if isinstance(old_enum, list) and isinstance(new_enum, list):
            lost = [v for v in old_enum if v not in new_enum]
            if lost:
                found.append(f"field {name!r} no longer allows {lost}")
        elif old_enum is None and isinstance(new_enum, list):
            found.append(f"field {name!r} becomes an enum")
    newly_required = set(new_schema.get("required") or []) - set(old_schema.get("required") or [])
    for name in sorted(newly_required):
        found.append(f"field {name!r} becomes required (stored memories may lack it)")
    return found
