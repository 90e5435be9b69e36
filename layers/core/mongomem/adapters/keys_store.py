"""MongoDB adapter for API keys (`api_keys`): hashed keys, looked up by their key id."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo import ASCENDING, IndexModel
from pymongo.collection import Collection
from pymongo.database import Database

from mongomem.adapters.mongo import translate_errors

COLLECTION = "api_keys"


class KeysStore:
    def __init__(self, db: Database[dict[str, Any]]) -> None:
        self.coll: Collection[dict[str, Any]] = db[COLLECTION]

    def ensure_indexes(self) -> None:
        with translate_errors():
            self.coll.create_indexes([IndexModel([("tenant", ASCENDING), ("created_at", ASCENDING)])])

    def insert(self, record: dict[str, Any]) -> None:
        with translate_errors():
            self.coll.insert_one(record)

    def get(self, key_id: str) -> dict[str, Any] | None:
        with translate_errors():
            return self.coll.find_one({"_id": key_id})

    def list(self, tenant: str | None = None) -> list[dict[str, Any]]:
        query = {"tenant": tenant} if tenant else {}
        with translate_errors():
            return list(self.coll.find(query, {"hash": 0}).sort([("tenant", 1), ("created_at", 1)]))

    def revoke(self, key_id: str, at: datetime) -> bool:
        with translate_errors():
            result = self.coll.update_one({"_id": key_id, "revoked_at": None}, {"$set": {"revoked_at": at}})
        return bool(result.modified_count)

    def any(self) -> bool:
        """True once any key was ever created (the local stack then requires keys)."""
        with translate_errors():
            return self.coll.find_one({}, {"_id": 1}) is not None
