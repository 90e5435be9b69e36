"""Every shell and Python snippet of README.md, CONTRIBUTING.md and docs/**/*.md runs, as written, against a local stack.

The snippets are read from the Markdown each run, so the docs cannot drift from what works. A snippet
runs as a user would run it from the repository: shell commands in bash (PATH starting with .venv/bin,
`curl` failing on an HTTP error), Python in its own interpreter; `http://127.0.0.1:3000` is the test
stack's URL, and MONGOMEM_URL / MONGOMEM_DATA_DIR point the CLI at it (the connection options every
command takes). Snippets of one file run in their order, on one stack, as a reader follows the page.

What cannot run here is marked in the Markdown, on the line before the fence:
`<!-- not run: needs AWS (...) -->`, `<!-- not run: needs Docker (...) -->` or
`<!-- not run: runs for minutes (...) -->`; each is reported as a skip with that reason. A few commands
are handled by what they are, not run verbatim (COMMANDS below): servers (`make dev`, `mongomem mcp`)
are started and must come up, an extra's `pip install` is checked as installed, and `make test` is this
suite. The Python examples of docs/integrations.md run with their own assertions in
tests/integrations/test_docs_examples.py.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import re
import signal
import socket
import subprocess
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mongomem.cli.memory_local import LocalControl
from mongomem.local.stack import LocalStack

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
LANGS = {"sh": "shell", "bash": "shell", "shell": "shell", "python": "python"}
FENCE = re.compile(r"^```([A-Za-z0-9_-]*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
MARKER = re.compile(r"^<!-- not run: (needs AWS|needs Docker|runs for minutes) \((.+)\) -->$")
DOC_URL = "http://127.0.0.1:3000"
# Python blocks run elsewhere, with assertions on what they did
ELSEWHERE = {
    "docs/integrations.md": "tests/integrations/test_docs_examples.py",
    "CONTRIBUTING.md": "tests/integration/test_contributing_recipes.py",  # recipe steps, applied to a copy
}
HISTORY = [
    {
        "session_id": "old-1",
        "role": "user",
        "content": "I flew from Lisbon to Berlin.",
        "timestamp": "2024-05-08T10:00:00Z",
    },
    {
        "session_id": "old-1",
        "role": "assistant",
        "content": "Welcome to Berlin!",
        "timestamp": "2024-05-08T10:00:05Z",
    },
]


@dataclass(frozen=True)
class Snippet:
    file: str
    line: int
    lang: str
    code: str
    skip: str | None

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"


def snippets() -> list[Snippet]:
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        rel = str(path.relative_to(ROOT))
        for match in FENCE.finditer(text):
            lang = LANGS.get(match.group(1))
            if lang is None:
                continue
            line = text.count("\n", 0, match.start()) + 1
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            marker = MARKER.match(before.strip())
            skip = f"{marker.group(1)}: {marker.group(2)}" if marker else None
            found.append(Snippet(rel, line, lang, match.group(2), skip))
    return found


SNIPPETS = snippets()


def steps(code: str) -> list[tuple[str, str]]:
    """(kind, script) of a shell block: the lines COMMANDS names alone, the others together as one bash
    script (a quoted argument may span lines)."""
    out: list[tuple[str, str]] = []
    plain: list[str] = []
    for line in code.splitlines():
        kind = next((k for pattern, k in COMMANDS if pattern.search(line.strip())), None)
        if kind is None:
            plain.append(line)
            continue
        if plain:
            out.append(("run", "\n".join(plain)))
            plain = []
        out.append((kind, line.split(" #")[0].strip()))
    if any(line.strip() and not line.strip().startswith("#") for line in plain):
        out.append(("run", "\n".join(plain)))
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class World:
    stack: LocalStack
    work: Path
    env: dict[str, str]
    tmp: Path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("doc-snippets")
    # the repository as a reader's working directory, without writing into it
    work = tmp / "repo"
    work.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in {".git", ".mongomem"}:
            (work / entry.name).symlink_to(entry)
    (work / "history.jsonl").write_text("".join(json.dumps(t) + "\n" for t in HISTORY))
    data = tmp / "data"
    # what `make dev` runs: the shipped project config, the local stack and its config control
    with contextlib.chdir(ROOT):
        stack = LocalStack(
            data_dir=data,
            port=0,
            scan_seconds=1.0,
            poll_seconds=0.3,
            config_file=ROOT / "project-config.yaml",
        ).start()
    control = LocalControl(stack, interval=0.2).start()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MONGOMEM_", "POWERTOOLS_"))}
    env.update(
        PATH=f"{ROOT / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        MONGOMEM_URL=stack.url,
        MONGOMEM_DATA_DIR=str(data),
        PYTHONUNBUFFERED="1",
    )
    try:
        yield World(stack, work, env, tmp)
    finally:
        control.stop()
        stack.stop()


# -- how a command is run ---------------------------------------------------------------------------------
def run_shell(world: World, command: str, timeout: float = 300) -> str:
    script = 'curl() { command curl --fail-with-body "$@"; }\nset -eo pipefail\n' + command
    done = subprocess.run(
        ["bash", "-c", script.replace(DOC_URL, world.stack.url)],
        cwd=world.work,
        env=world.env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, (
        f"`{command}` exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout


def serve(world: World, command: str) -> None:
    """A command that serves until stopped: it must come up (answer), then it is stopped."""
    port = free_port()
    env = dict(world.env)
    if command.startswith("make dev"):
        env.update(MONGOMEM_PORT=str(port), MONGOMEM_DATA_DIR=str(world.tmp / f"dev-{port}"))
    command = re.sub(r"--port \d+", f"--port {port}", command)
    http = "make dev" in command or "--transport http" in command
    proc = subprocess.Popen(
        ["bash", "-c", command.replace(DOC_URL, world.stack.url)],
        cwd=world.work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        if not http:  # a stdio MCP server: its client (here: none, stdin is closed) ends it
            out, _ = proc.communicate(timeout=60)
            assert proc.returncode == 0, f"`{command}` exited {proc.returncode}:\n{out.decode()[-3000:]}"
            return
        deadline = time.monotonic() + 180
        target = f"http://127.0.0.1:{port}/v1/status" if "make dev" in command else None
        while True:
            assert proc.stdout is not None
            assert proc.poll() is None, (
                f"`{command}` exited {proc.returncode}:\n{proc.stdout.read().decode()[-3000:]}"
            )
            assert time.monotonic() < deadline, f"`{command}` did not come up on port {port}"
            try:
                if target:
                    with urllib.request.urlopen(target, timeout=5) as answer:
                        if answer.status == 200:
                            return
                else:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    return
            except OSError:
                time.sleep(0.5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)


def installed_extra(command: str) -> None:
    """`pip install -e '.[extra]'` from a checkout: the extra exists and its packages are installed."""
    extra = re.search(r"\[([a-z-]+)\]", command)
    assert extra, command
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extra.group(1) in extras, f"no extra {extra.group(1)!r} in pyproject.toml"
    for requirement in extras[extra.group(1)]:
        name = re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0]
        importlib.metadata.distribution(name)  # PackageNotFoundError: `make setup` did not install it


# What some commands are; everything else runs verbatim.
COMMANDS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^make test\b"), "suite"),  # this test suite itself
    (re.compile(r"^(make dev\b|mongomem mcp\b|\.venv/bin/mongomem (dev|mcp)\b)"), "serve"),
    (re.compile(r"^(\.venv/bin/)?pip install\b"), "extra"),
]


def run_snippet(world: World, snippet: Snippet) -> None:
    if snippet.lang == "python":
        done = subprocess.run(
            [str(ROOT / ".venv" / "bin" / "python"), "-c", snippet.code.replace(DOC_URL, world.stack.url)],
            cwd=world.work,
            env=world.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{snippet.id} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return
    for kind, command in steps(snippet.code):
        if kind == "suite":
            continue
        if kind == "serve":
            serve(world, command)
        elif kind == "extra":
            installed_extra(command)
        else:
            run_shell(world, command)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.id for s in SNIPPETS])
def test_snippet_runs_as_written(snippet: Snippet, request: pytest.FixtureRequest) -> None:
    if snippet.skip:
        pytest.skip(f"{snippet.skip} ({snippet.id})")
    if snippet.lang == "python" and snippet.file in ELSEWHERE:
        pytest.skip(f"run with its assertions by {ELSEWHERE[snippet.file]}")
    world = request.getfixturevalue("world")
    before = checkout_state()
    run_snippet(world, snippet)
    # and a reader who runs it keeps their checkout as it was (build outputs aside: they are ignored)
    assert checkout_state() == before, f"{snippet.id} changed the checkout:\n{checkout_state()}"


def checkout_state() -> str | None:
    """`git status` of the checkout (tracked changes and untracked files git does not ignore)."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True, text=True
    )
    return done.stdout if done.returncode == 0 else None


