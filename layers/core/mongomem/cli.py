"""The `mongomem` command: `mongomem dev` runs the local memory service."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path


def _dev(args: argparse.Namespace) -> int:
    # Powertools reads its own settings from the environment; give the local stack sensible ones.
    os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "mongomem")
    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "mongomem-local")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", args.log_level)
    from mongomem.local.stack import LocalStack

    data_dir = Path(args.data_dir).resolve()
    config = Path(args.config) if args.config else None
    if config is not None and not config.exists():
        print(f"config file {config} not found", file=sys.stderr)
        return 2
    stack = LocalStack(
        data_dir=data_dir, host=args.host, port=args.port, scan_seconds=args.scan_seconds, config_file=config
    )
    print(f"mongomem local stack starting (data in {data_dir}) ...", flush=True)
    try:
        stack.start()
    except OSError as exc:
        print(f"cannot serve on {args.host}:{args.port}: {exc}", file=sys.stderr)
        stack.stop()
        return 1
    assert stack.settings is not None
    print(f"  API          {stack.url}   (POST {stack.url}/v1/sessions/<session_id>/turns)", flush=True)
    print(
        f"  MongoDB      {stack.mongo.uri if stack.mongo else stack.mongodb_uri}  (SecantusDB, data in {data_dir / 'mongo'})"
    )
    print(
        f"  scan         every {args.scan_seconds:g}s; extraction queues: "
        f"{', '.join(t.value for t in stack.settings.enabled_extractions)}"
    )
    print("  Ctrl-C stops it; the data stays for the next start.", flush=True)
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    try:
        stopping.wait()
    except KeyboardInterrupt:
        pass
    print("stopping ...", flush=True)
    stack.stop()
    print("stopped.", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mongomem", description="mongomem: long-term memory for AI agents")
    sub = parser.add_subparsers(dest="command", required=True)
    dev = sub.add_parser("dev", help="run the local memory service (no Docker needed)")
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument("--port", type=int, default=3000)
    dev.add_argument("--data-dir", default=".mongomem")
    dev.add_argument(
        "--config", default="project-config.yaml" if Path("project-config.yaml").exists() else None
    )
    dev.add_argument("--scan-seconds", type=float, default=5.0)
    dev.add_argument("--log-level", default="WARNING")
    dev.set_defaults(func=_dev)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
