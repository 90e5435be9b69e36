"""GET /v1/status: readiness (an LLM and an embedding provider usable), configuration, backlog.

The backlog is the caller's tenant's: no figure about another tenant's data reaches a caller.
Operators see every tenant's through `mongomem memory status` (read from MongoDB directly).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from mongomem.api.identity import Caller
from mongomem.longterm.conflicts import COUNTING_SECONDS, conflicts
from mongomem.status import service_status

if TYPE_CHECKING:
    from mongomem.config import Settings
    from mongomem.kinds import KindRegistry
    from mongomem.longterm.ports import MemoryRepository
    from mongomem.retrieval.reembed import EmbeddingDrift
    from mongomem.status import BacklogRepository
    from mongomem.vectors.port import VectorIndex


class StatusServices(Protocol):
    @property
    def settings(self) -> Settings: ...
    @property
    def vector_index(self) -> VectorIndex | None: ...
    @property
    def backlog(self) -> BacklogRepository: ...
    @property
    def memory_store(self) -> MemoryRepository: ...
    @property
    def kinds(self) -> KindRegistry: ...
    def readiness(self) -> dict[str, Any]: ...
    def store_reachable(self) -> bool: ...
    def embedding_drift(self, tenant: str | None) -> EmbeddingDrift | None: ...


def routes(svc: StatusServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    @router.get("/v1/status", summary="Readiness, configured providers and the caller's extraction backlog")
    def get_status() -> dict[str, Any]:
        return service_status(
            svc.readiness(),
            svc.settings,
            svc.vector_index,
            svc.store_reachable(),
            svc.backlog,
            caller.principal().tenant,
            drift=svc.embedding_drift,
            conflicts=lambda tenant: conflicts(
                svc.memory_store, svc.kinds, tenant or "", None, seconds=COUNTING_SECONDS, counting=True
            ),
        )

    return router