def test_the_snippets_that_do_not_run_are_few_and_say_why() -> None:
    skipped = [s for s in SNIPPETS if s.skip]
    text = "\n".join((ROOT / f).read_text() for f in {s.file for s in SNIPPETS})
    # every marker sits right before a fence it applies to
    assert text.count("<!-- not run:") == len(skipped)
    assert all(
        s.skip and s.skip.split(":")[0] in {"needs AWS", "needs Docker", "runs for minutes"} for s in skipped
    )
    # the honest list: AWS and Docker ones, one benchmark walkthrough (docs/benchmarks.md) and the house
    # figures against an older tree (docs/house.md: that tree's own .venv, both unit suites timed thrice);
    # what they run is also run at a small size (tests/bench/test_benches.py, tests/unit/test_house_figures.py)
    long_runs = [s.id for s in skipped if s.skip and s.skip.startswith("runs for minutes")]
    assert len(long_runs) <= 2, long_runs
    assert len(skipped) <= 10, [s.id for s in skipped]
    # and the examples run elsewhere are all of that file's Python blocks
    from tests.integrations.test_docs_examples import examples

    python_blocks = [s for s in SNIPPETS if s.file == "docs/integrations.md" and s.lang == "python"]
    assert len(python_blocks) == len(examples())


def test_no_snippet_hides_behind_another_language_tag() -> None:
    """Shell and Python are the runnable kinds: a block tagged `console`, `py` or `shell-session` would
    silently escape this test."""
    hidden = []
    for path in DOCS:
        for match in FENCE.finditer(path.read_text(encoding="utf-8")):
            if match.group(1) in {"py", "console", "shell-session", "zsh", "python3", "pycon"}:
                hidden.append(f"{path.relative_to(ROOT)}: {match.group(1)}")
    assert not hidden


def test_the_collected_snippets_cover_readme_and_docs() -> None:
    files = {s.file for s in SNIPPETS}
    assert {"README.md", "docs/sdk.md", "docs/trust.md", "docs/providers.md"} <= files
    assert sum(1 for s in SNIPPETS if not s.skip) >= 12
