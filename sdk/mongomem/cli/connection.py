"""The one set of connection options every `mongomem` command takes, and what it says when nothing answers.

    --base-url   the memory API ($MONGOMEM_URL; default: the URL of the local stack running on the
                 data dir, else http://127.0.0.1:3000; a deployed stack: its ApiUrl output)
    --api-key    sent as x-api-key ($MONGOMEM_API_KEY; --api-key-file FILE keeps it off the command
                 line; `mongomem mcp`, a long-running server, refuses --api-key)
    --data-dir   the local stack's data folder ($MONGOMEM_DATA_DIR; default .mongomem)

Defaults are resolved when a command runs (not when the parser is built), so the environment of the
run counts, and every message names where the value it used came from.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mongomem.config import environment

DEFAULT_URL = "http://127.0.0.1:3000"
DEFAULT_DATA_DIR = ".mongomem"
STACK_FILE = "stack.json"  # written by a running LocalStack (mongomem.local.stack.STACK_FILE)
URL_HELP = (
    "the memory API ($MONGOMEM_URL; default: the local stack running on --data-dir, else "
    f"{DEFAULT_URL}; a deployed stack: its ApiUrl output)"
)
KEY_HELP = "sent as the x-api-key header ($MONGOMEM_API_KEY; create one with `mongomem keys create`)"
KEY_FILE_HELP = "a file holding the API key (keeps it off the command line, which `ps` shows to every user)"
DATA_DIR_HELP = f"the local stack's data folder ($MONGOMEM_DATA_DIR; default {DEFAULT_DATA_DIR})"


def add_data_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", default=None, help=DATA_DIR_HELP)


def add_api_options(
    parser: argparse.ArgumentParser, url_help: str = URL_HELP, key_help: str = KEY_HELP
) -> None:
    """--base-url, --api-key, --api-key-file and --data-dir (the data dir tells where the running local
    stack listens)."""
    parser.add_argument("--base-url", default=None, help=url_help)
    parser.add_argument("--api-key", default=None, help=key_help)
    parser.add_argument("--api-key-file", default=None, help=KEY_FILE_HELP)
    add_data_dir(parser)


def data_dir_of(args: argparse.Namespace) -> Path:
    given = getattr(args, "data_dir", None)
    return Path(given or environment().get("MONGOMEM_DATA_DIR") or DEFAULT_DATA_DIR)


def running_stack(data_dir: Path) -> dict[str, Any]:
    """What a local stack running on `data_dir` wrote about itself (api URL, MongoDB URI), or {}."""
    try:
        info = json.loads((data_dir / STACK_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


@dataclass(frozen=True)
class Connection:
    """The API a command talks to, and where each value came from (for messages)."""

    base_url: str
    url_source: str
    api_key: str | None
    key_source: str | None
    data_dir: Path

    def client(self, timeout: float = 10.0, **options: Any) -> Any:
        from mongomem.client import MemoryClient  # lazy: 196 ms

        return MemoryClient(self.base_url, timeout=timeout, api_key=self.api_key, **options)


def connection(args: argparse.Namespace) -> Connection:
    env = environment()
    data_dir = data_dir_of(args)
    if getattr(args, "base_url", None):
        url, source = args.base_url, "--base-url"
    elif env.get("MONGOMEM_URL"):
        url, source = env["MONGOMEM_URL"], "$MONGOMEM_URL"
    elif running_stack(data_dir).get("api"):
        url, source = str(running_stack(data_dir)["api"]), f"the local stack running on {data_dir}"
    else:
        url, source = DEFAULT_URL, "the default"
    key, key_source = getattr(args, "api_key", None), "--api-key"
    key_file = getattr(args, "api_key_file", None)
    if not key and key_file:
        key, key_source = _key_from_file(key_file), f"--api-key-file {key_file}"
    if not key and env.get("MONGOMEM_API_KEY"):
        key, key_source = env["MONGOMEM_API_KEY"], "$MONGOMEM_API_KEY"
    return Connection(url.rstrip("/"), source, key or None, key_source if key else None, data_dir)


def _key_from_file(path: str) -> str:
    try:
        key = Path(path).expanduser().read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise SystemExit(f"mongomem: cannot read the API key file {path}: {exc.strerror or exc}") from None
    if not key:
        raise SystemExit(f"mongomem: the API key file {path} is empty")
    return key


def explain(err: Any, conn: Connection) -> str:
    """A MemoryClientError as a user can act on it: what failed, and what to do about it."""
    status, code, message = err.status, err.code, err.message
    if status is None and code in ("unreachable", "timeout"):
        return (
            f"nothing answers at {conn.base_url} ({conn.url_source}): {message}.\n"
            "Is the memory service running? Start the local one with `make dev` (or `mongomem dev`; "
            "another port: `make dev PORT=3001`), or point at yours with --base-url or MONGOMEM_URL."
        )
    text = str(err)
    if status == 401:
        if conn.api_key:
            return (
                f"{text}\nThe API at {conn.base_url} refused the key from {conn.key_source}: it is unknown "
                "there or revoked (keys are per data dir / stack; `mongomem keys list` shows them)."
            )
        return (
            f"{text}\nThe API at {conn.base_url} needs an API key: pass --api-key or set MONGOMEM_API_KEY "
            "(`mongomem keys create --tenant T --kind memory_service` makes one)."
        )
    if status == 403:
        return f"{text}\nThe key from {conn.key_source} may not do this (a service account acts as one user)."
    return text


def retryable(err: Any) -> bool:
    """Would sending the same request again later plausibly work (no answer, overload, a server error)?"""
    return err.status is None or err.status in (429, 500, 502, 503, 504)
