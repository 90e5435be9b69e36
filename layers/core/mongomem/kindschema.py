"""JSON Schemas of custom memory types: what a declaration may hold, and which changes break stored memories.

Pure functions over plain dicts (no mongomem imports): the project config validates declarations with
them, the custom kind validates payloads, and the kind-schema repository compares a declaration with
the one stored when the type was created.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_FIELDS = 50
FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
SCALARS = ("string", "number", "integer", "boolean")
# Field names a payload may not use: they are the item's own (evidence) or the stored document's.
RESERVED_FIELDS = frozenset({"evidence_seqs"})
# How deep a schema may nest (objects and lists), how long a pattern may be.
MAX_SCHEMA_DEPTH = 16
MAX_PATTERN_CHARS = 1_000
# Keywords that reach outside the document or make references dynamic, and patternProperties (jsonschema
# runs those patterns with Python's backtracking engine inside additionalProperties).
UNSUPPORTED_KEYWORDS = frozenset(
    {
        "$id",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
        "patternProperties",
    }
)
SCHEMA_DIALECTS = (
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2020-12/schema#",
)


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
    problems: list[str] = structure_problems(schema)
    if problems:  # the metaschema check below recurses: a schema too deep for it stops here
        return problems
    from jsonschema import Draft202012Validator  # lazy: 77 ms
    from jsonschema.exceptions import SchemaError  # lazy: 80 ms

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
        if not FIELD_NAME.fullmatch(name) or name in RESERVED_FIELDS:
            problems.append(
                f"schema.properties.{name}: a field name is letters, digits and _ (not starting with a digit), "
                "at most 64 characters, and not evidence_seqs"
            )
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


def structure_problems(schema: dict[str, Any]) -> list[str]:
    """What makes a schema unusable for validating payloads, each naming its place (`schema.a.b`):
    nesting deeper than MAX_SCHEMA_DEPTH, references that leave the document or point back into
    themselves (validation would never end), dynamic references and anchors, `patternProperties`,
    and `pattern`s that cannot run in linear time (they run on RE2). Walked without recursion."""
    problems: list[str] = []
    refs: list[tuple[tuple[str, ...], str]] = []  # (where the $ref is, its target)
    stack: list[tuple[Any, tuple[str, ...]]] = [(schema, ())]
    while stack:
        node, at = stack.pop()
        where = ".".join(("schema", *at))
        if len(at) > MAX_SCHEMA_DEPTH:
            problems.append(f"{where}: the schema nests more than {MAX_SCHEMA_DEPTH} levels deep")
            continue
        if isinstance(node, list):
            stack.extend((item, (*at, str(i))) for i, item in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            here = f"{where}.{key}"
            if key in UNSUPPORTED_KEYWORDS and not _is_field(at):
                problems.append(f"{here}: {key} is not supported (a custom type's schema is self-contained)")
            elif key == "$schema" and value not in SCHEMA_DIALECTS:
                problems.append(f"{here}: only JSON Schema 2020-12 ({SCHEMA_DIALECTS[0]}) is supported")
            elif key == "$ref" and not _is_field(at):
                if not isinstance(value, str) or not value.startswith("#"):
                    problems.append(f"{here}: schema may only use local references ($ref starting with '#')")
                else:
                    refs.append((at, value))
            elif key == "pattern" and isinstance(value, str) and not _is_field(at):
                problem = pattern_problem(value)
                if problem:
                    problems.append(f"{here}: {problem}")
            stack.append((value, (*at, str(key))))
    return problems or _ref_problems(schema, refs)


def _is_field(at: tuple[str, ...]) -> bool:
    """Whether a key at `at` names a field (a key of `properties`), not a keyword."""
    return bool(at) and at[-1] in ("properties", "$defs", "definitions", "dependentSchemas")


def pattern_problem(pattern: str) -> str | None:
    """Why a `pattern` cannot be used (None: it runs on RE2, in time linear in the text)."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"a pattern holds at most {MAX_PATTERN_CHARS} characters"
    try:
        compiled_pattern(pattern)
    except ValueError as exc:
        return (
            f"{pattern[:80]!r} cannot run in linear time (RE2: {exc}); "
            "look-arounds and back-references are not supported"
        )
    return None


