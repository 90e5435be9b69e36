"""The Powertools Tracer, for functions off the record path (see mongomem.observability)."""

from __future__ import annotations

from aws_lambda_powertools import Tracer

tracer = Tracer()
