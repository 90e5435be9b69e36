"""API keys (`api_keys`): {_id: key id, tenant, kind, hash, name, created_at, revoked_at, fixed_user_id}."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.collection import Collection
from pymongo.errors import DuplicateKeyError

from mongomem.adapters.mongo.driver import MongoDatabase, translate_errors
from mongomem.errors import Conflict
from mongomem.models.keys import ApiKey

COLLECTION = "api_keys"


def _key(doc: dict[str, Any]) -> ApiKey:
    return ApiKey.model_validate({**doc, "key_id": doc["_id"]})


class MongoApiKeyRepository:
    """Implements identity.ports.ApiKeyRepository."""

    def __init__(self, database: MongoDatabase) -> None:
        self.database = database
        self.coll: Collection[dict[str, Any]] = database.db[COLLECTION]

    def ensure_indexes(self) -> None:
        self.database.ensure_once(COLLECTION, self._create_indexes)

    def _create_indexes(self) -> None:
        with translate_errors():
            self.coll.create_indexes([IndexModel([("tenant", ASCENDING), ("created_at", ASCENDING)])])

    def insert(self, key: ApiKey) -> None:
        doc = {"_id": key.key_id, **key.model_dump(exclude={"key_id", "fixed_user_id"})}
        if key.fixed_user_id is not None:
            doc["fixed_user_id"] = key.fixed_user_id
        with translate_errors():
            try:
                self.coll.insert_one(doc)
            except DuplicateKeyError as exc:
                raise Conflict(f"key {key.key_id!r} exists") from exc

    def get(self, key_id: str) -> ApiKey | None:
        with translate_errors():
            doc = self.coll.find_one({"_id": key_id})
        return _key(doc) if doc else None

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        query = {"tenant": tenant} if tenant else {}
        with translate_errors():
            cursor = self.coll.find(query, {"hash": 0}).sort([("tenant", 1), ("created_at", 1)])
            return [_key(d) for d in cursor]

    def revoke(self, key_id: str, at: datetime) -> bool:
        with translate_errors():
            result = self.coll.update_one({"_id": key_id, "revoked_at": None}, {"$set": {"revoked_at": at}})
        return bool(result.modified_count)

    def any(self) -> bool:
        with translate_errors():
            return self.coll.find_one({}, {"_id": 1}) is not None
