"""The TypeScript package (sdk-ts/, @mongomem/client): its generated types, its test suite and the Mastra
quickstart, run with the real npm packages (`npm ci` from the committed lockfile) against local stacks.

`npm ci` runs only when sdk-ts/node_modules was not installed from this very lockfile (a stamp in
node_modules), so a machine that ran it once pays nothing more.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mongomem.api.docs import openapi_json

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "sdk-ts"
STAMP = ".mongomem-lockfile-sha256"  # in node_modules: the lockfile it was installed from
MONGOMEM = str(Path(sys.executable).parent / "mongomem")

STACK_CONFIG = """
memory:
  snapshot: {max_messages: 50, idle_seconds: 3600}
  extraction: {enabled: [semantic, preference]}
  recall: {embed_on_write: true, embed_on_write_poll_seconds: 0.2, embed_on_write_seconds: 50}
  working_memory:
    scope: %(scope)s
    %(shape)s
  providers:
    llm: {kind: offline}
    embeddings: {kind: hashing, dim: 64}
"""
TEMPLATE = 'template: "# User\\n- **Name**:\\n- **City**:\\n"'
SCHEMA = (
    "schema: {type: object, properties: {name: {type: string}, city: {type: string},"
    " diet: {type: array, items: {type: string}}}}"
)


def npm() -> str:
    found = shutil.which("npm")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("npm is missing: Node.js 20+ with npm is needed for the TypeScript package's tests")
        pytest.skip("npm is missing (install Node.js 20+ with npm to run the TypeScript package's tests)")
    return found


def run(
    args: list[str], timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=SDK,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def tail(done: subprocess.CompletedProcess[str], lines: int = 80) -> str:
    return "\n".join((done.stdout + done.stderr).splitlines()[-lines:])


@pytest.fixture(scope="module")
def node_modules() -> Path:
    """sdk-ts/node_modules as `npm ci` makes it from the committed lockfile.

    Installed once per lockfile into a cache outside the clone ($MONGOMEM_NODE_CACHE, default
    ~/.cache/mongomem/sdk-ts/<lockfile sha256>) and linked in, so a fresh clone (CI) reuses it.
    """
    tool = npm()
    digest = hashlib.sha256(
        (SDK / "package-lock.json").read_bytes() + (SDK / "package.json").read_bytes()
    ).hexdigest()
    local = SDK / "node_modules"
    if (local / STAMP).is_file() and (local / STAMP).read_text() == digest:
        return local
    root = Path(os.environ.get("MONGOMEM_NODE_CACHE") or Path.home() / ".cache" / "mongomem" / "sdk-ts")
    cached = root / digest
    if not (cached / "node_modules" / STAMP).is_file():
        shutil.rmtree(cached, ignore_errors=True)
        cached.mkdir(parents=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy2(SDK / name, cached / name)
        done = subprocess.run(
            [tool, "ci", "--no-audit", "--no-fund", "--prefer-offline"],
            cwd=cached,
            capture_output=True,
            text=True,
            timeout=900,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, tail(done)
        (cached / "node_modules" / STAMP).write_text(digest)
    if local.is_symlink() or local.is_file():
        local.unlink()
    elif local.exists():
        shutil.rmtree(local)
    local.symlink_to(cached / "node_modules", target_is_directory=True)
    return local


def test_committed_types_are_generated_from_the_api_as_it_is(node_modules: Path) -> None:
    # Given the API's OpenAPI document as the code builds (and GET /v1/openapi.json serves) it
    committed = (SDK / "openapi.json").read_text()
    # Then the committed copy is that document, and the committed types are what it generates
    assert committed == openapi_json() + "\n", "sdk-ts/openapi.json is stale: run `make ts-types` and commit"
    done = run(["node", "scripts/generate.mjs", "--check"], timeout=120)
    assert done.returncode == 0, (
        f"sdk-ts/src/generated/openapi.ts is stale: run `make ts-types`\n{tail(done)}"
    )


class Dev:
    """`mongomem dev` as a user runs it (a process of its own: one stack per process)."""

    def __init__(self, data_dir: Path, *extra: str) -> None:
        data_dir.mkdir(parents=True, exist_ok=True)
        self.log = data_dir / "dev.log"
        self.proc = subprocess.Popen(
            [MONGOMEM, "dev", "--data-dir", str(data_dir / "data"), "--port", "0", *extra],
            cwd=ROOT,
            stdout=self.log.open("w"),
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )

    def url(self, timeout: float = 120.0) -> str:
        deadline = time.monotonic() + timeout
        while "Ctrl-C stops it" not in self.log.read_text():
            assert self.proc.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, self.log.read_text()
            time.sleep(0.2)
        return next(
            line.split()[1] for line in self.log.read_text().splitlines() if line.strip().startswith("API")
        )

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)


def configured(tmp: Path, name: str, scope: str, shape: str) -> Dev:
    config = tmp / f"{name}.yaml"
    config.write_text(STACK_CONFIG % {"scope": scope, "shape": shape})
    return Dev(tmp / name, "--config", str(config), "--scan-seconds", "0.5")


@pytest.fixture(scope="module")
def stacks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    tmp = tmp_path_factory.mktemp("ts")
    template = configured(tmp, "template", "resource", TEMPLATE)
    schema = configured(tmp, "schema", "thread", SCHEMA)
    try:
        yield template.url(), schema.url()
    finally:
        template.close()
        schema.close()


def test_client_mastra_memory_and_ai_sdk_tools_pass_their_suite(
    node_modules: Path, stacks: tuple[str, str]
) -> None:
    # Given a stack with a Markdown working memory (resource scope) and one with a JSON Schema (thread scope)
    template_url, schema_url = stacks
    # When the package's own tests run (tsc build, then node:test over the client, Mastra and AI SDK files)
    env = {"MONGOMEM_TEST_URL": template_url, "MONGOMEM_TEST_SCHEMA_URL": schema_url}
    done = run([npm(), "test", "--silent"], timeout=900, env=env)
    # Then every test passes (the report names each one)
    report = done.stdout + done.stderr
    print(report[-6000:])
    assert done.returncode == 0, tail(done, 200)
    assert "# fail 0" in report and "# pass" in report


def test_quickstart_packs_installs_and_runs_a_mastra_agent_against_make_dev(
    node_modules: Path, tmp_path: Path
) -> None:
    # Given `mongomem dev` as `make dev` runs it (the repository's project-config.yaml), scanning every second
    dev = Dev(tmp_path, "--scan-seconds", "1")
    try:
        api = dev.url()
        # When the quickstart packs the client into an empty Mastra project and runs its agent (mock model)
        script = SDK / "examples" / "mastra-quickstart" / "run.sh"
        done = subprocess.run(
            ["bash", str(script)],
            capture_output=True,
            text=True,
            timeout=900,
            env={**os.environ, "MONGOMEM_URL": api},
            stdin=subprocess.DEVNULL,
        )
        out = done.stdout + done.stderr
        print(out)
        assert done.returncode == 0, out
        # Then the agent recorded its turns, read working memory and recalled across threads
        assert "recorded turns: 1:user 2:assistant" in out
        assert "Location**: Porto" in out
        assert "run 2 prompt had the working memory: true" in out
        assert "run 2 prompt recalled thread 1 across threads: true" in out
        assert "You collect antique typewriters and you are from Porto." in out
    finally:
        dev.close()


def test_quickstart_fails_when_nothing_is_recalled_across_threads(node_modules: Path, tmp_path: Path) -> None:
    # Given a stack whose recall indexer does not run within the quickstart's wait (it scans once an hour)
    dev = Dev(tmp_path, "--scan-seconds", "3600")
    try:
        api = dev.url()
        # When the quickstart runs its agent against it
        done = subprocess.run(
            ["bash", str(SDK / "examples" / "mastra-quickstart" / "run.sh")],
            capture_output=True,
            text=True,
            timeout=900,
            env={**os.environ, "MONGOMEM_URL": api, "MONGOMEM_QUICKSTART_WAIT_S": "2"},
            stdin=subprocess.DEVNULL,
        )
        out = done.stdout + done.stderr
        print(out)
        # Then it says recall across threads failed, and exits non-zero
        assert "run 2 prompt recalled thread 1 across threads: false" in out
        assert "quickstart FAILED" in out and "nothing was recalled across threads" in out
        assert done.returncode != 0
    finally:
        dev.close()
