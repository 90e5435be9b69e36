"""The process's key store, built once on first use from the shared runtime services."""

from __future__ import annotations

from mongomem.adapters.keys_store import KeysStore
from mongomem.runtime import Services, services


def keys_store(svc: Services | None = None) -> KeysStore:
    svc = svc or services()
    # kept on the services object: tests and the local stack that install new services get a new store
    store: KeysStore | None = svc.__dict__.get("_keys_store")
    if store is None:
        store = KeysStore(svc.store.db)
        if svc.settings.ensure_indexes:
            store.ensure_indexes()
        svc.__dict__["_keys_store"] = store
    return store
