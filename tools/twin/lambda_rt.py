"""Lambda for the twin: functions, their execution environments, and the account's concurrency.

Each execution environment runs `python -I -S tools/twin/bootstrap.py` with the interpreter of the
function's runtime (python3.13: this machine's CPython 3.13), isolated: no site-packages, no
PYTHONPATH, no inherited environment. It sees only its task root (the function's built code), the
layer, and the libraries the Lambda Python runtime provides (its own, older boto3). The environment is
exactly the function's resolved Environment.Variables plus what Lambda itself sets. The Runtime API
server hands it one invocation at a time; a call that outlives the function's Timeout kills the
environment, as Lambda does, and the next invocation cold-starts a new one. stdout and stderr go to the
function's log.

What Lambda refuses, the twin refuses (docs/aws-rules.md "Lambda" names each page):
- a synchronous request or response over 6 MB, an asynchronous request over 1 MB
  (`RequestTooLarge`, `Function.ResponseSizeTooLarge`), sized as the runtime serialises them;
- an invocation beyond the account's concurrency (the quota less what other functions reserve) or
  beyond the function's reserved concurrency (`Throttled`, TooManyRequestsException);
- a reserved concurrency that leaves the account less than its unreserved minimum (at deploy).
Concurrent invocations of one function run in separate execution environments, as on Lambda.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import shutil
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

BOOTSTRAP = Path(__file__).with_name("bootstrap.py")

# Lambda quotas ("Lambda quotas", API_Invoke): 6 MB synchronous, 1 MB asynchronous payloads. The
# response limit Lambda reports is 6291556 bytes.
SYNC_PAYLOAD_BYTES = 6 * 1024 * 1024
RESPONSE_PAYLOAD_BYTES = 6_291_556
ASYNC_PAYLOAD_BYTES = 1024 * 1024


class InvocationError(Exception):
    def __init__(self, kind: str, payload: dict[str, Any]) -> None:
        super().__init__(f"{kind}: {payload.get('errorType')}: {payload.get('errorMessage')}")
        # Unhandled | TimedOut | InitError | Throttled | RequestTooLarge | ResponseTooLarge
        self.kind = kind
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
    runtime: str = "python3.13"
    reserved: int | None = None  # ReservedConcurrentExecutions
    # EventInvokeConfig of asynchronous invocations (Lambda's defaults: 2 retries, 6 hours)
    async_retries: int = 2
    async_max_age: int = 6 * 3600


@dataclass
class _Invocation:
    request_id: str
    event: Any
    deadline_ms: int
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: dict[str, Any] | None = None
    too_large: bool = False


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
        self.busy = False  # taken by LambdaFunction for one invocation at a time
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
            "AWS_EXECUTION_ENV": f"AWS_Lambda_{s.runtime}",
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
        python = str(interpreter(self.spec.runtime))
        self.spec.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.spec.log_path.open("ab")
        self._init_error = None
        # A fresh queue per process: a Runtime API request of a process that was killed may still be
        # waiting on the old one, and would take (and lose) the next invocation.
        self._pending = queue.Queue()
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
                raise InvocationError("ResponseTooLarge" if inv.too_large else "Unhandled", inv.error)
            return inv.result

    def _drain(self, inv: _Invocation) -> None:
        try:
            while True:
                self._pending.get_nowait()
        except queue.Empty:
            pass
        self._current = None
        inv.done.set()


@functools.cache
def interpreter(runtime: str) -> Path:
    """This machine's CPython for a Lambda runtime identifier (python3.13 -> a CPython 3.13)."""
    if not runtime.startswith("python3."):
        raise RuntimeError(f"the twin runs Python runtimes only, not {runtime}")
    version = runtime.removeprefix("python")
    found = shutil.which(f"python{version}")
    candidates = [Path(found)] if found else []
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates += sorted(pyenv.glob(f"{version}.*/bin/python{version}"), reverse=True)
    for path in candidates:
        done = subprocess.run(
            [str(path), "-c", "import sys; print(sys.base_prefix)"], capture_output=True, text=True
        )
        if done.returncode == 0:
            real = Path(done.stdout.strip()) / "bin" / f"python{version}"
            return real if real.exists() else path
    raise RuntimeError(
        f"the twin runs {runtime} functions on CPython {version}, which this machine lacks "
        f"(pyenv install {version})"
    )


