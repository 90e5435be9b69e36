"""`mongomem import FILE`: send past conversations to POST /v1/import, a request at a time, with progress."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mongomem.cli.connection import add_api_options, connection, explain, retryable
from mongomem.cli.progress import Bar

# A request carries whole sessions, at most this many turns and about this many bytes of JSON (the
# API's body limit is 4 MiB by default; API Gateway's is 10 MB, a synchronous Lambda's 6 MB).
REQUEST_TURNS = 1_000
REQUEST_BYTES = 2 * 1024 * 1024


def read_turns(path: Path, fmt: str) -> list[Any]:
    """The file's turns (mongomem.models.imports.ImportTurn), in the file's order."""
    from mongomem.models.imports import ImportTurn  # lazy: 11 ms
    from mongomem.shortterm.importing import parse_jsonl, parse_locomo  # lazy: 29 ms

    text = path.read_text(encoding="utf-8")
    if fmt == "auto":
        fmt = "jsonl" if path.suffix.lower() in (".jsonl", ".ndjson") else "json"
    if fmt == "jsonl":
        return parse_jsonl(text)
    data = json.loads(text)
    if fmt == "locomo" or _looks_like_locomo(data):
        return parse_locomo(data)
    if isinstance(data, list):  # a JSON array of turns
        return [ImportTurn.model_validate(t) for t in data]
    raise ValueError(f"{path}: not JSONL, a LoCoMo sample or a JSON array of turns")


def _looks_like_locomo(data: Any) -> bool:
    first = data[0] if isinstance(data, list) and data else data
    return isinstance(first, dict) and ("speaker_a" in first or "conversation" in first)


def requests_of(turns: list[Any]) -> list[list[Any]]:
    """Whole sessions per request (a session's gaps are cut within one request), split only when one
    session alone is larger than a request."""
    sessions: dict[str, list[Any]] = {}
    for turn in turns:
        sessions.setdefault(turn.session_id, []).append(turn)
    out: list[list[Any]] = []
    size = 0
    for said in sessions.values():
        for start in range(0, len(said), REQUEST_TURNS):
            part = said[start : start + REQUEST_TURNS]
            part_bytes = sum(len(t.content) for t in part) + 200 * len(part)
            if not out or len(out[-1]) + len(part) > REQUEST_TURNS or size + part_bytes > REQUEST_BYTES:
                out.append([])
                size = 0
            out[-1].extend(part)
            size += part_bytes
    return out


def _too_many_stretches(exc: Any) -> bool:
    """The API refused a request for the stretches (snapshots) it would cut, before writing any of it."""
    details = exc.details if isinstance(exc.details, dict) else {}
    return exc.code == "payload_too_large" and "max_stretches" in details


def cmd_import(args: argparse.Namespace) -> int:
    from mongomem.client import MemoryClient, MemoryClientError  # lazy: 219 ms

    try:
        turns = read_turns(Path(args.file), args.format)
    except (OSError, ValueError) as exc:
        print(f"import: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # InvalidInput from the parsers names the line or field
        message = getattr(exc, "message", None) or str(exc)
        print(f"import: {args.file}: {message}", file=sys.stderr)
        return 2
    totals: dict[str, int] = {}
    done = 0
    conn = connection(args)
    with (
        MemoryClient(conn.base_url, api_key=conn.api_key, timeout=args.timeout) as client,
        Bar("imported", "turns") as bar,
    ):
        bar.update(0, len(turns))
        pending = requests_of(turns)
        while pending:
            part = pending.pop(0)
            body = [t.model_dump(mode="json", exclude_none=True) for t in part]
            try:
                report = client.import_history(args.user_id, format="turns", turns=body)
            except MemoryClientError as exc:
                if _too_many_stretches(exc) and len(part) > 1:
                    # the server cuts a request into snapshots at idle gaps and takes so many per request:
                    # send the turns in two halves, in time order (nothing of this request was written)
                    first = {s: n for n, s in enumerate(dict.fromkeys(t.session_id for t in part))}
                    part.sort(key=lambda t: (first[t.session_id], t.timestamp))
                    pending[:0] = [part[: len(part) // 2], part[len(part) // 2 :]]
                    continue
                print(
                    f"import failed after {done} of {len(turns)} turns: {explain(exc, conn)}", file=sys.stderr
                )
                if retryable(exc):
                    print("run the same command again: turns already imported are skipped", file=sys.stderr)
                elif done:
                    print(
                        "once that is fixed, run it again: turns already imported are skipped",
                        file=sys.stderr,
                    )
                return 1
            for key, value in report.model_dump().items():
                totals[key] = totals.get(key, 0) + int(value)
            done += len(part)
            bar.update(done, len(turns))
    print(
        f"imported {totals.get('turns_recorded', 0)} turns ({totals.get('already_imported', 0)} already there) "
        f"in {totals.get('sessions', 0)} sessions: {totals.get('snapshots', 0)} snapshots, "
        f"{totals.get('extraction_queued', 0)} extraction messages queued"
        + (
            f", {totals['turns_left_for_scan']} recent turns left for the scan"
            if totals.get("turns_left_for_scan")
            else ""
        )
    )
    return 0


def register(sub: Any) -> None:
    imp = sub.add_parser(
        "import",
        help="import past conversations (JSONL, LoCoMo JSON or a JSON array of turns) with their timestamps",
    )
    imp.add_argument(
        "file", help="JSONL: one {session_id, role, content, timestamp} per line; or LoCoMo JSON"
    )
    imp.add_argument(
        "--user-id", "--user", dest="user_id", required=True, help="the memory user the history belongs to"
    )
    imp.add_argument("--format", choices=["auto", "jsonl", "locomo", "json"], default="auto")
    add_api_options(imp)
    imp.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    imp.set_defaults(func=cmd_import)
