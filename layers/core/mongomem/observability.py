"""Logger and Metrics: one instance each per process, configured from POWERTOOLS_* variables.

The Tracer lives in mongomem.tracing: it loads the X-Ray SDK and botocore (~200 ms of cold start),
so the record-turn function does without it and relies on Lambda's own active-tracing segment.
"""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics

logger = Logger()
metrics = Metrics()
