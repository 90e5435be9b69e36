"""The `mongomem` command: `mongomem dev` runs the local stack, `mongomem reindex` rebuilds search."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

from mongomem.cli.config_files import dev_config
from mongomem.cli.connection import add_data_dir, data_dir_of
from mongomem.cli.local_env import LocalStackRunning, settings_for
from mongomem.config import ConfigError, environment, use_local_powertools_defaults
from mongomem.errors import MongomemError


def _dev(args: argparse.Namespace) -> int:
    # Powertools reads its own settings from the environment; give the local stack sensible ones.
    use_local_powertools_defaults(args.log_level)
    # Metrics are off locally; Powertools still warns on every invocation that none were published.
    warnings.filterwarnings("ignore", message="No application metrics to publish")
    from mongomem.local import console  # lazy: 15 ms
    from mongomem.local.stack import LocalStack  # lazy: 163 ms

    console.install(args.log_level)  # one line per request and per warning; metrics only at DEBUG

    data_dir = data_dir_of(args).resolve()
    config = dev_config(args.config, data_dir)
    refused = _refuse_dev_arguments(args, config)
    if refused is not None:
        return refused
    # The shell's variables reach the local functions as a deployment's would (provider keys, MONGOMEM_*).
    stack = LocalStack(
        data_dir=data_dir,
        host=args.host,
        port=args.port,
        scan_seconds=args.scan_seconds,
        config_file=config,
        environ=environment(),
        on_request=lambda *request: print(console.request_line(*request), flush=True),
        on_event=lambda message: print(f"{console.clock()} {message}", flush=True),
    )
    stopping = _stop_on_signals()
    print(f"mongomem local stack starting (data in {data_dir}) ...", flush=True)
    control = None
    try:
        failed = _start(stack, args)
        if failed is not None:
            return failed
        _describe(stack, args, data_dir)
        from mongomem.cli.memory_local import LocalControl  # lazy: 299 ms

        control = LocalControl(stack).start()  # applies `mongomem memory apply` requests
        try:
            while not stopping.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        print("stopping ...", flush=True)
    except KeyboardInterrupt:
        print("stopping ...", flush=True)
    finally:
        if control is not None:
            control.stop()
        stack.stop()  # idempotent; always stops the SecantusDB child
    print("stopped.", flush=True)
    return 0


def _refuse_dev_arguments(args: argparse.Namespace, config: Path | None) -> int | None:
    """The exit code after saying what is wrong with the port or the config file; None when both are
    usable (a port left out is taken from MONGOMEM_PORT, else 3000)."""
    if args.port is None:
        port_text = environment().get("MONGOMEM_PORT") or "3000"
        if not port_text.isdigit():
            print(f"mongomem dev: MONGOMEM_PORT must be a port number, not {port_text!r}", file=sys.stderr)
            return 2
        args.port = int(port_text)
    if config is not None and not config.exists():
        print(f"mongomem dev: config file {config} not found", file=sys.stderr)
        return 2
    return None


def _stop_on_signals() -> threading.Event:
    """An event SIGTERM and SIGHUP set, so they end in the same stop as Ctrl-C, even while starting."""
    stopping = threading.Event()
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if sig is not None:
                signal.signal(sig, lambda *_: stopping.set())
        # Ctrl-C (SIGINT) stops it even when started from a shell that ignores SIGINT for its background
        # jobs (`make dev &` in a script, a CI runner): Python keeps an inherited SIG_IGN otherwise.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return stopping


def _start(stack: Any, args: argparse.Namespace) -> int | None:
    """Start the stack; the exit code after saying why it could not start, None once it serves."""
    from mongomem.local.lock import DataDirBusy  # lazy: 2.2 ms

    try:
        stack.start()
    except ConfigError as exc:
        print(f"mongomem dev: {exc.one_line()}", file=sys.stderr)
        return 2
    except (DataDirBusy, FileNotFoundError) as exc:
        print(f"mongomem dev: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        hint = " (another program uses it: pick another port with --port, e.g. `make dev PORT=3001`)"
        busy = getattr(exc, "errno", None) in (98, 48)  # EADDRINUSE on Linux, macOS
        print(
            f"mongomem dev: cannot serve on {args.host}:{args.port}: {exc}{hint if busy else ''}",
            file=sys.stderr,
        )
        return 1
    return None


def _describe(stack: Any, args: argparse.Namespace, data_dir: Path) -> None:
    assert stack.settings is not None
    print(f"  API          {stack.url}   (POST {stack.url}/v1/sessions/<session_id>/turns)", flush=True)
    sign_in = (
        "sign in with an API key" if stack.keys_required else "open stack: sign in with the key left empty"
    )
    print(f"  console      {stack.url}/console   ({sign_in})", flush=True)
    print(
        f"  MongoDB      {stack.mongo.uri if stack.mongo else stack.mongodb_uri}  (SecantusDB, data in {data_dir / 'mongo'})"
    )
    print(
        f"  scan         every {args.scan_seconds:g}s; extraction queues: "
        f"{', '.join(str(t) for t in stack.settings.enabled_extractions)}"
    )
    if stack.keys_required:
        print("  auth         x-api-key required (manage keys with `mongomem keys create|list|revoke`)")
    else:
        print(
            f"  auth         OPEN: no API keys exist, requests act as tenant {stack.settings.tenant_default!r}; "
            "the first `mongomem keys create` turns keys on"
        )
    print("  Ctrl-C stops it; the data stays for the next start.", flush=True)


def _reindex(args: argparse.Namespace) -> int:
    """Rebuild the vector index from MongoDB, printing counts as batches land."""
    use_local_powertools_defaults("ERROR")  # failures are reported below, not as log lines

    try:
        with settings_for(args, "reindex") as settings:
            return _reindex_with(args, settings)
    except LocalStackRunning as exc:
        print(f"reindex: {exc}", file=sys.stderr)
        return 1


def _reindex_with(args: argparse.Namespace, settings: Any) -> int:
    from mongomem.runtime import Services  # lazy: 143 ms
    from mongomem.vectors.port import DimensionMismatch  # lazy: 6.9 ms

    try:
        svc = Services(settings)
    except ConfigError as exc:
        print(f"reindex: {exc}", file=sys.stderr)
        return 2
    index = svc.vector_index
    if index is None:
        print(
            "reindex: no vector index configured "
            "(set MONGOMEM_OPENSEARCH_ENDPOINT or MONGOMEM_VECTOR_INDEX_PATH)",
            file=sys.stderr,
        )
        return 2
    if not index.ping():
        print(f"reindex: the vector index ({type(index).__name__}) does not answer", file=sys.stderr)
        return 1
    last = {"synced": 0, "seen": 0}

    def progress(synced: int, seen: int) -> None:
        last.update(synced=synced, seen=seen)
        print(f"  indexed {synced} of {seen} memory versions read from MongoDB", flush=True)

    drop = args.drop or args.re_embed
    try:
        if args.re_embed:
            from mongomem.cli.progress import Bar  # lazy: 0.6 ms
            from mongomem.retrieval.reembed import re_embed  # lazy: 55 ms

            model, dim = svc.embedder.model, svc.embedder.dim
            print(f"re-embedding memories with {model} ({dim} dims)", flush=True)
            with Bar("re-embedded", "memory versions") as bar:
                count = re_embed(svc.memory_store, svc.embedder, progress=bar.update)
            print(f"re-embedded {count} memory versions", flush=True)
        print(f"{type(index).__name__}: {index.count()} documents before reindex", flush=True)
        if drop:
            print("dropping the index ...", flush=True)
        svc.indexer.rebuild(drop=drop, progress=progress)
        print(f"done: {last['synced']} memory versions indexed", flush=True)
        if drop:
            # the drop also removed the recalled-message entries: the next scans index those turns again
            print(f"{svc.turn_indexer.requeue()} turns queued for semantic recall indexing", flush=True)
    except DimensionMismatch as exc:
        print(f"reindex failed: {exc} (run with --re-embed)", file=sys.stderr)
        return 1
    except MongomemError as exc:
        print(f"reindex failed: {exc.message}", file=sys.stderr)
        return 1
    if last["synced"] < last["seen"]:
        # MemoryIndexer.sync leaves a failed batch pending rather than raising.
        print(f"{last['seen'] - last['synced']} versions stay pending for index_sync", file=sys.stderr)
        return 1
    return 0


def _migrate(args: argparse.Namespace) -> int:
    """Create the MongoDB and search indexes (what a deployed stack's Migration custom resource runs)."""
    use_local_powertools_defaults("ERROR")
    from mongomem.migrate import migrate  # lazy: 85 ms
    from mongomem.runtime import Services  # lazy: 117 ms

    try:
        with settings_for(args, "migrate") as settings:
            target = Services(settings).for_migration()
            report = migrate(target, progress=lambda line: print(f"  {line}", flush=True))
    except LocalStackRunning as exc:
        print(f"migrate: {exc}", file=sys.stderr)
        return 1
    except ConfigError as exc:
        print(f"migrate: {exc}", file=sys.stderr)
        return 2
    except MongomemError as exc:
        print(f"migrate failed: {exc.message}", file=sys.stderr)
        return 1
    print(f"done: database {report['database']}, search index {report['search_index'] or 'none'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mongomem", description="mongomem: long-term memory for AI agents")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_dev(sub)
    from mongomem.cli.ops import register as register_ops  # lazy: 2.8 ms

    register_ops(sub)
    _add_reindex(sub)
    _add_migrate(sub)
    from mongomem.cli.memories import register as register_memories  # lazy: 42.5 ms
    from mongomem.cli.memory import register as register_memory  # lazy: 3.1 ms
    from mongomem.cli.memory import register_mcp  # lazy: 3.3 ms

    register_memory(sub)
    register_memories(sub)
    register_mcp(sub)
    from mongomem.cli.importing import register as register_import  # lazy: 1.5 ms

    register_import(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


def _add_dev(sub: Any) -> None:
    dev = sub.add_parser(
        "dev",
        help="run the local memory service (no Docker needed)",
        description="Serve the memory API, the console and the background jobs on one port, with an "
        "embedded MongoDB-compatible server keeping its data in --data-dir. Other commands find it "
        "through the same --data-dir (or --base-url / MONGOMEM_URL).",
    )
    dev.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    dev.add_argument(
        "--port",
        type=int,
        default=None,
        help="port of the API and the console ($MONGOMEM_PORT; default 3000, the port `sam local "
        "start-api` uses; 0 picks a free one). Other commands find it in the data dir",
    )
    add_data_dir(dev)
    dev.add_argument(
        "--config",
        default=None,
        help="project config (default: <data dir>/project-config.yaml, where `mongomem memory "
        "configure` uploads, else ./project-config.yaml, else the defaults)",
    )
    dev.add_argument("--scan-seconds", type=float, default=5.0, help="session scan interval (default 5)")
    dev.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="WARNING (default): one line per request and every warning; INFO adds the services' own "
        "log lines; DEBUG adds metrics and full tracebacks",
    )
    dev.set_defaults(func=_dev)


def _add_reindex(sub: Any) -> None:
    reindex = sub.add_parser(
        "reindex",
        help="rebuild the vector index from MongoDB: the local stack's (--data-dir, stopped) or a "
        "deployed database's (MONGOMEM_MONGODB_URI and MONGOMEM_OPENSEARCH_ENDPOINT)",
    )
    add_data_dir(reindex)
    reindex.add_argument(
        "--drop",
        action="store_true",
        help="drop the index first (needed after changing the embedding model); otherwise upsert in place",
    )
    reindex.add_argument(
        "--re-embed",
        action="store_true",
        help="after changing the embedding model: embed every stored memory again with the configured "
        "model (resumable), then rebuild the index",
    )
    reindex.set_defaults(func=_reindex)


def _add_migrate(sub: Any) -> None:
    migrate = sub.add_parser(
        "migrate",
        help="create the MongoDB and search indexes: the local stack's (--data-dir) or a deployed "
        "database's (MONGOMEM_MONGODB_URI)",
    )
    add_data_dir(migrate)
    migrate.set_defaults(func=_migrate)


if __name__ == "__main__":
    raise SystemExit(main())