class Account:
    """The account's Lambda concurrency: a quota shared by every function of every stack in the twin.

    "Configuring reserved concurrency": Lambda keeps 100 units unreserved for the functions without a
    reservation (an account whose quota is lower, such as a new account's 10, can reserve nothing); an
    invocation beyond what the function may use is throttled.
    """

    def __init__(self, concurrency: int = 1000, unreserved_minimum: int = 100) -> None:
        self.concurrency = concurrency
        self.unreserved_minimum = min(unreserved_minimum, concurrency)
        self.reserved: dict[str, int] = {}
        self.in_flight: dict[str, int] = {}
        self.throttles = 0
        self._lock = threading.Lock()

    def reserve(self, arn: str, units: int) -> None:
        with self._lock:
            others = sum(v for k, v in self.reserved.items() if k != arn)
            if units > 0 and self.concurrency - others - units < self.unreserved_minimum:
                raise InvocationError(
                    "InvalidParameterValue",
                    {
                        "errorType": "InvalidParameterValueException",
                        "errorMessage": "Specified ReservedConcurrentExecutions for function decreases "
                        "account's UnreservedConcurrentExecution below its minimum value of "
                        f"[{self.unreserved_minimum}].",
                    },
                )
            self.reserved[arn] = units

    def release_reservation(self, arn: str) -> None:
        with self._lock:
            self.reserved.pop(arn, None)

    def acquire(self, arn: str) -> bool:
        with self._lock:
            mine = self.in_flight.get(arn, 0)
            if arn in self.reserved:
                allowed = mine < self.reserved[arn]
            else:
                unreserved = self.concurrency - sum(self.reserved.values())
                used = sum(n for k, n in self.in_flight.items() if k not in self.reserved)
                allowed = used < unreserved
            if not allowed:
                self.throttles += 1
                return False
            self.in_flight[arn] = mine + 1
            return True

    def release(self, arn: str) -> None:
        with self._lock:
            self.in_flight[arn] = max(0, self.in_flight.get(arn, 0) - 1)


class LambdaFunction:
    """One deployed function: its execution environments (one per concurrent invocation) and its limits."""

    def __init__(self, spec: FunctionSpec, account: Account) -> None:
        self.spec = spec
        self.account = account
        self.environments: list[ExecutionEnvironment] = []
        self._lock = threading.Lock()
        # what Lambda publishes per function to CloudWatch (AWS/Lambda: Invocations, Errors, Throttles)
        self.counts = {"Invocations": 0, "Errors": 0, "Throttles": 0}
        if spec.reserved is not None:
            account.reserve(spec.arn, spec.reserved)

    def invoke(self, event: Any, invocation_type: str = "RequestResponse") -> Any:
        """Invoke as the Lambda Invoke API would; InvocationError for what Lambda refuses or the function's
        own failure. `Event` (asynchronous) invocations are retried on function errors as the function's
        EventInvokeConfig says; their result is returned here for the twin's own checks."""
        limit = ASYNC_PAYLOAD_BYTES if invocation_type == "Event" else SYNC_PAYLOAD_BYTES
        size = len(json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        if size > limit:
            raise InvocationError(
                "RequestTooLarge",
                {
                    "errorType": "RequestTooLargeException",
                    "errorMessage": f"Request must be smaller than {limit} bytes for the {invocation_type} "
                    f"invocation type (this one: {size} bytes)",
                },
            )
        attempts = 1 + (self.spec.async_retries if invocation_type == "Event" else 0)
        for attempt in range(attempts):
            try:
                return self._invoke_once(event)
            except InvocationError as exc:
                if attempt == attempts - 1 or exc.kind == "Throttled":
                    raise
        raise AssertionError("unreachable")

    def _invoke_once(self, event: Any) -> Any:
        if not self.account.acquire(self.spec.arn):
            self._count("Throttles")
            raise InvocationError(
                "Throttled",
                {"errorType": "TooManyRequestsException", "errorMessage": "Rate Exceeded."},
            )
        env = self._take()
        self._count("Invocations")
        try:
            return env.invoke(event)
        except InvocationError:
            self._count("Errors")
            raise
        finally:
            with self._lock:
                env.busy = False
            self.account.release(self.spec.arn)

    def _count(self, metric: str) -> None:
        with self._lock:
            self.counts[metric] += 1

    def _take(self) -> ExecutionEnvironment:
        with self._lock:
            for env in self.environments:
                if not env.busy:
                    env.busy = True
                    return env
            env = ExecutionEnvironment(self.spec)
            env.busy = True
            self.environments.append(env)
            return env

    def warm(self, count: int) -> list[ExecutionEnvironment]:
        """At least `count` execution environments (what concurrent traffic leaves behind on Lambda)."""
        with self._lock:
            while len(self.environments) < count:
                self.environments.append(ExecutionEnvironment(self.spec))
            return self.environments[:count]

    @property
    def cold_starts(self) -> int:
        return sum(e.cold_starts for e in self.environments)

    @property
    def invocations(self) -> int:
        return sum(e.invocations for e in self.environments)

    def stop(self) -> None:
        """End every execution environment: the next invocations cold-start (a config or code change)."""
        for env in self.environments:
            env.stop()

    def close(self) -> None:
        for env in self.environments:
            env.close()
        self.account.release_reservation(self.spec.arn)


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
            if self.path.endswith("/response") and len(raw) > RESPONSE_PAYLOAD_BYTES:
                inv.error = {
                    "errorType": "Function.ResponseSizeTooLarge",
                    "errorMessage": f"Response payload size ({len(raw)} bytes) exceeded maximum allowed "
                    f"payload size ({RESPONSE_PAYLOAD_BYTES} bytes).",
                }
                inv.too_large = True
            elif self.path.endswith("/response"):
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
