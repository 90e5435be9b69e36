"""Logger, Tracer and Metrics: one instance each per process, configured from POWERTOOLS_* variables."""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer

logger = Logger()
tracer = Tracer()
metrics = Metrics()
