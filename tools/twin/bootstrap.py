"""The twin's Lambda runtime client: runs inside a function's isolated interpreter (python -I -S).

Like the Python runtime on Lambda it imports the handler once (the cold start), then loops over the
Runtime API (AWS_LAMBDA_RUNTIME_API): GET the next invocation, call the handler with the event and
a context, POST the response or the error. Standard library only: nothing here may leak a module
into the function's interpreter. sys.path is what the function sees on Lambda, given by the twin
in TWIN_SYS_PATH (task root, layer, runtime-provided libraries).
"""

import json
import os
import sys
import time
import traceback
import urllib.request

sys.path[:0] = [p for p in os.environ.pop("TWIN_SYS_PATH", "").split(os.pathsep) if p]
BASE = f"http://{os.environ['AWS_LAMBDA_RUNTIME_API']}/2018-06-01/runtime"
MODULES_FILE = os.environ.pop("TWIN_MODULES_FILE", "")
# The runtime interface client (awslambdaric) serialises a response with the json module's default
# separators, escaping non-ASCII characters before python3.12 and not from python3.12 on.
ENSURE_ASCII = os.environ.get("AWS_EXECUTION_ENV", "") not in (
    "AWS_Lambda_python3.12",
    "AWS_Lambda_python3.13",
    "AWS_Lambda_python3.14",
)


def _post(url, payload):
    data = json.dumps(payload, default=str, ensure_ascii=ENSURE_ASCII).encode("utf-8")
    request = urllib.request.Request(
        url, data=data, method="POST", headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request) as answer:
        answer.read()


def _error(exc):
    return {
        "errorMessage": str(exc),
        "errorType": type(exc).__name__,
        "stackTrace": traceback.format_exception(type(exc), exc, exc.__traceback__),
    }


class Context:
    def __init__(self, request_id, deadline_ms, arn):
        self.aws_request_id = request_id
        self.invoked_function_arn = arn
        self.function_name = os.environ["AWS_LAMBDA_FUNCTION_NAME"]
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.memory_limit_in_mb = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128")
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME")
        self.identity = None
        self.client_context = None
        self._deadline_ms = deadline_ms

    def get_remaining_time_in_millis(self):
        return max(0, self._deadline_ms - int(time.time() * 1000))


def main():
    module_name, _, attr = os.environ["_HANDLER"].rpartition(".")
    try:
        import importlib

        handler = getattr(importlib.import_module(module_name), attr)
    except Exception as exc:  # an import failure is an init error, as on Lambda
        _post(f"{BASE}/init/error", _error(exc))
        traceback.print_exc()
        sys.exit(1)
    while True:
        with urllib.request.urlopen(f"{BASE}/invocation/next") as nxt:
            request_id = nxt.headers["Lambda-Runtime-Aws-Request-Id"]
            deadline = int(nxt.headers["Lambda-Runtime-Deadline-Ms"])
            arn = nxt.headers["Lambda-Runtime-Invoked-Function-Arn"]
            trace = nxt.headers.get("Lambda-Runtime-Trace-Id")
            event = json.loads(nxt.read() or b"null")
        if trace:
            os.environ["_X_AMZN_TRACE_ID"] = trace
        try:
            result = handler(event, Context(request_id, deadline, arn))
        except Exception as exc:
            traceback.print_exc()
            _post(f"{BASE}/invocation/{request_id}/error", _error(exc))
            _record_modules()
            continue
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            _record_modules()
        _post(f"{BASE}/invocation/{request_id}/response", result)


def _record_modules():
    """The twin's own bookkeeping: which files this function has imported (what the layer must hold)."""
    target = MODULES_FILE
    if not target:
        return
    files = sorted({getattr(m, "__file__", None) or "" for m in list(sys.modules.values())} - {""})
    with open(target, "w", encoding="utf-8") as fh:
        fh.write("\n".join(files))


if __name__ == "__main__":
    main()
