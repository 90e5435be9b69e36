"""SSM Parameter Store's request rate, in front of moto's SSM (which does not throttle).

"AWS Systems Manager endpoints and quotas": GetParameter, GetParameters and GetParametersByPath share
40 transactions per second per account and Region at the default (standard) throughput; beyond it SSM
answers `ThrottlingException` (HTTP 400, "Rate exceeded"). The functions reach SSM through this proxy
(AWS_ENDPOINT_URL_SSM), so a burst of cold starts is throttled as it would be. `throttle_next(n)` makes
the next n reads fail that way whatever the rate (a burst the test cannot time); `latency` delays every
read (a slow network). It also holds a value to its tier's size, which moto does not ("Managing
parameter tiers": 4 KB standard, 8 KB advanced). Everything else passes through to moto unchanged.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

READS = {"AmazonSSM.GetParameter", "AmazonSSM.GetParameters", "AmazonSSM.GetParametersByPath"}
READS_PER_SECOND = 40
VALUE_BYTES = {"Standard": 4096, "Advanced": 8192, "Intelligent-Tiering": 8192}


class SsmThrottle:
    def __init__(self, upstream: str, reads_per_second: int = READS_PER_SECOND) -> None:
        self.upstream = upstream.rstrip("/")
        self.reads_per_second = reads_per_second
        self.latency = 0.0
        self.throttled = 0  # reads answered ThrottlingException
        self._forced = 0
        self._recent: deque[float] = deque()
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, name="ssm-throttle", daemon=True).start()

    def throttle_next(self, reads: int) -> None:
        with self._lock:
            self._forced = reads

    def admit(self) -> bool:
        """Whether one more read fits the account's rate now (and count it)."""
        now = time.monotonic()
        with self._lock:
            if self._forced > 0:
                self._forced -= 1
                self.throttled += 1
                return False
            while self._recent and now - self._recent[0] >= 1.0:
                self._recent.popleft()
            if len(self._recent) >= self.reads_per_second:
                self.throttled += 1
                return False
            self._recent.append(now)
            return True

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler(proxy: SsmThrottle) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            target = self.headers.get("X-Amz-Target", "")
            if target == "AmazonSSM.PutParameter":
                request = json.loads(body or b"{}")
                limit = VALUE_BYTES.get(str(request.get("Tier") or "Standard"), 4096)
                if len(str(request.get("Value", "")).encode("utf-8")) > limit:
                    message = f"{request.get('Tier') or 'Standard'} tier parameters support a maximum parameter value of {limit} characters."
                    data = json.dumps({"__type": "ValidationException", "message": message}).encode()
                    return self._reply(400, data, {"Content-Type": "application/x-amz-json-1.1"})
            if target in READS:
                if proxy.latency:
                    time.sleep(proxy.latency)
                if not proxy.admit():
                    data = json.dumps({"__type": "ThrottlingException", "message": "Rate exceeded"}).encode()
                    return self._reply(400, data, {"Content-Type": "application/x-amz-json-1.1"})
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            request = urllib.request.Request(
                proxy.upstream + self.path, data=body, headers=headers, method="POST"
            )
            try:
                with urllib.request.urlopen(request, timeout=60) as answer:
                    return self._reply(answer.status, answer.read(), dict(answer.headers))
            except urllib.error.HTTPError as exc:
                return self._reply(exc.code, exc.read(), dict(exc.headers))

        def _reply(self, status: int, data: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for key, value in headers.items():
                if key.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
