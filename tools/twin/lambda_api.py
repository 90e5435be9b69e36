"""The Lambda Invoke API (POST /2015-03-31/functions/{name}/invocations) in front of the twin's functions.

What the CLI calls through AWS_ENDPOINT_URL_LAMBDA (control invocations of `mongomem memory apply
--wait` and `status`), with the real response shape: the payload, and `X-Amz-Function-Error:
Unhandled` with the error document when the function failed.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from .lambda_rt import InvocationError


class LambdaApi:
    def __init__(self, invoke: Callable[[str, Any, str], Any]) -> None:
        self.invoke = invoke  # (name or ARN, event, invocation type) -> payload
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, name="lambda-api", daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler(api: LambdaApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            found = re.fullmatch(r"/2015-03-31/functions/([^/]+)/invocations(\?.*)?", self.path)
            if found is None:
                return self._send(
                    404,
                    {"Type": "User", "message": f"unknown path {self.path}"},
                    error="ResourceNotFoundException",
                )
            name = unquote(found.group(1))
            try:
                event = json.loads(raw or b"{}")
            except ValueError:
                return self._send(
                    400, {"message": "the payload is not JSON"}, error="InvalidRequestContentException"
                )
            kind = self.headers.get("X-Amz-Invocation-Type") or "RequestResponse"
            try:
                payload = api.invoke(name, event, kind)
            except KeyError:
                return self._send(
                    404,
                    {"Type": "User", "message": f"Function not found: {name}"},
                    error="ResourceNotFoundException",
                )
            except InvocationError as exc:
                refused = {
                    "Throttled": (429, "TooManyRequestsException"),
                    "RequestTooLarge": (413, "RequestTooLargeException"),
                }.get(exc.kind)
                if refused is not None:
                    return self._send(
                        refused[0], {"Type": "User", "message": exc.payload["errorMessage"]}, error=refused[1]
                    )
                return self._send(200, exc.payload, function_error="Unhandled")
            if kind == "Event":
                return self._send(202, "")
            self._send(200, payload)

        def _send(
            self, status: int, payload: Any, error: str | None = None, function_error: str | None = None
        ) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("X-Amz-Executed-Version", "$LATEST")
            if error:
                self.send_header("x-amzn-ErrorType", error)
            if function_error:
                self.send_header("X-Amz-Function-Error", function_error)
            self.end_headers()
            self.wfile.write(data)

    return Handler