_PATTERNS: dict[str, Any] = {}


def linear_validator(schema: dict[str, Any]) -> Any:
    """A JSON Schema 2020-12 validator whose every regular expression runs on RE2: `pattern` (values,
    and property names through `propertyNames`), and `patternProperties` with the `additionalProperties`
    that depends on it. jsonschema's own run on Python's backtracking `re`, where one crafted value of
    30 characters can take seconds (issue 33). Time stays linear in the data for any schema that
    `regex_problems` accepts (it refuses the rest at config load)."""
    from jsonschema import Draft202012Validator, ValidationError, validators  # lazy: 76 ms

    def pattern(validator: Any, wanted: str, instance: Any, _schema: Any) -> Any:
        if validator.is_type(instance, "string") and not compiled_pattern(wanted).search(instance):
            yield ValidationError(f"{instance[:80]!r} does not match {wanted!r}")

    def pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, _schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for wanted, subschema in patterns.items():
            compiled = compiled_pattern(wanted)
            for name, value in instance.items():
                if compiled.search(name):
                    yield from validator.descend(value, subschema, path=name, schema_path=wanted)

    def additional_properties(validator: Any, extra: Any, instance: Any, schema: dict[str, Any]) -> Any:
        if not validator.is_type(instance, "object"):
            return
        declared = schema.get("properties", {})
        patterns = [compiled_pattern(p) for p in schema.get("patternProperties", {})]
        extras = [n for n in instance if n not in declared and not any(p.search(n) for p in patterns)]
        if validator.is_type(extra, "object"):
            for name in extras:
                yield from validator.descend(instance[name], extra, path=name)
        elif extra is False and extras:
            listed = ", ".join(repr(n[:80]) for n in sorted(extras)[:20])
            yield ValidationError(f"Additional properties are not allowed ({listed} unexpected)")

    def unique_items(validator: Any, unique: Any, instance: Any, _schema: Any) -> Any:
        if unique and validator.is_type(instance, "array"):
            seen: set[Any] = set()
            for item in instance:
                key = _equality_key(item)
                if key in seen:
                    yield ValidationError(f"{json.dumps(instance)[:80]} has non-unique elements")
                    return
                seen.add(key)

    linear = validators.extend(
        Draft202012Validator,
        {
            "pattern": pattern,
            "patternProperties": pattern_properties,
            "additionalProperties": additional_properties,
            "uniqueItems": unique_items,
        },
    )
    return linear(schema)


def _equality_key(value: Any) -> Any:
    """A hashable key two JSON values share exactly when JSON Schema calls them equal (1 and 1.0 are;
    true and 1 are not; objects whatever their key order): `uniqueItems` in one pass over the items,
    where jsonschema compares every pair of items that do not sort (objects), in quadratic time
    (issue 33). Recursion is bounded by the depth limit every request body passes."""
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, list):
        return ("array", tuple(_equality_key(v) for v in value))
    if isinstance(value, dict):
        return ("object", frozenset((k, _equality_key(v)) for k, v in value.items()))
    return ("other", repr(value))


