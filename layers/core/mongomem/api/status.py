"""GET /v1/status: readiness (an LLM and an embedding provider usable), configuration, backlog."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter

from mongomem.runtime import services
from mongomem.status import service_status

router = APIGatewayHttpRouter()


@router.get("/v1/status", summary="Readiness, configured providers and the extraction backlog")
def get_status() -> dict[str, Any]:
    return service_status(services())
