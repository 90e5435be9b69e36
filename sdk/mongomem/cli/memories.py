"""`mongomem memories export`: a user's memories to files; procedures as Agent Skills (one folder each).

    mongomem memories export --kind procedural --format skills DIR --user-id ana
writes DIR/<skill-name>/SKILL.md for every active procedure (GET /v1/memories/{id}/skill), and
    mongomem memories export --kind semantic --format jsonl FILE_OR_DIR
one memory a line. The API is --base-url's ($MONGOMEM_URL, else the local stack's), with --api-key
($MONGOMEM_API_KEY) when it needs one.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from mongomem.cli.connection import add_api_options, connection, explain
from mongomem.longterm.skills import skill_name


def _pages(client: Any, user_id: str | None, kind: str | None) -> Iterator[Any]:
    cursor = None
    while True:
        page = client.list_memories(user_id, type=kind, status="active", limit=200, cursor=cursor)
        yield from page.memories
        cursor = page.next_cursor
        if not cursor:
            return


def export_skills(client: Any, user_id: str | None, target: Path, out: TextIO) -> list[Path]:
    """One folder per active procedure, named for its skill; a second skill of the same name gets -2.

    Files land only inside `target`, whatever the server answers: each folder name is made here from
    the skill's name (lowercase letters, digits and hyphens: no `/`, no `..`), and a folder that exists
    as a symbolic link is not written through."""
    target.mkdir(parents=True, exist_ok=True)
    root = target.resolve()
    written: list[Path] = []
    taken: set[str] = set()
    for memory in _pages(client, user_id, "procedural"):
        skill = client.get_skill(memory.memory_id, user_id)
        base = skill_name(str(skill.name), fallback=f"procedure-{str(memory.lineage_id)[-8:]}")
        name, n = base, 2
        while name in taken:
            name, n = f"{base[:60]}-{n}", n + 1
        taken.add(name)
        content = (
            skill.content
            if name == skill.name
            else skill.content.replace(f"name: {skill.name}\n", f"name: {name}\n", 1)
        )
        folder = root / name
        path = folder / "SKILL.md"
        if folder.is_symlink() or path.is_symlink() or not path.resolve().is_relative_to(root):
            print(f"skipped {name!r} ({memory.memory_id}): {folder} is a link", file=sys.stderr)
            continue
        folder.mkdir(exist_ok=True)
        path.write_text(content, encoding="utf-8")
        written.append(path)
        print(f"{path}  ({memory.memory_id})", file=out)
    return written


def export_jsonl(client: Any, user_id: str | None, kind: str | None, target: Path, out: TextIO) -> int:
    if target.is_dir():
        target = target / f"{kind or 'memories'}.jsonl"
    count = 0
    with target.open("w", encoding="utf-8") as fh:
        for memory in _pages(client, user_id, kind):
            fh.write(json.dumps(memory.model_dump(mode="json"), ensure_ascii=False) + "\n")
            count += 1
    print(f"{count} memories written to {target}", file=out)
    return count


def cmd_export(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from mongomem.client import MemoryClient, MemoryClientError  # lazy: 156 ms

    out = out or sys.stdout
    if args.format == "skills" and args.kind != "procedural":
        print("--format skills exports procedures: use --kind procedural", file=sys.stderr)
        return 2
    conn = connection(args)
    client = MemoryClient(conn.base_url, api_key=conn.api_key)
    try:
        if args.format == "skills":
            written = export_skills(client, args.user_id, Path(args.target), out)
            print(f"{len(written)} skills written to {args.target}", file=out)
        else:
            export_jsonl(client, args.user_id, args.kind, Path(args.target), out)
    except MemoryClientError as err:
        print(f"export failed: {explain(err, conn)}", file=sys.stderr)
        return 1
    return 0


def register(sub: Any) -> None:
    """Add `memories export` to the `mongomem` command's subparsers."""
    memories = sub.add_parser("memories", help="export a user's memories (procedures as Agent Skills)")
    msub = memories.add_subparsers(dest="memories_command", required=True)
    export = msub.add_parser("export", help="write memories to files: --format skills (procedures) or jsonl")
    export.add_argument("target", help="the directory (skills: one folder per skill) or file (jsonl)")
    export.add_argument(
        "--kind", default=None, help="the memory kind (built-in or custom); skills: procedural"
    )
    export.add_argument("--format", choices=["skills", "jsonl"], default="jsonl")
    export.add_argument("--user-id", default=None, help="whose memories (a service-account key fixes it)")
    add_api_options(export)
    export.set_defaults(func=cmd_export)
