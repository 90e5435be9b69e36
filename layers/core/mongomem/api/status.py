"""GET /v1/status: readiness (an LLM and an embedding provider usable), configuration, backlog.

The backlog is the caller's tenant's: no figure about another tenant's data reaches a caller.
Operators see every tenant's through `mongomem memory status` (read from MongoDB directly).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from mongomem.api.identity import caller, services_of
from mongomem.longterm.conflicts import conflicts
from mongomem.status import service_status

router = APIGatewayHttpRouter()


@router.get("/v1/status", summary="Readiness, configured providers and the caller's extraction backlog")
def get_status() -> dict[str, Any]:
    svc = services_of(router)
    return service_status(
        svc.readiness(),
        svc.settings,
        svc.vector_index,
        svc.store_reachable(),
        svc.backlog,
        caller(router).tenant,
        svc.embedding_drift,
        lambda tenant: conflicts(svc.memory_store, svc.kinds, tenant or "", None),
    )
