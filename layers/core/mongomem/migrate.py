"""Deploy-time migration: every MongoDB index and the search index, created once per deploy.

Deployed functions never create indexes on a cold start; the stack's `Migration` custom resource
runs this on every deploy that changes it (creating an existing index is a no-op), and
`mongomem migrate` runs it by hand. The search index is created for the configured embedding
dimension; an existing index of another dimension is reported (reindex with --re-embed).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from mongomem.errors import MongomemError
from mongomem.runtime import Services
from mongomem.vectors.port import DimensionMismatch, IndexUnavailable

# OpenSearch Serverless applies a new data-access policy within a minute or two: keep asking.
SEARCH_READY_SECONDS = 300


def migrate(
    svc: Services, progress: Callable[[str], None] | None = None, search_wait: float = SEARCH_READY_SECONDS
) -> dict[str, Any]:
    """Create the indexes; returns what was done (for the custom resource's Data and the CLI)."""
    say = progress or (lambda _line: None)
    settings = svc.settings.model_copy(update={"ensure_indexes": True, "create_search_index": True})
    full = Services(settings, mongodb_uri=svc.mongodb_uri)
    from mongomem.adapters.keys_store import KeysStore
    from mongomem.erasure import ensure_indexes as ensure_retention_indexes

    full.store.ensure_indexes()
    say(f"MongoDB {settings.db_name}: sessions, turns, snapshots indexes ready")
    full.memory_store.ensure_indexes()
    ensure_retention_indexes(full.store.db)
    KeysStore(full.store.db).ensure_indexes()
    say(f"MongoDB {settings.db_name}: memories, retention and api_keys indexes ready")
    report: dict[str, Any] = {"database": settings.db_name, "search_index": None}
    index = full.vector_index
    if index is None:
        say("no search index configured (OpenSearchMode=none)")
        return report
    dim = settings.embedding_config.dim or full.embedder.dim
    if not dim:
        raise MongomemError(
            "the embedding dimension is unknown: set EmbeddingDimension (memory.providers.embeddings.dim)"
        )
    deadline = time.monotonic() + search_wait
    while True:
        try:
            index.ensure(int(dim))
            break
        except DimensionMismatch as exc:
            raise MongomemError(
                f"the search index has dimension {exc.index_dim} but the embedder gives {exc.got_dim}: "
                "run `mongomem reindex --re-embed` to move to the new embedding model",
                {"index_dim": exc.index_dim, "dim": exc.got_dim},
            ) from exc
        except IndexUnavailable as exc:
            if time.monotonic() >= deadline:
                raise
            say(f"search index not reachable yet ({exc.message}); retrying")
            time.sleep(5)
    report["search_index"] = {"name": settings.opensearch_index, "dim": int(dim)}
    say(f"search index {settings.opensearch_index} ready (dimension {dim})")
    return report


def custom_resource(event: dict[str, Any], run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The CloudFormation custom-resource protocol around `run`: always answers, never leaves a stack hanging.

    Delete does nothing (data outlives the stack); Create and Update run the migration.
    """
    from mongomem.adapters.cfn_response import send
    from mongomem.observability import logger

    stack = str(event.get("StackId") or "").split("/")[1:2] or ["stack"]
    physical = event.get("PhysicalResourceId") or f"mongomem-migration-{stack[0]}"
    status, reason, data = "SUCCESS", "", {}
    if event.get("RequestType") in ("Create", "Update"):
        try:
            data = {k: v if isinstance(v, str) else json.dumps(v) for k, v in run().items()}
        except Exception as exc:  # the stack must hear about any failure, not time out waiting
            logger.exception("migration failed")
            status, reason = "FAILED", f"{type(exc).__name__}: {exc}"[:1000]
    body = {
        "Status": status,
        "Reason": reason or f"see CloudWatch log stream {getattr(logger, 'name', 'mongomem')}",
        "PhysicalResourceId": physical,
        "StackId": event.get("StackId"),
        "RequestId": event.get("RequestId"),
        "LogicalResourceId": event.get("LogicalResourceId"),
        "Data": data,
    }
    send(str(event["ResponseURL"]), body)
    return body
