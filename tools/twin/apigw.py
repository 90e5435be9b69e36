"""An API Gateway (HTTP API) stand-in built from the deployed template's own OpenAPI body.

Routes, methods, the authorizer of each route (the Lambda REQUEST authorizer with its identity
source and result TTL, AWS_IAM, or NONE) and the integrations (function ARNs) all come from the
`AWS::ApiGatewayV2::Api` Body that the SAM transform produced, so a route missing from
template.yaml is missing here too. Requests arrive over HTTP (the SDK, the CLI) or as ready-made
events (the events/ samples), become payload-2.0 events, and go to the twin's functions.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mongomem.local.http import to_event

Invoke = Callable[[str, Any], Any]  # (function ARN, event) -> payload; raises on function errors


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
        self._cache: dict[tuple[str, str], tuple[float, dict[str, Any]]] = {}
        self._lock = threading.Lock()
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
        method = event["requestContext"]["http"]["method"]
        path = event.get("rawPath") or event["requestContext"]["http"]["path"]
        found = self.match(method, path)
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
            result = self.invoke(route.function_arn, event)
        except Exception:
            return self._log(route.key, _gateway_error(500, "Internal Server Error"))
        return self._log(route.key, _normalise(result))

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
                answer = self.invoke(_authorizer_arn(spec), request)
            except Exception:
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

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    return Handler
