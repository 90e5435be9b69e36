"""Load the functions/<name>/app.py handlers the way Lambda does, and a Lambda context for them."""

from __future__ import annotations

import importlib.util
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Handler = Callable[[dict[str, Any], Any], Any]


@dataclass
class LocalContext:
    """The attributes of a Lambda context object that Powertools and our handlers use."""

    function_name: str
    timeout_seconds: float = 30.0
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    function_version: str = "$LATEST"
    log_group_name: str = "local"
    log_stream_name: str = "local"
    _started: float = field(default_factory=time.monotonic)

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:local:000000000000:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.timeout_seconds - (time.monotonic() - self._started)) * 1000))


def find_functions_dir(start: Path | None = None) -> Path:
    """The repository's functions/ folder, searched from `start` (default: the working directory) upwards."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "functions"
        if (candidate / "record_turns" / "app.py").exists():
            return candidate
    raise FileNotFoundError("functions/ not found: run the local stack from the mongomem repository")


def load_handler(functions_dir: Path, name: str) -> Handler:
    """Import functions/<name>/app.py under a unique module name and return its lambda_handler."""
    path = functions_dir / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"mongomem_fn_{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    handler: Handler = module.lambda_handler
    return handler