def regex_problems(schema: Any) -> list[str]:
    """Every regular expression of a schema that cannot run in linear time (`pattern` values and
    `patternProperties` names), and `unevaluatedProperties` in a schema that has `patternProperties`
    anywhere (jsonschema evaluates those with Python's `re`), each naming its place. Walked without
    recursion."""
    problems: list[str] = []
    stack: list[tuple[Any, tuple[str, ...]]] = [(schema, ())]
    # where each of the two keywords appears: jsonschema's unevaluatedProperties evaluates the
    # patternProperties of every subschema it reaches (allOf, anyOf, oneOf, if/then/else, $ref,
    # dependentSchemas) with Python's `re`, so the two anywhere in one schema are refused
    unevaluated: list[str] = []
    patterned: list[str] = []
    while stack:
        node, at = stack.pop()
        if len(at) > 2 * MAX_SCHEMA_DEPTH:
            problems.append(f"{'.'.join(('schema', *at))}: the schema nests too deep")
            continue
        if isinstance(node, list):
            stack.extend((item, (*at, str(i))) for i, item in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        where = ".".join(("schema", *at))
        in_properties = bool(at) and at[-1] in ("properties", "patternProperties", "$defs")
        if not in_properties:
            if isinstance(node.get("pattern"), str):
                problem = pattern_problem(node["pattern"])
                if problem:
                    problems.append(f"{where}.pattern: {problem}")
            names = node.get("patternProperties")
            if isinstance(names, dict):
                patterned.append(where)
                for name in names:
                    problem = pattern_problem(name)
                    if problem:
                        problems.append(f"{where}.patternProperties: {problem}")
            if "unevaluatedProperties" in node:
                unevaluated.append(where)
        stack.extend((value, (*at, str(key))) for key, value in node.items())
    if unevaluated and patterned:
        problems.append(
            f"{min(unevaluated)}: unevaluatedProperties with patternProperties ({min(patterned)}) is not "
            "supported (their patterns would run on a backtracking engine)"
        )
    return problems


def compiled_pattern(pattern: str) -> Any:
    """The pattern compiled by RE2 (linear time, no catastrophic backtracking); ValueError if it cannot be."""
    if pattern not in _PATTERNS:
        import re2  # lazy: 3.1 ms

        options = re2.Options()
        options.log_errors = False
        try:
            _PATTERNS[pattern] = re2.compile(pattern, options)
        except re2.error as exc:
            raise ValueError(str(exc.args[0] if exc.args else exc).strip("b'\"")) from None
    return _PATTERNS[pattern]


def _pointer(ref: str) -> tuple[str, ...] | None:
    """A local reference ("#/$defs/a") as path tokens; None for an anchor-style one ("#name")."""
    if ref in ("#", "#/"):
        return ()
    if not ref.startswith("#/"):
        return None
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in ref[2:].split("/"))


def _resolves(schema: Any, path: tuple[str, ...]) -> bool:
    node = schema
    for token in path:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return False
    return True


def _ref_problems(schema: dict[str, Any], refs: list[tuple[tuple[str, ...], str]]) -> list[str]:
    """References that do not resolve, or that reach back into the place they are in (a recursive
    schema: validating a payload would follow it without end)."""
    problems: list[str] = []
    targets: dict[tuple[str, ...], tuple[tuple[str, ...], str]] = {}
    for at, ref in refs:
        where = ".".join(("schema", *at, "$ref"))
        path = _pointer(ref)
        if path is None or not _resolves(schema, path):
            problems.append(f"{where}: {ref!r} does not resolve to a part of this schema")
        else:
            targets[at] = (path, where)
    if problems:
        return problems
    # Following a reference evaluates its target, and so every reference inside that target: a cycle
    # of such steps (a reference inside its own target is the shortest) never ends.
    follows = {
        at: [other for other in targets if other[: len(path)] == path] for at, (path, _) in targets.items()
    }
    done: set[tuple[str, ...]] = set()
    for root in targets:
        if root in done:
            continue
        trail: list[tuple[str, ...]] = []
        on_trail: set[tuple[str, ...]] = set()
        stack: list[tuple[tuple[str, ...], int]] = [(root, 0)]
        while stack:
            node, step = stack.pop()
            if step == 0:
                trail.append(node)
                on_trail.add(node)
            nexts = follows[node]
            if step < len(nexts):
                stack.append((node, step + 1))
                child = nexts[step]
                if child in on_trail:
                    return [
                        f"{targets[child][1]}: the reference is recursive (following it reaches it again)"
                    ]
                if child not in done:
                    stack.append((child, 0))
            else:
                trail.pop()
                on_trail.discard(node)
                done.add(node)
    return problems


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
