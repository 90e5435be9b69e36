"""Import route: past conversations recorded with their original times, promoted and extracted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Protocol

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import Caller
from mongomem.models.imports import ImportReport, ImportRequest
from mongomem.observability import metrics

if TYPE_CHECKING:
    from mongomem.shortterm.importing import Importer


class ImportServices(Protocol):
    @property
    def importer(self) -> Importer: ...


def routes(svc: ImportServices, caller: Caller) -> APIGatewayHttpRouter:
    router = APIGatewayHttpRouter()

    @router.post(
        "/v1/import",
        summary="Import past conversations (turns, JSONL or LoCoMo) with their original timestamps; idempotent",
    )
    def import_history(request: Annotated[ImportRequest, Body(embed=False)]) -> ImportReport:
        scope = caller.scope(request.user_id)
        report = svc.importer.run(scope, request)
        metrics.add_metric(name="TurnsImported", unit=MetricUnit.Count, value=report.turns_recorded)
        return report

    return router
