"""Answer a CloudFormation custom-resource request: one PUT of the result to its pre-signed ResponseURL.

CloudFormation waits for that PUT until the resource's ServiceTimeout (an hour by default) and, on a
rollback, sends the request again: a function that fails or times out before answering leaves the stack
waiting that hour, and a rollback that meets the same failure ends UPDATE_ROLLBACK_FAILED. So every path
answers: Delete at once (the data outlives the stack; nothing is built for it), Create and Update with
the work's result, or FAILED with the reason when the work cannot even start (a config or a database
that cannot be read), raises, or would outlast the function's remaining time.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

# The PUT's own budget (attempts x timeout + backoff) and what is kept back for it at the end.
PUT_ATTEMPTS = 4
PUT_TIMEOUT = 5.0
ANSWER_RESERVE_SECONDS = 35.0
# The work is asked to wrap up this much before the answer reserve (it stops re-keying, waiting).
WORK_RESERVE_SECONDS = 20.0


def send(url: str, body: dict[str, Any], attempts: int = PUT_ATTEMPTS) -> None:
    """PUT the response document (retrying transient failures: CloudFormation waits for it)."""
    data = json.dumps(body).encode()
    # S3 pre-signed URLs are signed without a content type: send an empty one.
    request = urllib.request.Request(url, data=data, method="PUT", headers={"Content-Type": ""})
    for attempt in range(attempts):
        try:
            with urllib.request.urlopen(request, timeout=PUT_TIMEOUT):
                return
        except (urllib.error.URLError, TimeoutError):
            if attempt == attempts - 1:
                raise
            time.sleep(2**attempt)


def custom_resource(
    event: dict[str, Any],
    run: Callable[[float | None], dict[str, Any]],
    remaining_seconds: Callable[[], float] | None = None,
) -> dict[str, Any]:
    """The custom-resource protocol around `run(deadline)`: always answers, within the function's time.

    `remaining_seconds` is the invocation's time left (the Lambda context's); `run` gets a
    time.monotonic() deadline by which to wrap up, and is abandoned (FAILED) if it has not returned
    when only the answer's reserve is left.
    """
    from mongomem.observability import logger  # lazy: 26 ms

    stack = str(event.get("StackId") or "").split("/")[1:2] or ["stack"]
    physical = event.get("PhysicalResourceId") or f"mongomem-migration-{stack[0]}"
    status, reason, data = "SUCCESS", "", {}
    if event.get("RequestType") in ("Create", "Update"):
        left = remaining_seconds() if remaining_seconds is not None else None
        answer_by = None if left is None else time.monotonic() + max(1.0, left - ANSWER_RESERVE_SECONDS)
        work_by = None if answer_by is None else answer_by - WORK_RESERVE_SECONDS
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                outcome["data"] = run(work_by)
            except Exception as exc:  # the stack must hear about any failure, not time out waiting
                logger.exception("migration failed")
                outcome["error"] = f"{type(exc).__name__}: {exc}"

        worker = threading.Thread(target=work, name="custom-resource", daemon=True)
        worker.start()
        worker.join(None if answer_by is None else max(0.0, answer_by - time.monotonic()))
        if worker.is_alive():
            status, reason = "FAILED", "the migration did not finish within the function's timeout"
            logger.error(reason)
        elif "error" in outcome:
            status, reason = "FAILED", outcome["error"][:1000]
        else:
            data = {k: v if isinstance(v, str) else json.dumps(v) for k, v in outcome["data"].items()}
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
