"""Custom memory types: a `MemoryKind` built from a project-config declaration (memory.custom_types).

The declaration's JSON Schema validates every payload (the LLM's items and direct API writes alike),
its match key says which fields identify one memory, its prompt says what to extract. Everything else
(reconciliation, search text, listing) is the same machinery as the built-in kinds'.
"""

from __future__ import annotations

import json
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, ValidationError

from mongomem.kinds.base import Item, KindError, MemoryKind, json_schema
from mongomem.kinds.meaning import norm, same_value
from mongomem.kindschema import linear_validator, types_of

if TYPE_CHECKING:
    from mongomem.config import CustomTypeConfig

# The longest a stored custom payload may be (as JSON): the text is embedded, the payload kept whole.
MAX_PAYLOAD_CHARS = 16_000


class CustomItem(Item):
    """The item of a custom type: its fields are checked by the declared JSON Schema, not by pydantic."""

    model_config = ConfigDict(extra="allow")


class CustomKind(MemoryKind):
    """A custom memory type. Build one with `custom_kind(declaration)`."""

    item = CustomItem
    declaration: CustomTypeConfig

    @cached_property
    def _validator(self) -> Any:
        return payload_validator(self.declaration.schema_)

    @property
    def properties(self) -> dict[str, Any]:
        return dict(self.declaration.schema_.get("properties") or {})

    def item_schema(self) -> dict[str, Any]:
        schema = self.declaration.schema_
        return {**schema, "properties": {**self.properties, **json_schema(Item)["properties"]}}

    def validate(self, data: Any) -> tuple[dict[str, Any], list[int]]:
        if not isinstance(data, dict):
            raise KindError(
                f"not a valid {self.name} memory", [{"path": "(item)", "message": "not an object"}]
            )
        try:
            seqs = Item.model_validate(data).evidence_seqs
        except ValidationError as exc:
            raise KindError(
                f"not a valid {self.name} memory",
                [{"path": "evidence_seqs", "message": str(exc.errors()[0]["msg"])}],
            ) from exc
        # only the declared fields are kept (like the built-in kinds' extra="ignore"): an item cannot widen
        # what is stored; a null is an absent optional field
        payload = {k: v for k, v in data.items() if k in self.properties and v is not None}
        errors = sorted(self._validator.iter_errors(payload), key=lambda e: list(e.absolute_path))
        if errors:
            details = [
                {"path": ".".join(str(p) for p in e.absolute_path) or "(item)", "message": e.message}
                for e in errors
            ]
            raise KindError(f"not a valid {self.name} memory", details)
        if len(json.dumps(payload, ensure_ascii=False)) > MAX_PAYLOAD_CHARS:
            raise KindError(
                f"not a valid {self.name} memory",
                [{"path": "(item)", "message": f"longer than {MAX_PAYLOAD_CHARS} characters as JSON"}],
            )
        junk = self.junk(payload)
        if junk:
            raise KindError(f"not a {self.name} memory worth keeping", junk, reason="junk")
        return payload, list(seqs)

    def meaningful(self, payload: dict[str, Any]) -> list[tuple[str, str, bool]]:
        required = set(self.declaration.schema_.get("required") or [])
        found: list[tuple[str, str, bool]] = []
        for name in self.properties:
            got = payload.get(name)
            if name not in required:
                continue
            if isinstance(got, str):
                found.append((name, got, name not in self.declaration.match_key))
            elif isinstance(got, list):
                found.extend((f"{name}.{i}", v, True) for i, v in enumerate(got) if isinstance(v, str))
        return found

    def key(self, payload: dict[str, Any]) -> str:
        return "|".join(norm(_plain(payload.get(f))) for f in self.declaration.match_key)

    def text(self, payload: dict[str, Any]) -> str:
        parts = [f"{name}: {_plain(payload[name])}" for name in self.properties if name in payload]
        return f"{self.name}. " + "; ".join(parts)

    def value(self, payload: dict[str, Any]) -> str:
        rest = [
            _plain(payload[n])
            for n in self.properties
            if n in payload and n not in self.declaration.match_key
        ]
        return " | ".join(rest) or self.key(payload)

    def same_content(self, old: dict[str, Any], new: dict[str, Any]) -> bool:
        # every non-key field says the same (a list field the same values); the key is already equal
        for name, spec in self.properties.items():
            if name in self.declaration.match_key:
                continue
            a, b = old.get(name), new.get(name)
            if a is None and b is None:
                continue
            if a is None or b is None:
                return False
            if "array" in types_of(spec) or isinstance(a, list | dict):
                if _plain(a) != _plain(b):
                    return False
            elif not same_value(_plain(a), _plain(b)):
                return False
        return True


def payload_validator(schema: dict[str, Any]) -> Any:
    """A JSON Schema 2020-12 validator whose `pattern` runs on RE2: time linear in the payload, so no
    pattern a project declares can hold a function on a crafted value (Python's `re` backtracks)."""
    return linear_validator(schema)


def _plain(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ", ".join(_plain(v) for v in value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def custom_kind(declaration: CustomTypeConfig) -> MemoryKind:
    """The `MemoryKind` of one declared custom type."""
    cls = type(
        f"Custom_{declaration.name}",
        (CustomKind,),
        {
            "name": declaration.name,
            "declaration": declaration,
            "instructions": declaration.prompt,
            "visibility": declaration.visibility,
            "roles": tuple(declaration.roles) if declaration.roles else MemoryKind.roles,
            # the match key's fields name the memory: a look-alike of them names the same one
            "named": tuple(declaration.match_key),
        },
    )
    kind: MemoryKind = cls()
    return kind
