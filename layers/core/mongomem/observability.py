"""Logger and Metrics: one instance each per process, configured from POWERTOOLS_* variables.

The Tracer lives in mongomem.tracing: it loads the X-Ray SDK and botocore (~200 ms of cold start),
so the record-turn function does without it and relies on Lambda's own active-tracing segment.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.metrics import MetricUnit, single_metric

# pydantic writes the offending value into a ValidationError's text ("... [type=..., input_value={...},
# input_type=dict]"); a traceback or message holding one would copy what a caller sent into the logs.
HIDDEN = "input_value=<hidden>"
_VALUE = "input_value="
_TYPE = ", input_type="


def scrub_line(line: str) -> str:
    """The line with every pydantic input value cut out (a value's repr is one line: the last
    `, input_type=` of the line is pydantic's own, whatever the value holds)."""
    start = line.find(_VALUE)
    if start < 0:
        return line
    end = line.rfind(_TYPE)
    return line[:start] + HIDDEN + (line[end:] if end > start else "")


def scrub(value: Any) -> Any:
    """A log record's fields with request values removed from every string (iterative: no recursion)."""
    if isinstance(value, str):
        return "\n".join(map(scrub_line, value.split("\n"))) if _VALUE in value else value
    if not isinstance(value, dict | list):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        holder, key = stack.pop()
        item = holder[key]
        if isinstance(item, BaseException):  # Powertools puts the exception itself in stack_trace.value
            item = holder[key] = str(item)
        if isinstance(item, str):
            if _VALUE in item:
                holder[key] = "\n".join(map(scrub_line, item.split("\n")))
        elif isinstance(item, dict):
            copy = dict(item)
            holder[key] = copy
            stack.extend((copy, k) for k in copy)
        elif isinstance(item, list):
            copy_list = list(item)
            holder[key] = copy_list
            stack.extend((copy_list, i) for i in range(len(copy_list)))
    return root[0]


class ScrubbingFormatter(LambdaPowertoolsFormatter):
    """Powertools' JSON lines, minus the request values pydantic puts into errors and tracebacks."""

    def serialize(self, log: Any) -> str:
        return super().serialize(scrub(log))


logger = Logger(logger_formatter=ScrubbingFormatter())
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
