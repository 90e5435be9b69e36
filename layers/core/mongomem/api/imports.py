"""Import route: past conversations recorded with their original times, promoted and extracted."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Body
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from mongomem.api.identity import request_scope, services_of
from mongomem.models.imports import ImportReport, ImportRequest
from mongomem.observability import metrics

router = APIGatewayHttpRouter()


@router.post(
    "/v1/import",
    summary="Import past conversations (turns, JSONL or LoCoMo) with their original timestamps; idempotent",
)
def import_history(request: Annotated[ImportRequest, Body(embed=False)]) -> ImportReport:
    scope = request_scope(router, request.user_id)
    report = services_of(router).importer.run(scope, request)
    metrics.add_metric(name="TurnsImported", unit=MetricUnit.Count, value=report.turns_recorded)
    return report
