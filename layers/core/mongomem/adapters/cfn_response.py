"""Answer a CloudFormation custom-resource request: one PUT of the result to its pre-signed ResponseURL."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
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
