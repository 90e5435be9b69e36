"""The OpenSearch client: one per (endpoint, auth, region) per process, SigV4-signed for AWS, its
requests cut to the current API request's time budget."""

from __future__ import annotations

import threading
import time
from typing import Any, Literal

from opensearchpy import OpenSearch, Urllib3AWSV4SignerAuth, Urllib3HttpConnection
from opensearchpy.exceptions import ConnectionTimeout

from mongomem.budget import request_deadline

Auth = Literal["none", "sigv4-es", "sigv4-aoss"]
RETRY_ON_STATUS = (429, 502, 503, 504)

_CLIENTS: dict[tuple[str, str, str | None], OpenSearch] = {}
_CLIENTS_LOCK = threading.Lock()


def make_client(
    endpoint: str,
    auth: Auth = "none",
    region: str | None = None,
    timeout: float = 10,
    max_retries: int = 3,
) -> OpenSearch:
    """One cached client per (endpoint, auth, region) per process; retries 429/502/503/504."""
    if "://" not in endpoint:
        endpoint = f"https://{endpoint}"  # managed endpoints are given as bare host names
    key = (endpoint.rstrip("/"), auth, region)
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is None:
            client = _new_client(key[0], auth, region, timeout, max_retries)
            _within_request_budget(client, timeout, max_retries)
            _CLIENTS[key] = client
        return client


def _within_request_budget(client: OpenSearch, timeout: float, max_retries: int) -> None:
    """Cut each request's timeout so that it and its retries end before the current API request's
    deadline (mongomem.budget): API Gateway stops waiting at 30 s, the client then gets our 503."""

    perform = client.transport.perform_request

    def perform_request(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        deadline = request_deadline()
        if deadline is not None and not args:
            left = deadline - time.monotonic()
            if left < 0.2:
                raise ConnectionTimeout("TIMEOUT", "the request's time budget ran out", None)
            params = dict(kwargs.get("params") or {})
            asked = float(params.get("request_timeout") or timeout)
            params["request_timeout"] = max(0.1, min(asked, left / (max_retries + 1)))
            kwargs["params"] = params
        return perform(method, url, *args, **kwargs)

    client.transport.perform_request = perform_request  # type: ignore[method-assign]


def _new_client(
    endpoint: str, auth: Auth, region: str | None, timeout: float, max_retries: int
) -> OpenSearch:
    options: dict[str, Any] = {
        "hosts": [endpoint],
        "timeout": timeout,
        "max_retries": max_retries,
        "retry_on_status": RETRY_ON_STATUS,
        "retry_on_timeout": True,
        "connection_class": Urllib3HttpConnection,
    }
    if auth == "none":
        return OpenSearch(**options)
    if auth not in ("sigv4-es", "sigv4-aoss"):
        raise ValueError(f"unknown OpenSearch auth {auth!r}; use none, sigv4-es or sigv4-aoss")
    import boto3  # only signed (AWS) deployments pay for boto3's import time; lazy: 74 ms

    session = boto3.Session()
    credentials = session.get_credentials()
    region = region or session.region_name
    if credentials is None or not region:
        raise ValueError("SigV4 auth needs AWS credentials and a region (AWS_REGION)")
    service = "aoss" if auth == "sigv4-aoss" else "es"
    options["http_auth"] = Urllib3AWSV4SignerAuth(credentials, region, service)
    options["verify_certs"] = True
    return OpenSearch(**options)
