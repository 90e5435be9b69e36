"""Logger and Metrics: one instance each per process, configured from POWERTOOLS_* variables.

The Tracer lives in mongomem.tracing: it loads the X-Ray SDK and botocore (~200 ms of cold start),
so the record-turn function does without it and relies on Lambda's own active-tracing segment.
"""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit, single_metric

logger = Logger()
metrics = Metrics()


def emit(name: str, unit: MetricUnit, value: float, **dimensions: str) -> None:
    """One metric with its own dimensions (besides `service`), as its own EMF line.

    Dimensions added to `metrics` would apply to every metric of the invocation; these do not. The
    dashboard's widgets name exactly these dimension sets. A metric never fails the work it measures.
    """
    try:
        with single_metric(name=name, unit=unit, value=value, namespace=metrics.namespace) as metric:
            for key, val in dimensions.items():
                metric.add_dimension(name=key, value=val)
    except Exception:
        logger.debug("metric not emitted", extra={"metric": name})
