"""Stored declarations of custom memory types (collection `kind_schemas`, one document per name)."""

from __future__ import annotations

import json
from typing import Any

from pymongo.errors import DuplicateKeyError

from mongomem.adapters.mongo.driver import MongoDatabase, translate_errors
from mongomem.kinds.declared import DeclaredType
from mongomem.models.common import as_utc

COLLECTION = "kind_schemas"


class MongoKindSchemaRepository:
    """Implements kinds.declared.KindSchemaRepository (the type's name is the _id)."""

    def __init__(self, database: MongoDatabase) -> None:
        self.coll = database.db[COLLECTION]

    def ensure_indexes(self) -> None:
        """Nothing beyond _id (the name)."""

    def all(self) -> dict[str, DeclaredType]:
        with translate_errors():
            docs = list(self.coll.find({}))
        return {d["_id"]: _declared(d) for d in docs}

    def create(self, declared: DeclaredType) -> bool:
        doc = {"_id": declared.name, **_fields(declared)}
        try:
            with translate_errors():
                self.coll.insert_one(doc)
        except DuplicateKeyError:
            return False
        return True

    def replace(self, declared: DeclaredType) -> None:
        fields = _fields(declared)
        fields.pop("created_at")
        with translate_errors():
            self.coll.update_one({"_id": declared.name}, {"$set": fields})


def _fields(declared: DeclaredType) -> dict[str, Any]:
    # the schema is stored as JSON text: JSON Schema keywords start with `$`, which a field name may not

    return {
        "schema_json": json.dumps(declared.json_schema, sort_keys=True),
        "match_key": list(declared.match_key),
        "sha256": declared.sha256,
        "created_at": declared.created_at,
        "updated_at": declared.updated_at,
    }


def _declared(doc: dict[str, Any]) -> DeclaredType:
    return DeclaredType(
        name=doc["_id"],
        json_schema=json.loads(doc["schema_json"]),
        match_key=list(doc["match_key"]),
        sha256=doc["sha256"],
        created_at=as_utc(doc["created_at"]),
        updated_at=as_utc(doc["updated_at"]),
    )
