"""Answer a CloudFormation custom-resource request: one PUT of the result to its pre-signed ResponseURL."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any


def send(url: str, body: dict[str, Any], attempts: int = 5) -> None:
    """PUT the response document (retrying transient failures: CloudFormation waits for it)."""
    data = json.dumps(body).encode()
    # S3 pre-signed URLs are signed without a content type: send an empty one.
    request = urllib.request.Request(url, data=data, method="PUT", headers={"Content-Type": ""})
    for attempt in range(attempts):
        try:
            with urllib.request.urlopen(request, timeout=10):
                return
        except (urllib.error.URLError, TimeoutError):
            if attempt == attempts - 1:
                raise
            time.sleep(2**attempt)


def custom_resource(event: dict[str, Any], run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The CloudFormation custom-resource protocol around `run`: always answers, never leaves a stack hanging.

    Delete does nothing (data outlives the stack); Create and Update run `run` (the migration).
    """
    from mongomem.observability import logger

    stack = str(event.get("StackId") or "").split("/")[1:2] or ["stack"]
    physical = event.get("PhysicalResourceId") or f"mongomem-migration-{stack[0]}"
    status, reason, data = "SUCCESS", "", {}
    if event.get("RequestType") in ("Create", "Update"):
        try:
            data = {k: v if isinstance(v, str) else json.dumps(v) for k, v in run().items()}
        except Exception as exc:  # the stack must hear about any failure, not time out waiting
            logger.exception("migration failed")
            status, reason = "FAILED", f"{type(exc).__name__}: {exc}"[:1000]
    body = {
        "Status": status,
        "Reason": reason or f"see CloudWatch log stream {getattr(logger, 'name', 'mongomem')}",
        "PhysicalResourceId": physical,
        "StackId": event.get("StackId"),
        "RequestId": event.get("RequestId"),
        "LogicalResourceId": event.get("LogicalResourceId"),
        "Data": data,
    }
    send(str(event["ResponseURL"]), body)
    return body
