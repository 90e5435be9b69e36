"""Custom types keep their name and meaning: the schema each was created with is stored and compared.

A custom type is created the first time a deployment runs with its declaration (the local stack on
start or apply, a deployed function when it loads the applied config). From then on a declaration of
the same name must stay compatible with the stored one (mongomem.kindschema.incompatible_changes);
an incompatible one is refused with a ConfigError naming each change, and the running config stays.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from mongomem.errors import ConfigError
from mongomem.kindschema import incompatible_changes

if TYPE_CHECKING:
    from mongomem.config import CustomTypeConfig


class DeclaredType(BaseModel):
    """A custom type as stored when it was created (and updated by each compatible change)."""

    name: str
    json_schema: dict[str, Any]
    match_key: list[str]
    sha256: str
    created_at: datetime
    updated_at: datetime


class KindSchemaRepository(Protocol):
    """The stored declarations of a deployment's custom types (one per name, for every tenant)."""

    def all(self) -> dict[str, DeclaredType]:
        """Every stored declaration by name."""
        ...

    def create(self, declared: DeclaredType) -> bool:
        """Store a new type's declaration; False (nothing written) when the name is already stored."""
        ...

    def replace(self, declared: DeclaredType) -> None:
        """Store a compatible change of a stored type's declaration (created_at kept)."""
        ...


def digest(schema: dict[str, Any], match_key: list[str]) -> str:
    text = json.dumps({"schema": schema, "match_key": match_key}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def problems(stored: dict[str, DeclaredType], declarations: Iterable[CustomTypeConfig]) -> list[str]:
    """Why each declaration cannot run against what is stored (empty: all compatible)."""
    found: list[str] = []
    for decl in declarations:
        old = stored.get(decl.name)
        if old is None or old.sha256 == digest(decl.schema_, decl.match_key):
            continue
        changes = incompatible_changes(old.json_schema, old.match_key, decl.schema_, decl.match_key)
        if changes:
            found.append(
                f"custom type {decl.name!r} (created {old.created_at:%Y-%m-%d}) cannot change incompatibly: "
                + "; ".join(changes)
                + " - keep the old fields, or declare a type of another name"
            )
    return found


def check_declared(
    repository: KindSchemaRepository, declarations: list[CustomTypeConfig], now: datetime, record: bool = True
) -> None:
    """Refuse (ConfigError) declarations that change a stored type incompatibly; with `record`, store new
    types and compatible changes."""
    if not declarations:
        return
    stored = repository.all()
    found = problems(stored, declarations)
    if found:
        raise ConfigError("invalid configuration: " + "\n".join(found))
    if not record:
        return
    for decl in declarations:
        sha = digest(decl.schema_, decl.match_key)
        old = stored.get(decl.name)
        if old is not None and old.sha256 == sha:
            continue
        entry = DeclaredType(
            name=decl.name,
            json_schema=decl.schema_,
            match_key=list(decl.match_key),
            sha256=sha,
            created_at=old.created_at if old else now,
            updated_at=now,
        )
        if old is not None:
            repository.replace(entry)
        elif not repository.create(entry):
            # another process created it meanwhile: compare with that one
            check_declared(repository, [decl], now, record=True)
