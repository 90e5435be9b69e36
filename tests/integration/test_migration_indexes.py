"""The deploy-time migration's indexes: a deployed function creates none on use (`ensure_indexes` off in
Lambda), so the root built for the migration creates every collection's, whatever it was built with."""

from __future__ import annotations

from typing import Any

from mongomem.runtime import Services


def index_names(svc: Services, collection: str) -> set[str]:
    return {i["name"] for i in svc.db[collection].list_indexes()}


def test_the_migration_creates_the_indexes_a_deployed_function_does_not(make_settings: Any) -> None:
    deployed = Services(make_settings(in_lambda=True))
    assert deployed.settings.ensure_indexes is False  # inside Lambda, the migration's job
    _ = deployed.sessions, deployed.turns  # built on use, without indexes
    assert index_names(deployed, "sessions") <= {"_id_"}

    target = deployed.for_migration()
    target.ensure_short_term_indexes()
    target.ensure_other_indexes()

    for collection in (
        "sessions",
        "turns",
        "snapshots",
        "threads",
        "api_keys",
        "memories",
        "recent_requests",
    ):
        assert index_names(target, collection) - {"_id_"}, collection
    target.database.drop()
