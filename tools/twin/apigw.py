"""An API Gateway (HTTP API) stand-in built from the deployed template's own OpenAPI body.

Routes, methods, the authorizer of each route (the Lambda REQUEST authorizer with its identity
source and result TTL, AWS_IAM, or NONE) and the integrations (function ARNs) all come from the
`AWS::ApiGatewayV2::Api` Body that the SAM transform produced, so a route missing from
template.yaml is missing here too. Requests arrive over HTTP (the SDK, the CLI) or as ready-made
events (the events/ samples), become payload-2.0 events, and go to the twin's functions.

What API Gateway refuses, this refuses ("Quotas for configuring and running an HTTP API", "Configure
CORS for HTTP APIs"; docs/aws-rules.md):
- a request body over 10 MB: 413;
- an integration that has not answered within 30 s: 503 to the client, while the function runs on;
- an authorizer that has not answered within 10 s: 500;
- CORS: with a CORS configuration, API Gateway answers a preflight OPTIONS itself, without any
  authorizer, unless a route matches OPTIONS (an explicit OPTIONS route or an ANY route): then the
  preflight goes through that route and its authorizer like any request. CORS headers are added to
  every response to an allowed origin.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mongomem.local.http import to_event

Invoke = Callable[[str, Any], Any]  # (function ARN, event) -> payload; raises on function errors

PAYLOAD_BYTES = 10 * 1024 * 1024  # "Payload size: 10 MB"
INTEGRATION_TIMEOUT = 30.0  # "Maximum integration timeout: 30 seconds"
AUTHORIZER_TIMEOUT = 10.0  # "Timeout for Lambda authorizer response: 10000 ms"


@dataclass
class Route:
    method: str  # GET, POST, ... or ANY
    template: str  # /v1/sessions/{session_id}/turns
    pattern: re.Pattern[str]
    function_arn: str
    auth: str  # the security scheme name: ApiKeyAuthorizer, AWS_IAM, NONE

    @property
    def key(self) -> str:
        return f"{self.method} {self.template}"


class ApiGateway:
    def __init__(self, body: dict[str, Any], invoke: Invoke, api_id: str, account: str, region: str) -> None:
        self.invoke = invoke
        self.api_id = api_id
        self.account = account
        self.region = region
        self.routes = _routes(body)
        self.authorizers = {
            name: scheme["x-amazon-apigateway-authorizer"]
            for name, scheme in (body.get("components", {}).get("securitySchemes") or {}).items()
            if "x-amazon-apigateway-authorizer" in scheme
        }
        self.cors: dict[str, Any] | None = body.get("x-amazon-apigateway-cors")
        self._cache: dict[tuple[str, str], tuple[float, dict[str, Any]]] = {}
        self._lock = threading.Lock()
        # functions keep running after API Gateway gave up on them: each call runs on its own thread
        self._calls = ThreadPoolExecutor(max_workers=32, thread_name_prefix="apigw-call")
        self.integration_timeout = INTEGRATION_TIMEOUT
        self.authorizer_timeout = AUTHORIZER_TIMEOUT
        self.requests: list[tuple[str, int]] = []  # (route key, status): the access log
        self.server: ThreadingHTTPServer | None = None

    # -- HTTP ----------------------------------------------------------------------------------------
    def serve(self, host: str = "127.0.0.1") -> str:
        self.server = ThreadingHTTPServer((host, 0), _http(self))
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, name="apigw", daemon=True).start()
        return f"http://{host}:{self.server.server_address[1]}"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
        self._calls.shutdown(wait=False, cancel_futures=True)

    def _call(self, arn: str, event: Any, timeout: float) -> Any:
        """Invoke and wait at most `timeout` seconds (TimeoutError then; the invocation runs on)."""
        future = self._calls.submit(self.invoke, arn, event)
        try:
            return future.result(timeout=timeout)
        except FutureTimeout as exc:
            raise TimeoutError(f"{arn} did not answer within {timeout:g}s") from exc

    def request(self, method: str, target: str, headers: dict[str, str], body: bytes) -> dict[str, Any]:
        return self.dispatch(to_event(method, target, headers, body, "203.0.113.20"))

    # -- routing -------------------------------------------------------------------------------------
    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        for route in self.routes:
            found = route.pattern.fullmatch(path)
            if found and route.method in (method, "ANY"):
                return route, found.groupdict()
        return None

    def dispatch(self, event: dict[str, Any]) -> dict[str, Any]:
        """A payload-2.0 event in, the response API Gateway would send out."""
        return self._with_cors(event, self._dispatch(event))

    def _dispatch(self, event: dict[str, Any]) -> dict[str, Any]:
        method = event["requestContext"]["http"]["method"]
        path = event.get("rawPath") or event["requestContext"]["http"]["path"]
        body = event.get("body") or ""
        size = len(body) * 3 // 4 if event.get("isBase64Encoded") else len(body.encode("utf-8"))
        if size > PAYLOAD_BYTES:
            return self._log("-", _gateway_error(413, "Request Entity Too Large"))
        found = self.match(method, path)
        if found is None and method == "OPTIONS" and self.cors is not None:
            return self._log("OPTIONS (CORS preflight)", self._preflight(event))
        if found is None:
            return self._log("-", _gateway_error(404, "Not Found"))
        route, params = found
        event = json.loads(json.dumps(event))
        event["routeKey"] = route.key
        ctx = event["requestContext"]
        ctx.update(routeKey=route.key, apiId=self.api_id, accountId=self.account, stage="$default")
        ctx.pop("authorizer", None)
        if params:
            event["pathParameters"] = params
        denied = self._authorize(route, event)
        if denied is not None:
            return self._log(route.key, denied)
        try:
            result = self._call(route.function_arn, event, self.integration_timeout)
        except TimeoutError:
            return self._log(route.key, _gateway_error(503, "Service Unavailable"))
        except Exception:
            return self._log(route.key, _gateway_error(500, "Internal Server Error"))
        return self._log(route.key, _normalise(result))

    # -- CORS ----------------------------------------------------------------------------------------
    def _allowed_origin(self, event: dict[str, Any]) -> str | None:
        origin = (event.get("headers") or {}).get("origin")
        if self.cors is None or not origin:
            return None
        allowed = [str(o) for o in self.cors.get("allowOrigins") or []]
        if "*" in allowed:
            return "*"
        return origin if origin in allowed else None

    def _preflight(self, event: dict[str, Any]) -> dict[str, Any]:
        assert self.cors is not None
        headers: dict[str, str] = {}
        origin = self._allowed_origin(event)
        if origin is not None:
            headers["access-control-allow-origin"] = origin
            headers["access-control-allow-methods"] = ",".join(self.cors.get("allowMethods") or [])
            headers["access-control-allow-headers"] = ",".join(self.cors.get("allowHeaders") or [])
            if self.cors.get("maxAge") is not None:
                headers["access-control-max-age"] = str(self.cors["maxAge"])
            if self.cors.get("allowCredentials"):
                headers["access-control-allow-credentials"] = "true"
        return {"statusCode": 204, "headers": headers, "body": ""}

    def _with_cors(self, event: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
        origin = self._allowed_origin(event)
        if origin is None or "access-control-allow-origin" in (response.get("headers") or {}):
            return response
        assert self.cors is not None
        headers = {
            k: v
            for k, v in (response.get("headers") or {}).items()
            if not k.lower().startswith("access-control-")
        }
        headers["access-control-allow-origin"] = origin
        if self.cors.get("exposeHeaders"):
            headers["access-control-expose-headers"] = ",".join(self.cors["exposeHeaders"])
        return {**response, "headers": headers}

    def _authorize(self, route: Route, event: dict[str, Any]) -> dict[str, Any] | None:
        ctx = event["requestContext"]
        headers = event.get("headers") or {}
        if route.auth == "NONE":
            return None
        if route.auth == "AWS_IAM":
            auth = headers.get("authorization", "")
            found = re.search(r"Credential=([^/]+)/", auth)
            if not auth.startswith("AWS4-HMAC-SHA256") or not found:
                return _gateway_error(403, "Forbidden")
            key = found.group(1)
            ctx["authorizer"] = {
                "iam": {
                    "accessKey": key,
                    "accountId": self.account,
                    "callerId": key,
                    "userArn": f"arn:aws:iam::{self.account}:user/operator",
                    "userId": key,
                }
            }
            return None
        spec = self.authorizers[route.auth]
        sources = [_source(s, event) for s in spec.get("identitySource") or []]
        if not all(sources):
            return _gateway_error(401, "Unauthorized")  # API Gateway answers without calling the authorizer
        ttl = float(spec.get("authorizerResultTtlInSeconds") or 0)
        cache_key = (route.auth, "|".join(str(s) for s in sources))
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(cache_key)
        if hit is not None and hit[0] > now:
            answer = hit[1]
        else:
            request = {
                "version": "2.0",
                "type": "REQUEST",
                "routeArn": f"arn:aws:execute-api:{self.region}:{self.account}:{self.api_id}/$default/{route.method}{route.template}",
                "identitySource": sources,
                "routeKey": route.key,
                "rawPath": event.get("rawPath"),
                "rawQueryString": event.get("rawQueryString", ""),
                "headers": headers,
                "queryStringParameters": event.get("queryStringParameters"),
                "pathParameters": event.get("pathParameters"),
                "requestContext": {k: v for k, v in ctx.items() if k != "authorizer"},
            }
            try:
                answer = self._call(_authorizer_arn(spec), request, self.authorizer_timeout)
            except Exception:  # a failed or timed-out authorizer
                return _gateway_error(500, "Internal Server Error")
            if ttl > 0:
                with self._lock:
                    self._cache[cache_key] = (now + ttl, answer)
        if not isinstance(answer, dict) or not answer.get("isAuthorized"):
            return _gateway_error(403, "Forbidden")
        ctx["authorizer"] = {"lambda": dict(answer.get("context") or {})}
        return None

    def _log(self, key: str, response: dict[str, Any]) -> dict[str, Any]:
        self.requests.append((key, int(response.get("statusCode", 200))))
        return response


def _routes(body: dict[str, Any]) -> list[Route]:
    routes = []
    for template, ops in (body.get("paths") or {}).items():
        regex = re.sub(r"\\\{([A-Za-z0-9_]+)\\\+\\\}", r"(?P<\1>.+)", re.escape(template))
        regex = re.sub(r"\\\{([A-Za-z0-9_]+)\\\}", r"(?P<\1>[^/]+)", regex)
        for method, op in ops.items():
            name = "ANY" if method == "x-amazon-apigateway-any-method" else method.upper()
            uri = op["x-amazon-apigateway-integration"]["uri"]
            arn = re.search(r"functions/(.+)/invocations", uri)
            security = (op.get("security") or [{"NONE": []}])[0]
            routes.append(
                Route(name, template, re.compile(regex), arn.group(1) if arn else uri, next(iter(security)))
            )
    # API Gateway prefers the most specific route: literal paths before templated ones
    return sorted(routes, key=lambda r: (r.template.count("{"), -len(r.template)))


def _authorizer_arn(spec: dict[str, Any]) -> str:
    found = re.search(r"functions/(.+)/invocations", str(spec["authorizerUri"]))
    assert found, spec
    return found.group(1)


def _source(source: str, event: dict[str, Any]) -> str | None:
    if source.startswith("$request.header."):
        return (event.get("headers") or {}).get(source.split(".", 2)[2].lower())
    if source.startswith("$request.querystring."):
        return (event.get("queryStringParameters") or {}).get(source.split(".", 2)[2])
    return None


def _gateway_error(status: int, message: str) -> dict[str, Any]:
    return {
        "statusCode": status,
        "headers": {"content-type": "application/json"},
        "body": json.dumps({"message": message}),
    }


def _normalise(result: Any) -> dict[str, Any]:
    """Payload 2.0: a dict with statusCode is the response; anything else is a 200 JSON body."""
    if isinstance(result, dict) and "statusCode" in result:
        return result
    return {"statusCode": 200, "headers": {"content-type": "application/json"}, "body": json.dumps(result)}


def _http(api: ApiGateway) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k: v for k, v in self.headers.items()}
            response = api.request(self.command, self.path, headers, raw)
            body = response.get("body") or ""
            data = (
                body.encode() if not response.get("isBase64Encoded") else __import__("base64").b64decode(body)
            )
            self.send_response(int(response.get("statusCode", 200)))
            for key, value in (response.get("headers") or {}).items():
                if key.lower() != "content-length":
                    self.send_header(key, str(value))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = _serve

    return Handler
