"""The Powertools Tracer, for functions off the record path (see mongomem.observability)."""

from __future__ import annotations

from aws_lambda_powertools import Tracer

# botocore only: the X-Ray SDK's pymongo patch breaks on unsampled requests (its command listener
# annotates a subsegment that does not exist), and MongoDB time shows in the handler's own segment.
tracer = Tracer(patch_modules=("botocore",))
