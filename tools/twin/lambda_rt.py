"""Lambda execution environments for the twin: one isolated interpreter per function, behind a Runtime API.

Each function runs in `python -I -S tools/twin/bootstrap.py` (no site-packages, no PYTHONPATH, no
inherited environment): it sees only its task root (the function's built code), the layer, and the
libraries the Lambda Python runtime provides (boto3). The environment is exactly the function's
resolved Environment.Variables plus what Lambda itself sets. The Runtime API server hands it one
invocation at a time; a call that outlives the function's Timeout kills the environment, as Lambda
does, and the next invocation cold-starts a new one. stdout and stderr go to the function's log.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

BOOTSTRAP = Path(__file__).with_name("bootstrap.py")


class InvocationError(Exception):
    def __init__(self, kind: str, payload: dict[str, Any]) -> None:
        super().__init__(f"{kind}: {payload.get('errorType')}: {payload.get('errorMessage')}")
        self.kind = kind  # Unhandled | TimedOut | InitError
        self.payload = payload


@dataclass
class FunctionSpec:
    logical_id: str
    name: str
    arn: str
    handler: str
    timeout: float
    memory: int
    task_root: Path
    sys_path: list[Path]
    environment: dict[str, str]
    log_path: Path
    aws_env: dict[str, str] = field(default_factory=dict)  # credentials, region, endpoints (the "network")


@dataclass
class _Invocation:
    request_id: str
    event: Any
    deadline_ms: int
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: dict[str, Any] | None = None


class ExecutionEnvironment:
    """One function's environment: a Runtime API server and (after the first call) its interpreter."""

    def __init__(self, spec: FunctionSpec) -> None:
        self.spec = spec
        self._pending: queue.Queue[_Invocation] = queue.Queue()
        self._current: _Invocation | None = None
        self._init_error: dict[str, Any] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()  # one invocation at a time, like one Lambda environment
        self.cold_starts = 0
        self.invocations = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _runtime_api(self))
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, name=f"rt-{spec.logical_id}", daemon=True).start()

    @property
    def api_address(self) -> str:
        return f"127.0.0.1:{self.server.server_address[1]}"

    def _environ(self) -> dict[str, str]:
        s = self.spec
        env = {
            **s.environment,
            **s.aws_env,
            "AWS_LAMBDA_FUNCTION_NAME": s.name,
            "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(s.memory),
            "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{s.name}",
            "AWS_LAMBDA_LOG_STREAM_NAME": f"twin/{uuid.uuid4().hex}",
            "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
            "AWS_EXECUTION_ENV": "AWS_Lambda_python3.11",
            "AWS_LAMBDA_RUNTIME_API": self.api_address,
            "LAMBDA_TASK_ROOT": str(s.task_root),
            "LAMBDA_RUNTIME_DIR": str(s.sys_path[-1]),
            "_HANDLER": s.handler,
            "TZ": ":UTC",
            "LANG": "en_US.UTF-8",
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "TWIN_SYS_PATH": os.pathsep.join(str(p) for p in [s.task_root, *s.sys_path]),
            "TWIN_MODULES_FILE": str(s.log_path.with_suffix(".modules")),
        }
        return env

    def _start(self) -> None:
        python = getattr(sys, "_base_executable", None) or sys.executable
        self.spec.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.spec.log_path.open("ab")
        self._init_error = None
        self._proc = subprocess.Popen(
            [python, "-I", "-S", str(BOOTSTRAP)],
            cwd=self.spec.task_root,
            env=self._environ(),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        log.close()
        self.cold_starts += 1

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait(timeout=10)
        self._proc = None

    def close(self) -> None:
        self.stop()
        self.server.shutdown()
        self.server.server_close()

    def invoke(self, event: Any) -> Any:
        """Run one invocation; InvocationError for a function error, a timeout or an init failure."""
        with self._lock:
            if not self._alive():
                self._start()
            inv = _Invocation(
                request_id=str(uuid.uuid4()),
                event=event,
                deadline_ms=int((time.time() + self.spec.timeout) * 1000),
            )
            self.invocations += 1
            self._pending.put(inv)
            wait_until = time.monotonic() + self.spec.timeout + 60  # + the cold start's import time
            while not inv.done.wait(0.05):
                if self._init_error is not None:
                    self.stop()
                    raise InvocationError("InitError", self._init_error)
                if not self._alive():
                    self._drain(inv)
                    raise InvocationError(
                        "Unhandled", {"errorType": "Runtime.ExitError", "errorMessage": "the runtime exited"}
                    )
                overdue = inv.deadline_ms < int(time.time() * 1000) and self._current is inv
                if overdue or time.monotonic() > wait_until:
                    self.stop()
                    self._drain(inv)
                    raise InvocationError(
                        "TimedOut",
                        {
                            "errorType": "Sandbox.Timedout",
                            "errorMessage": f"Task timed out after {self.spec.timeout:.2f} seconds",
                        },
                    )
            if inv.error is not None:
                raise InvocationError("Unhandled", inv.error)
            return inv.result

    def _drain(self, inv: _Invocation) -> None:
        try:
            while True:
                self._pending.get_nowait()
        except queue.Empty:
            pass
        self._current = None
        inv.done.set()


def _runtime_api(env: ExecutionEnvironment) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if not self.path.endswith("/runtime/invocation/next"):
                return self._send(404, {})
            inv = env._pending.get()
            env._current = inv
            body = json.dumps(inv.event).encode()
            self.send_response(200)
            self.send_header("Lambda-Runtime-Aws-Request-Id", inv.request_id)
            self.send_header("Lambda-Runtime-Deadline-Ms", str(inv.deadline_ms))
            self.send_header("Lambda-Runtime-Invoked-Function-Arn", env.spec.arn)
            self.send_header(
                "Lambda-Runtime-Trace-Id", f"Root=1-{uuid.uuid4().hex[:8]}-{uuid.uuid4().hex[:24]};Sampled=0"
            )
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            payload = json.loads(raw or b"null")
            if self.path.endswith("/runtime/init/error"):
                env._init_error = payload
                return self._send(202, {"status": "OK"})
            inv = env._current
            if inv is None or f"/invocation/{inv.request_id}/" not in self.path:
                return self._send(400, {"errorMessage": "unknown request id"})
            if self.path.endswith("/response"):
                inv.result = payload
            else:
                inv.error = payload
            env._current = None
            inv.done.set()
            self._send(202, {"status": "OK"})

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
