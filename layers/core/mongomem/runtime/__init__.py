"""The composition root, by context over shared infrastructure (infra, shortterm, longterm, retrieval,
identity: `Services`), the lifecycle of one execution environment (`Runtime`: config reload, secret
rotation, control calls) and the process's globals (`configure`, `lambda_runtime`)."""

from mongomem.runtime.infra import ExtractorFactory
from mongomem.runtime.lifecycle import CONTROL_KEY, Runtime, lambda_runtime
from mongomem.runtime.process import configure
from mongomem.runtime.services import Services

__all__ = ["CONTROL_KEY", "ExtractorFactory", "Runtime", "Services", "configure", "lambda_runtime"]
